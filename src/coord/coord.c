/* The coordinator (see coord.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/peers.h"
#include "chan/net/net.h"
#include "coord/coord.h"
#include "coord/gpu.h"
#include "core/core.h"
#include "locality/locality.h"
#include "mem/cuda/wh_cuda.h"
#include "util/log.h"
#include "util/tunables.h"

const char *const wh_proto_names[WH_PROTO_MAX] = {
    [WH_PROTO_EAGER] = "eager", [WH_PROTO_RNDV] = "rts",  [WH_PROTO_GET] = "single-copy",
    [WH_PROTO_BULK] = "rndv",   [WH_PROTO_FRAG] = "rndv", [WH_PROTO_PUT] = "put",
    [WH_PROTO_AM] = "am",       [WH_PROTO_CUDA_IPC] = "cuda-ipc",
    [WH_PROTO_LDST] = "load-store", [WH_PROTO_ATOMIC] = "atomic", [WH_PROTO_ACCLOCK] = "acc-locked",
    [WH_PROTO_CMA] = "cma",     [WH_PROTO_FABRIC] = "fabric-rma", [WH_PROTO_CUDA_VMM] = "cuda-vmm",
    [WH_PROTO_FATOMIC] = "fabric-atomic",
    [WH_PROTO_PIPE] = "pipeline", [WH_PROTO_PUSH] = "push",
    [WH_PROTO_RMA_SYNC] = "rma-sync", [WH_PROTO_RMA_SYNC_MERGED] = "rma-sync-merged",
    [WH_PROTO_SPLIT] = "single-copy", /* counted with the get it shares its copies with */
    [WH_PROTO_REGION] = "region-copy",
};

wh_coord_peer_t *wh_coord_peers;
wh_coord_limits_t wh_coord_lim;
uint64_t wh_coord_count[WH_CHAN_MAX][WH_PROTO_MAX];
uint64_t wh_coord_bytes[WH_CHAN_MAX][WH_PROTO_MAX];

wh_coord_choice_t wh_coord_decide_pure(const wh_coord_peer_t *p, const wh_coord_limits_t *lim, size_t bytes,
                                       int mem, int op, int remote)
{
    int remote_addr = (remote & WH_REMOTE_ADDR) != 0;
    wh_coord_choice_t c = {.chan = p->chan, .proto = WH_PROTO_FRAG};
    int kind_ok = (lim->mem_kinds[p->chan] >> mem) & 1;
    switch (op) {
    case WH_OPK_SEND:
        c.proto = bytes <= (mem == WH_MEM_HOST && p->eager_max ? p->eager_max : lim->eager_max[p->chan]) &&
                          (kind_ok || (mem != WH_MEM_HOST && bytes <= lim->dev_eager_max))
                      ? WH_PROTO_EAGER
                      : WH_PROTO_RNDV;
        break;
    case WH_OPK_RNDV:
        if (mem == WH_MEM_CUDA && (remote & WH_REMOTE_CUDA_IPC) && p->chan == WH_CHAN_SHM)
            c.proto = WH_PROTO_CUDA_IPC; /* co-resident: device to device, no host staging */
        else if ((remote & WH_RECV_WANTS_PUT) && (p->caps & WH_CAP_PUT_ZCOPY) && kind_ok && bytes >= lim->zcopy_min)
            c.proto = WH_PROTO_PUT; /* the sender writes: the receiver's cpu is free for its other copies */
        else if ((p->caps & WH_CAP_GET_ZCOPY) && remote_addr && kind_ok && bytes >= lim->zcopy_min)
            c.proto = WH_PROTO_GET;
        else if ((p->caps & WH_CAP_BULK) && kind_ok)
            c.proto = WH_PROTO_BULK;
        else
            c.proto = WH_PROTO_FRAG;
        break;
    case WH_OPK_PUT:
        c.proto = (p->caps & WH_CAP_PUT_ZCOPY) && kind_ok && bytes >= lim->zcopy_min ? WH_PROTO_PUT : WH_PROTO_AM;
        break;
    case WH_OPK_GET:
        c.proto = (p->caps & WH_CAP_GET_ZCOPY) && kind_ok && bytes >= lim->zcopy_min ? WH_PROTO_GET : WH_PROTO_AM;
        break;
    default:
        c.proto = WH_PROTO_AM;
        break;
    }
    return c;
}

