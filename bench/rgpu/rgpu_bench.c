/* Remote-GPU benchmarks (docs/RGPU.md), run as a client of the rgpu driver
 * (LD_LIBRARY_PATH=build/lib/rgpu, WHARF_RGPU_SERVERS, the secret):
 *
 *   rgpu_bench copy [MAXBYTES]   copies between the first and the last GPU
 *        (two servers: server to server) with cuMemcpyPeer (host-asynchronous for
 *        device-to-device copies: the loop ends with a synchronize), against staging
 *        through the client (cuMemcpyDtoH + cuMemcpyHtoD), and queued
 *        (cuMemcpyPeerAsync back to back on one stream, one synchronize at
 *        the end, as NVIDIA's bandwidthTest measures), per size: MB/s
 *        and against the slowest stage: the transport alone (measured here,
 *        see net) or the modeled device copies (CUDAEMU_D2H_GBPS and
 *        CUDAEMU_H2D_GBPS as the servers see them, 25 GB/s by default)
 *   rgpu_bench net [MAXBYTES]    the transport stage alone: a stream of n bytes
 *        between two threads of this process over 127.0.0.1, in 2 MiB
 *        pieces (as a peer copy's largest chunks), acknowledged, per size:
 *        MB/s (WHARF_RGPU_TRANSPORT / WHARF_RGPU_PROVIDER as the client)
 *   rgpu_bench lat [ITERS]       small-call round trips: cuCtxSynchronize on
 *        an idle context, cuStreamQuery, cuEventRecord+cuEventSynchronize,
 *        against a bare request/response (PING) on the same transport
 *
 * Short runs only here: the lead measures on a quiet machine. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
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

/* ---- the transport stage alone ---- */
#define NET_PIECE (2u << 20)
typedef struct {
    const char *tr, *prov;
    int port;
    size_t maxb;
    double t[32]; /* seconds per transfer, per size */
    int ok;
} net_job_t;

static int net_reps(size_t n)
{
    return n >= (16u << 20) ? 3 : 10;
}

static void *net_sender(void *arg)
{
    net_job_t *j = arg;
    char err[256];
    rg_conn_t *c = NULL;
    if (!strcmp(j->tr, "fabric"))
        c = rg_fab_connect(j->prov, "127.0.0.1", j->port, 10000, err, sizeof err);
    else {
        int fd = rg_connect("127.0.0.1", j->port, 10000);
        c = fd >= 0 ? rg_conn_sock(fd) : NULL;
    }
    char *buf = calloc(1, NET_PIECE);
    int k = 0;
    for (size_t n = 64u << 10; c && buf && n <= j->maxb && k < 32; n *= 4, k++) {
        double t0 = 0;
        for (int r = -1; r < net_reps(n); r++) { /* (r -1: warm-up) */
            if (!r)
                t0 = now();
            uint8_t ack;
            for (size_t o = 0; o < n; o += NET_PIECE)
                if (rg_send_all(c, buf, n - o < NET_PIECE ? n - o : NET_PIECE))
                    goto out;
            if (rg_recv_all(c, &ack, 1, 10000))
                goto out;
        }
        j->t[k] = (now() - t0) / net_reps(n);
    }
    j->ok = 1;
out:
    free(buf);
    rg_conn_close(c);
    return NULL;
}

/* seconds per transfer of 64 KiB, 256 KiB, ... maxb over the transport: 0 or -1 */
static int net_measure(size_t maxb, double *t)
{
    const char *tr = getenv("WHARF_RGPU_TRANSPORT"), *pv = getenv("WHARF_RGPU_PROVIDER");
    net_job_t j = {tr && *tr ? tr : "fabric", pv && *pv ? pv : "tcp", 0, maxb, {0}, 0};
    char err[256];
    rg_flisten_t *fl = NULL;
    int lfd = -1;
    if (!strcmp(j.tr, "fabric"))
        fl = rg_fab_listen(j.prov, "127.0.0.1", &j.port, err, sizeof err);
    else
        lfd = rg_listen("127.0.0.1", 0, &j.port);
    if (!fl && lfd < 0)
        return -1;
    pthread_t th;
    pthread_create(&th, NULL, net_sender, &j);
    rg_conn_t *c = NULL;
    if (fl)
        c = rg_fab_accept(fl, 10000);
    else {
        int fd = accept(lfd, NULL, NULL);
        c = fd >= 0 ? rg_conn_sock(fd) : NULL;
    }
    char *buf = malloc(NET_PIECE);
    int k = 0;
    for (size_t n = 64u << 10; c && buf && n <= maxb && k < 32; n *= 4, k++)
        for (int r = -1; r < net_reps(n); r++) {
            for (size_t o = 0; o < n; o += NET_PIECE)
                if (rg_recv_all(c, buf, n - o < NET_PIECE ? n - o : NET_PIECE, 10000))
                    goto out;
            if (rg_send_all(c, "k", 1))
                goto out;
        }
out:
    pthread_join(th, NULL);
    free(buf);
    rg_conn_close(c);
    rg_fab_listen_close(fl);
    if (lfd >= 0)
        close(lfd);
    memcpy(t, j.t, sizeof j.t);
    printf("# transport stage: %s%s%s over 127.0.0.1 (2 MiB pieces)\n", j.tr, fl ? " provider " : "",
           fl ? j.prov : "");
    return j.ok ? 0 : -1;
}

