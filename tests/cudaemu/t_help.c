/* cudaemu: helping (no stream delay configured).  A thread that queries or
 * waits for a stream runs its ready head operations itself; the test checks
 * that this keeps stream order with several threads helping at once, that
 * the worker still completes work nobody asks about, and that a stream can be
 * destroyed while another thread queries an event recorded on it, or while
 * an op of the legacy stream still depends on it.  With T_SLOW_COPY set (and
 * a slow device-to-host model), only: a query does not wait out a copy's
 * modeled time, and the copy does not complete before it. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc); F(cuMemFree);
F(cuMemAllocHost); F(cuMemcpyDtoHAsync); F(cuMemsetD8Async); F(cuStreamCreate); F(cuStreamDestroy);
F(cuStreamSynchronize); F(cuStreamQuery); F(cuEventCreate); F(cuEventRecord); F(cuEventQuery);
F(cuEventSynchronize); F(cuEventDestroy);

enum { N = 1 << 16, ROUNDS = 200, OPS = 8, HELPERS = 3 };
static CUcontext ctx;
static CUstream s;
static CUevent ev;
static _Atomic int stop;

/* spin on queries of the event, and of the shared stream unless arg is
 * non-NULL (the event's stream comes and goes) */
static void *helper(void *arg)
{
    if (p_cuCtxSetCurrent(ctx))
        return (void *)1;
    while (!stop) {
        CUresult r = arg ? CUDA_SUCCESS : p_cuStreamQuery(s);
        CUresult q = p_cuEventQuery(ev);
        if ((r && r != CUDA_ERROR_NOT_READY) || (q && q != CUDA_ERROR_NOT_READY))
            return (void *)1;
    }
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemAlloc);
    LOAD(cuMemFree); LOAD(cuMemAllocHost); LOAD(cuMemcpyDtoHAsync); LOAD(cuMemsetD8Async); LOAD(cuStreamCreate);
    LOAD(cuStreamDestroy); LOAD(cuStreamSynchronize); LOAD(cuStreamQuery); LOAD(cuEventCreate);
    LOAD(cuEventRecord); LOAD(cuEventQuery); LOAD(cuEventSynchronize); LOAD(cuEventDestroy);
    CK(p_cuInit(0));
    CUdevice dev;
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUdeviceptr d;
    CK(p_cuMemAlloc(&d, N));
    volatile unsigned char *h;
    CK(p_cuMemAllocHost((void **)&h, N));
    CK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(p_cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));

    if (getenv("T_SLOW_COPY")) {
        /* 0. CUDAEMU_D2H_GBPS=0.001: 64 KiB take 65.5 ms (+ 2 us).  The
         * query right after the record moves the data and returns at once,
         * not after 65 ms (bounds loose enough for a loaded machine); the
         * event fires no earlier than the model says, whoever looks. */
        for (int round = 0; round < 2; round++) {
            double t0 = now();
            CK(p_cuMemcpyDtoHAsync((void *)h, d, N, s));
            CK(p_cuEventRecord(ev, s));
            double tq = now();
            CUresult q = p_cuEventQuery(ev);
            double dq = now() - tq;
            CHECK(q == CUDA_ERROR_NOT_READY);
            CHECK(dq < 0.040);
            if (round == 0) { /* a poller sees it complete */
                while (p_cuEventQuery(ev) == CUDA_ERROR_NOT_READY)
                    usleep(200);
            } else { /* nobody looks: the worker completes it */
                while (now() - t0 < 0.2)
                    usleep(1000);
                CHECK(p_cuEventQuery(ev) == CUDA_SUCCESS);
            }
            CHECK(now() - t0 >= 0.0655);
        }
        CK(p_cuEventDestroy(ev));
        CK(p_cuStreamDestroy(s));
        CK(p_cuMemFree(d));
        printf("cudaemu help (slow copy): %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
        return t_fail != 0;
    }

    /* 1. order kept while HELPERS threads and this one all help: each round
     * queues OPS memsets and one copy; the copy must see the last memset */
    pthread_t thr[HELPERS];
    for (int i = 0; i < HELPERS; i++)
        CHECK(pthread_create(&thr[i], NULL, helper, NULL) == 0);
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < OPS; k++)
            CK(p_cuMemsetD8Async(d, (unsigned char)(r * OPS + k), N, s));
        CK(p_cuMemcpyDtoHAsync((void *)h, d, N, s));
        CK(p_cuEventRecord(ev, s));
        if (r & 1)
            CK(p_cuEventSynchronize(ev));
        else
            CK(p_cuStreamSynchronize(s));
        unsigned char want = (unsigned char)(r * OPS + OPS - 1);
        CHECK(h[0] == want && h[N - 1] == want);
    }
    stop = 1;
    for (int i = 0; i < HELPERS; i++) {
        void *rv;
        pthread_join(thr[i], &rv);
        CHECK(rv == NULL);
    }

    /* 2. work nobody asks about still completes (the worker runs it): poll
     * host memory only, no driver call, for up to 10 s */
    h[0] = 0;
    CK(p_cuMemsetD8Async(d, 0x5a, N, s));
    CK(p_cuMemcpyDtoHAsync((void *)h, d, N, s));
    double t0 = now();
    while (h[N - 1] != 0x5a && now() - t0 < 10)
        usleep(100);
    CHECK(h[N - 1] == 0x5a);
    CK(p_cuStreamSynchronize(s));

    /* 3. a stream destroyed while another thread queries an event recorded on
     * it (the helper must not touch the freed stream; ASan would say so) */
    CK(p_cuStreamDestroy(s));
    for (int r = 0; r < 50; r++) {
        CUstream t;
        pthread_t q;
        void *rv;
        CK(p_cuStreamCreate(&t, CU_STREAM_NON_BLOCKING));
        for (int k = 0; k < OPS; k++)
            CK(p_cuMemsetD8Async(d, (unsigned char)k, N, t));
        CK(p_cuEventRecord(ev, t));
        stop = 0;
        CHECK(pthread_create(&q, NULL, helper, (void *)1) == 0);
        CK(p_cuStreamDestroy(t)); /* waits for its work */
        CK(p_cuEventQuery(ev));
        for (int k = 0; k < 1000; k++) /* the helper keeps querying after the destroy */
            CK(p_cuEventQuery(ev));
        stop = 1;
        pthread_join(q, &rv);
        CHECK(rv == NULL);
    }

    /* 4. a blocking stream destroyed while an op of the legacy stream still
     * depends on it (the legacy op must not read the freed stream) */
    for (int r = 0; r < 50; r++) {
        CUstream t;
        CK(p_cuStreamCreate(&t, 0));
        for (int k = 0; k < OPS; k++)
            CK(p_cuMemsetD8Async(d, (unsigned char)k, N, t));
        CK(p_cuMemsetD8Async(d, 0x33, N, CU_STREAM_LEGACY)); /* waits for t's memsets */
        CK(p_cuStreamDestroy(t));
        CK(p_cuMemcpyDtoHAsync((void *)h, d, N, CU_STREAM_LEGACY));
        CK(p_cuStreamSynchronize(CU_STREAM_LEGACY));
        CHECK(h[0] == 0x33 && h[N - 1] == 0x33);
    }
    CK(p_cuEventDestroy(ev));
    CK(p_cuMemFree(d));
    printf("cudaemu help: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