int wh_coord_pick_pure(int n, const wh_coord_cand_t *cands, const char *force, int self)
{
    if (self >= 0 && self < n && cands[self].reaches)
        return self;
    if (force && strcmp(force, "auto"))
        for (int c = 0; c < n; c++)
            if (c != self && cands[c].reaches && !strcmp(cands[c].name, force))
                return c;
    int best = -1;
    for (int c = 0; c < n; c++)
        if (c != self && cands[c].reaches && (best < 0 || cands[c].lat_us < cands[best].lat_us))
            best = c;
    return best;
}

static void report_limits(void)
{
    if (wh_job.rank != 0 || !wh_tun.report || !strstr(wh_tun.report, "locality"))
        return;
    for (int c = 0; c < WH_CHAN_MAX; c++) {
        const wh_chan_caps_t *k = &wh_chan_caps[c];
        if (!wh_chan_polled[c] || c == WH_CHAN_SELF)
            continue;
        printf("wharf: channel %s: eager <= %zu B (active messages <= %zu B, inline %zu B)%s%s; "
               "rendezvous: %s\n",
               wh_chans[c]->name, wh_coord_lim.eager_max[c], k->max_am, k->max_inline,
               k->flags & WH_CAP_GET_ZCOPY ? ", zero-copy get" : "", k->flags & WH_CAP_BULK ? ", bulk streams" : "",
               k->flags & WH_CAP_GET_ZCOPY ? (wh_coord_cma_p2p_slow
                                                  ? "pipelined fragments (CMA slow here: WHARF_CMA_SLOW_RATIO)"
                                                  : "zero-copy get from WHARF_CMA_MIN where the pair allows, else fragments")
               : k->flags & WH_CAP_BULK    ? "receiver-posted bulk stream"
                                           : "pipelined fragments");
    }
    if (wh_coord_cma_ratio > 0)
        printf("wharf: CMA: process_vm_readv of 256 KiB took %.1fx memcpy's time on rank 0: %s\n", wh_coord_cma_ratio,
               wh_coord_cma_p2p_slow ? "point-to-point and one-sided copies go through the shared cells"
               : wh_coord_cma_slow   ? "used for rendezvous from WHARF_CMA_MIN all the same, as the node runs more "
                                       "ranks than cpus (WHARF_CMA_OVERSUB); the collectives copy through the cells"
                                     : "used for rendezvous from WHARF_CMA_MIN");
    if (wh_cuda_on)
        printf("wharf: gpu: CUDA driver loaded (%d device(s) visible to rank 0); device buffers: staged eager <= %zu B, "
               "larger ones %s, else pipelined through the node region or staged fragments (WHARF_REPORT=gpu: switch points)\n",
               wh_cuda_ndev, wh_coord_lim.dev_eager_max,
               wh_tun.cuda_ipc ? "by CUDA IPC between co-resident ranks where the driver lets the receiver map the "
                                 "sender's memory (legacy handles; VMM file descriptors for cuMemCreate memory)"
                               : "(WHARF_CUDA_IPC=0: no CUDA IPC)");
    if (wh_cuda_on && wh_net_hmem >= 0)
        printf("wharf: gpu: net provider %s FI_HMEM: device buffers to network peers are staged through host "
               "memory\n", wh_net_hmem ? "offers (not used yet)" : "does not offer");
    if (wh_cuda_on && wh_cuda_gdr_on())
        printf("wharf: gpu: GDRCopy: host-to-device copies <= %zu B and device-to-host <= %zu B through CPU mappings "
               "of the device buffer\n", wh_tun.cuda_gdr_h2d_max, wh_tun.cuda_gdr_d2h_max);
    else if (!wh_cuda_on)
        printf("wharf: gpu: no CUDA driver in use (WHARF_CUDA=%s): device buffers are not recognized\n", wh_tun.cuda);
    fflush(stdout);
}

/* A process of another group became reachable (the network channel found
 * its endpoint): it is served by the network channel. */
