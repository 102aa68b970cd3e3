/* Remote-GPU benchmarks (docs/RGPU.md), run as a client of the rgpu driver
 * (LD_LIBRARY_PATH=build/lib/rgpu, WHARF_RGPU_SERVERS, the secret):
 *
 *   rgpu_bench copy [MAXBYTES]   copies between the first and the last GPU
 *        (two servers: server to server) with cuMemcpyPeer, against staging
 *        through the client (cuMemcpyDtoH + cuMemcpyHtoD), per size: MB/s
 *   rgpu_bench lat [ITERS]       small-call round trips: cuCtxSynchronize on
 *        an idle context, cuStreamQuery, cuEventRecord+cuEventSynchronize,
 *        against a bare request/response (PING) on the same transport
 *
 * Short runs only here: the lead measures on a quiet machine. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rgpu/rg_wire.h"

#define CU(x)                                                                                               \
    do {                                                                                                    \
        CUresult r_ = (x);                                                                                  \
        if (r_ != CUDA_SUCCESS) {                                                                           \
            fprintf(stderr, "rgpu_bench: %s failed: %d\n", #x, (int)r_);                                    \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int bench_copy(size_t maxb)
{
    int ndev;
    CU(cuInit(0));
    CU(cuDeviceGetCount(&ndev));
    CUcontext c1, c2;
    CU(cuDevicePrimaryCtxRetain(&c1, 0));
    CU(cuDevicePrimaryCtxRetain(&c2, ndev - 1));
    CUdeviceptr a, b;
    void *h;
    CU(cuCtxSetCurrent(c2));
    CU(cuMemAlloc(&b, maxb));
    CU(cuCtxSetCurrent(c1));
    CU(cuMemAlloc(&a, maxb));
    CU(cuMemAllocHost(&h, maxb));
    CU(cuMemsetD8(a, 1, maxb));
    printf("# rgpu copy: device 0 -> device %d (%s)\n", ndev - 1, ndev > 1 ? "first and last GPU" : "one GPU");
    printf("%12s %14s %14s %8s\n", "bytes", "direct MB/s", "staged MB/s", "ratio");
    for (size_t n = 64u << 10; n <= maxb; n *= 4) {
        int reps = n >= (16u << 20) ? 3 : 10;
        CU(cuMemcpyPeer(b, c2, a, c1, n)); /* warm-up: buffers, connections */
        double t0 = now();
        for (int i = 0; i < reps; i++)
            CU(cuMemcpyPeer(b, c2, a, c1, n));
        double td = (now() - t0) / reps;
        CU(cuMemcpyDtoH(h, a, n));
        t0 = now();
        for (int i = 0; i < reps; i++) {
            CU(cuMemcpyDtoH(h, a, n));
            CU(cuMemcpyHtoD(b, h, n));
        }
        double ts = (now() - t0) / reps;
        printf("%12zu %14.1f %14.1f %8.2f\n", n, n / td / 1e6, n / ts / 1e6, ts / td);
    }
    return 0;
}

static int bench_lat(int iters)
{
    CU(cuInit(0));
    CUcontext c;
    CU(cuDevicePrimaryCtxRetain(&c, 0));
    CU(cuCtxSetCurrent(c));
    CUstream s;
    CUevent e;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    double t0 = now();
    for (int i = 0; i < iters; i++)
        CU(cuCtxSynchronize());
    double tsync = (now() - t0) / iters;
    t0 = now();
    for (int i = 0; i < iters; i++)
        CU(cuStreamQuery(s));
    double tq = (now() - t0) / iters;
    t0 = now();
    for (int i = 0; i < iters; i++) {
        CU(cuEventRecord(e, s));
        CU(cuEventSynchronize(e));
    }
    double tev = (now() - t0) / iters;
    /* a bare request/response on a connection of our own to the first server */
    double tping = -1;
    const char *list = getenv("WHARF_RGPU_SERVERS");
    char host[128], err[256], first[256] = "";
    int port;
    uint8_t key[RG_KEY_MAX];
    size_t keylen;
    if (list)
        snprintf(first, sizeof first, "%.*s", (int)strcspn(list, ","), list);
    if (*first && !rg_split_hostport(first, host, sizeof host, &port) &&
        !rg_secret_load(NULL, key, &keylen, err, sizeof err)) {
        /* the transport the client driver uses (WHARF_RGPU_TRANSPORT, WHARF_RGPU_PROVIDER) */
        const char *tr = getenv("WHARF_RGPU_TRANSPORT"), *pv = getenv("WHARF_RGPU_PROVIDER");
        int fport, hmem;
        rg_conn_t *fd = rg_client_open(host, port, key, keylen, tr && *tr ? tr : "fabric", pv && *pv ? pv : "tcp",
                                       10000, &fport, &hmem, err, sizeof err);
        if (fd) {
            printf("# bare request/response over %s%s\n", *rg_conn_provider(fd) ? "libfabric " : "the socket",
                   rg_conn_provider(fd));
            rg_buf_t in = {0};
            rg_hdr_t h;
            t0 = now();
            int i;
            for (i = 0; i < iters; i++)
                if (rg_send_msg(fd, RG_OP_PING, 0, (uint64_t)i, NULL, 0, NULL, 0) ||
                    rg_recv_msg(fd, &h, &in, 10000))
                    break;
            if (i == iters)
                tping = (now() - t0) / iters;
            rg_buf_free(&in);
        }
        rg_conn_close(fd);
    }
    printf("# rgpu small calls, %d iterations each (us per call)\n", iters);
    printf("bare request/response (ping): %8.2f\n", tping * 1e6);
    printf("cuCtxSynchronize (idle):      %8.2f  (%.2fx ping)\n", tsync * 1e6, tping > 0 ? tsync / tping : 0);
    printf("cuStreamQuery (idle):         %8.2f  (%.2fx ping)\n", tq * 1e6, tping > 0 ? tq / tping : 0);
    printf("cuEventRecord+Synchronize:    %8.2f  (%.2fx ping)\n", tev * 1e6, tping > 0 ? tev / tping : 0);
    CU(cuEventDestroy(e));
    CU(cuStreamDestroy(s));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "copy") && strcmp(argv[1], "lat"))) {
        fprintf(stderr, "usage: rgpu_bench copy [MAXBYTES] | lat [ITERS]\n");
        return 2;
    }
    if (!strcmp(argv[1], "copy"))
        return bench_copy(argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (64u << 20));
    return bench_lat(argc > 2 ? atoi(argv[2]) : 2000);
}
