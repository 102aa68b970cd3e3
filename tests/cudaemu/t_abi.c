/* wharf declares the part of the CUDA driver ABI it uses itself
 * (src/mem/cuda/cuda_abi.h), so libmpi builds without NVIDIA's header; this
 * test holds those declarations against the real cuda.h. */
#include <cuda.h>
#include <stddef.h>
#include <stdio.h>

#include "mem/cuda/cuda_abi.h"

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a " == " #b)
SAME(WH_CUDA_SUCCESS, CUDA_SUCCESS);
SAME(WH_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
SAME(WH_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
SAME(WH_CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
SAME(WH_CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
SAME(WH_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
SAME(WH_CUDA_ERROR_OPERATING_SYSTEM, CUDA_ERROR_OPERATING_SYSTEM);
SAME(WH_CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID);
SAME(WH_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
SAME(WH_CU_MEM_LOCATION_TYPE_DEVICE, CU_MEM_LOCATION_TYPE_DEVICE);
SAME(WH_CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
SAME(WH_CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_CONTEXT);
SAME(WH_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
SAME(WH_CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_BUFFER_ID);
SAME(WH_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
SAME(WH_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
SAME(WH_CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_RANGE_SIZE);
SAME(WH_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
SAME(WH_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
SAME(WH_CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
SAME(WH_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
SAME(WH_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
_Static_assert(WH_CUDA_VERSION <= CUDA_VERSION, "wharf asks for an API version the header has");
_Static_assert(sizeof(wh_CUresult) == sizeof(CUresult), "CUresult");
_Static_assert(sizeof(wh_CUdeviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");
_Static_assert(_Generic((CUdeviceptr)0, unsigned long long: 1, default: 0), "CUdeviceptr is unsigned long long");
_Static_assert(_Generic((CUdevice)0, int: 1, default: 0), "CUdevice is int");
_Static_assert(sizeof(wh_CUipcMemHandle) == sizeof(CUipcMemHandle), "CUipcMemHandle");
_Static_assert(sizeof(wh_CUuuid) == sizeof(CUuuid), "CUuuid");
_Static_assert(sizeof(CUpointer_attribute) == sizeof(int), "attributes travel as int");
#define SAME_FIELD(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f) && sizeof(((a *)0)->f) == sizeof(((b *)0)->f), #f)
_Static_assert(sizeof(wh_CUmemAllocationProp) == sizeof(CUmemAllocationProp), "CUmemAllocationProp");
SAME_FIELD(wh_CUmemAllocationProp, CUmemAllocationProp, type);
SAME_FIELD(wh_CUmemAllocationProp, CUmemAllocationProp, requestedHandleTypes);
SAME_FIELD(wh_CUmemAllocationProp, CUmemAllocationProp, location);
SAME_FIELD(wh_CUmemAllocationProp, CUmemAllocationProp, win32HandleMetaData);
SAME_FIELD(wh_CUmemAllocationProp, CUmemAllocationProp, allocFlags);
_Static_assert(sizeof(wh_CUmemAccessDesc) == sizeof(CUmemAccessDesc), "CUmemAccessDesc");
SAME_FIELD(wh_CUmemAccessDesc, CUmemAccessDesc, location);
SAME_FIELD(wh_CUmemAccessDesc, CUmemAccessDesc, flags);
_Static_assert(sizeof(CUmemAllocationHandleType) == sizeof(int) && sizeof(CUdevice_attribute) == sizeof(int) &&
                   sizeof(CUmemLocationType) == sizeof(int) && sizeof(CUmemAccess_flags) == sizeof(int),
               "enums travel as int");
_Static_assert(sizeof(CUdriverProcAddressQueryResult) == sizeof(int), "query result is an int");

/* Each function: wharf's parameter list, with wharf's types mapped to the
 * header's, must be exactly the header's function type. */
#define wh_CUcontext CUcontext
#define wh_CUstream CUstream
#define wh_CUevent CUevent
#define wh_CUdeviceptr CUdeviceptr
#define wh_CUdevice CUdevice
#define wh_CUipcMemHandle CUipcMemHandle
#define wh_CUuuid CUuuid
#define wh_CUresult CUresult
#define wh_CUpointer_attribute CUpointer_attribute
#define wh_CUdevice_attribute CUdevice_attribute
#define wh_CUmemAllocationHandleType CUmemAllocationHandleType
#define wh_CUmemGenericAllocationHandle CUmemGenericAllocationHandle
#define wh_CUmemAllocationProp CUmemAllocationProp
#define wh_CUmemAccessDesc CUmemAccessDesc
#define CHECK_FN(name, params)                                                                                         \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), CUresult(*) params), #name);
WH_CUDA_FNS(CHECK_FN)
WH_CUDA_FNS_VMM(CHECK_FN)
WH_CUDA_FNS_OPT(CHECK_FN)
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuGetProcAddress),
                                            CUresult(*)(const char *, void **, int, cuuint64_t,
                                                        CUdriverProcAddressQueryResult *)),
               "cuGetProcAddress_v2");
_Static_assert(sizeof(uint64_t) == sizeof(cuuint64_t), "cuuint64_t");

int main(void)
{
    printf("cudaemu abi: wharf's CUDA declarations match cuda.h %d\n", CUDA_VERSION);
    return 0;
}
