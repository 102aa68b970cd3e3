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
#include "util/log.h"
#include "util/scratch.h"
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
        if (w != wh_job.rank && (wh_coord_peers[w].chan != WH_CHAN_SHM || !(wh_shm_cma(w) & WH_CMA_CAN_READ)))
            return 0;
    }
    return 1;
}

/* copy len bytes between the peer's raddr and buf, in place (synchronous on
 * the shm channel): read them into buf, or write buf there */
static int cma_xfer(const wh_comm_t *c, int r, uint64_t raddr, void *buf, size_t len, int write)
{
    if (!len)
        return MPI_SUCCESS;
    wh_data_t d = {.base = buf, .len = len, .mem = WH_MEM_HOST};
    cma_rd_t rd = {.comp.done = rd_done};
    int rc = (write ? wh_chans[WH_CHAN_SHM]->put_zcopy : wh_chans[WH_CHAN_SHM]->get_zcopy)(wh_comm_wrank(c, r), raddr,
                                                                                          0, &d, &rd.comp);
    if (rc != MPI_SUCCESS)
        return rc;
    return rd.done ? rd.err
                   : wh_error(MPI_ERR_INTERN, "single-copy %s rank %d did not complete", write ? "write to" : "read from",
                              r);
}
static int cma_read(const wh_comm_t *c, int r, uint64_t raddr, void *dst, size_t len)
{
    return cma_xfer(c, r, raddr, dst, len, 0);
}

/* Phase 1: publish {addr, bytes, ok} and learn everyone's (all[c->size]).
 * 1 when all can go single-copy with the same byte count, 0 to fall back
 * (*rc: an error of the exchange itself, else MPI_SUCCESS). */
static int publish_any(wh_comm_t *c, const void *addr, size_t bytes, int ok, int helps, cma_pub_t *all, int *rc)
{
    cma_pub_t mine = {.addr = (uint64_t)(uintptr_t)addr, .bytes = bytes, .ok = ok && can_read_all(c),
                      .helps = (uint32_t)helps};
    wh_dtype_t *byte = wh_coll_byte();
    *rc = wh_shmc_allgather(&mine, sizeof mine, byte, all, sizeof mine, byte, c);
    if (*rc != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < c->size; r++)
        if (!all[r].ok)
            return 0;
    return 1;
}

/* the same, all ranks exposing bytes: 0 (fall back) when one exposes another count */
static int publish(wh_comm_t *c, const void *addr, size_t bytes, int ok, int helps, cma_pub_t *all, int *rc)
{
    if (!publish_any(c, addr, bytes, ok, helps, all, rc))
        return 0;
    for (int r = 0; r < c->size; r++)
        if (all[r].bytes != bytes)
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
    size_t off[WH_CMA_MAXN], len[WH_CMA_MAXN];
    for (int r = 0; r < c->size; r++)
        off[r] = (size_t)r * blk, len[r] = blk;
    return wh_cma_allgatherv(src, dst, off, len, c);
}

