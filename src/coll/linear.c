/* Linear algorithms: the root posts one receive (or send) per rank and
 * waits for all of them; other ranks do one send (receive).  Best for large
 * blocks (no data moves twice) and the only choice for the v variants.
 * Blocks of zero bytes are skipped on both sides (their sizes agree by the
 * type-signature rule). */
#include <stdlib.h>

#include "coll/algo.h"
#include "util/scratch.h"

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
    int n = c->size, r = c->rank;
    if (r != root)
        return scount * (MPI_Count)sdt->size == 0 ? MPI_SUCCESS : WH_COLL_SEND(sbuf, scount, sdt, root, WH_TAG_GATHER, c);
    wh_req_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs)
        return wh_coll_nomem("gather requests", (size_t)n * sizeof *reqs);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        MPI_Count k = blk_count(rcounts, rcount, i);
        if (i == root || k * (MPI_Count)rdt->size == 0)
            continue;
        rc = wh_irecv(wh_coll_elt(rbuf, blk_disp(displs, rcount, i), rdt), k, rdt, i, WH_TAG_GATHER, c, WH_CTX_COLL,
                      &reqs[i]);
    }
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = wh_coll_copy(sbuf, scount, sdt, wh_coll_elt(rbuf, blk_disp(displs, rcount, r), rdt),
                          blk_count(rcounts, rcount, r), rdt);
    int rc2 = wh_waitall(n, reqs, NULL);
    free(reqs);
    return rc ? rc : rc2;
}

static int scatter_core(const void *sbuf, const MPI_Count *scounts, MPI_Count scount, const MPI_Aint *displs,
                        wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    int n = c->size, r = c->rank;
    if (r != root)
        return rcount * (MPI_Count)rdt->size == 0 ? MPI_SUCCESS : WH_COLL_RECV(rbuf, rcount, rdt, root, WH_TAG_SCATTER, c);
    wh_req_t **reqs = calloc((size_t)n, sizeof *reqs);
    if (!reqs)
        return wh_coll_nomem("scatter requests", (size_t)n * sizeof *reqs);
    int rc = MPI_SUCCESS;
    for (int k = 1; k < n && rc == MPI_SUCCESS; k++) {
        int i = (r + k) % n; /* start with the next rank: spreads the first arrivals */
        MPI_Count cnt = blk_count(scounts, scount, i);
        if (cnt * (MPI_Count)sdt->size == 0)
            continue;
        rc = wh_isend(wh_coll_elt(sbuf, blk_disp(displs, scount, i), sdt), cnt, sdt, i, WH_TAG_SCATTER, c,
                      WH_CTX_COLL, WH_MODE_STD, &reqs[i]);
    }
    if (rc == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
        rc = wh_coll_copy(wh_coll_elt(sbuf, blk_disp(displs, scount, r), sdt), blk_count(scounts, scount, r), sdt,
                          rbuf, rcount, rdt);
    int rc2 = wh_waitall(n, reqs, NULL);
    free(reqs);
    return rc ? rc : rc2;
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
    return scatter_core(sbuf, NULL, scount, NULL, sdt, rbuf, rcount, rdt, root, c);
}

int wh_scatterv_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, wh_dtype_t *sdt,
                       void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return scatter_core(sbuf, scounts, 0, displs, sdt, rbuf, rcount, rdt, root, c);
}

/* Reduce the whole vector to rank 0 (in rank order, so any op), then
 * scatter the pieces. */
int wh_reduce_scatter_ordered(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth,
                              wh_dtype_t *dt, wh_op_t *op, wh_comm_t *c)
{
    int n = c->size, rc;
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
    rc = wh_reduce(in, tmp, total, dth, dt, op, 0, c);
    if (rc == MPI_SUCCESS)
        rc = wh_scatterv(tmp, rcounts, displs, dt, rbuf, rcounts[c->rank], dt, 0, c);
    wh_scratch_put(raw);
    free(displs);
    return rc;
}
