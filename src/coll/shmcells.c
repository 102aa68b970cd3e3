/* Node-shared-memory collectives through the cells (shmc_impl.h, layout in
 * shmcoll.c): gather, scatter, alltoall, scan, exscan, reduce_scatter and
 * allgatherv, each rank packing its blocks into its own cell and reading the
 * others' straight out of theirs. */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/shmc_impl.h"
#include "coll/shmcoll.h"
#include "util/scratch.h"
#include "util/tunables.h"

/* ---------- gather, scatter, alltoall through the inline cells ----------
 * Blocks are packed straight into the cells and unpacked straight out of
 * them (wh_dtype_copy to and from bytes), so any layout on any rank works
 * and every rank runs the same steps.  A copy that fails (it cannot with
 * matching signatures) is reported after the flags are raised, so nobody
 * is left waiting. */

int wh_shmc_gather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                   wh_dtype_t *rdt, int root, size_t blk, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    wh_dtype_t *byte = wh_coll_byte();
    uint64_t k = ++s->seq;
    if (me != root) {
        if (k >= NCELL)
            wh_shmc_wait_flags(s, n, k - NCELL + 1);
        rc = wh_dtype_copy(sbuf, (size_t)scount, sdt, cell(s, me, k, blk), blk, byte);
        *csize(s, me, k) = (uint32_t)blk;
        post(s, flag(s, me, k), k);
    } else {
        post(s, flag(s, me, k), k); /* the root writes no cell */
        if (sbuf != MPI_IN_PLACE)
            rc = wh_coll_copy(sbuf, scount, sdt, wh_coll_elt(rbuf, (MPI_Aint)me * rcount, rdt), rcount, rdt);
        for (int i = 1; i < n; i++) {
            int q = (me + i) % n;
            wh_shmc_wait_ge(s, flag(s, q, k), k);
            if (__builtin_expect(*csize(s, q, k) != (uint32_t)blk, 0)) {
                rc = first_err(rc, wh_shmc_size_mismatch(*csize(s, q, k), blk, q));
                continue;
            }
            rc = first_err(rc, wh_dtype_copy(cell(s, q, k, blk), blk, byte, wh_coll_elt(rbuf, (MPI_Aint)q * rcount, rdt),
                                             (size_t)rcount, rdt));
        }
        s->floor = k;
    }
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

