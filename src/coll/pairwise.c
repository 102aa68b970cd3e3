/* Pairwise exchange: n-1 steps; in step i rank r sends to r+i and receives
 * from r-i (with a power-of-two size: exchanges with r^i, a perfect
 * matching per step).  Alltoall(v,w) and reduce-scatter for commutative ops.
 * Alltoall(v,w) also scattered (WHARF_COLL_ALLTOALL): the same messages,
 * all posted at once.
 *
 * In-place alltoall(v,w) first takes a snapshot of the receive buffer and
 * sends from it (the standard: data sent is taken from, and replaced in,
 * the receive buffer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "util/scratch.h"
#include "util/tunables.h"

char *wh_a2a_snapshot(const wh_a2a_side_t *s, const void *buf, int n, void **raw, int *rc)
{
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int j = 0; j < n; j++) {
        MPI_Count k = wh_a2a_count(s, j);
        wh_dtype_t *t = wh_a2a_type(s, j);
        if (k == 0 || t->size == 0)
            continue;
        MPI_Aint a = (MPI_Aint)(wh_a2a_addr(s, buf, j) - (char *)buf) + t->true_lb;
        MPI_Aint span = (MPI_Aint)(k - 1) * t->extent;
        MPI_Aint blo = a + (span < 0 ? span : 0), bhi = a + (span > 0 ? span : 0) + t->true_extent;
        if (!any || blo < lo)
            lo = blo;
        if (!any || bhi > hi)
            hi = bhi;
        any = 1;
    }
    *raw = wh_scratch_get((size_t)(hi - lo) + 1);
    if (!*raw) {
        *rc = wh_coll_nomem("in-place alltoall snapshot", (size_t)(hi - lo));
        return NULL;
    }
    char *base = (char *)((uintptr_t)*raw - (uintptr_t)lo);
    for (int j = 0; j < n && *rc == MPI_SUCCESS; j++) {
        MPI_Count k = wh_a2a_count(s, j);
        wh_dtype_t *t = wh_a2a_type(s, j);
        if (k == 0 || t->size == 0)
            continue;
        *rc = wh_coll_copy(wh_a2a_addr(s, buf, j), k, t, wh_a2a_addr(s, base, j), k, t);
    }
    return base;
}

/* WHARF_COLL_ALLTOALL: every receive and send posted at once (scattered) or
 * n - 1 exchange steps (pairwise).  Scattered lets each rank take whichever
 * block is ready: in lockstep, a step waits for a partner that may not be
 * running (ranks outnumbering cores) or still busy with its previous
 * partner; auto bounds the requests in flight by the communicator size. */
#define SCATTERED_AUTO_MAX 32
static int scattered(int n)
{
    if (!strcmp(wh_tun.coll_alltoall, "pairwise"))
        return 0;
    return !strcmp(wh_tun.coll_alltoall, "scattered") || n <= SCATTERED_AUTO_MAX;
}

