/* The CUDA driver entry points the rgpu server uses, loaded with dlopen from
 * libcuda.so.1 (the real driver or the emulator) under their versioned names
 * (the ones cuda.h's macros pick). */
#ifndef WH_RGPU_DRV_H
#define WH_RGPU_DRV_H
#include <cuda.h>

#define RG_DRV_LIST(X)                                                                                      \
    X(cuInit) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceGetPCIBusId)   \
    X(cuDeviceTotalMem) X(cuDeviceGetAttribute) X(cuDeviceCanAccessPeer) X(cuDevicePrimaryCtxRetain)          \
    X(cuDevicePrimaryCtxRelease) X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxSetCurrent) X(cuCtxSynchronize)        \
    X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoD)              \
    X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)             \
    X(cuMemsetD8) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize)              \
    X(cuStreamQuery) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                 \
    X(cuEventQuery) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuModuleLoadData) X(cuModuleUnload)         \
    X(cuModuleGetFunction) X(cuFuncGetParamInfo) X(cuLaunchKernel)

#define RG_DRV_DECL(name) extern __typeof__(&name) d_##name;
RG_DRV_LIST(RG_DRV_DECL)
#undef RG_DRV_DECL

/* 0 on success, -1 with a message in err */
int rg_drv_load(char *err, size_t errlen);
#endif
