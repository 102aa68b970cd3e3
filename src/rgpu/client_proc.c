/* rgpu client driver: cuGetProcAddress over the forwarded entry points (the
 * same versioning as the emulator: base name + the CUDA version the caller
 * was written for -> the versioned entry point cuda.h's macros pick). */
#include <string.h>

#include "rgpu/client.h"

typedef struct {
    const char *name;
    int version;
    void *fn;
} rgc_proc_t;

#define E(name, ver) {#name, ver, (void *)name}
static const rgc_proc_t procs[] = {
    E(cuInit, 2000), E(cuDriverGetVersion, 2020), E(cuGetErrorName, 6000), E(cuGetErrorString, 6000),
    E(cuDeviceGet, 2000), E(cuDeviceGetCount, 2000), E(cuDeviceGetName, 2000), E(cuDeviceGetUuid, 9020),
    E(cuDeviceGetUuid_v2, 11040), E(cuDeviceGetPCIBusId, 4010), E(cuDeviceTotalMem, 3020),
    E(cuDeviceGetAttribute, 2000), E(cuDeviceCanAccessPeer, 4000), E(cuDevicePrimaryCtxRetain, 7000),
    E(cuDevicePrimaryCtxRelease, 11000), E(cuDevicePrimaryCtxGetState, 7000), E(cuDevicePrimaryCtxSetFlags, 11000),
    E(cuCtxCreate, 3020), E(cuCtxDestroy, 4000), E(cuCtxGetCurrent, 4000), E(cuCtxSetCurrent, 4000),
    E(cuCtxPushCurrent, 4000), E(cuCtxPopCurrent, 4000), E(cuCtxGetDevice, 2000), E(cuCtxSynchronize, 2000),
    E(cuMemAlloc, 3020), E(cuMemFree, 3020), E(cuMemGetInfo, 3020), E(cuMemAllocHost, 3020),
    E(cuMemHostAlloc, 2020), E(cuMemFreeHost, 2000), E(cuMemGetAddressRange, 3020), E(cuPointerGetAttribute, 4000),
    E(cuPointerGetAttributes, 7000), E(cuIpcGetMemHandle, 4010), E(cuIpcOpenMemHandle, 11000),
    E(cuIpcCloseMemHandle, 4010), E(cuMemcpy, 4000), E(cuMemcpyAsync, 4000), E(cuMemcpyHtoD, 3020),
    E(cuMemcpyDtoH, 3020), E(cuMemcpyDtoD, 3020), E(cuMemcpyHtoDAsync, 3020), E(cuMemcpyDtoHAsync, 3020),
    E(cuMemcpyDtoDAsync, 3020), E(cuMemcpyPeer, 4000), E(cuMemcpyPeerAsync, 4000), E(cuMemsetD8, 3020),
    E(cuMemsetD8Async, 3020), E(cuStreamCreate, 2000), E(cuStreamCreateWithPriority, 5050),
    E(cuStreamDestroy, 4000), E(cuStreamSynchronize, 2000), E(cuStreamQuery, 2000), E(cuStreamWaitEvent, 3020),
    E(cuEventCreate, 2000), E(cuEventDestroy, 4000), E(cuEventRecord, 2000), E(cuEventQuery, 2000),
    E(cuEventSynchronize, 2000), E(cuEventElapsedTime, 2000), E(cuEventElapsedTime_v2, 12080),
    E(cuGetProcAddress, 12000), E(cuModuleLoad, 2000), E(cuModuleLoadData, 2000), E(cuModuleLoadDataEx, 2010),
    E(cuModuleUnload, 2000), E(cuModuleGetFunction, 2000), E(cuFuncGetParamInfo, 12040),
    E(cuLaunchKernel, 4000),
};
#undef E

RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *status)
{
    (void)flags;
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int found = 0;
    const rgc_proc_t *best = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof *procs; i++)
        if (!strcmp(procs[i].name, symbol)) {
            found = 1;
            if (procs[i].version <= cudaVersion && (!best || procs[i].version > best->version))
                best = &procs[i];
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

#undef cuGetProcAddress
RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
