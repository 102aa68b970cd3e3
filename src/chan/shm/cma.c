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
    if (!wh_shm.cma_ok || !wh_shm.cma_why || !wh_shm.pid)
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
int wh_shm_cma_read(int lp, int pid, uint64_t raddr, wh_req_t *r, size_t len)
{
    size_t off = 0;
    const char *start;
    int contig = wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start);
    while (off < len) {
        struct iovec liov[64];
        int nl;
        size_t covered;
        if (contig) {
            liov[0].iov_base = (char *)start + off;
            liov[0].iov_len = len - off;
            nl = 1;
            covered = len - off;
        } else {
            nl = wh_dtype_iov(r->buf, (size_t)r->count, r->dt, off, len - off, liov, 64, &covered);
            if (nl <= 0)
                return wh_error(MPI_ERR_INTERN, "datatype iovec failed at offset %zu", off);
        }
        struct iovec riov = {(void *)(uintptr_t)(raddr + off), covered};
        ssize_t got = process_vm_readv(pid, liov, (unsigned long)nl, &riov, 1, 0);
        if (got <= 0) {
            WH_WARN("cma", "process_vm_readv from local rank %d failed: %s; using the shared-memory copy instead",
                    lp, got < 0 ? strerror(errno) : "no progress");
            wh_shm.cma_ok[lp] = 0;
            wh_shm.cma_why[lp] = WH_WHY_PROBE;
            if (off == 0)
                return MPI_ERR_OTHER;
            return wh_error(MPI_ERR_OTHER, "CMA read failed after %zu of %zu bytes", off, len);
        }
        off += (size_t)got;
    }
    return MPI_SUCCESS;
}
