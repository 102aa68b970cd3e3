/* Linear algorithms: the root posts one receive (or send) per rank and
 * waits for all of them; other ranks do one send (receive).  Best for large
 * blocks (no data moves twice) and the only choice for the v variants.
 * Blocks of zero bytes are skipped on both sides (their sizes agree by the
 * type-signature rule). */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "mem/mem.h"
#include "util/scratch.h"

#define OWN_SLICE ((size_t)64 << 10)

/* A gather root's own block, copied while its senders wait for the
 * clear-to-send of their rendezvous: in slices with the progress engine
 * polled between them, so a request-to-send that arrives meanwhile is
 * answered at once and that sender's write overlaps the rest of this copy
 * (one copy after the other otherwise).  Contiguous host blocks; anything
 * else is one wh_coll_ecopy. */
static void own_copy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                     wh_dtype_t *rdt, int *err)
{
    size_t n = wh_dtype_bytes(sdt, (size_t)scount);
    const char *from, *to;
    if (*err != MPI_SUCCESS || n < 2 * OWN_SLICE || n != wh_dtype_bytes(rdt, (size_t)rcount) ||
        !wh_dtype_is_contig(sdt, (size_t)scount, sbuf, &from) || !wh_dtype_is_contig(rdt, (size_t)rcount, rbuf, &to) ||
        wh_mem_query(from) != WH_MEM_HOST || wh_mem_query(to) != WH_MEM_HOST) {
        wh_coll_ecopy(sbuf, scount, sdt, rbuf, rcount, rdt, err);
        return;
    }
    for (size_t off = 0; off < n; off += OWN_SLICE) {
        memcpy((char *)to + off, from + off, n - off < OWN_SLICE ? n - off : OWN_SLICE);
        wh_progress();
    }
}

/* counts == NULL: every block is `count` elements at i * count */
static inline MPI_Count blk_count(const MPI_Count *counts, MPI_Count count, int i)
{
    return counts ? counts[i] : count;
}
static inline MPI_Aint blk_disp(const MPI_Aint *displs, MPI_Count count, int i)
{
    return displs ? displs[i] : (MPI_Aint)i * count;
}

static int gather_core(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                       MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    if (r != root) {
        if (scount * (MPI_Count)sdt->size != 0)
            wh_coll_esend(sbuf, scount, sdt, root, WH_TAG_GATHER, c, &err);
        return err;
    }
    wh_req_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs) /* then one receive after the other, each dropped (truncated) */
        wh_coll_note(wh_coll_nomem("gather requests", (size_t)n * sizeof *reqs), &err);
    for (int i = 0; i < n; i++) {
        MPI_Count k = blk_count(rcounts, rcount, i);
        if (i == root || k * (MPI_Count)rdt->size == 0)
            continue;
        if (reqs) /* the senders write (where single copy works): their copies run in parallel with ours */
            wh_coll_eirecv_put(wh_coll_elt(rbuf, blk_disp(displs, rcount, i), rdt), k, rdt, i, WH_TAG_GATHER, c,
                               &reqs[i], &err);
        else
            wh_coll_erecv(NULL, 0, rdt, i, WH_TAG_GATHER, c, &err);
    }
    if (sbuf != MPI_IN_PLACE)
        own_copy(sbuf, scount, sdt, wh_coll_elt(rbuf, blk_disp(displs, rcount, r), rdt), blk_count(rcounts, rcount, r),
                 rdt, &err);
    for (int i = 0; reqs && i < n; i++)
        wh_coll_ewait(reqs[i], &err); /* each receive checked for its size */
    free(reqs);
    return err;
}

/* err: an error this rank already met (reduce_scatter's reduction): the
 * messages go empty, so the receivers fail too */
static int scatter_core(const void *sbuf, const MPI_Count *scounts, MPI_Count scount, const MPI_Aint *displs,
                        wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c, int err)
{
    int n = c->size, r = c->rank;
    if (r != root) {
        if (rcount * (MPI_Count)rdt->size != 0)
            wh_coll_erecv(rbuf, rcount, rdt, root, WH_TAG_SCATTER, c, &err);
        return err;
    }
    /* my own block: a size mismatch (found before the sends: it empties
     * every message) or the copy (after them, so it overlaps) */
    const char *own = rbuf == MPI_IN_PLACE ? NULL : wh_coll_elt(sbuf, blk_disp(displs, scount, r), sdt);
    MPI_Count own_n = blk_count(scounts, scount, r);
    if (own && wh_dtype_bytes(sdt, (size_t)own_n) != wh_dtype_bytes(rdt, (size_t)rcount)) {
        wh_coll_ecopy(own, own_n, sdt, rbuf, rcount, rdt, &err); /* (the error only) */
        own = NULL;
    }
    wh_req_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs) /* then one send after the other */
        wh_coll_note(wh_coll_nomem("scatter requests", (size_t)n * sizeof *reqs), &err);
    for (int k = 1; k < n; k++) {
        int i = (r + k) % n; /* start with the next rank: spreads the first arrivals */
        MPI_Count cnt = blk_count(scounts, scount, i);
        if (cnt * (MPI_Count)sdt->size == 0)
            continue;
        const char *p = wh_coll_elt(sbuf, blk_disp(displs, scount, i), sdt);
        if (reqs)
            wh_coll_eisend(p, cnt, sdt, i, WH_TAG_SCATTER, c, &reqs[i], &err);
        else
            wh_coll_esend(p, cnt, sdt, i, WH_TAG_SCATTER, c, &err);
    }
    if (own)
        wh_coll_ecopy(own, own_n, sdt, rbuf, rcount, rdt, &err);
    for (int i = 0; reqs && i < n; i++)
        wh_coll_ewait(reqs[i], &err);
    free(reqs);
    return err;
}

int wh_gather_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                     wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return gather_core(sbuf, scount, sdt, rbuf, NULL, rcount, NULL, rdt, root, c);
}

int wh_gatherv_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *displs, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return gather_core(sbuf, scount, sdt, rbuf, rcounts, 0, displs, rdt, root, c);
}

int wh_scatter_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return scatter_core(sbuf, NULL, scount, NULL, sdt, rbuf, rcount, rdt, root, c, MPI_SUCCESS);
}

int wh_scatterv_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, wh_dtype_t *sdt,
                       void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return scatter_core(sbuf, scounts, 0, displs, sdt, rbuf, rcount, rdt, root, c, MPI_SUCCESS);
}

/* Reduce the whole vector to rank 0 (in rank order, so any op), then
 * scatter the pieces (also after a failed reduction: empty, algo.h). */
int wh_reduce_scatter_ordered(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth,
                              wh_dtype_t *dt, wh_op_t *op, wh_comm_t *c)
{
    int n = c->size;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint *displs = malloc((size_t)n * sizeof *displs);
    if (!displs)
        return wh_coll_nomem("reduce_scatter displacements", (size_t)n * sizeof *displs);
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = (MPI_Aint)total;
        total += rcounts[i];
    }
    void *raw = NULL;
    char *tmp = NULL;
    if (c->rank == 0 && !(tmp = wh_coll_tmp(total, dt, &raw))) {
        free(displs);
        return wh_coll_nomem("reduce_scatter result", (size_t)total * (size_t)dt->extent);
    }
    int err = wh_reduce(in, tmp, total, dth, dt, op, 0, c);
    err = scatter_core(tmp, rcounts, 0, displs, dt, rbuf, rcounts[c->rank], dt, 0, c, err);
    wh_scratch_put(raw);
    free(displs);
    return err;
}