static int peer_added(int idx)
{
    int why, cwhy;
    uint32_t pc = 0;
    const wh_chan_caps_t *k = &wh_chan_caps[WH_CHAN_NET];
    wh_coord_lim.max_am[WH_CHAN_NET] = k->max_am; /* the channel may have opened only now */
    wh_coord_lim.eager_max[WH_CHAN_NET] = k->eager_max < k->max_am ? k->eager_max : k->max_am;
    wh_coord_lim.mem_kinds[WH_CHAN_NET] = k->mem_kinds;
    if (!wh_chan_usable[WH_CHAN_NET] || !wh_chans[WH_CHAN_NET]->reaches(idx, &why, &pc, &cwhy))
        return wh_error(MPI_ERR_OTHER, "the network channel does not reach peer %d", idx);
    wh_coord_peers[idx].chan = WH_CHAN_NET;
    wh_coord_peers[idx].caps = pc;
    wh_coord_peers[idx].eager_max = wh_coord_peer_eager(&wh_coord_lim, WH_CHAN_NET, pc, wh_job.oversubscribed);
    if (!wh_chan_polled[WH_CHAN_NET]) {
        wh_chan_polled[WH_CHAN_NET] = 1;
        wh_chans_poll_set();
    }
    return MPI_SUCCESS;
}

/* One copy and one more hop (RTS, the receiver's read, FIN) beat the eager
 * path's second copy from a few KiB when both ranks run (16 KiB ping-pong
 * 1.7 against 3.2 us, docs/PERFORMANCE.md "Both ranks copy"); where the
 * node runs more ranks than cpus every hop may wait for the scheduler
 * (4 ranks on 2 cpus, 16 KiB blocks: alltoall 11-13 us eager, 18-21 single
 * copy), so the eager path keeps its whole range there. */
size_t wh_coord_peer_eager(const wh_coord_limits_t *lim, int c, uint32_t caps, int oversubscribed)
{
    size_t e = lim->eager_max[c];
    if (c == WH_CHAN_SHM && (caps & WH_CAP_GET_ZCOPY) && !oversubscribed && lim->zcopy_min && lim->zcopy_min < e)
        e = lim->zcopy_min;
    return e;
}

int wh_coord_peer_of_gid(uint32_t gid)
{
    int idx = wh_peer_find(gid);
    if (idx >= 0 && idx < wh_job.size)
        return idx;
    if (wh_chan_net_dyn_open() != MPI_SUCCESS)
        return -1;
    return wh_net_peer_of_gid(gid);
}

/* CMA's cost on this machine: process_vm_readv of 256 KiB from this process
 * against memcpy of the same, hot buffers, best of 8 (the kernel pins every
 * page of the source on each call; that, not the copy, is what differs
 * between machines).  Returns the ratio, or 0 if it could not be measured. */
static double cma_cost_ratio(void)
{
    enum { SZ = 256 << 10, REPS = 8 };
    char *src = malloc(SZ), *dst = malloc(SZ);
    double best_cma = 1e9, best_mem = 1e9;
    int ok = src && dst;
    if (ok) {
        memset(src, 1, SZ);
        memset(dst, 0, SZ);
    }
    /* co-resident ranks calibrate one after the other (~0.2 ms each): two
     * measuring at once on sibling cpus slow each other's memcpy (a 2-core
     * VM: 3x instead of 8x in 1 run of 8) */
    if (wh_job.local_rank > 0)
        usleep((useconds_t)(wh_job.local_rank % 8) * 250);
    for (int i = 0; ok && i < REPS; i++) {
        struct iovec l = {dst, SZ}, r = {src, SZ};
        struct timespec t0, t1, t2;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ok = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == SZ;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        memcpy(dst, src, SZ);
        __asm__ volatile("" : : "r"(dst) : "memory");
        clock_gettime(CLOCK_MONOTONIC, &t2);
        double c = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
        double m = (double)(t2.tv_sec - t1.tv_sec) * 1e9 + (double)(t2.tv_nsec - t1.tv_nsec);
        best_cma = c < best_cma ? c : best_cma;
        best_mem = m < best_mem ? m : best_mem;
    }
    free(src);
    free(dst);
    WH_DEBUG("coord", "CMA calibration: process_vm_readv %.0f ns, memcpy %.0f ns (256 KiB, best of %d)", best_cma,
             best_mem, REPS);
    return ok && best_mem > 0 ? best_cma / best_mem : 0;
}