int wh_shmc_scatter(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                    wh_dtype_t *rdt, int root, size_t blk, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    wh_dtype_t *byte = wh_coll_byte();
    uint64_t k = ++s->seq;
    if (me == root) {
        if (k >= NCELL)
            wh_shmc_wait_flags(s, n, k - NCELL + 1);
        rc = wh_dtype_copy(sbuf, (size_t)scount * (size_t)n, sdt, cell(s, me, k, blk * (size_t)n), blk * (size_t)n, byte);
        *csize(s, me, k) = (uint32_t)blk;
        post(s, flag(s, me, k), k);
        if (rbuf != MPI_IN_PLACE)
            rc = first_err(rc, wh_coll_copy(wh_coll_elt(sbuf, (MPI_Aint)me * scount, sdt), scount, sdt, rbuf, rcount,
                                            rdt));
    } else {
        post(s, flag(s, me, k), k); /* arrived: done with every earlier cell */
        wh_shmc_wait_ge(s, flag(s, root, k), k);
        if (__builtin_expect(*csize(s, root, k) != (uint32_t)blk, 0))
            rc = wh_shmc_size_mismatch(*csize(s, root, k), blk, root);
        else
            rc = wh_dtype_copy(cell(s, root, k, blk * (size_t)n) + (size_t)me * blk, blk, byte, rbuf, (size_t)rcount, rdt);
    }
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

int wh_shmc_alltoall(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                     wh_dtype_t *rdt, size_t blk, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc;
    wh_dtype_t *byte = wh_coll_byte();
    uint64_t k = ++s->seq;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, n, k - NCELL + 1);
    /* my blocks' size as sent (a send count that disagrees with the receive
     * count is the readers' error to report, and mine); it places them */
    size_t sblk = sbuf == MPI_IN_PLACE ? blk : (size_t)scount * sdt->size;
    unsigned char *out = cell(s, me, k, sblk * (size_t)n);
    if (sbuf == MPI_IN_PLACE) /* my outgoing blocks are in rbuf: packed before anything lands there */
        rc = wh_dtype_copy(rbuf, (size_t)rcount * (size_t)n, rdt, out, blk * (size_t)n, byte);
    else
        rc = wh_dtype_copy(sbuf, (size_t)scount * (size_t)n, sdt, out, blk * (size_t)n, byte);
    *csize(s, me, k) = (uint32_t)sblk;
    post(s, flag(s, me, k), k);
    for (int i = 0; i < n; i++) {
        int q = (me + i) % n;
        wh_shmc_wait_ge(s, flag(s, q, k), k);
        if (__builtin_expect(*csize(s, q, k) != (uint32_t)blk, 0)) {
            rc = first_err(rc, wh_shmc_size_mismatch(*csize(s, q, k), blk, q));
            continue;
        }
        rc = first_err(rc, wh_dtype_copy(cell(s, q, k, blk * (size_t)n) + (size_t)me * blk, blk, byte,
                                         wh_coll_elt(rbuf, (MPI_Aint)q * rcount, rdt), (size_t)rcount, rdt));
    }
    s->floor = k;
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

/* ---------- scan, exscan, reduce_scatter through the cells ----------
 * Every rank copies its input into its cell and raises its flag.
 * scan/exscan: rank r combines the cells of ranks r (scan) or r - 1
 * (exscan) down to 0 in rank order into rbuf, waiting only for the ranks
 * below it: rank 0 leaves at once, as in a chain, without a message per
 * link (count x dt one contiguous block: the selectors check).
 * reduce_scatter: rank r combines its own slice of every cell in rank order.
 * A size that differs is reported after every flag this rank needs was
 * waited for, so nobody reads a cell that is being rewritten. */
int wh_shmc_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                 int exclusive, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int me = c->rank, rc = MPI_SUCCESS;
    size_t bytes = (size_t)count * dt->size;
    uint64_t k = ++s->seq;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, c->size, k - NCELL + 1);
    memcpy(cell(s, me, k, bytes), sbuf == MPI_IN_PLACE ? rbuf : sbuf, bytes);
    *csize(s, me, k) = (uint32_t)bytes;
    post(s, flag(s, me, k), k);
    int top = exclusive ? me - 1 : me; /* the highest rank whose input is in my result */
    for (int r = top; r >= 0; r--) {
        wh_shmc_wait_ge(s, flag(s, r, k), k);
        if (__builtin_expect(*csize(s, r, k) != (uint32_t)bytes, 0)) {
            rc = first_err(rc, wh_shmc_size_mismatch(*csize(s, r, k), bytes, r));
            continue;
        }
        if (rc != MPI_SUCCESS)
            continue;
        if (r == top)
            memcpy(rbuf, cell(s, r, k, bytes), bytes);
        else
            rc = wh_op_apply(op, cell(s, r, k, bytes), rbuf, (size_t)count, dth, dt);
    }
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

int wh_shmc_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth, wh_dtype_t *dt,
                           wh_op_t *op, size_t total, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    uint64_t k = ++s->seq;
    size_t off = 0;
    for (int r = 0; r < me; r++)
        off += (size_t)rcounts[r] * dt->size;
    size_t mine = (size_t)rcounts[me] * dt->size;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, n, k - NCELL + 1);
    memcpy(cell(s, me, k, total), sbuf == MPI_IN_PLACE ? rbuf : sbuf, total);
    *csize(s, me, k) = (uint32_t)total;
    post(s, flag(s, me, k), k);
    for (int r = n - 1; r >= 0; r--) {
        wh_shmc_wait_ge(s, flag(s, r, k), k);
        if (__builtin_expect(*csize(s, r, k) != (uint32_t)total, 0)) {
            rc = first_err(rc, wh_shmc_size_mismatch(*csize(s, r, k), total, r));
            continue;
        }
        if (rc != MPI_SUCCESS || mine == 0)
            continue;
        if (r == n - 1)
            memcpy(rbuf, cell(s, r, k, total) + off, mine);
        else
            rc = wh_op_apply(op, cell(s, r, k, total) + off, rbuf, (size_t)rcounts[me], dth, dt);
    }
    s->floor = k;
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

