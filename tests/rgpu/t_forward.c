/* Every forwarded driver call, run the same way on the emulator itself and
 * through the rgpu client driver (one or two servers): devices and their
 * attributes, contexts, memory, pointer attributes, copies in every
 * direction and size (zero, unaligned, across the message chunk), streams
 * and events with their ordering, modules and kernel launch, and with two
 * or more GPUs copies between every pair (through two servers: directly
 * from server to server).
 *   t_forward MODULE.so        prints "rgpu forward: ok" */
#include <stdint.h>
#include <string.h>

#include "t_common.h"

static unsigned char *pattern(size_t n, unsigned seed)
{
    unsigned char *p = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 9)) & 0xff);
    return p;
}

/* host -> device -> device (other device d2) -> host, sizes and offsets */
static void copies(CUcontext c1, CUcontext c2, CUstream s1)
{
    static const size_t sizes[] = {0, 1, 7, 4099, 65536, (1u << 20) + 5, (17u << 20) + 3};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k], off = k % 3 ? 13 : 0;
        unsigned char *src = pattern(n + off, (unsigned)k), *back = malloc(n + off + 1);
        CUdeviceptr a, b;
        CU(cuCtxSetCurrent(c1));
        CU(cuMemAlloc(&a, n + off + 1));
        CU(cuCtxSetCurrent(c2));
        CU(cuMemAlloc(&b, n + off + 1));
        CU(cuCtxSetCurrent(c1));
        /* sync copies */
        CU(cuMemcpyHtoD(a + off, src + off, n));
        CU(cuMemcpyDtoD(b + off, a + off, n));               /* c1 -> c2 (peer or across servers) */
        memset(back, 0x5a, n + off + 1);
        CU(cuMemcpyDtoH(back + off, b + off, n));
        CHECK(!memcmp(back + off, src + off, n));
        CHECK(back[n + off] == 0x5a);
        /* async copies on a stream, then the generic cuMemcpy and cuMemcpyPeer */
        memset(back, 0, n + off + 1);
        CU(cuMemsetD8Async(a, 0x11, n + off + 1, s1));
        CU(cuMemcpyHtoDAsync(a + off, src + off, n, s1));
        CU(cuMemcpyDtoHAsync(back + off, a + off, n, s1));
        CU(cuStreamSynchronize(s1));
        CHECK(!memcmp(back + off, src + off, n));
        CU(cuMemsetD8(b, 0x22, n + off + 1));
        CU(cuMemcpyPeer(b + off, c2, a + off, c1, n));
        CU(cuMemcpy((CUdeviceptr)(uintptr_t)back, b, n + off + 1));
        CHECK(!n || back[0] == (off ? 0x22 : src[0]));
        CHECK(!memcmp(back + off, src + off, n));
        CHECK(back[n + off] == 0x22);
        CU(cuMemcpyPeerAsync(a, c1, b, c2, n + off + 1, s1));
        CU(cuStreamSynchronize(s1));
        memset(back, 0, n + off + 1);
        CU(cuMemcpyDtoH(back, a, n + off + 1));
        CHECK(back[n + off] == 0x22 && !memcmp(back + off, src + off, n));
        /* past the end of an allocation: refused */
        CU_IS(cuMemcpyHtoD(a + 1, src, n + off + 1), CUDA_ERROR_INVALID_VALUE);
        CU(cuMemFree(a));
        CU(cuCtxSetCurrent(c2));
        CU(cuMemFree(b));
        CU(cuCtxSetCurrent(c1));
        free(src);
        free(back);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_forward MODULE.so\n");
        return 2;
    }
    CU(cuInit(0));
    int ndev = 0, v = 0;
    CU(cuDeviceGetCount(&ndev));
    CU(cuDriverGetVersion(&v));
    CHECK(ndev >= 1 && v >= 12000);
    for (int d = 0; d < ndev; d++) {
        CUdevice dev;
        char name[128], pci[32];
        CUuuid uu;
        size_t tot;
        int cc = 0, ua = 0;
        CU(cuDeviceGet(&dev, d));
        CU(cuDeviceGetName(name, sizeof name, dev));
        CU(cuDeviceGetPCIBusId(pci, sizeof pci, dev));
        CU(cuDeviceGetUuid(&uu, dev));
        CU(cuDeviceTotalMem(&tot, dev));
        CU(cuDeviceGetAttribute(&cc, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
        CU(cuDeviceGetAttribute(&ua, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, dev));
        CHECK(name[0] && strlen(pci) >= 12 && tot > 0 && cc >= 1 && ua == 1);
        printf("device %d: %s pci %s mem %zu\n", d, name, pci, tot);
    }
    CU_IS(cuDeviceGetName((char[8]){0}, 8, ndev), CUDA_ERROR_INVALID_DEVICE);
    CU_IS(cuMemAlloc(&(CUdeviceptr){0}, 16), CUDA_ERROR_INVALID_CONTEXT);

    /* contexts */
    CUcontext c1, c2, cur;
    CU(cuDevicePrimaryCtxRetain(&c1, 0));
    CU(cuDevicePrimaryCtxRetain(&c2, ndev - 1));
    CU(cuCtxSetCurrent(c1));
    CU(cuCtxGetCurrent(&cur));
    CHECK(cur == c1);
    CU(cuCtxPushCurrent(c2));
    CUdevice cd;
    CU(cuCtxGetDevice(&cd));
    CHECK(cd == ndev - 1);
    CU(cuCtxPopCurrent(&cur));
    CHECK(cur == c2);
    CUcontext own;
    CU(cuCtxCreate(&own, 0, 0));
    CU(cuCtxGetCurrent(&cur));
    CHECK(cur == own);
    CUdeviceptr op;
    CU(cuMemAlloc(&op, 1000));
    CU(cuCtxDestroy(own)); /* its memory goes with it */
    CU(cuCtxSetCurrent(c1));

    /* memory and pointer attributes */
    size_t fr, tot;
    CU(cuMemGetInfo(&fr, &tot));
    CHECK(fr <= tot && tot > 0);
    CUdeviceptr d;
    void *h;
    CU(cuMemAlloc(&d, 3000));
    CU(cuMemAllocHost(&h, 5000));
    unsigned mt = 0;
    CUcontext pc = NULL;
    int ord = -1;
    CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 100));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CU(cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, d));
    CHECK(pc == c1);
    CU(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
    CHECK(ord == 0);
    CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h));
    CHECK(mt == CU_MEMORYTYPE_HOST);
    int local = 0;
    CU_IS(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)&local),
          CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr base;
    size_t bsz;
    CU(cuMemGetAddressRange(&base, &bsz, d + 17));
    CHECK(base == d && bsz == 3000);
    memset(h, 7, 5000);
    CU(cuMemcpyHtoD(d, h, 3000));
    memset(h, 0, 5000);
    CU(cuMemcpyDtoH(h, d, 3000));
    CHECK(((unsigned char *)h)[2999] == 7);
    CU(cuMemFreeHost(h));
    CU(cuMemFree(d));
    CU_IS(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);

    /* streams and events: ordering across streams through an event */
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent e1, e2;
    CU(cuEventCreate(&e1, 0));
    CU(cuEventCreate(&e2, 0));
    size_t n = 8u << 20;
    unsigned char *hp = pattern(n, 3), *hb = malloc(n);
    CUdeviceptr x, y;
    CU(cuMemAlloc(&x, n));
    CU(cuMemAlloc(&y, n));
    CU(cuEventRecord(e1, s1));
    CU(cuMemcpyHtoDAsync(x, hp, n, s1));
    CU(cuEventRecord(e2, s1));
    CU(cuStreamWaitEvent(s2, e2, 0));
    CU(cuMemcpyDtoDAsync(y, x, n, s2)); /* must see the data of s1 */
    CU(cuMemcpyDtoHAsync(hb, y, n, s2));
    CU(cuStreamSynchronize(s2));
    CHECK(!memcmp(hb, hp, n));
    CU(cuEventSynchronize(e2));
    CU(cuEventQuery(e2));
    float ms = -1;
    CU(cuEventElapsedTime(&ms, e1, e2));
    CHECK(ms >= 0);
    CU(cuStreamQuery(s1));
    CU(cuCtxSynchronize());

    /* modules and kernels */
    CUmodule mod, mod2;
    CUfunction fv, fs, fsa;
    CU(cuModuleLoad(&mod, argv[1]));
    FILE *f = fopen(argv[1], "rb");
    CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    long isz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *img = malloc((size_t)isz);
    CHECK(fread(img, 1, (size_t)isz, f) == (size_t)isz);
    fclose(f);
    CU(cuModuleLoadData(&mod2, img));
    free(img);
    CU(cuModuleGetFunction(&fv, mod, "vadd"));
    CU(cuModuleGetFunction(&fs, mod2, "sum"));
    CU(cuModuleGetFunction(&fsa, mod2, "scale_add"));
    CU_IS(cuModuleGetFunction(&fv, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    size_t po = 0, ps = 0;
    CU(cuFuncGetParamInfo(fv, 3, &po, &ps));
    CHECK(po == 24 && ps == 4);
    uint32_t m = 1000;
    double *ha = malloc(m * 8), *hbv = malloc(m * 8), *hc = malloc(m * 8), total = 0, want = 0;
    for (uint32_t i = 0; i < m; i++) {
        ha[i] = i * 0.5;
        hbv[i] = 1000.0 - i;
        want += (ha[i] + hbv[i]) * 2.0 + 1.0;
    }
    CUdeviceptr da, db, dc, dsum;
    CU(cuMemAlloc(&da, m * 8));
    CU(cuMemAlloc(&db, m * 8));
    CU(cuMemAlloc(&dc, m * 8));
    CU(cuMemAlloc(&dsum, 8));
    CU(cuMemcpyHtoDAsync(da, ha, m * 8, s1));
    CU(cuMemcpyHtoDAsync(db, hbv, m * 8, s1));
    void *args[] = {&da, &db, &dc, &m};
    CU(cuLaunchKernel(fv, 4, 1, 1, 64, 1, 1, 0, s1, args, NULL));
    double sc = 2.0;
    void *args2[] = {&dc, &sc, &m};
    CU(cuLaunchKernel(fsa, 1, 1, 1, 1, 1, 1, 0, s1, args2, NULL));
    struct {
        CUdeviceptr x, out;
        uint32_t n;
    } packed = {dc, dsum, m};
    size_t psz = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &psz, CU_LAUNCH_PARAM_END};
    CU(cuLaunchKernel(fs, 1, 1, 1, 1, 1, 1, 0, s1, NULL, extra));
    CU(cuMemcpyDtoHAsync(&total, dsum, 8, s1));
    CU(cuMemcpyDtoHAsync(hc, dc, m * 8, s1));
    CU(cuStreamSynchronize(s1));
    CHECK(total == want);
    CHECK(hc[10] == (ha[10] + hbv[10]) * 2.0 + 1.0);
    CU(cuModuleUnload(mod2));
    CU(cuModuleUnload(mod));
    CU(cuMemFree(da));
    CU(cuMemFree(db));
    CU(cuMemFree(dc));
    CU(cuMemFree(dsum));
    free(ha);
    free(hbv);
    free(hc);
    free(hp);
    free(hb);

    /* copies of every direction and size, between the first and last GPU */
    copies(c1, c2, s1);

    /* cuGetProcAddress (how wharf loads the driver) */
    void *fn = NULL;
    CU(cuGetProcAddress("cuMemAlloc", &fn, 12000, 0, NULL));
    CHECK(fn != NULL);
    CU_IS(cuGetProcAddress("cuNoSuchCall", &fn, 12000, 0, NULL), CUDA_ERROR_NOT_FOUND);

    CU(cuEventDestroy(e1));
    CU(cuEventDestroy(e2));
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
    CU(cuMemFree(x));
    CU(cuMemFree(y));
    CU(cuDevicePrimaryCtxRelease(0));
    CU(cuDevicePrimaryCtxRelease(ndev - 1));
    printf("rgpu forward: %s (%d devices)\n", t_fail ? "FAILED" : "ok", ndev);
    return t_fail ? 1 : 0;
}
