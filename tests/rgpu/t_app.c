/* The test application: vector add and a reduction across two GPUs (the
 * first and the last visible), with a peer copy of the second GPU's partial
 * result to the first.  Prints "result ..." lines that must be identical on
 * the emulator and through two remote servers. */
#include <stdint.h>
#include <string.h>

#include "t_common.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_app MODULE.so [N]\n");
        return 2;
    }
    uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 1000003u, half = n / 2, rest = n - half;
    CU(cuInit(0));
    int ndev;
    CU(cuDeviceGetCount(&ndev));
    CUcontext ctx[2];
    CUmodule mod[2];
    CUfunction vadd[2], sum[2];
    CUstream st[2];
    CU(cuDevicePrimaryCtxRetain(&ctx[0], 0));
    CU(cuDevicePrimaryCtxRetain(&ctx[1], ndev - 1));
    double *a = malloc((size_t)n * 8), *b = malloc((size_t)n * 8);
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (double)(i % 1000) * 0.25;
        b[i] = 1.0 / (1.0 + (double)(i % 77));
    }
    CUdeviceptr da[2], db[2], dc[2], dout[2], gather;
    uint32_t cnt[2] = {half, rest}, off[2] = {0, half};
    for (int g = 0; g < 2; g++) {
        CU(cuCtxSetCurrent(ctx[g]));
        CU(cuModuleLoad(&mod[g], argv[1]));
        CU(cuModuleGetFunction(&vadd[g], mod[g], "vadd"));
        CU(cuModuleGetFunction(&sum[g], mod[g], "sum"));
        CU(cuStreamCreate(&st[g], CU_STREAM_NON_BLOCKING));
        CU(cuMemAlloc(&da[g], (size_t)cnt[g] * 8));
        CU(cuMemAlloc(&db[g], (size_t)cnt[g] * 8));
        CU(cuMemAlloc(&dc[g], (size_t)cnt[g] * 8));
        CU(cuMemAlloc(&dout[g], 8));
        CU(cuMemcpyHtoDAsync(da[g], a + off[g], (size_t)cnt[g] * 8, st[g]));
        CU(cuMemcpyHtoDAsync(db[g], b + off[g], (size_t)cnt[g] * 8, st[g]));
        void *args[] = {&da[g], &db[g], &dc[g], &cnt[g]};
        CU(cuLaunchKernel(vadd[g], 64, 1, 1, 128, 1, 1, 0, st[g], args, NULL));
    }
    /* the second GPU's sums go to the first GPU (a peer copy: between two
     * servers, directly from server to server), which reduces all of them */
    CU(cuCtxSetCurrent(ctx[0]));
    CU(cuMemAlloc(&gather, (size_t)n * 8));
    CU(cuStreamSynchronize(st[1]));
    CU(cuMemcpyDtoDAsync(gather, dc[0], (size_t)half * 8, st[0]));
    CU(cuMemcpyPeerAsync(gather + (size_t)half * 8, ctx[0], dc[1], ctx[1], (size_t)rest * 8, st[0]));
    void *sargs[] = {&gather, &dout[0], &n};
    CU(cuLaunchKernel(sum[0], 1, 1, 1, 1, 1, 1, 0, st[0], sargs, NULL));
    double total = 0, part = 0;
    CU(cuMemcpyDtoHAsync(&total, dout[0], 8, st[0]));
    CU(cuStreamSynchronize(st[0]));
    /* and the second GPU's own partial sum, for a second number */
    CU(cuCtxSetCurrent(ctx[1]));
    void *pargs[] = {&dc[1], &dout[1], &rest};
    CU(cuLaunchKernel(sum[1], 1, 1, 1, 1, 1, 1, 0, st[1], pargs, NULL));
    CU(cuMemcpyDtoHAsync(&part, dout[1], 8, st[1]));
    CU(cuStreamSynchronize(st[1]));
    double want = 0;
    for (uint32_t i = 0; i < n; i++)
        want += a[i] + b[i];
    CHECK(total == want);
    printf("result n=%u total=%.17g part=%.17g\n", n, total, part);
    free(a);
    free(b);
    for (int g = 0; g < 2; g++) {
        CU(cuCtxSetCurrent(ctx[g]));
        CU(cuModuleUnload(mod[g]));
        CU(cuStreamDestroy(st[g]));
        CU(cuDevicePrimaryCtxRelease(g ? ndev - 1 : 0));
    }
    return t_fail ? 1 : 0;
}
