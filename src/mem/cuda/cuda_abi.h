/* The part of the CUDA driver ABI wharf uses, declared here so that libmpi
 * builds without NVIDIA's header and loads the driver only at run time
 * (dlopen("libcuda.so.1") + cuGetProcAddress, never linked).  Every value and
 * type below is checked against the real cuda.h by the test cudaemu.abi
 * (tests/cudaemu/t_abi.c). */
#ifndef WH_MEM_CUDA_CUDA_ABI_H
#define WH_MEM_CUDA_CUDA_ABI_H
#include <stddef.h>
#include <stdint.h>

typedef int wh_CUresult; /* enum cudaError_enum */
typedef unsigned long long wh_CUdeviceptr;
typedef int wh_CUdevice;
typedef int wh_CUpointer_attribute; /* enum CUpointer_attribute_enum */
typedef int wh_CUdevice_attribute;  /* enum CUdevice_attribute_enum */
typedef int wh_CUmemAllocationHandleType;
typedef struct wh_CUctx_st *wh_CUcontext;
typedef struct wh_CUstream_st *wh_CUstream;
typedef struct wh_CUevent_st *wh_CUevent;
typedef struct {
    char reserved[64];
} wh_CUipcMemHandle;
typedef struct {
    char bytes[16];
} wh_CUuuid;
/* virtual memory management (the VMM file-descriptor IPC scheme, vmm.c) */
typedef unsigned long long wh_CUmemGenericAllocationHandle;
typedef struct {
    int type; /* CUmemLocationType */
    int id;
} wh_CUmemLocation;
typedef struct {
    int type;                 /* CUmemAllocationType */
    int requestedHandleTypes; /* CUmemAllocationHandleType */
    wh_CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType, gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} wh_CUmemAllocationProp;
typedef struct {
    wh_CUmemLocation location;
    int flags; /* CUmemAccess_flags */
} wh_CUmemAccessDesc;

#define WH_CUDA_VERSION 12000 /* the API version wharf's calls are written for */
#define WH_CUDA_SUCCESS 0
#define WH_CUDA_ERROR_INVALID_VALUE 1
#define WH_CUDA_ERROR_OUT_OF_MEMORY 2
#define WH_CUDA_ERROR_NOT_READY 600
#define WH_CUDA_ERROR_INVALID_HANDLE 400
#define WH_CUDA_ERROR_NOT_SUPPORTED 801
#define WH_CUDA_ERROR_OPERATING_SYSTEM 304
#define WH_CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID 134
#define WH_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR 1
#define WH_CU_MEM_LOCATION_TYPE_DEVICE 1
#define WH_CU_MEM_ACCESS_FLAGS_PROT_READWRITE 3
#define WH_CU_POINTER_ATTRIBUTE_CONTEXT 1
#define WH_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define WH_CU_POINTER_ATTRIBUTE_BUFFER_ID 7
#define WH_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define WH_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR 11
#define WH_CU_POINTER_ATTRIBUTE_RANGE_SIZE 12
#define WH_CU_MEMORYTYPE_HOST 1
#define WH_CU_MEMORYTYPE_DEVICE 2
#define WH_CU_STREAM_NON_BLOCKING 1
#define WH_CU_EVENT_DISABLE_TIMING 2
#define WH_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 1