/* ckind: what WHARF_REPORT=coll counts (alltoall; -1: v and w are not counted) */
static int a2a_core(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c,
                    int ckind)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    void *raw = NULL;
    const wh_a2a_side_t *src = ss;
    int in_place = sbuf == MPI_IN_PLACE; /* (sbuf may be MPI_BOTTOM, NULL) */
    if (in_place) {
        src = rs;
        sbuf = wh_a2a_snapshot(rs, rbuf, n, &raw, &err); /* failed: err is set, every message goes empty */
    }
    wh_req_t **reqs = scattered(n) ? calloc(2 * (size_t)n, sizeof *reqs) : NULL;
    if (reqs) {
        if (ckind >= 0)
            wh_coll_count(c, ckind, WH_CA_SCATTERED);
        for (int i = 1; i < n; i++) {
            int from = (r - i + n) % n;
            MPI_Count rk = wh_a2a_count(rs, from);
            wh_dtype_t *rt = wh_a2a_type(rs, from);
            if (rk && rt->size)
                wh_coll_eirecv(wh_a2a_addr(rs, rbuf, from), rk, rt, from, WH_TAG_ALLTOALL, c, &reqs[i], &err);
        }
        for (int i = 1; i < n; i++) {
            int dst = (r + i) % n;
            MPI_Count sk = wh_a2a_count(src, dst);
            wh_dtype_t *st = wh_a2a_type(src, dst);
            if (sk && st->size)
                wh_coll_eisend(wh_a2a_addr(src, sbuf, dst), err == MPI_SUCCESS ? sk : 0, st, dst, WH_TAG_ALLTOALL, c,
                               &reqs[n + i], &err);
        }
        if (!in_place)
            wh_coll_ecopy(wh_a2a_addr(src, sbuf, r), wh_a2a_count(src, r), wh_a2a_type(src, r), wh_a2a_addr(rs, rbuf, r),
                          wh_a2a_count(rs, r), wh_a2a_type(rs, r), &err);
        for (int i = 0; i < 2 * n; i++)
            wh_coll_ewait(reqs[i], &err);
        free(reqs);
        wh_scratch_put(raw);
        return err;
    }
    if (ckind >= 0)
        wh_coll_count(c, ckind, WH_CA_P2P);
    if (!in_place) /* (in place, my own block is already where it belongs) */
        wh_coll_ecopy(wh_a2a_addr(src, sbuf, r), wh_a2a_count(src, r), wh_a2a_type(src, r), wh_a2a_addr(rs, rbuf, r),
                      wh_a2a_count(rs, r), wh_a2a_type(rs, r), &err);
    int pof2 = (n & (n - 1)) == 0;
    for (int i = 1; i < n; i++) {
        int dst = pof2 ? r ^ i : (r + i) % n, from = pof2 ? r ^ i : (r - i + n) % n;
        MPI_Count sk = wh_a2a_count(src, dst), rk = wh_a2a_count(rs, from);
        wh_dtype_t *st = wh_a2a_type(src, dst), *rt = wh_a2a_type(rs, from);
        /* empty blocks are empty on both sides (type signatures match) */
        wh_coll_esendrecv(wh_a2a_addr(src, sbuf, dst), sk, st, sk && st->size ? dst : MPI_PROC_NULL,
                          wh_a2a_addr(rs, rbuf, from), rk, rt, rk && rt->size ? from : MPI_PROC_NULL, WH_TAG_ALLTOALL,
                          c, &err);
    }
    wh_scratch_put(raw);
    return err;
}

int wh_alltoall_pairwise(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                         wh_dtype_t *rdt, wh_comm_t *c)
{
    wh_a2a_side_t ss = {.count = scount, .type = sdt}, rs = {.count = rcount, .type = rdt};
    return a2a_core(sbuf, &ss, rbuf, &rs, c, WH_CK_ALLTOALL);
}

int wh_a2a_pairwise(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c)
{
    return a2a_core(sbuf, ss, rbuf, rs, c, -1);
}

/* Commutative ops: in step i send the block rank r+i needs from my input and
 * fold in the block rank r-i sent me for my piece. */
int wh_reduce_scatter_pairwise(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth,
                               wh_dtype_t *dt, wh_op_t *op, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint *displs = malloc((size_t)n * sizeof *displs);
    void *raw_a = NULL, *raw_t = NULL;
    MPI_Count mine = rcounts[r];
    /* out of place, my block accumulates in rbuf itself; in place, rbuf
     * still holds blocks to send, so it collects in a scratch buffer */
    char *acc = sbuf == MPI_IN_PLACE ? wh_coll_tmp(mine, dt, &raw_a) : rbuf;
    char *tmp = wh_coll_tmp(mine, dt, &raw_t);
    if (!displs || (!acc && sbuf == MPI_IN_PLACE) || !tmp) /* rbuf may be NULL when mine is 0 */
        wh_coll_note(wh_coll_nomem("reduce_scatter buffers", 2 * (size_t)mine * (size_t)dt->extent), &err);
    MPI_Aint d = 0;
    for (int i = 0; i < n && displs; i++) {
        displs[i] = d;
        d += (MPI_Aint)rcounts[i];
    }
    if (err == MPI_SUCCESS)
        wh_coll_note(wh_coll_copy(wh_coll_elt(in, displs[r], dt), mine, dt, acc, mine, dt), &err);
    /* after an error the steps still run, with empty messages (algo.h) */
    for (int i = 1; i < n; i++) {
        int dst = (r + i) % n, from = (r - i + n) % n;
        wh_coll_esendrecv(displs ? wh_coll_elt(in, displs[dst], dt) : NULL, rcounts[dst], dt, dst, tmp,
                          tmp ? mine : 0, dt, from, WH_TAG_REDSCAT, c, &err);
        if (err == MPI_SUCCESS)
            wh_coll_note(wh_op_apply(op, tmp, acc, (size_t)mine, dth, dt), &err);
    }
    if (err == MPI_SUCCESS)
        wh_coll_note(wh_coll_copy(acc, mine, dt, rbuf, mine, dt), &err);
    free(displs);
    wh_scratch_put(raw_a);
    wh_scratch_put(raw_t);
    return err;
}
