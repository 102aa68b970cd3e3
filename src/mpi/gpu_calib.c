/* Calibration of the device-buffer switch points on this machine
 * (wharfrun -n 2 wharf-info --calibrate FILE; docs/GPU.md).
 *
 * Two ranks with device buffers time every scheme at a ladder of sizes, the
 * scheme forced the way WHARF_CUDA_SCHEME forces it: a blocking ping-pong
 * (the latency-sensitive pattern: half a round trip per message) and windows
 * of nonblocking sends (the bandwidth-sensitive pattern: time per message).
 * A scheme the pair cannot use (CUDA IPC between GPUs that cannot map each
 * other, GDRCopy without libgdrapi) is noticed from the per-peer scheme
 * counts and left out.  From each pattern's table rank 0 fits that class's
 * switch points (wh_gsw_fit: the least total loss against the best scheme
 * per size; docs/GPU.md) and writes the tuning file, with the measured
 * table as comments. */
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

/* every power of two from 256 B (a switch point falls on a measured size:
 * with gaps, 1 KiB was decided by 512 B and 2 KiB) */
static const size_t sizes[] = {8,     64,    256,    512,    1024,   2048,    4096,    8192,   16384,
                               32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304};
#define NSIZES ((int)(sizeof sizes / sizeof *sizes))
static const char *const schemes[] = {"gdrcopy", "eager", "staged", "pipeline", "ipc"};
#define NSCH 5
/* row k of the table is scheme k: the WH_DS_* order, as wh_gsw_fit and the per-peer counts index it */
_Static_assert(WH_DS_GDR == 0 && WH_DS_EAGER == 1 && WH_DS_STAGED == 2 && WH_DS_PIPE == 3 && WH_DS_IPC == 4 &&
                   WH_DS_MAX == NSCH,
               "calibration rows in WH_DS_* order");
/* WARM: untimed iterations before each sample, in samples' worth.  A run of
 * one scheme and size settles after ~10 ms on the 2-core VM (pidpriv, eager,
 * 8 KiB device ping-pong: 150 iterations timed after 10 untimed 5-9 us, after
 * 1000 untimed 12-21 us), and benchmarks and applications run in the settled
 * state: a sample taken at once measured the early one (docs/PERFORMANCE.md) */
enum { WIN = 16, ROUNDS = 7, WARM = 3 };
#define SAMPLE_US 3000.0 /* per measured sample of an entry */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* one-way time of a blocking ping-pong (us), after `warm` untimed ones */
static double pingpong(void *s, void *r, size_t n, int peer, int iters, int warm)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int i = -warm; i < iters; i++) {
        if (i == 0)
            t0 = now_us();
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

/* time per message of windows of nonblocking sends 0 -> 1 (us), after
 * `warm` untimed windows */
static double windows(void *s, void *r, size_t n, int peer, int iters, int warm)
{
    MPI_Request q[WIN];
    int ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    for (int i = -warm; i < iters; i++) {
        if (i == 0)
            t0 = now_us();
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
    /* Round 0 warms every scheme up (IPC mappings, rings, GDRCopy pins,
     * request pools), finds which the pair can use and estimates each
     * entry's time, from which every entry gets enough iterations for about
     * SAMPLE_US per sample.  Then ROUNDS passes over every scheme and size,
     * interleaved so a burst of load on a shared machine hits every scheme
     * alike; each entry is the median of its rounds.  (One short sample per
     * entry was noise: on the 2-core VM a lone first sample decided GDRCopy
     * off for a whole class, and 128 messages of 16 KiB ranked staged copies
     * above CUDA IPC where wh_bw measures IPC 3x faster.) */
    static double samp[WH_GCLASS_MAX][NSCH][NSIZES][ROUNDS];
    double t[WH_GCLASS_MAX][NSCH][NSIZES];
    int avail[NSCH][NSIZES] = {{0}}, iters[2][NSCH][NSIZES] = {{{0}}};
    for (int rnd = 0; rnd <= ROUNDS; rnd++) {
        for (int k = 0; k < NSCH; k++) {
            wh_gsw_force(wh_gsw, schemes[k]);
            for (int i = 0; i < NSIZES; i++) {
                size_t n = sizes[i];
                /* eager schemes stop at the channel's eager limit; later rounds
                 * measure what round 0 found usable */
                if (rnd > 0 ? !avail[k][i]
                            : (k <= WH_DS_EAGER && n > eager_cap) || (k == WH_DS_GDR && !wh_cuda_gdr_on()))
                    continue;
                if (rnd == 0) {
                    uint64_t before = wh_gpeers[peer].msgs[k];
                    pingpong(s, r, n, peer, 2, 0);
                    windows(s, r, n, peer, 1, 0);
                    double lat = pingpong(s, r, n, peer, n <= 65536 ? 20 : 2, 0);
                    double bw = windows(s, r, n, peer, 1, 0);
                    iters[0][k][i] = (int)fmin(fmax(SAMPLE_US / (2 * lat), 2), 5000);
                    iters[1][k][i] = (int)fmin(fmax(SAMPLE_US / (WIN * bw), 1), 500);
                    /* the scheme really ran, on both sides (else the pair cannot use it) */
                    int used = wh_gpeers[peer].msgs[k] > before;
                    MPI_Allreduce(&used, &avail[k][i], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
                    continue;
                }
                samp[0][k][i][rnd - 1] = pingpong(s, r, n, peer, iters[0][k][i], WARM * iters[0][k][i]);
                samp[1][k][i][rnd - 1] = windows(s, r, n, peer, iters[1][k][i], WARM * iters[1][k][i]);
            }
        }
        if (rnd == 0) /* both ranks run the same iterations: rank 0's */
            MPI_Bcast(iters, (int)(sizeof iters / sizeof(int)), MPI_INT, 0, MPI_COMM_WORLD);
    }
    for (int c = 0; c < WH_GCLASS_MAX; c++)
        for (int k = 0; k < NSCH; k++)
            for (int i = 0; i < NSIZES; i++) {
                t[c][k][i] = INFINITY;
                if (!avail[k][i]) /* not measured, or the pair could not use it */
                    continue;
                qsort(samp[c][k][i], ROUNDS, sizeof(double), cmp_double);
                t[c][k][i] = samp[c][k][i][ROUNDS / 2];
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
            wh_gsw_fit(&t[c][0][0], sizes, NSIZES, &out[c]);
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
