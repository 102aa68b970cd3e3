/* Calibration of the device-buffer switch points on this machine
 * (wharfrun -n 2 wharf-info --calibrate FILE; docs/GPU.md).
 *
 * Two ranks with device buffers time every scheme at a ladder of sizes, the
 * scheme forced the way WHARF_CUDA_SCHEME forces it: a blocking ping-pong
 * (the latency-sensitive pattern: half a round trip per message) and windows
 * of nonblocking sends (the bandwidth-sensitive pattern: time per message).
 * A scheme the pair cannot use (CUDA IPC between GPUs that cannot map each
 * other, GDRCopy without libgdrapi) is noticed from the per-peer scheme
 * counts and left out.  From each pattern's table rank 0 derives that
 * class's switch points (rules below and in docs/GPU.md) and writes the
 * tuning file, with the measured table as comments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coord/coord.h"
#include "coord/gpu.h"
#include "core/core.h"
#include "mem/cuda/wh_cuda.h"
#include "mpi/gpu_calib.h"
#include "util/tunables.h"

static const size_t sizes[] = {8, 64, 512, 2048, 4096, 8192, 16384, 65536, 262144, 1048576, 4194304};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
static const char *const schemes[] = {"gdrcopy", "eager", "staged", "pipeline", "ipc"};
static const int scheme_ds[] = {WH_DS_GDR, WH_DS_EAGER, WH_DS_STAGED, WH_DS_PIPE, WH_DS_IPC};
#define NSCH 5
enum { WIN = 16 };

static double dmin(double a, double b)
{
    return a < b ? a : b;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* one-way time of a blocking ping-pong (us) */
static double pingpong(void *s, void *r, size_t n, int peer, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        if (peer == 1) {
            MPI_Send(s, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD);
            MPI_Recv(r, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(r, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(s, (int)n, MPI_BYTE, peer, 71, MPI_COMM_WORLD);
        }
    }
    return (now_us() - t0) / (2.0 * iters);
}

/* time per message of windows of nonblocking sends 0 -> 1 (us) */
static double windows(void *s, void *r, size_t n, int peer, int iters)
{
    MPI_Request q[WIN];
    int ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        for (int k = 0; k < WIN; k++) {
            if (peer == 1)
                MPI_Isend(s, (int)n, MPI_BYTE, peer, 72, MPI_COMM_WORLD, &q[k]);
            else
                MPI_Irecv(r, (int)n, MPI_BYTE, peer, 72, MPI_COMM_WORLD, &q[k]);
        }
        MPI_Waitall(WIN, q, MPI_STATUSES_IGNORE);
        if (peer == 1)
            MPI_Recv(&ack, 1, MPI_INT, peer, 73, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ack, 1, MPI_INT, peer, 73, MPI_COMM_WORLD);
    }
    return (now_us() - t0) / ((double)iters * WIN);
}

/* Switch points of one class from its table t[scheme][size] (INFINITY: not
 * measured or not available).  Sizes are the measured ones: a switch point
 * is the first (or last) measured size on its side of the crossover. */
static void derive(double t[NSCH][NSIZES], wh_gsw_t *out)
{
    enum { G, E, S, P, I };
    size_t eager = 0, gdr = 0, pmin = WH_GSW_NEVER, imin = WH_GSW_NEVER;
    int last_eager = -1;
    /* staged eager while the better of eager/gdrcopy is no slower than every rendezvous scheme */
    for (int i = 0; i < NSIZES; i++) {
        double small = dmin(t[E][i], t[G][i]), rndv = dmin(t[S][i], dmin(t[P][i], t[I][i]));
        if (!isfinite(small) || small > rndv)
            break;
        eager = sizes[i];
        last_eager = i;
    }
    /* GDRCopy copies while they beat driver copies (eager vs gdrcopy), within the eager range */
    for (int i = 0; i <= last_eager; i++) {
        if (!isfinite(t[G][i]) || t[G][i] > t[E][i])
            break;
        gdr = sizes[i];
    }
    /* CUDA IPC from the first size above the eager range where it wins at every larger size */
    for (int i = NSIZES - 1; i > last_eager; i--) {
        if (!isfinite(t[I][i]) || t[I][i] > dmin(t[S][i], t[P][i]))
            break;
        imin = sizes[i];
    }
    /* the pipeline from the first size where it beats staged fragments up to the IPC switch */
    for (int i = NSIZES - 1; i > last_eager; i--) {
        if (sizes[i] >= imin)
            continue;
        if (!isfinite(t[P][i]) || t[P][i] > t[S][i])
            break;
        pmin = sizes[i];
    }
    out->eager_max = eager;
    out->gdr_d2h_max = out->gdr_h2d_max = gdr;
    out->pipe_min = pmin;
    out->ipc_min = imin;
}