static int bench_net(size_t maxb)
{
    double t[32];
    if (net_measure(maxb, t)) {
        fprintf(stderr, "rgpu_bench: the transport measurement failed\n");
        return 1;
    }
    printf("%12s %14s\n", "bytes", "MB/s");
    int k = 0;
    for (size_t n = 64u << 10; n <= maxb && k < 32; n *= 4, k++)
        printf("%12zu %14.1f\n", n, n / t[k] / 1e6);
    return 0;
}

static int bench_copy(size_t maxb)
{
    /* the slowest stage per size: the transport (measured) or the modeled
     * device copies (the servers' CUDAEMU_D2H_GBPS/CUDAEMU_H2D_GBPS: give the
     * bench the same values) */
    double tnet[32] = {0};
    int have_net = !net_measure(maxb, tnet);
    const char *d2h = getenv("CUDAEMU_D2H_GBPS"), *h2d = getenv("CUDAEMU_H2D_GBPS");
    double dev_mbs = 1e3 * (d2h && atof(d2h) > 0 ? atof(d2h) : 25);
    if (h2d && atof(h2d) > 0 && 1e3 * atof(h2d) < dev_mbs)
        dev_mbs = 1e3 * atof(h2d);
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
    CUstream st;
    CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    printf("%12s %14s %14s %8s %14s %9s %14s %9s\n", "bytes", "direct MB/s", "staged MB/s", "ratio", "slowest MB/s",
           "/slowest", "queued MB/s", "/slowest");
    int k = 0;
    for (size_t n = 64u << 10; n <= maxb; n *= 4, k++) {
        int reps = n >= (16u << 20) ? 3 : 10;
        CU(cuMemcpyPeer(b, c2, a, c1, n)); /* warm-up: buffers, connections */
        CU(cuCtxSetCurrent(c2));
        CU(cuCtxSynchronize());
        CU(cuCtxSetCurrent(c1));
        /* cuMemcpyPeer is asynchronous with respect to the host (device to
         * device): the copies are done when the destination context is
         * synchronized */
        double t0 = now();
        for (int i = 0; i < reps; i++)
            CU(cuMemcpyPeer(b, c2, a, c1, n));
        CU(cuCtxSetCurrent(c2));
        CU(cuCtxSynchronize());
        CU(cuCtxSetCurrent(c1));
        double td = (now() - t0) / reps;
        CU(cuMemcpyDtoH(h, a, n));
        t0 = now();
        for (int i = 0; i < reps; i++) {
            CU(cuMemcpyDtoH(h, a, n));
            CU(cuMemcpyHtoD(b, h, n));
        }
        double ts = (now() - t0) / reps;
        /* queued: the copies back to back on one stream, one synchronize at
         * the end (as NVIDIA's bandwidthTest measures) */
        t0 = now();
        for (int i = 0; i < reps; i++)
            CU(cuMemcpyPeerAsync(b, c2, a, c1, n, st));
        CU(cuStreamSynchronize(st));
        double tq = (now() - t0) / reps;
        double slow = have_net && k < 32 && tnet[k] > 0 ? n / tnet[k] / 1e6 : 0;
        if (!slow || dev_mbs < slow)
            slow = dev_mbs;
        printf("%12zu %14.1f %14.1f %8.2f %14.1f %9.2f %14.1f %9.2f\n", n, n / td / 1e6, n / ts / 1e6, ts / td,
               slow, n / td / 1e6 / slow, n / tq / 1e6, n / tq / 1e6 / slow);
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
    if (argc < 2 || (strcmp(argv[1], "copy") && strcmp(argv[1], "lat") && strcmp(argv[1], "net"))) {
        fprintf(stderr, "usage: rgpu_bench copy [MAXBYTES] | net [MAXBYTES] | lat [ITERS]\n");
        return 2;
    }
    if (!strcmp(argv[1], "net"))
        return bench_net(argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (64u << 20));
    if (!strcmp(argv[1], "copy"))
        return bench_copy(argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : (64u << 20));
    return bench_lat(argc > 2 ? atoi(argv[2]) : 2000);
}