double wh_coord_cma_ratio; /* measured by wh_coord_init (0: not measured) */
int wh_coord_cma_slow;     /* CMA slower than the cells by the calibration (collectives) */
int wh_coord_cma_p2p_slow; /* ... and not used for point-to-point and one-sided transfers */

int wh_coord_init(void)
{
    wh_peer_added_hook = peer_added;
    const char *force = wh_tun.channel;
    if (strcmp(force, "auto") && wh_chan_by_name(force) < 0)
        return wh_error(MPI_ERR_OTHER, "WHARF_CHANNEL=%s: expected auto, shm or net", force);
    wh_coord_peers = calloc((size_t)wh_peers_cap, sizeof *wh_coord_peers);
    if (!wh_coord_peers)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    memset(wh_chan_polled, 0, sizeof wh_chan_polled);
    memset(wh_coord_count, 0, sizeof wh_coord_count);
    memset(wh_coord_bytes, 0, sizeof wh_coord_bytes);
    for (int c = 0; c < WH_CHAN_MAX; c++) {
        const wh_chan_caps_t *k = &wh_chan_caps[c];
        wh_coord_lim.max_am[c] = k->max_am;
        wh_coord_lim.eager_max[c] = k->eager_max < k->max_am ? k->eager_max : k->max_am;
        wh_coord_lim.mem_kinds[c] = k->mem_kinds;
    }
    wh_coord_lim.zcopy_min = wh_tun.cma_min;
    /* CMA much slower than a copy here: the cells' two copies (both cpus)
     * win.  Alone in its node group a rank has no CMA peer to measure for
     * (a process spawned beside it later measures for itself). */
    wh_coord_cma_ratio = 0;
    wh_coord_cma_slow = wh_coord_cma_p2p_slow = 0;
    if (wh_tun.cma && wh_tun.cma_slow_ratio > 0 && !getenv("WHARF_CMA_MIN") && wh_job.local_size > 1 &&
        (wh_chan_caps[WH_CHAN_SHM].flags & WH_CAP_GET_ZCOPY)) {
        wh_coord_cma_ratio = cma_cost_ratio();
        wh_coord_cma_slow = wh_coord_cma_ratio > wh_tun.cma_slow_ratio;
        /* ranks sharing cpus: the cells' copies need both ranks running at
         * once, a CMA read only the receiver (WHARF_CMA_OVERSUB) */
        wh_coord_cma_p2p_slow = wh_coord_cma_slow && !(wh_tun.cma_oversub && wh_job.oversubscribed);
        if (wh_coord_cma_p2p_slow)
            wh_coord_lim.zcopy_min = SIZE_MAX;
        WH_DEBUG("coord", "CMA takes %.1fx memcpy's time on 256 KiB: %s", wh_coord_cma_ratio,
                 !wh_coord_cma_slow       ? "used"
                 : wh_coord_cma_p2p_slow ? "not used (WHARF_CMA_SLOW_RATIO)"
                                         : "used for point-to-point and one-sided transfers only (more ranks than "
                                           "cpus: WHARF_CMA_OVERSUB)");
    }
    wh_coord_lim.push_max[WH_CHAN_SHM] = wh_tun.shm_push_max; /* the other channels never push */
    wh_coord_lim.dev_eager_max = wh_tun.cuda_eager_max;
    for (int p = 0; p < wh_job.size; p++) {
        wh_coord_cand_t cand[WH_CHAN_MAX];
        uint32_t pcaps[WH_CHAN_MAX] = {0};
        int why[WH_CHAN_MAX], cwhy[WH_CHAN_MAX];
        for (int c = 0; c < WH_CHAN_MAX; c++) {
            why[c] = WH_WHY_OK;
            cwhy[c] = WH_WHY_NA;
            cand[c].name = wh_chans[c]->name;
            cand[c].lat_us = wh_chan_caps[c].lat_us;
            cand[c].reaches = wh_chan_usable[c] && wh_chans[c]->reaches(p, &why[c], &pcaps[c], &cwhy[c]);
            if (!wh_chan_usable[c])
                why[c] = WH_WHY_NO_REGION;
        }
        int shm_why = why[WH_CHAN_SHM];
        if (p != wh_job.rank && !wh_chan_usable[WH_CHAN_SHM] && (wh_job.local_index[p] < 0 && !wh_loc_failed()))
            shm_why = WH_WHY_NOT_LOCAL;
        int c = wh_coord_pick_pure(WH_CHAN_MAX, cand, force, p == wh_job.rank ? WH_CHAN_SELF : -1);
        if (c < 0)
            return wh_error(MPI_ERR_OTHER, "no channel reaches rank %d: %s, and the network channel is unavailable%s%s%s",
                            p, wh_loc_why_text(shm_why), wh_chan_why[WH_CHAN_NET][0] ? " (" : "",
                            wh_chan_why[WH_CHAN_NET], wh_chan_why[WH_CHAN_NET][0] ? ")" : "");
        if (c != WH_CHAN_SHM && cand[WH_CHAN_SHM].reaches)
            shm_why = WH_WHY_FORCED_NET;
        wh_coord_peers[p].chan = (uint8_t)c;
        wh_coord_peers[p].caps = pcaps[c];
        wh_coord_peers[p].eager_max = wh_coord_peer_eager(&wh_coord_lim, c, pcaps[c], wh_job.oversubscribed);
        wh_chan_polled[c] = 1;
        int single = (pcaps[c] & WH_CAP_GET_ZCOPY) != 0;
        if (single && c == WH_CHAN_SHM && wh_coord_cma_p2p_slow) {
            single = 0; /* CMA possible, not used: the report says why */
            cwhy[c] = WH_WHY_CMA_SLOW;
        }
        char code = c == WH_CHAN_SELF ? '.' : c == WH_CHAN_NET ? 'N' : single ? 'C' : 'S';
        wh_loc_set_choice(p, code, c == WH_CHAN_SHM ? WH_WHY_OK : shm_why,
                          c == WH_CHAN_SHM && !single ? cwhy[c] : WH_WHY_OK);
        if (c != WH_CHAN_SELF)
            WH_DEBUG("coord", "peer %d: %s%s (shm: %s)", p, wh_chans[c]->name, single ? " + zero-copy get" : "",
                     c == WH_CHAN_SHM ? "ok" : wh_loc_why_text(shm_why));
    }
    wh_chans_poll_set();
    report_limits();
    return wh_gpu_coord_init();
}

