/* Cross Memory Attach: single-copy reads of a co-resident sender's buffer.
 * Enabled per pair only when the peer runs on the same kernel (boot_id) in the
 * same PID namespace and a real process_vm_readv of the probe word it
 * published in its registry record returns the expected value (Yama, seccomp
 * or missing capabilities make the probe fail safely, with the reason kept). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "chan/shm/shm.h"
#include "core/core.h"
#include "locality/locality.h"
#include "locality/nodeheap.h"
#include "util/log.h"
#include "util/tunables.h"

int wh_shm_cma_setup(int phase)
{
    if (phase != 1)
        return MPI_SUCCESS;
    int n = wh_shm.nlocal;
    wh_shm.cma_ok = calloc((size_t)n, sizeof(int));
    wh_shm.cma_why = calloc((size_t)n, sizeof(int));
    wh_shm.pid = calloc((size_t)n, sizeof(int));
    wh_shm.cma_seen = calloc((size_t)n, 1);
    if (!wh_shm.cma_ok || !wh_shm.cma_why || !wh_shm.pid || !wh_shm.cma_seen)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int lp = 0; lp < n; lp++) {
        const wh_reg_rec_t *r = wh_loc_rec(lp);
        if (lp == wh_shm.me || !r)
            continue;
        wh_shm.pid[lp] = r->pid;
        wh_shm.cma_ok[lp] = wh_loc_cma_check(lp, &wh_shm.cma_why[lp]);
        WH_DEBUG("cma", "rank %d (pid %d): %s", r->rank, r->pid,
                 wh_shm.cma_ok[lp] ? "probe ok" : wh_loc_why_text(wh_shm.cma_why[lp]));
    }
    return MPI_SUCCESS;
}
unsigned wh_shm_cma(int wpeer)
{
    int lp = wpeer >= 0 && wpeer < wh_job.size ? wh_job.local_index[wpeer] : -1;
    if (lp < 0 || !wh_shm.cma_ok || !wh_shm.cma_ok[lp])
        return 0;
    unsigned seen = wh_shm.cma_seen[lp];
    return WH_CMA_CAN_READ | (seen & WH_CMA_NOWRITE ? 0u : (unsigned)WH_CMA_CAN_WRITE) | (seen & ~(unsigned)WH_CMA_NOWRITE);
}

/* One CMA transfer between the local range described by d and the peer's
 * contiguous range at raddr: readv (get) or writev (put). */
static int cma_xfer(int wpeer, uint64_t raddr, const wh_data_t *d, int put, wh_comp_t *comp)
{
    int lp = wh_job.local_index[wpeer];
    if (lp < 0 || !wh_shm.cma_ok || !wh_shm.cma_ok[lp] || (put && (wh_shm.cma_seen[lp] & WH_CMA_NOWRITE)) || d->mem != WH_MEM_HOST ||
        !raddr)
        return WH_FALLBACK;
    size_t off = 0, len = d->len;
    while (off < len) {
        struct iovec liov[64];
        size_t covered = 0;
        int nl = wh_data_iov(d, off, len - off, liov, 64, &covered);
        if (nl <= 0 || !covered)
            return wh_error(MPI_ERR_INTERN, "datatype iovec failed at offset %zu", off);
        struct iovec riov = {(void *)(uintptr_t)(raddr + off), covered};
        ssize_t got = put ? process_vm_writev(wh_shm.pid[lp], liov, (unsigned long)nl, &riov, 1, 0)
                          : process_vm_readv(wh_shm.pid[lp], liov, (unsigned long)nl, &riov, 1, 0);
        if (got <= 0) {
            WH_WARN("cma", "process_vm_%s with rank %d failed: %s; using the shared-memory copy instead",
                    put ? "writev" : "readv", wpeer, got < 0 ? strerror(errno) : "no progress");
            if (put) { /* (the probe only read: a policy may allow reads alone) */
                wh_shm.cma_seen[lp] |= WH_CMA_NOWRITE;
            } else {
                wh_shm.cma_ok[lp] = 0;
                wh_shm.cma_why[lp] = WH_WHY_PROBE;
            }
            if (off == 0)
                return WH_FALLBACK;
            return wh_error(MPI_ERR_OTHER, "CMA %s failed after %zu of %zu bytes", put ? "write" : "read", off, len);
        }
        off += (size_t)got;
    }
    wh_shm.cma_seen[lp] |= put ? WH_CMA_WRITE_SEEN : WH_CMA_READ_SEEN;
    comp->done(comp, MPI_SUCCESS);
    return MPI_SUCCESS;
}

/* One transfer between d and [off, off + d->len) of the node-shared heap
 * (WH_SHM_KEY_HEAP): plain loads and stores on this rank's mapping, once
 * every chunk the range touches is seen allocated (the offset came from
 * another process).  No system call, no page pinning, and no shared PID
 * namespace needed: it serves every pair that maps the region. */
static int heap_xfer(int wpeer, uint64_t off, const wh_data_t *d, int put, wh_comp_t *comp)
{
    if (d->mem != WH_MEM_HOST || !wh_tun.region_copy)
        return WH_FALLBACK;
    char *p = (char *)(uintptr_t)wh_node_range(off, d->len);
    if (!p) {
        WH_DEBUG("cma", "rank %d names heap offset %llu (%zu bytes) outside the heap's allocations", wpeer,
                 (unsigned long long)off, d->len);
        return WH_FALLBACK;
    }
    if (put ? wh_data_out(d, 0, p, d->len) : wh_data_in(d, 0, p, d->len))
        return wh_error(MPI_ERR_INTERN, "datatype copy of %zu bytes %s the node heap failed", d->len,
                        put ? "into" : "out of");
    comp->done(comp, MPI_SUCCESS);
    return MPI_SUCCESS;
}

int wh_shm_get_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c)
{
    return rkey == WH_SHM_KEY_HEAP ? heap_xfer(wpeer, raddr, dst, 0, c) : cma_xfer(wpeer, raddr, dst, 0, c);
}

int wh_shm_put_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c)
{
    return rkey == WH_SHM_KEY_HEAP ? heap_xfer(wpeer, raddr, src, 1, c) : cma_xfer(wpeer, raddr, src, 1, c);
}
