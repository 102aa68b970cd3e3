/* Single-copy collectives between co-resident ranks: every rank publishes
 * where its data is (a 24-byte record through the node-shared-memory
 * allgather), then readers copy what they need straight out of the owners'
 * buffers with the shm channel's zero-copy get (Cross Memory Attach), and a
 * second exchange tells the owners their buffers were read.  Each byte is
 * copied once (the cells of shmcoll.c copy it in and out: twice; an
 * allgather there copies each block into a cell and out of it n times).
 *
 * Used only when every member can read every other in place (the locality
 * probe's CMA verdict for each pair, the same PID namespace and kernel) and
 * every member's buffer is contiguous: each rank states in its record
 * whether it can take part, so all ranks agree to go single-copy or all fall
 * back (WH_FALLBACK) to the cell algorithms, with every buffer untouched.  A
 * read that fails (the probe passed, so: a peer going away) is reported in
 * the second exchange and every rank falls back as well. */
#include <stdint.h>
#include <string.h>

#include "chan/chan.h"
#include "chan/shm/shm.h"
#include "coll/algo.h"
#include "coll/shmcoll.h"
#include "coord/coord.h"
#include "core/err.h"
#include "util/tunables.h"

typedef struct {
    uint64_t addr;  /* start of the rank's exposed bytes */
    uint64_t bytes; /* how many (all ranks check the counts agree) */
    uint32_t ok;    /* the rank can read every member in place, its buffers are contiguous */
    uint32_t helps; /* bcast root of two: it writes the upper half itself */
} cma_pub_t;

typedef struct {
    wh_comp_t comp;
    int done, err;
} cma_rd_t;

static void rd_done(wh_comp_t *c, int err)
{
    cma_rd_t *r = (cma_rd_t *)c;
    r->done = 1;
    r->err = err;
}

/* 1 if this rank can read every other member of c in place */
static int can_read_all(const wh_comm_t *c)
{
    if (!wh_tun.coll_cma || !wh_chans[WH_CHAN_SHM] || !wh_chans[WH_CHAN_SHM]->get_zcopy)
        return 0;
    for (int r = 0; r < c->size; r++) {
        int w = wh_comm_wrank(c, r);
        if (w != wh_job.rank && (wh_job.local_index[w] < 0 || wh_coord_peers[w].chan != WH_CHAN_SHM ||
                                 !(wh_coord_peers[w].caps & WH_CAP_GET_ZCOPY)))
            return 0;
    }
    return 1;
}

/* copy len bytes at the peer's raddr into dst (synchronous on the shm channel) */
static int cma_read(const wh_comm_t *c, int r, uint64_t raddr, void *dst, size_t len)
{
    if (!len)
        return MPI_SUCCESS;
    wh_data_t d = {.base = dst, .len = len, .mem = WH_MEM_HOST};
    cma_rd_t rd = {.comp.done = rd_done};
    int rc = wh_chans[WH_CHAN_SHM]->get_zcopy(wh_comm_wrank(c, r), raddr, 0, &d, &rd.comp);
    if (rc != MPI_SUCCESS)
        return rc;
    return rd.done ? rd.err : wh_error(MPI_ERR_INTERN, "single-copy read from rank %d did not complete", r);
}

/* Phase 1: publish {addr, bytes, ok} and learn everyone's (all[c->size]).
 * 1 when all can go single-copy with the same byte count, 0 to fall back
 * (*rc: an error of the exchange itself, else MPI_SUCCESS). */
static int publish(wh_comm_t *c, const void *addr, size_t bytes, int ok, int helps, cma_pub_t *all, int *rc)
{
    cma_pub_t mine = {.addr = (uint64_t)(uintptr_t)addr, .bytes = bytes, .ok = ok && can_read_all(c),
                      .helps = (uint32_t)helps};
    wh_dtype_t *byte = wh_coll_byte();
    *rc = wh_shmc_allgather(&mine, sizeof mine, byte, all, sizeof mine, byte, c);
    if (*rc != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < c->size; r++)
        if (!all[r].ok || all[r].bytes != bytes)
            return 0;
    return 1;
}