/* allgatherv with every block at most WHARF_COLL_SHM_MAX bytes (rcounts,
 * the same on every rank, decide it): each rank packs its block into its
 * cell, everyone unpacks every cell at its displacement.  A rank whose send
 * size differs from what rcounts say contributes what fits and reports it;
 * the readers see the size it published and report it too. */
int wh_shmc_allgatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                       const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    wh_dtype_t *byte = wh_coll_byte();
    uint64_t k = ++s->seq;
    size_t mine = (size_t)rcounts[me] * rdt->size;
    size_t sbytes = sbuf == MPI_IN_PLACE ? mine : (size_t)scount * sdt->size;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, n, k - NCELL + 1);
    unsigned char *out = cell(s, me, k, mine);
    if (sbuf == MPI_IN_PLACE) {
        rc = wh_dtype_copy(wh_coll_elt(rbuf, displs[me], rdt), (size_t)rcounts[me], rdt, out, mine, byte);
    } else if (__builtin_expect(sbytes == mine, 1)) {
        rc = wh_dtype_copy(sbuf, (size_t)scount, sdt, out, mine, byte);
    } else {
        size_t len = sbytes > mine ? sbytes : mine;
        char *tmp = calloc(1, len ? len : 1);
        if (!tmp)
            rc = wh_coll_nomem("shared-memory allgatherv", len);
        else if ((rc = wh_dtype_copy(sbuf, (size_t)scount, sdt, tmp, sbytes, byte)) == MPI_SUCCESS)
            rc = wh_shmc_size_mismatch(sbytes, mine, me);
        if (tmp)
            memcpy(out, tmp, mine);
        free(tmp);
    }
    *csize(s, me, k) = sbytes > UINT32_MAX ? UINT32_MAX : (uint32_t)sbytes;
    post(s, flag(s, me, k), k);
    for (int i = 0; i < n; i++) {
        int q = (me + i) % n;
        size_t want = (size_t)rcounts[q] * rdt->size;
        wh_shmc_wait_ge(s, flag(s, q, k), k);
        if (__builtin_expect(*csize(s, q, k) != (uint32_t)want, 0)) {
            rc = first_err(rc, wh_shmc_size_mismatch(*csize(s, q, k), want, q));
            continue;
        }
        if (want && !(q == me && sbuf == MPI_IN_PLACE))
            rc = first_err(rc, wh_dtype_copy(cell(s, q, k, want), want, byte, wh_coll_elt(rbuf, displs[q], rdt),
                                             (size_t)rcounts[q], rdt));
    }
    s->floor = k;
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

/* ---------- alltoallv and alltoallw through the cells ----------
 * Only the sender knows how much it sends, so each rank decides for itself:
 * all its outgoing blocks, packed, fit its cell behind a table of n + 1
 * offsets -> they go there; otherwise it sends messages, and its size word
 * says so (A2AV_MSGS).  A receiver looks at each sender's flag and takes
 * its block out of the cell, or posts a receive.  Senders it expects
 * nothing from are not waited for (a sparse exchange stays sparse), so
 * `floor` is raised only where every other rank's flag was seen. */
#define A2AV_MSGS UINT32_MAX
#define A2AV_FEW 32 /* requests on the stack up to this many ranks */