int wh_cma_allgatherv(const void *src, char *dst, const size_t *off, const size_t *len, wh_comm_t *c)
{
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    cma_pub_t all[WH_CMA_MAXN];
    if (!publish_any(c, src, len[me], src && dst, 0, all, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    for (int r = 0; r < n; r++)
        if (all[r].bytes != len[r])
            return WH_FALLBACK; /* (a count that differs: the fallback reports it) */
    int my = MPI_SUCCESS;
    for (int i = 1; i < n && my == MPI_SUCCESS; i++) { /* start past me: readers spread over the owners */
        int q = (me + i) % n;
        my = cma_read(c, q, all[q].addr, dst + off[q], len[q]);
    }
    if (my == MPI_SUCCESS && dst + off[me] != (const char *)src)
        memcpy(dst + off[me], src, len[me]);
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
    return wh_tun.cma_split && !wh_job.oversubscribed && (wh_shm_cma(wh_comm_wrank(c, r)) & WH_CMA_CAN_WRITE);
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
    else if (all[root].helps && half < bytes)
        my = cma_xfer(c, 1 - root, all[1 - root].addr + half, (char *)buf + half, bytes - half, 1);
    if (!all_read(c, my, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    return MPI_SUCCESS;
}

/* Reduce to a root in slices: rank r combines slice r of every member's
 * input, read in place chunk by chunk into a scratch that stays in cache,
 * and writes the result into the root's buffer (process_vm_writev); the
 * root combines its slice straight into its buffer.  Each input byte is
 * read once, by one rank, and nobody copies into or out of the node cells
 * (shmcoll.c's slices copy everything in and the root copies it out).
 * The root's slice is the larger (weights 2(n-1)+1 against 2(n-1)): the
 * others also write theirs.  Commutative ops (slices combine in any order).
 *
 * The offers travel in the first step of the cells' reduce (shmcoll.c), so
 * deciding costs no exchange of its own and counts that differ between
 * ranks still meet there and fail as the cells' reduce does.
 *
 * A transfer refused by a policy (a write, typically) fails before it moves
 * a byte, so with a root not in place every buffer a fallback reads is
 * untouched and all fall back.  A root in place holds its input where the
 * others write: there the path is taken only when every other rank has
 * seen a write to the root work already, and a failure afterwards (a peer
 * going away) is an error. */
#define RED_CHUNK ((size_t)128 << 10) /* fewer calls cost less than a scratch out of L1 */

int wh_cma_reduce_offer(wh_comm_t *c, const char *in, char *out, size_t bytes, const wh_op_t *op, int root,
                        wh_cma_offer_t *o)
{
    /* each rank reads its slice from n - 1 others, a call per chunk, and
     * small reads lose to the cells: from (n - 1)^2 x WHARF_COLL_CMA_MIN
     * (2 ranks 64 KiB: 0.68x the cells' time; 4 ranks on 2 cpus, three
     * runs: 256 KiB 0.79-1.46x, 512 KiB 0.69-1.03x, 1 MiB 0.85-0.88x) */
    int n = c->size, me = c->rank;
    size_t k = (size_t)(n - 1);
    *o = (wh_cma_offer_t){.addr = (uint64_t)(uintptr_t)in, .out = (uint64_t)(uintptr_t)out};
    if (root < 0 || n < 2 || n > WH_CMA_MAXN || !op->commute || !in || bytes < k * k * wh_tun.coll_cma_min ||
        !can_read_all(c))
        return 0;
    if (me != root) {
        unsigned to_root = wh_shm_cma(wh_comm_wrank(c, root));
        if (!(to_root & WH_CMA_CAN_WRITE))
            return 0;
        o->want = 1 | (to_root & WH_CMA_WRITE_SEEN ? 2u : 0u);
    } else {
        o->want = 1 | 2;
    }
    return 1;
}

static int fragile(const wh_cma_offer_t *all, int root)
{
    return all[root].addr == all[root].out; /* the root in place */
}

int wh_cma_reduce_agree(const wh_cma_offer_t *all, int n, int root)
{
    for (int r = 0; r < n; r++)
        if (!(all[r].want & 1) || (fragile(all, root) && !(all[r].want & 2)))
            return 0;
    return 1;
}

static size_t red_lo(size_t count, int n, int root, int r)
{
    if (r >= n)
        return count;
    double w = 2.0 * (n - 1), cw = w * r + (r > root), total = w * n + 1;
    size_t lo = (size_t)((double)count * (cw / total));
    return lo < count ? lo : count;
}

int wh_cma_reduce_run(const wh_cma_offer_t *all, const char *in, char *out, size_t count, MPI_Datatype dth,
                      wh_dtype_t *dt, wh_op_t *op, int root, wh_comm_t *c)
{
    int n = c->size, me = c->rank;
    size_t esz = dt->size, per = RED_CHUNK / esz ? RED_CHUNK / esz : 1;
    int inplace = me == root && in == out;
    if (inplace)
        WH_DEBUG("coll", "single-copy reduce of %zu bytes to this rank, in place", count * esz);
    char *tmp = wh_scratch_get(2 * per * esz);
    int my = tmp ? MPI_SUCCESS : wh_coll_nomem("single-copy reduce", 2 * per * esz);
    size_t lo = red_lo(count, n, root, me), hi = red_lo(count, n, root, me + 1);
    for (size_t off = lo; off < hi && my == MPI_SUCCESS; off += per) {
        size_t len = hi - off < per ? hi - off : per, at = off * esz;
        char *acc = me == root ? out + at : tmp + per * esz;
        int have = inplace; /* acc holds my own input already */
        for (int i = 1; i < n && my == MPI_SUCCESS; i++) {
            int q = (me + i) % n;
            my = cma_read(c, q, all[q].addr + at, tmp, len * esz);
            if (my == MPI_SUCCESS)
                my = have ? wh_op_apply(op, tmp, acc, len, dth, dt) : wh_op_apply3(op, in + at, tmp, acc, len, dth, dt);
            have = 1;
        }
        if (my == MPI_SUCCESS && me != root)
            my = cma_xfer(c, root, all[root].out + at, acc, len * esz, 1);
    }
    wh_scratch_put(tmp);
    return my;
}

int wh_cma_reduce_settle(const wh_cma_offer_t *all, int my, int worst, int root)
{
    if (worst == 0)
        return MPI_SUCCESS;
    if (!fragile(all, root))
        return WH_FALLBACK; /* out is rewritten, no input was touched */
    if (my != MPI_SUCCESS && my != WH_FALLBACK)
        return my;
    return wh_error(MPI_ERR_OTHER, "single-copy reduce to rank %d (in place): a transfer %s", root,
                    my == WH_FALLBACK ? "was refused here" : "failed on another rank");
}
