/* Cross Memory Attach: single-copy reads of a co-resident sender's buffer.
 * Enabled per pair only after a real process_vm_readv of a probe word the peer
 * advertised returned the expected value (different PID namespaces, Yama,
 * seccomp or missing capabilities all make the probe fail safely). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "chan/shm/shm.h"
#include "core/core.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

static volatile uint64_t probe_word;

static uint64_t make_cookie(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)getpid() << 17) ^ (uint64_t)ts.tv_sec;
    return x | 1;
}

int wh_shm_cma_setup(int phase)
{
    char key[64], val[128];
    if (phase == 0) {
        probe_word = make_cookie() ^ (uint64_t)wh_job.rank;
        snprintf(key, sizeof key, "cma.%d", wh_job.rank);
        snprintf(val, sizeof val, "%d:%" PRIx64 ":%" PRIx64, (int)getpid(), (uint64_t)(uintptr_t)&probe_word,
                 (uint64_t)probe_word);
        if (wh_pmi_put(key, val) != 0)
            return wh_error(MPI_ERR_OTHER, "PMI put of %s failed", key);
        return MPI_SUCCESS;
    }
    if (phase != 1)
        return MPI_SUCCESS;
    int n = wh_shm.nlocal;
    wh_shm.cma_ok = calloc((size_t)n, sizeof(int));
    wh_shm.pid = calloc((size_t)n, sizeof(int));
    if (!wh_shm.cma_ok || !wh_shm.pid)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int lp = 0; lp < n; lp++) {
        if (lp == wh_shm.me)
            continue;
        int wr = wh_job.local_ranks[lp];
        snprintf(key, sizeof key, "cma.%d", wr);
        if (wh_pmi_get(key, val, sizeof val) != 0)
            return wh_error(MPI_ERR_OTHER, "PMI get of %s failed", key);
        int pid;
        uint64_t addr, cookie, got = 0;
        if (sscanf(val, "%d:%" SCNx64 ":%" SCNx64, &pid, &addr, &cookie) != 3)
            return wh_error(MPI_ERR_OTHER, "malformed CMA card from rank %d: '%s'", wr, val);
        wh_shm.pid[lp] = pid;
        if (!wh_tun.cma) {
            WH_DEBUG("cma", "rank %d: disabled by WHARF_CMA=0", wr);
            continue;
        }
        struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)addr, sizeof got};
        ssize_t rc = process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (rc == (ssize_t)sizeof got && got == cookie) {
            wh_shm.cma_ok[lp] = 1;
            WH_DEBUG("cma", "rank %d (pid %d): probe ok", wr, pid);
        } else {
            WH_INFO("cma", "rank %d (pid %d): CMA unavailable: %s", wr, pid,
                    rc < 0 ? strerror(errno) : "probe word mismatch (different PID namespace?)");
        }
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
            if (off == 0)
                return MPI_ERR_OTHER;
            return wh_error(MPI_ERR_OTHER, "CMA read failed after %zu of %zu bytes", off, len);
        }
        off += (size_t)got;
    }
    return MPI_SUCCESS;
}
