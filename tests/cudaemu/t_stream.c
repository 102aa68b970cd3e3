/* cudaemu: streams are worker threads with random delays
 * (CUDAEMU_STREAM_DELAY_US): code that reads a buffer an async copy fills,
 * without waiting, sees stale data; events, stream waits and the legacy
 * stream's implicit synchronization order the work. */
#include <stdint.h>
#include <time.h>

#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc); F(cuMemFree);
F(cuMemAllocHost); F(cuMemcpyHtoDAsync); F(cuMemcpyDtoHAsync); F(cuMemcpyDtoH); F(cuMemcpyHtoD);
F(cuStreamCreate); F(cuStreamDestroy); F(cuStreamSynchronize); F(cuStreamQuery); F(cuStreamWaitEvent);
F(cuEventCreate); F(cuEventRecord); F(cuEventQuery); F(cuEventSynchronize); F(cuEventElapsedTime);
F(cuEventDestroy); F(cuMemsetD8Async); F(cuCtxSynchronize);

int main(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemAlloc);
    LOAD(cuMemFree); LOAD(cuMemAllocHost); LOAD(cuMemcpyHtoDAsync); LOAD(cuMemcpyDtoHAsync); LOAD(cuMemcpyDtoH);
    LOAD(cuMemcpyHtoD); LOAD(cuStreamCreate); LOAD(cuStreamDestroy); LOAD(cuStreamSynchronize);
    LOAD(cuStreamQuery); LOAD(cuStreamWaitEvent); LOAD(cuEventCreate); LOAD(cuEventRecord); LOAD(cuEventQuery);
    LOAD(cuEventSynchronize); LOAD(cuEventElapsedTime); LOAD(cuEventDestroy); LOAD(cuMemsetD8Async);
    LOAD(cuCtxSynchronize);
    CK(p_cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    enum { N = 1 << 16, TRIES = 20 };
    CUdeviceptr d;
    CK(p_cuMemAlloc(&d, N));
    unsigned char *h;
    CK(p_cuMemAllocHost((void **)&h, N));
    CUstream s1, s2, nb;
    CK(p_cuStreamCreate(&s1, CU_STREAM_DEFAULT));
    CK(p_cuStreamCreate(&s2, CU_STREAM_DEFAULT));
    CK(p_cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));

    /* 1. a missing synchronization reads stale data (the emulator is honest) */
    int stale = 0;
    for (int t = 0; t < TRIES; t++) {
        CK(p_cuMemsetD8Async(d, (unsigned char)(t + 1), N, s1));
        memset(h, 0, N);
        CK(p_cuMemcpyDtoHAsync(h, d, N, s1));
        if (h[N - 1] != (unsigned char)(t + 1)) /* no wait: wrong on purpose */
            stale++;
        CHECK(p_cuStreamQuery(s1) == CUDA_SUCCESS || 1);
        CK(p_cuStreamSynchronize(s1));
        CHECK(h[0] == (unsigned char)(t + 1) && h[N - 1] == (unsigned char)(t + 1));
    }
    printf("unsynchronized reads that saw stale data: %d of %d\n", stale, TRIES);
    CHECK(stale >= TRIES / 2);

    /* 2. an event orders two streams: s2 waits for s1's memset */
    for (int t = 0; t < TRIES; t++) {
        CUevent e;
        CK(p_cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
        CK(p_cuMemsetD8Async(d, (unsigned char)(0x40 + t), N, s1));
        CK(p_cuEventRecord(e, s1));
        CK(p_cuStreamWaitEvent(s2, e, 0));
        CK(p_cuMemcpyDtoHAsync(h, d, N, s2));
        CK(p_cuStreamSynchronize(s2));
        CHECK(h[N / 2] == (unsigned char)(0x40 + t));
        CK(p_cuEventQuery(e)); /* s2 finished after e completed */
        CK(p_cuEventDestroy(e));
    }

    /* 3. the legacy stream waits for blocking streams: a synchronous copy
     * after an async one on s1 sees its data */
    unsigned char *src = malloc(N), *dst = malloc(N);
    for (int t = 0; t < TRIES; t++) {
        memset(src, 0x80 + t, N);
        CK(p_cuMemcpyHtoDAsync(d, src, N, s1));
        CK(p_cuMemcpyDtoH(dst, d, N));
        CHECK(dst[N - 1] == (unsigned char)(0x80 + t));
        CK(p_cuStreamSynchronize(s1));
    }

    /* 4. event query and timing: not ready while the stream is delayed */
    CUevent a, b;
    CK(p_cuEventCreate(&a, CU_EVENT_DEFAULT));
    CK(p_cuEventCreate(&b, CU_EVENT_DEFAULT));
    CK(p_cuEventQuery(a)); /* never recorded: complete */
    int notready = 0;
    for (int t = 0; t < TRIES; t++) {
        CK(p_cuEventRecord(a, s1));
        CK(p_cuMemcpyHtoDAsync(d, src, N, s1));
        CK(p_cuEventRecord(b, s1));
        notready += p_cuEventQuery(b) == CUDA_ERROR_NOT_READY;
        CK(p_cuEventSynchronize(b));
        CK(p_cuEventQuery(b));
        float ms = -1;
        CK(p_cuEventElapsedTime(&ms, a, b));
        CHECK(ms >= 0.0f && ms < 5000.0f);
    }
    CHECK(notready >= TRIES / 2);
    CK(p_cuEventDestroy(a));
    CK(p_cuEventDestroy(b));

    CK(p_cuCtxSynchronize());
    CK(p_cuStreamDestroy(s1));
    CK(p_cuStreamDestroy(s2));
    CK(p_cuStreamDestroy(nb));
    CK(p_cuMemFree(d));
    free(src);
    free(dst);
    printf("cudaemu stream: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
