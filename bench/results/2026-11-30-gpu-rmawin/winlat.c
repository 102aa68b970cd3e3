/* Put and get latency to a window over device memory against one over host
 * memory (MPI_Win_create over cuMemAlloc / malloc memory), passive target:
 * lock, one operation, unlock, rank 0 -> rank 1.  Host origin buffers.
 * Usage: winlat ITERS   (run with the emulated driver, WHARF_CUDA=1) */
#include <cuda.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double run(MPI_Win w, int get, void *buf, int n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, w);
        if (get)
            MPI_Get(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, w);
        else
            MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, w);
        MPI_Win_unlock(1, w);
    }
    return (MPI_Wtime() - t0) / iters * 1e6;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000, rank;
    enum { MAX = 1 << 20 };
    CUdevice dev;
    CUcontext ctx;
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CUdeviceptr d;
    cuMemAlloc(&d, MAX);
    void *h = calloc(1, MAX), *o = calloc(1, MAX);
    MPI_Win wd, wh;
    MPI_Win_create((void *)(uintptr_t)d, MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wd);
    MPI_Win_create(h, MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wh);
    if (rank == 0)
        printf("# size  put-host  put-device  get-host  get-device (us per lock/op/unlock)\n");
    for (int n = 8; n <= MAX; n *= 8) {
        int it = n >= 65536 ? iters / 10 : iters;
        double a = 0, b = 0, c = 0, e = 0;
        if (rank == 0) {
            a = run(wh, 0, o, n, it);
            b = run(wd, 0, o, n, it);
            c = run(wh, 1, o, n, it);
            e = run(wd, 1, o, n, it);
            printf("%7d %9.2f %11.2f %9.2f %11.2f\n", n, a, b, c, e);
        } else
            for (int k = 0; k < 4; k++)
                MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&wd);
    MPI_Win_free(&wh);
    cuMemFree(d);
    free(h);
    free(o);
    MPI_Finalize();
    return 0;
}
