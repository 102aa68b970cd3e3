/* cudaemu: cuGetProcAddress (the v12 signature, plus the older 4-argument
 * export) and the error names.  The table maps the base name a caller asks
 * for ("cuMemAlloc") and the CUDA version it was written for to the versioned
 * entry point the header's macros pick ("cuMemAlloc_v2" from 3.2 on); a caller
 * asking for a version older than the one the emulator implements gets
 * CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (the emulator has no v1 ABIs). */
#include <string.h>

#include "emu.h"

/* declared in emu_stream.c / emu_core.c through cuda.h already */
typedef struct {
    const char *name;
    int version; /* first CUDA version whose callers get this entry */
    void *fn;
} emu_proc_t;

#define E(name, ver) {#name, ver, (void *)name}
static const emu_proc_t procs[] = {
    E(cuInit, 2000), E(cuDriverGetVersion, 2020), E(cuGetErrorName, 6000), E(cuGetErrorString, 6000),
    E(cuDeviceGet, 2000), E(cuDeviceGetCount, 2000), E(cuDeviceGetName, 2000), E(cuDeviceGetUuid, 9020),
    E(cuDeviceGetUuid_v2, 11040), E(cuDeviceGetPCIBusId, 4010), E(cuDeviceGetByPCIBusId, 4010),
    E(cuDeviceTotalMem, 3020), E(cuDeviceGetAttribute, 2000), E(cuDeviceCanAccessPeer, 4000),
    E(cuDevicePrimaryCtxRetain, 7000), E(cuDevicePrimaryCtxRelease, 11000), E(cuDevicePrimaryCtxGetState, 7000),
    E(cuDevicePrimaryCtxSetFlags, 11000), E(cuDevicePrimaryCtxReset, 11000), E(cuCtxCreate, 3020),
    E(cuCtxDestroy, 4000), E(cuCtxGetCurrent, 4000), E(cuCtxSetCurrent, 4000), E(cuCtxPushCurrent, 4000),
    E(cuCtxPopCurrent, 4000), E(cuCtxGetDevice, 2000), E(cuCtxSynchronize, 2000), E(cuMemAlloc, 3020),
    E(cuMemFree, 3020), E(cuMemGetInfo, 3020), E(cuMemAllocHost, 3020), E(cuMemHostAlloc, 2020),
    E(cuMemFreeHost, 2000), E(cuMemHostRegister, 6050), E(cuMemHostUnregister, 4000),
    E(cuMemHostGetDevicePointer, 3020), E(cuMemGetAddressRange, 3020), E(cuPointerGetAttribute, 4000),
    E(cuPointerGetAttributes, 7000), E(cuIpcGetMemHandle, 4010), E(cuIpcOpenMemHandle, 11000),
    E(cuIpcCloseMemHandle, 4010), E(cuIpcGetEventHandle, 4010), E(cuIpcOpenEventHandle, 4010),
    E(cuMemcpy, 4000), E(cuMemcpyAsync, 4000), E(cuMemcpyHtoD, 3020), E(cuMemcpyDtoH, 3020),
    E(cuMemcpyDtoD, 3020), E(cuMemcpyHtoDAsync, 3020), E(cuMemcpyDtoHAsync, 3020), E(cuMemcpyDtoDAsync, 3020),
    E(cuMemcpyPeer, 4000), E(cuMemsetD8, 3020), E(cuMemsetD8Async, 3020), E(cuStreamCreate, 2000),
    E(cuStreamCreateWithPriority, 5050), E(cuStreamDestroy, 4000), E(cuStreamSynchronize, 2000),
    E(cuStreamQuery, 2000), E(cuStreamWaitEvent, 3020), E(cuEventCreate, 2000), E(cuEventDestroy, 4000),
    E(cuEventRecord, 2000), E(cuEventQuery, 2000), E(cuEventSynchronize, 2000), E(cuEventElapsedTime, 2000),
    E(cuEventElapsedTime_v2, 12080), E(cuGetProcAddress, 12000), E(cuMemAddressReserve, 10020),
    E(cuMemAddressFree, 10020), E(cuMemCreate, 10020), E(cuMemRelease, 10020), E(cuMemMap, 10020),
    E(cuMemUnmap, 10020), E(cuMemSetAccess, 10020), E(cuMemExportToShareableHandle, 10020),
    E(cuMemImportFromShareableHandle, 10020), E(cuMemGetAllocationGranularity, 10020), E(cuMemRetainAllocationHandle, 11000),
    E(cuMemGetAllocationPropertiesFromHandle, 10020),
    E(cuMemcpyPeerAsync, 4000), E(cuModuleLoad, 2000), E(cuModuleLoadData, 2000), E(cuModuleLoadDataEx, 2010), E(cuModuleUnload, 2000),
    E(cuModuleGetFunction, 2000), E(cuFuncGetParamInfo, 12040), E(cuLaunchKernel, 4000),
};
#undef E

EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus)
{
    (void)flags; /* per-thread default stream variants are the legacy ones here */
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int found = 0;
    const emu_proc_t *best = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof *procs; i++)
        if (!strcmp(procs[i].name, symbol)) {
            found = 1;
            if (procs[i].version <= cudaVersion && (!best || procs[i].version > best->version))
                best = &procs[i];
        }
    if (symbolStatus)
        *symbolStatus = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                        : found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!best)
        return CUDA_ERROR_NOT_FOUND;
    *pfn = best->fn;
    return CUDA_SUCCESS;
}

/* the 4-argument export older callers (CUDA 11.3 - 11.8 headers) link to */
#undef cuGetProcAddress
EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

static const struct {
    CUresult rc;
    const char *name, *text;
} errs[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_OPERATING_SYSTEM, "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
};

EMU_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
        if (errs[i].rc == error) {
            *pStr = errs[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
        if (errs[i].rc == error) {
            *pStr = errs[i].text;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
