/* cudaemu: devices from the topology file as the container sees them
 * (CUDAEMU_VISIBLE=1,3 of topo4.txt), contexts, allocations, pointer
 * attributes, copies in every direction, fault injection, cuGetProcAddress. */
#include <stdbool.h>
#include <stdint.h>

#include "t_common.h"

F(cuInit); F(cuDriverGetVersion); F(cuDeviceGetCount); F(cuDeviceGet); F(cuDeviceGetUuid); F(cuDeviceGetPCIBusId);
F(cuDeviceGetAttribute); F(cuDeviceCanAccessPeer); F(cuDeviceGetName); F(cuDeviceGetByPCIBusId);
F(cuDevicePrimaryCtxRetain); F(cuDevicePrimaryCtxRelease); F(cuCtxSetCurrent); F(cuCtxGetCurrent);
F(cuCtxGetDevice); F(cuCtxPushCurrent); F(cuCtxPopCurrent); F(cuMemAlloc); F(cuMemFree); F(cuMemAllocHost);
F(cuMemFreeHost); F(cuMemHostRegister); F(cuMemHostUnregister); F(cuPointerGetAttribute); F(cuPointerGetAttributes);
F(cuMemGetAddressRange); F(cuMemcpyHtoD); F(cuMemcpyDtoH); F(cuMemcpyDtoD); F(cuMemcpy); F(cuMemsetD8);
F(cuMemGetInfo); F(cuGetErrorName); F(cuMemHostGetDevicePointer); F(cuIpcOpenMemHandle); F(cuIpcGetMemHandle);