/* Phase 2: everyone's reads are over (the owners may reuse their buffers);
 * 1 when all succeeded, 0 when someone's failed (all fall back). */
static int all_read(wh_comm_t *c, int myrc, int *rc)
{
    uint32_t mine = myrc == MPI_SUCCESS, all[WH_CMA_MAXN];
    wh_dtype_t *byte = wh_coll_byte();
    *rc = wh_shmc_allgather(&mine, sizeof mine, byte, all, sizeof mine, byte, c);
    int good = *rc == MPI_SUCCESS;
    for (int r = 0; good && r < c->size; r++)
        good = all[r] != 0;
    return good;
}

int wh_cma_usable(wh_comm_t *c, size_t bytes)
{
    return wh_tun.coll_cma && c->size > 1 && c->size <= WH_CMA_MAXN && bytes >= wh_tun.coll_cma_min &&
           wh_shmc_usable(c, sizeof(cma_pub_t));
}

int wh_cma_allgather(const void *src, char *dst, size_t blk, wh_comm_t *c)
{
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    cma_pub_t all[WH_CMA_MAXN];
    if (!publish(c, src, blk, src && dst, 0, all, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    int my = MPI_SUCCESS;
    for (int i = 1; i < n && my == MPI_SUCCESS; i++) { /* start past me: readers spread over the owners */
        int q = (me + i) % n;
        my = cma_read(c, q, all[q].addr, dst + (size_t)q * blk, blk);
    }
    if (my == MPI_SUCCESS && dst + (size_t)me * blk != (const char *)src)
        memcpy(dst + (size_t)me * blk, src, blk);
    if (!all_read(c, my, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    return MPI_SUCCESS;
}

/* Between two ranks the root, which would only wait, writes the upper half
 * into the other's buffer (process_vm_writev) while the other reads the
 * lower half: one copy per byte still, two cpus (as point-to-point's split
 * transfers, src/proto/split.c).  Only where the root may write to that
 * rank (its probe, no write refused since); a refused write is reported in
 * the second exchange and both fall back. */
static int may_write(const wh_comm_t *c, int r)
{
    int w = wh_comm_wrank(c, r), lp = wh_job.local_index[w];
    return (wh_coord_peers[w].caps & WH_CAP_PUT_ZCOPY) && wh_tun.cma_split && !wh_job.oversubscribed && lp >= 0 &&
           wh_shm.cma_nowrite && !wh_shm.cma_nowrite[lp];
}

int wh_cma_bcast(void *buf, size_t bytes, int root, wh_comm_t *c)
{
    int me = c->rank, rc = MPI_SUCCESS;
    cma_pub_t all[WH_CMA_MAXN];
    int helps = me == root && c->size == 2 && bytes >= wh_tun.cma_split && may_write(c, 1 - root);
    if (!publish(c, buf, bytes, buf != NULL, helps, all, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    size_t half = all[root].helps ? (bytes / 2 + 4095) & ~(size_t)4095 : bytes;
    if (half > bytes)
        half = bytes;
    int my = MPI_SUCCESS;
    if (me != root)
        my = cma_read(c, root, all[root].addr, buf, half);
    else if (all[root].helps && half < bytes) {
        wh_data_t d = {.base = (char *)buf + half, .len = bytes - half, .mem = WH_MEM_HOST};
        cma_rd_t wr = {.comp.done = rd_done};
        my = wh_chans[WH_CHAN_SHM]->put_zcopy(wh_comm_wrank(c, 1 - root), all[1 - root].addr + half, 0, &d,
                                              &wr.comp);
        if (my == MPI_SUCCESS)
            my = wr.done ? wr.err : wh_error(MPI_ERR_INTERN, "single-copy write to rank %d did not complete", 1 - root);
    }
    if (!all_read(c, my, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    return MPI_SUCCESS;
}