int wh_shmc_alltoallv(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    wh_dtype_t *byte = wh_coll_byte();
    int in_place = sbuf == MPI_IN_PLACE;
    const wh_a2a_side_t *src = in_place ? rs : ss;
    const void *from = in_place ? rbuf : sbuf;
    size_t hdr = ((size_t)n + 1) * sizeof(uint32_t), total = hdr;
    for (int q = 0; q < n && total <= s->cell; q++)
        if (q != me)
            total += (size_t)wh_a2a_count(src, q) * wh_a2a_type(src, q)->size;
    int cellmode = total <= s->cell && total <= wh_tun.coll_shm_max;
    uint64_t k = ++s->seq;
    wh_req_t *few[2 * A2AV_FEW], **reqs = n <= A2AV_FEW ? few : calloc(2 * (size_t)n, sizeof *reqs);
    if (reqs == few) /* only the 2n used */
        memset(few, 0, 2 * (size_t)n * sizeof *few);
    void *raw = NULL;
    if (!reqs) /* then blocking: sends after an error are empty, so they complete */
        rc = wh_coll_nomem("alltoallv requests", 2 * (size_t)n * sizeof *reqs);
    if (cellmode) {
        if (k >= NCELL)
            wh_shmc_wait_flags(s, n, k - NCELL + 1);
        unsigned char *out = cell(s, me, k, total);
        uint32_t *off = (uint32_t *)(void *)out, at = 0;
        for (int q = 0; q < n; q++) {
            off[q] = at;
            if (q == me)
                continue;
            size_t len = (size_t)wh_a2a_count(src, q) * wh_a2a_type(src, q)->size;
            if (len)
                rc = first_err(rc, wh_dtype_copy(wh_a2a_addr(src, from, q), (size_t)wh_a2a_count(src, q),
                                                 wh_a2a_type(src, q), out + hdr + at, len, byte));
            at += (uint32_t)len;
        }
        off[n] = at;
        *csize(s, me, k) = (uint32_t)total;
        post(s, flag(s, me, k), k);
    } else {
        *csize(s, me, k) = A2AV_MSGS;
        post(s, flag(s, me, k), k);
        if (in_place) /* what I send is replaced by what I receive */
            from = wh_a2a_snapshot(rs, rbuf, n, &raw, &rc);
        for (int i = 1; i < n; i++) {
            int q = (me + i) % n;
            MPI_Count sk = wh_a2a_count(src, q);
            wh_dtype_t *st = wh_a2a_type(src, q);
            if (!sk || !st->size)
                continue;
            if (reqs) /* after an error the messages still go, empty (algo.h) */
                wh_coll_eisend(wh_a2a_addr(src, from, q), rc == MPI_SUCCESS ? sk : 0, st, q, WH_TAG_ALLTOALL, c,
                               &reqs[n + i], &rc);
            else
                wh_coll_esend(NULL, 0, st, q, WH_TAG_ALLTOALL, c, &rc);
        }
    }
    if (!in_place)
        wh_coll_ecopy(wh_a2a_addr(ss, sbuf, me), wh_a2a_count(ss, me), wh_a2a_type(ss, me), wh_a2a_addr(rs, rbuf, me),
                      wh_a2a_count(rs, me), wh_a2a_type(rs, me), &rc);
    int waited = 1; /* every other rank's flag seen at k: the floor may rise to k */
    for (int i = 1; i < n; i++) {
        int q = (me - i + n) % n;
        MPI_Count rk = wh_a2a_count(rs, q);
        wh_dtype_t *rt = wh_a2a_type(rs, q);
        size_t want = (size_t)rk * rt->size;
        if (!want) {
            waited = 0;
            continue; /* nothing comes from q (matching signatures: q sends nothing) */
        }
        wh_shmc_wait_ge(s, flag(s, q, k), k);
        uint32_t sz = *csize(s, q, k);
        if (sz == A2AV_MSGS) { /* q's messages are all on their way: a blocking receive completes */
            if (reqs)
                wh_coll_eirecv(wh_a2a_addr(rs, rbuf, q), rk, rt, q, WH_TAG_ALLTOALL, c, &reqs[i], &rc);
            else
                wh_coll_erecv(wh_a2a_addr(rs, rbuf, q), rk, rt, q, WH_TAG_ALLTOALL, c, &rc);
            continue;
        }
        const unsigned char *in = cell(s, q, k, sz);
        const uint32_t *off = (const uint32_t *)(const void *)in;
        size_t got = (size_t)(off[me + 1] - off[me]);
        if (__builtin_expect(got != want, 0)) {
            rc = first_err(rc, wh_shmc_size_mismatch(got, want, q));
            continue;
        }
        rc = first_err(rc, wh_dtype_copy(in + hdr + off[me], want, byte, wh_a2a_addr(rs, rbuf, q), (size_t)rk, rt));
    }
    for (int i = 0; reqs && i < 2 * n; i++)
        wh_coll_ewait(reqs[i], &rc);
    if (reqs != few)
        free(reqs);
    wh_scratch_put(raw);
    if (waited) /* (a dense exchange: the next call's cell check reads no other rank's line) */
        s->floor = k;
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}