/* X(name as asked of cuGetProcAddress, return, parameters) */
#define WH_CUDA_FNS(X)                                                                                                 \
    X(cuInit, (unsigned int flags))                                                                                    \
    X(cuDriverGetVersion, (int *v))                                                                                    \
    X(cuGetErrorName, (wh_CUresult e, const char **s))                                                                 \
    X(cuDeviceGetCount, (int *n))                                                                                      \
    X(cuDeviceGet, (wh_CUdevice * d, int ordinal))                                                                     \
    X(cuDeviceGetUuid, (wh_CUuuid * u, wh_CUdevice d))                                                                 \
    X(cuDeviceGetPCIBusId, (char *id, int len, wh_CUdevice d))                                                         \
    X(cuDevicePrimaryCtxRetain, (wh_CUcontext * c, wh_CUdevice d))                                                     \
    X(cuDeviceCanAccessPeer, (int *can, wh_CUdevice d, wh_CUdevice peer))                                              \
    X(cuCtxGetDevice, (wh_CUdevice * d))                                                                               \
    X(cuCtxGetCurrent, (wh_CUcontext * c))                                                                             \
    X(cuCtxSetCurrent, (wh_CUcontext c))                                                                               \
    X(cuPointerGetAttribute, (void *data, wh_CUpointer_attribute attr, wh_CUdeviceptr p))                                                 \
    X(cuMemGetAddressRange, (wh_CUdeviceptr * base, size_t *size, wh_CUdeviceptr p))                                   \
    X(cuMemcpy, (wh_CUdeviceptr dst, wh_CUdeviceptr src, size_t n))                                                    \
    X(cuMemcpyAsync, (wh_CUdeviceptr dst, wh_CUdeviceptr src, size_t n, wh_CUstream s))                                \
    X(cuStreamCreate, (wh_CUstream * s, unsigned int flags))                                                           \
    X(cuStreamDestroy, (wh_CUstream s))                                                                                \
    X(cuStreamSynchronize, (wh_CUstream s))                                                                            \
    X(cuIpcGetMemHandle, (wh_CUipcMemHandle * h, wh_CUdeviceptr p))                                                    \
    X(cuIpcOpenMemHandle, (wh_CUdeviceptr * p, wh_CUipcMemHandle h, unsigned int flags))                               \
    X(cuIpcCloseMemHandle, (wh_CUdeviceptr p))                                                                         \
    X(cuDeviceGetAttribute, (int *v, wh_CUdevice_attribute attr, wh_CUdevice d))

/* optional, for the VMM file-descriptor IPC scheme (vmm.c): a driver (or a
 * forwarding library) without them still loads, the scheme is then off */
#define WH_CUDA_FNS_VMM(X)                                                                                             \
    X(cuMemRetainAllocationHandle, (wh_CUmemGenericAllocationHandle * h, void *addr))                                  \
    X(cuMemGetAllocationPropertiesFromHandle, (wh_CUmemAllocationProp * prop, wh_CUmemGenericAllocationHandle h))       \
    X(cuMemRelease, (wh_CUmemGenericAllocationHandle h))                                                               \
    X(cuMemExportToShareableHandle, (void *sh, wh_CUmemGenericAllocationHandle h, wh_CUmemAllocationHandleType type,    \
                                     unsigned long long flags)) \
    X(cuMemImportFromShareableHandle, (wh_CUmemGenericAllocationHandle * h, void *os,                                 \
                                       wh_CUmemAllocationHandleType type))                      \
    X(cuMemAddressReserve, (wh_CUdeviceptr * p, size_t size, size_t align, wh_CUdeviceptr addr,                      \
                            unsigned long long flags))                                                                 \
    X(cuMemAddressFree, (wh_CUdeviceptr p, size_t size))                                                               \
    X(cuMemMap, (wh_CUdeviceptr p, size_t size, size_t offset, wh_CUmemGenericAllocationHandle h,                     \
                 unsigned long long flags))                                                                            \
    X(cuMemUnmap, (wh_CUdeviceptr p, size_t size))                                                                     \
    X(cuMemSetAccess, (wh_CUdeviceptr p, size_t size, const wh_CUmemAccessDesc *desc, size_t count))

/* Entry points wharf can do without (a driver lacking one still loads):
 * asynchronous copies and events (the device-buffer pipeline copies
 * synchronously without them), page-locking of its ring, and allocation
 * (wharf-info --calibrate only).  NULL in wh_cu when absent. */
#define WH_CUDA_FNS_OPT(X)                                                                                             \
    X(cuMemcpyDtoHAsync, (void *dst, wh_CUdeviceptr src, size_t n, wh_CUstream s))                                    \
    X(cuMemcpyHtoDAsync, (wh_CUdeviceptr dst, const void *src, size_t n, wh_CUstream s))                              \
    X(cuEventCreate, (wh_CUevent * e, unsigned int flags))                                                             \
    X(cuEventDestroy, (wh_CUevent e))                                                                                  \
    X(cuEventRecord, (wh_CUevent e, wh_CUstream s))                                                                    \
    X(cuEventQuery, (wh_CUevent e))                                                                                    \
    X(cuMemHostRegister, (void *p, size_t n, unsigned int flags))                                                      \
    X(cuMemHostUnregister, (void *p))                                                                                  \
    X(cuMemAlloc, (wh_CUdeviceptr * p, size_t n))                                                                      \
    X(cuMemFree, (wh_CUdeviceptr p))

/* cuGetProcAddress (the CUDA 12 entry point cuGetProcAddress_v2) */
typedef wh_CUresult (*wh_pfn_cuGetProcAddress)(const char *symbol, void **pfn, int version, uint64_t flags,
                                               int *status);
#endif
