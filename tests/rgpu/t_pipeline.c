/* Asynchronous calls are pipelined, not waited for: 200 kernel launches,
 * 100 small asynchronous host-to-device and 100 device-to-host copies and
 * event records on two streams, one synchronization at the end.  The data
 * must be right; run with WHARF_RGPU_STATS=1, the client driver reports how
 * many requests it waited for (the test wants only the setup's and the final
 * synchronization's). */
#include <stdint.h>
#include <string.h>

#include "t_common.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    CU(cuInit(0));
    CUcontext c;
    CU(cuDevicePrimaryCtxRetain(&c, 0));
    CU(cuCtxSetCurrent(c));
    CUmodule m;
    CUfunction f;
    CU(cuModuleLoad(&m, argv[1]));
    CU(cuModuleGetFunction(&f, m, "scale_add"));
    CUstream s1, s2;
    CUevent e;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    enum { N = 100, L = 200 };
    CUdeviceptr x, y;
    CU(cuMemAlloc(&x, 8 * N));
    CU(cuMemAlloc(&y, 8 * N));
    double in[N], out[N], want[N];
    for (int i = 0; i < N; i++) {
        in[i] = i;
        out[i] = -1;
        want[i] = i;
    }
    for (int i = 0; i < N; i++) /* one element at a time */
        CU(cuMemcpyHtoDAsync(x + 8 * (size_t)i, &in[i], 8, s1));
    uint32_t n = N;
    double one = 1.0;
    void *args[] = {&x, &one, &n};
    for (int k = 0; k < L; k++) /* x = x * 1 + 1, L times */
        CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s1, args, NULL));
    for (int i = 0; i < N; i++)
        want[i] += L;
    CU(cuEventRecord(e, s1));
    CU(cuStreamWaitEvent(s2, e, 0));
    CU(cuMemcpyDtoDAsync(y, x, 8 * N, s2));
    for (int i = 0; i < N; i++)
        CU(cuMemcpyDtoHAsync(&out[i], y + 8 * (size_t)i, 8, s2));
    CU(cuStreamSynchronize(s2));
    CHECK(!memcmp(out, want, sizeof out));
    CU(cuModuleUnload(m));
    CU(cuMemFree(x));
    CU(cuMemFree(y));
    CU(cuEventDestroy(e));
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
    printf("rgpu pipeline: %s\n", t_fail ? "FAILED" : "ok");
    return t_fail ? 1 : 0;
}