int main(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDriverGetVersion); LOAD(cuDeviceGetCount); LOAD(cuDeviceGet); LOAD(cuDeviceGetUuid);
    LOAD(cuDeviceGetPCIBusId); LOAD(cuDeviceGetAttribute); LOAD(cuDeviceCanAccessPeer); LOAD(cuDeviceGetName);
    LOAD(cuDeviceGetByPCIBusId); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuDevicePrimaryCtxRelease);
    LOAD(cuCtxSetCurrent); LOAD(cuCtxGetCurrent); LOAD(cuCtxGetDevice); LOAD(cuCtxPushCurrent); LOAD(cuCtxPopCurrent);
    LOAD(cuMemAlloc); LOAD(cuMemFree); LOAD(cuMemAllocHost); LOAD(cuMemFreeHost); LOAD(cuMemHostRegister);
    LOAD(cuMemHostUnregister); LOAD(cuPointerGetAttribute); LOAD(cuPointerGetAttributes); LOAD(cuMemGetAddressRange);
    LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH); LOAD(cuMemcpyDtoD); LOAD(cuMemcpy); LOAD(cuMemsetD8); LOAD(cuMemGetInfo);
    LOAD(cuGetErrorName); LOAD(cuMemHostGetDevicePointer); LOAD(cuIpcOpenMemHandle); LOAD(cuIpcGetMemHandle);

    /* before cuInit */
    int n = -1;
    CHECK(p_cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED);
    CK(p_cuInit(0));
    int v = 0;
    CK(p_cuDriverGetVersion(&v));
    CHECK(v == CUDA_VERSION);

    /* what old callers get: no v1 ABI in the emulator */
    void *fn = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CHECK(p_cuGetProcAddress("cuMemAlloc", &fn, 3000, 0, &st) == CUDA_ERROR_NOT_FOUND);
    CHECK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && !fn);
    CHECK(p_cuGetProcAddress("cuNoSuchCall", &fn, CUDA_VERSION, 0, &st) == CUDA_ERROR_NOT_FOUND);
    CHECK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);

    /* the container sees host GPUs 1 and 3 (CUDAEMU_VISIBLE=1,3) */
    CK(p_cuDeviceGetCount(&n));
    CHECK(n == 2);
    CUdevice d0, d1;
    CK(p_cuDeviceGet(&d0, 0));
    CK(p_cuDeviceGet(&d1, 1));
    CHECK(p_cuDeviceGet(&d1, 2) == CUDA_ERROR_INVALID_DEVICE);
    CUuuid u;
    CK(p_cuDeviceGetUuid(&u, d0));
    CHECK(u.bytes[15] == 1 && u.bytes[0] == 0x11);
    CK(p_cuDeviceGetUuid(&u, d1));
    CHECK(u.bytes[15] == 3);
    char bus[32], name[64];
    CK(p_cuDeviceGetPCIBusId(bus, sizeof bus, d1));
    CHECK(!strcmp(bus, "0000:89:00.0"));
    CK(p_cuDeviceGetName(name, sizeof name, d0));
    CHECK(!strcmp(name, "cudaemu-B"));
    CUdevice byid = -1;
    CK(p_cuDeviceGetByPCIBusId(&byid, "0000:89:00.0"));
    CHECK(byid == 1);
    int numa = -1, busno = -1, peer = -1;
    CK(p_cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, d1));
    CHECK(numa == 1);
    CK(p_cuDeviceGetAttribute(&busno, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d0));
    CHECK(busno == 0x1b);
    CK(p_cuDeviceCanAccessPeer(&peer, d0, d1));
    CHECK(peer == 0); /* host GPUs 1 and 3 are not NVLink peers */

    /* no context yet: allocations fail */
    CUdeviceptr dp = 0;
    CHECK(p_cuMemAlloc(&dp, 64) == CUDA_ERROR_INVALID_CONTEXT);
    CUcontext ctx, cur = NULL, ctx1;
    CK(p_cuDevicePrimaryCtxRetain(&ctx, d0));
    CK(p_cuCtxSetCurrent(ctx));
    CK(p_cuCtxGetCurrent(&cur));
    CHECK(cur == ctx);
    CUdevice cd = -1;
    CK(p_cuCtxGetDevice(&cd));
    CHECK(cd == d0);

    enum { N = 100000 };
    CK(p_cuMemAlloc(&dp, N));
    CUdeviceptr dq = 0;
    CK(p_cuMemAlloc(&dq, N));
    unsigned char *h = malloc(N), *back = malloc(N), *pinned = NULL;
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 7 + 3);
    CK(p_cuMemAllocHost((void **)&pinned, N));
    CK(p_cuMemHostRegister(h, N, 0));
    CHECK(p_cuMemHostRegister(h + 10, 5, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);

    /* pointer attributes */
    unsigned mt = 99;
    CK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp + 17));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)pinned));
    CHECK(mt == CU_MEMORYTYPE_HOST);
    CK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)(h + 5)));
    CHECK(mt == CU_MEMORYTYPE_HOST);
    int stackvar = 0;
    CHECK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&stackvar) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp + N) == CUDA_ERROR_INVALID_VALUE);
    void *hp = (void *)1;
    CHECK(p_cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, dp) == CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr dev_of_pinned = 0;
    CK(p_cuMemHostGetDevicePointer(&dev_of_pinned, pinned, 0));
    CHECK(dev_of_pinned == (CUdeviceptr)(uintptr_t)pinned);
    CUpointer_attribute at[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                 CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_BUFFER_ID};
    int ord = -1;
    CUcontext actx = NULL;
    unsigned long long id1 = 0, id2 = 0;
    void *data[4] = {&mt, &ord, &actx, &id1};
    CK(p_cuPointerGetAttributes(4, at, data, dq + 5));
    CHECK(mt == CU_MEMORYTYPE_DEVICE && ord == 0 && actx == ctx && id1 != 0);
    data[3] = &id2;
    CK(p_cuPointerGetAttributes(4, at, data, dp));
    CHECK(id2 != id1);
    CK(p_cuPointerGetAttributes(4, at, data, (CUdeviceptr)(uintptr_t)&stackvar)); /* no error, null values */
    CHECK(mt == 0 && actx == NULL);
    CUdeviceptr base = 0;
    size_t size = 0;
    CK(p_cuMemGetAddressRange(&base, &size, dp + 1234));
    CHECK(base == dp && size == N);
    CHECK(p_cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)&stackvar) == CUDA_ERROR_NOT_FOUND);

    /* copies: H2D, D2D, D2H, unified, memset; fresh device memory is not zero */
    CK(p_cuMemcpyDtoH(back, dp, 16));
    CHECK(back[0] == 0xcd && back[15] == 0xcd);
    CK(p_cuMemcpyHtoD(dp, h, N));
    CK(p_cuMemcpyDtoD(dq, dp, N));
    memset(back, 0, N);
    CK(p_cuMemcpyDtoH(back, dq, N));
    CHECK(!memcmp(back, h, N));
    CK(p_cuMemcpy((CUdeviceptr)(uintptr_t)pinned, dq, N)); /* direction from the pointers */
    CHECK(!memcmp(pinned, h, N));
    CK(p_cuMemsetD8(dq + 10, 0xab, 20));
    CK(p_cuMemcpyDtoH(back, dq, 40));
    CHECK(back[9] == h[9] && back[10] == 0xab && back[29] == 0xab && back[30] == h[30]);
    CHECK(p_cuMemcpyHtoD(dp + N - 4, h, 8) == CUDA_ERROR_INVALID_VALUE); /* past the allocation */
    CHECK(p_cuMemcpyHtoD((CUdeviceptr)(uintptr_t)back, h, 8) == CUDA_ERROR_INVALID_VALUE); /* dst is host */

    /* IPC inside one process is refused, interior pointers are refused */
    CUipcMemHandle ih;
    CHECK(p_cuIpcGetMemHandle(&ih, dp + 8) == CUDA_ERROR_INVALID_VALUE);
    CK(p_cuIpcGetMemHandle(&ih, dp));
    CUdeviceptr opened = 0;
    CHECK(p_cuIpcOpenMemHandle(&opened, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_ERROR_INVALID_CONTEXT);

    /* out of device memory (64 MB per device) and injected faults
     * (CUDAEMU_FAIL=cuMemAlloc@4: the 4th allocation fails) */
    size_t fr = 0, tot = 0;
    CK(p_cuMemGetInfo(&fr, &tot));
    CHECK(tot == 64u << 20 && fr < tot);
    CUdeviceptr big = 0;
    CHECK(p_cuMemAlloc(&big, (size_t)65 << 20) == CUDA_ERROR_OUT_OF_MEMORY); /* 3rd */
    CHECK(p_cuMemAlloc(&big, 64) == CUDA_ERROR_OUT_OF_MEMORY);              /* 4th: injected */
    CK(p_cuMemAlloc(&big, 64));                                            /* 5th */
    CK(p_cuMemFree(big));
    const char *en = NULL;
    CK(p_cuGetErrorName(CUDA_ERROR_INVALID_CONTEXT, &en));
    CHECK(en && !strcmp(en, "CUDA_ERROR_INVALID_CONTEXT"));

    /* a second device through a pushed context */
    CK(p_cuDevicePrimaryCtxRetain(&ctx1, d1));
    CK(p_cuCtxPushCurrent(ctx1));
    CUdeviceptr other = 0;
    CK(p_cuMemAlloc(&other, 64));
    CK(p_cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, other));
    CHECK(ord == 1);
    CK(p_cuMemcpyDtoD(other, dp, 64)); /* not peers: staged, still correct */
    CK(p_cuMemcpyDtoH(back, other, 64));
    CHECK(!memcmp(back, h, 64));
    CK(p_cuMemFree(other));
    CUcontext popped = NULL;
    CK(p_cuCtxPopCurrent(&popped));
    CHECK(popped == ctx1);
    CK(p_cuCtxGetDevice(&cd));
    CHECK(cd == d0);

    CK(p_cuMemHostUnregister(h));
    CHECK(p_cuMemHostUnregister(h) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    CK(p_cuMemFreeHost(pinned));
    CK(p_cuMemFree(dp));
    CK(p_cuMemFree(dq));
    CHECK(p_cuMemFree(dq) == CUDA_ERROR_INVALID_VALUE);
    CK(p_cuDevicePrimaryCtxRelease(d1));
    CK(p_cuDevicePrimaryCtxRelease(d0));
    free(h);
    free(back);
    printf("cudaemu basic: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