int wh_gpu_calibrate(const char *path)
{
    int rank, size, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        return wh_error(MPI_ERR_OTHER, "--calibrate needs exactly 2 ranks (wharfrun -n 2), not %d", size);
    if (!wh_cuda_on || !wh_gpeers || !wh_cu.cuMemAlloc || !wh_cu.cuMemFree)
        return wh_error(MPI_ERR_OTHER, "--calibrate needs a CUDA driver with cuMemAlloc (WHARF_CUDA=%s)", wh_tun.cuda);
    int peer = 1 - rank;
    /* a GPU per rank, as applications pick one; then tell the coordinator */
    wh_CUdevice dev;
    wh_CUcontext ctx;
    wh_cu.cuDeviceGetCount(&ndev);
    if (wh_cu.cuDeviceGet(&dev, wh_job.local_rank % (ndev > 0 ? ndev : 1)) != WH_CUDA_SUCCESS ||
        wh_cu.cuDevicePrimaryCtxRetain(&ctx, dev) != WH_CUDA_SUCCESS || wh_cu.cuCtxSetCurrent(ctx) != WH_CUDA_SUCCESS)
        return wh_error(MPI_ERR_OTHER, "--calibrate: cannot make a GPU current");
    wh_gpu_refresh();
    MPI_Barrier(MPI_COMM_WORLD);
    size_t maxn = sizes[NSIZES - 1];
    wh_CUdeviceptr ds = 0, dr = 0;
    if (wh_cu.cuMemAlloc(&ds, maxn) != WH_CUDA_SUCCESS || wh_cu.cuMemAlloc(&dr, maxn) != WH_CUDA_SUCCESS)
        return wh_error(MPI_ERR_NO_MEM, "--calibrate: cannot allocate 2 x %zu bytes of device memory", maxn);
    void *s = (void *)(uintptr_t)ds, *r = (void *)(uintptr_t)dr;
    wh_gsw_t saved[WH_GCLASS_MAX];
    memcpy(saved, wh_gsw, sizeof saved);
    size_t eager_cap = wh_coord_lim.eager_max[wh_coord_peers[peer].chan];
    double t[WH_GCLASS_MAX][NSCH][NSIZES];
    for (int k = 0; k < NSCH; k++) {
        wh_gsw_force(wh_gsw, schemes[k]);
        for (int i = 0; i < NSIZES; i++) {
            size_t n = sizes[i];
            t[0][k][i] = t[1][k][i] = INFINITY;
            if ((k <= 1 && n > eager_cap) || (k == 0 && !wh_cuda_gdr_on()))
                continue; /* eager schemes stop at the channel's eager limit */
            uint64_t before = wh_gpeers[peer].msgs[scheme_ds[k]];
            int it = n <= 65536 ? 40 : n <= 1048576 ? 10 : 4;
            pingpong(s, r, n, peer, 2); /* warm up: IPC mappings, rings, GDRCopy pins */
            double lat = pingpong(s, r, n, peer, it);
            double bw = windows(s, r, n, peer, it > 10 ? 4 : 1);
            /* the scheme really ran, on both sides (else the pair cannot use it) */
            int used = wh_gpeers[peer].msgs[scheme_ds[k]] > before, all = 0;
            MPI_Allreduce(&used, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            double v[2] = {lat, bw};
            MPI_Bcast(v, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (all) {
                t[0][k][i] = v[0];
                t[1][k][i] = v[1];
            }
        }
    }
    memcpy(wh_gsw, saved, sizeof saved);
    wh_cu.cuMemFree(ds);
    wh_cu.cuMemFree(dr);
    int rc = MPI_SUCCESS;
    if (rank == 0) {
        wh_gsw_t out[WH_GCLASS_MAX];
        char comment[8192];
        size_t o = 0;
        int ver = 0;
        wh_cu.cuDriverGetVersion(&ver);
        o += (size_t)snprintf(comment + o, sizeof comment - o,
                              "# measured by wharf-info --calibrate on %s (CUDA driver %d.%d, channel %s)\n"
                              "machine %s\n# microseconds per message: latency = half a blocking round trip, "
                              "bandwidth = per message of %d-message nonblocking windows; - = not available\n",
                              wh_job.hostname, ver / 1000, ver % 1000 / 10,
                              wh_chans[wh_coord_peers[peer].chan]->name, wh_job.hostname, WIN);
        for (int c = 0; c < WH_GCLASS_MAX; c++) {
            derive(t[c], &out[c]);
            o += (size_t)snprintf(comment + o, sizeof comment - o, "# %-9s %9s", wh_gclass_names[c], "bytes");
            for (int k = 0; k < NSCH; k++)
                o += (size_t)snprintf(comment + o, sizeof comment - o, " %9s", schemes[k]);
            o += (size_t)snprintf(comment + o, sizeof comment - o, "\n");
            for (int i = 0; i < NSIZES && o < sizeof comment - 128; i++) {
                o += (size_t)snprintf(comment + o, sizeof comment - o, "# %-9s %9zu", "", sizes[i]);
                for (int k = 0; k < NSCH; k++)
                    o += (size_t)(isfinite(t[c][k][i])
                                      ? snprintf(comment + o, sizeof comment - o, " %9.2f", t[c][k][i])
                                      : snprintf(comment + o, sizeof comment - o, " %9s", "-"));
                o += (size_t)snprintf(comment + o, sizeof comment - o, "\n");
            }
        }
        if (wh_gsw_write(path, out, comment))
            rc = wh_error(MPI_ERR_FILE, "--calibrate: cannot write %s", path);
        else
            printf("wharf-info: wrote %s\n%s", path, comment);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}