void wh_coord_report_counts(void)
{
    wh_gpu_report();
    if (!wh_tun.report || !strstr(wh_tun.report, "channels"))
        return;
    char line[1024];
    int off = snprintf(line, sizeof line, "wharf: rank %d channels:", wh_job.rank);
    for (int c = 0; c < WH_CHAN_MAX; c++) {
        /* protocols sharing a report name (bulk and fragments: "rndv") are summed */
        for (int p = 0; p < WH_PROTO_MAX; p++) {
            if (p == WH_PROTO_RNDV)
                continue; /* counted where the receiver decides */
            int first = 1;
            for (int q = 0; q < p; q++)
                if (q != WH_PROTO_RNDV && !strcmp(wh_proto_names[q], wh_proto_names[p]))
                    first = 0;
            if (!first)
                continue;
            uint64_t m = 0, b = 0;
            for (int q = p; q < WH_PROTO_MAX; q++)
                if (!strcmp(wh_proto_names[q], wh_proto_names[p])) {
                    m += wh_coord_count[c][q];
                    b += wh_coord_bytes[c][q];
                }
            if (m && off < (int)sizeof line)
                off += snprintf(line + off, sizeof line - (size_t)off, " %s/%s %llu msgs %llu bytes;", wh_chans[c]->name,
                                wh_proto_names[p], (unsigned long long)m, (unsigned long long)b);
        }
    }
    printf("%s\n", line);
    fflush(stdout);
}

void wh_coord_finalize(void)
{
    wh_gpu_coord_finalize();
    free(wh_coord_peers);
    wh_coord_peers = NULL;
}
