/* The CUDA driver API tables wharf's two drivers share: the emulator
 * (tests/cudaemu, a libcuda.so.1 for tests) and the rgpu client driver
 * (src/rgpu, a libcuda.so.1 forwarding to wharf-gpud).  For
 * cuGetProcAddress: each entry point's base name and the first CUDA version
 * whose callers get the (versioned) entry point cuda.h's macros pick
 * ("cuMemAlloc" -> cuMemAlloc_v2 from 3.2 on); a caller asking for an older
 * version gets CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (no v1 ABIs).
 * CU_PROCS_COMMON: what both export; CU_PROCS_EMU: the emulator's others.
 * And the error names and texts of cuGetErrorName/cuGetErrorString.
 * Include after cuda.h. */
#ifndef WH_RGPU_CU_TABLE_H
#define WH_RGPU_CU_TABLE_H
#include <stddef.h>
#include <string.h>

#define CU_PROCS_COMMON(X) \
    X(cuInit, 2000) X(cuDriverGetVersion, 2020) X(cuGetErrorName, 6000) X(cuGetErrorString, 6000) \
    X(cuDeviceGet, 2000) X(cuDeviceGetCount, 2000) X(cuDeviceGetName, 2000) X(cuDeviceGetUuid, 9020) \
    X(cuDeviceGetUuid_v2, 11040) X(cuDeviceGetPCIBusId, 4010) X(cuDeviceTotalMem, 3020) \
    X(cuDeviceGetAttribute, 2000) X(cuDeviceCanAccessPeer, 4000) X(cuDevicePrimaryCtxRetain, 7000) \
    X(cuDevicePrimaryCtxRelease, 11000) X(cuDevicePrimaryCtxGetState, 7000) X(cuDevicePrimaryCtxSetFlags, 11000) \
    X(cuCtxCreate, 3020) X(cuCtxDestroy, 4000) X(cuCtxGetCurrent, 4000) X(cuCtxSetCurrent, 4000) \
    X(cuCtxPushCurrent, 4000) X(cuCtxPopCurrent, 4000) X(cuCtxGetDevice, 2000) X(cuCtxSynchronize, 2000) \
    X(cuMemAlloc, 3020) X(cuMemFree, 3020) X(cuMemGetInfo, 3020) X(cuMemAllocHost, 3020) X(cuMemHostAlloc, 2020) \
    X(cuMemFreeHost, 2000) X(cuMemGetAddressRange, 3020) X(cuPointerGetAttribute, 4000) \
    X(cuPointerGetAttributes, 7000) X(cuIpcGetMemHandle, 4010) X(cuIpcOpenMemHandle, 11000) \
    X(cuIpcCloseMemHandle, 4010) X(cuMemcpy, 4000) X(cuMemcpyAsync, 4000) X(cuMemcpyHtoD, 3020) \
    X(cuMemcpyDtoH, 3020) X(cuMemcpyDtoD, 3020) X(cuMemcpyHtoDAsync, 3020) X(cuMemcpyDtoHAsync, 3020) \
    X(cuMemcpyDtoDAsync, 3020) X(cuMemcpyPeer, 4000) X(cuMemsetD8, 3020) X(cuMemsetD8Async, 3020) \
    X(cuStreamCreate, 2000) X(cuStreamCreateWithPriority, 5050) X(cuStreamDestroy, 4000) \
    X(cuStreamSynchronize, 2000) X(cuStreamQuery, 2000) X(cuStreamWaitEvent, 3020) X(cuEventCreate, 2000) \
    X(cuEventDestroy, 4000) X(cuEventRecord, 2000) X(cuEventQuery, 2000) X(cuEventSynchronize, 2000) \
    X(cuEventElapsedTime, 2000) X(cuEventElapsedTime_v2, 12080) X(cuGetProcAddress, 12000) \
    X(cuMemcpyPeerAsync, 4000) X(cuModuleLoad, 2000) X(cuModuleLoadData, 2000) X(cuModuleLoadDataEx, 2010) \
    X(cuModuleUnload, 2000) X(cuModuleGetFunction, 2000) X(cuFuncGetParamInfo, 12040) X(cuLaunchKernel, 4000)

#define CU_PROCS_EMU(X) \
    X(cuDeviceGetByPCIBusId, 4010) X(cuDevicePrimaryCtxReset, 11000) X(cuMemHostRegister, 6050) \
    X(cuMemHostUnregister, 4000) X(cuMemHostGetDevicePointer, 3020) X(cuIpcGetEventHandle, 4010) \
    X(cuIpcOpenEventHandle, 4010) X(cuMemAddressReserve, 10020) X(cuMemAddressFree, 10020) X(cuMemCreate, 10020) \
    X(cuMemRelease, 10020) X(cuMemMap, 10020) X(cuMemUnmap, 10020) X(cuMemSetAccess, 10020) \
    X(cuMemExportToShareableHandle, 10020) X(cuMemImportFromShareableHandle, 10020) \
    X(cuMemGetAllocationGranularity, 10020) X(cuMemRetainAllocationHandle, 11000) \
    X(cuMemGetAllocationPropertiesFromHandle, 10020)

typedef struct {
    const char *name;
    int version; /* first CUDA version whose callers get this entry */
    void *fn;
} cu_proc_t;
#define CU_PROC_ENTRY(name, ver) {#name, ver, (void *)name},

/* cuGetProcAddress over table t (n entries) */
static inline CUresult cu_proc_lookup(const cu_proc_t *t, size_t n, const char *symbol, void **pfn, int version,
                                      CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int found = 0;
    const cu_proc_t *best = NULL;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, symbol)) {
            found = 1;
            if (t[i].version <= version && (!best || t[i].version > best->version))
                best = &t[i];
        }
    if (status)
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!best)
        return CUDA_ERROR_NOT_FOUND;
    *pfn = best->fn;
    return CUDA_SUCCESS;
}

#define CU_ERRORS(X) \
    X(CUDA_SUCCESS, "no error") \
    X(CUDA_ERROR_INVALID_VALUE, "invalid argument") \
    X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory") \
    X(CUDA_ERROR_NOT_INITIALIZED, "initialization error") \
    X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected") \
    X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal") \
    X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context") \
    X(CUDA_ERROR_MAP_FAILED, "mapping of buffer object failed") \
    X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle") \
    X(CUDA_ERROR_NOT_FOUND, "named symbol not found") \
    X(CUDA_ERROR_NOT_READY, "device not ready") \
    X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure") \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "peer access is not supported between these two devices") \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped") \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region") \
    X(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS") \
    X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported") \
    X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid") \
    X(CUDA_ERROR_FILE_NOT_FOUND, "file not found") \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable")

/* cuGetErrorName (text 0) / cuGetErrorString (text 1) */
static inline CUresult cu_error_lookup(CUresult error, const char **p, int text)
{
    static const struct {
        CUresult rc;
        const char *name, *text;
    } errs[] = {
#define CU_ERROR_ENTRY(rc, txt) {rc, #rc, txt},
        CU_ERRORS(CU_ERROR_ENTRY)
#undef CU_ERROR_ENTRY
    };
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errs / sizeof *errs; i++)
        if (errs[i].rc == error) {
            *p = text ? errs[i].text : errs[i].name;
            return CUDA_SUCCESS;
        }
    *p = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
#endif
