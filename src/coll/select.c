/* The selectors: one function per collective (the coll.h API) that picks an
 * algorithm by message size, op and communicator.  Every input of a choice
 * must be the same on all ranks (sizes of significant arguments, the op,
 * the communicator), or ranks would run different algorithms.
 * Thresholds are tunables (WHARF_COLL_*).  A communicator that spans
 * several node groups runs hierarchically (hier.c); one inside a node runs
 * through node shared memory (shmcoll.c) where the size allows. */
#include <stdint.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "coll/hier.h"
#include "coll/shmcoll.h"
#include "util/tunables.h"
#include "util/scratch.h"

/* the same on every rank: a type whose count elements are one block at the buffer (lb 0) */
static int shm_contig(const wh_dtype_t *dt, MPI_Count count)
{
    return (dt->contig || (count == 1 && dt->dense)) && dt->true_lb == 0;
}

int wh_barrier(wh_comm_t *c)
{
    if (c->size == 1)
        return MPI_SUCCESS;
    int rc;
    wh_coll_hier_t *h = wh_hier_get(c, &rc);
    if (h || rc) {
        wh_coll_count(c, WH_CK_BARRIER, WH_CA_HIER);
        return rc ? rc : wh_hier_barrier(h);
    }
    if (wh_shmc_usable(c, 0)) {
        wh_coll_count(c, WH_CK_BARRIER, WH_CA_SHM);
        return wh_shmc_barrier(c);
    }
    wh_coll_count(c, WH_CK_BARRIER, WH_CA_P2P);
    return wh_barrier_dissem(c);
}

int wh_bcast(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c)
{
    size_t nbytes = (size_t)count * dt->size;
    if (c->size == 1 || nbytes == 0)
        return MPI_SUCCESS;
    int rc;
    wh_coll_hier_t *h = wh_hier_get(c, &rc);
    if (h || rc) {
        wh_coll_count(c, WH_CK_BCAST, WH_CA_HIER);
        return rc ? rc : wh_hier_bcast(buf, count, dt, root, h);
    }
    /* The path depends on the message size only: ranks may describe the same
     * bytes with different layouts (root contiguous, the others strided), and
     * all must take the same algorithm.  A non-contiguous side is packed or
     * unpacked locally around the shared-memory bcast. */
    /* single copy with one reader only: several readers of one buffer pin
     * its pages at once and lose to the cells' pipeline (4 ranks 1 MiB:
     * 318 against 152 us, docs/PERFORMANCE.md) */
    if (c->size == 2 && wh_cma_usable(c, nbytes)) {
        const char *start;
        int contig = shm_contig(dt, count) && wh_dtype_is_contig(dt, (size_t)count, buf, &start);
        rc = wh_cma_bcast(contig ? (void *)start : NULL, nbytes, root, c);
        if (rc != WH_FALLBACK) {
            wh_coll_count(c, WH_CK_BCAST, WH_CA_CMA);
            return rc;
        }
    }
    int small = wh_shmc_usable(c, nbytes);
    if (small || wh_shmc_large_usable(c, nbytes, 1)) {
        wh_coll_count(c, WH_CK_BCAST, small ? WH_CA_SHM : WH_CA_SHM_LARGE);
        const char *start;
        char *tmp = NULL;
        void *p;
        if (shm_contig(dt, count) && wh_dtype_is_contig(dt, (size_t)count, buf, &start))
            p = (void *)start;
        else if (!(p = tmp = wh_scratch_get(nbytes)))
            return wh_error(MPI_ERR_NO_MEM, "out of memory packing a %zu-byte broadcast", nbytes);
        rc = tmp && c->rank == root ? wh_dtype_pack(buf, (size_t)count, dt, 0, tmp, nbytes) : MPI_SUCCESS;
        if (rc == MPI_SUCCESS)
            rc = small ? wh_shmc_bcast(p, nbytes, root, c) : wh_shmc_bcast_large(p, nbytes, root, c);
        if (rc == MPI_SUCCESS && tmp && c->rank != root)
            rc = wh_dtype_unpack(buf, (size_t)count, dt, 0, tmp, nbytes);
        wh_scratch_put(tmp);
        return rc;
    }
    wh_coll_count(c, WH_CK_BCAST, WH_CA_P2P);
    if (c->size > 2 && nbytes >= wh_tun.coll_bcast_long && nbytes >= (size_t)c->size)
        return wh_bcast_scatter_ring(buf, count, dt, root, c);
    return wh_bcast_binomial(buf, count, dt, root, c);
}

int wh_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
              int root, wh_comm_t *c)
{
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    if (c->size == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : wh_coll_copy(sbuf, count, dt, rbuf, count, dt);
    int rc;
    wh_coll_hier_t *h = wh_hier_get(c, &rc);
    if (rc)
        return rc;
    if (h && (op->commute || h->contiguous)) {
        wh_coll_count(c, WH_CK_REDUCE, WH_CA_HIER);
        return wh_hier_reduce(sbuf, rbuf, count, dth, dt, op, root, c, h);
    }
    if (shm_contig(dt, count) && wh_shmc_usable(c, (size_t)count * dt->size)) {
        wh_coll_count(c, WH_CK_REDUCE, WH_CA_SHM);
        return wh_shmc_reduce(sbuf, rbuf, count, dth, dt, op, root, c);
    }
    if (shm_contig(dt, count) && wh_shmc_large_usable(c, (size_t)count * dt->size, dt->size)) {
        int cma = 0;
        rc = wh_shmc_reduce_large(sbuf, rbuf, count, dth, dt, op, root, c, &cma);
        wh_coll_count(c, WH_CK_REDUCE, cma ? WH_CA_CMA : WH_CA_SHM_LARGE);
        return rc;
    }
    wh_coll_count(c, WH_CK_REDUCE, WH_CA_P2P);
    if (op->commute)
        return wh_reduce_binomial(sbuf, rbuf, count, dth, dt, op, root, c);
    return wh_reduce_ordered(sbuf, rbuf, count, dth, dt, op, root, c);
}

int wh_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                 wh_comm_t *c)
{
    size_t nbytes = (size_t)count * dt->size;
    if (nbytes == 0)
        return MPI_SUCCESS;
    if (c->size == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : wh_coll_copy(sbuf, count, dt, rbuf, count, dt);
    int rc;
    wh_coll_hier_t *h = wh_hier_get(c, &rc);
    if (rc)
        return rc;
    if (h && (op->commute || h->contiguous)) {
        wh_coll_count(c, WH_CK_ALLREDUCE, WH_CA_HIER);
        return wh_hier_allreduce(sbuf, rbuf, count, dth, dt, op, h);
    }
    if (shm_contig(dt, count) && wh_shmc_usable(c, nbytes)) {
        wh_coll_count(c, WH_CK_ALLREDUCE, WH_CA_SHM);
        return wh_shmc_reduce(sbuf, rbuf, count, dth, dt, op, -1, c);
    }
    if (shm_contig(dt, count) && wh_shmc_large_usable(c, nbytes, dt->size)) {
        int cma = 0;
        rc = wh_shmc_reduce_large(sbuf, rbuf, count, dth, dt, op, -1, c, &cma);
        wh_coll_count(c, WH_CK_ALLREDUCE, cma ? WH_CA_CMA : WH_CA_SHM_LARGE);
        return rc;
    }
    wh_coll_count(c, WH_CK_ALLREDUCE, WH_CA_P2P);
    if (op->commute && nbytes >= wh_tun.coll_allreduce_long && count >= wh_coll_pof2(c->size))
        return wh_allreduce_rabenseifner(sbuf, rbuf, count, dth, dt, op, c);
    return wh_allreduce_recdbl(sbuf, rbuf, count, dth, dt, op, c);
}

int wh_gather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
              int root, wh_comm_t *c)
{
    size_t blk = c->rank == root ? (size_t)rcount * rdt->size : (size_t)scount * sdt->size;
    /* blk is the same on every rank (one type signature), whatever the layouts */
    if (blk > 0 && wh_shmc_usable(c, blk)) {
        wh_coll_count(c, WH_CK_GATHER, WH_CA_SHM);
        return wh_shmc_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, blk, c);
    }
    wh_coll_count(c, WH_CK_GATHER, WH_CA_P2P);
    if (c->size > 2 && blk * (size_t)c->size < wh_tun.coll_gather_long)
        return wh_gather_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    return wh_gather_linear(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
}

int wh_gatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
               const MPI_Aint *displs, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return wh_gatherv_linear(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c);
}

int wh_scatter(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
               int root, wh_comm_t *c)
{
    size_t blk = c->rank == root ? (size_t)scount * sdt->size : (size_t)rcount * rdt->size;
    if (blk > 0 && c->size > 1 && blk * (size_t)c->size <= wh_tun.coll_shm_max && wh_shmc_usable(c, blk * (size_t)c->size)) {
        wh_coll_count(c, WH_CK_SCATTER, WH_CA_SHM);
        return wh_shmc_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, blk, c);
    }
    wh_coll_count(c, WH_CK_SCATTER, WH_CA_P2P);
    if (c->size > 2 && blk * (size_t)c->size < wh_tun.coll_gather_long)
        return wh_scatter_binomial(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
    return wh_scatter_linear(sbuf, scount, sdt, rbuf, rcount, rdt, root, c);
}

int wh_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf,
                MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    return wh_scatterv_linear(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c);
}

int wh_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                 wh_comm_t *c)
{
    int n = c->size;
    size_t total = (size_t)rcount * rdt->size * (size_t)n;
    if (total == 0)
        return MPI_SUCCESS;
    int rc;
    wh_coll_hier_t *h = wh_hier_get(c, &rc);
    if (h || rc) {
        wh_coll_count(c, WH_CK_ALLGATHER, WH_CA_HIER);
        return rc ? rc : wh_hier_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c, h);
    }
    size_t blk = (size_t)rcount * rdt->size;
    if (wh_cma_usable(c, blk)) {
        const char *src = NULL, *dst = NULL;
        const void *s = sbuf == MPI_IN_PLACE ? wh_coll_elt(rbuf, (MPI_Aint)c->rank * rcount, rdt) : sbuf;
        wh_dtype_t *st = sbuf == MPI_IN_PLACE ? rdt : sdt;
        MPI_Count sc = sbuf == MPI_IN_PLACE ? rcount : scount;
        if (!wh_dtype_is_contig(st, (size_t)sc, s, &src) || (size_t)sc * st->size != blk)
            src = NULL; /* (a count that differs: the cell path reports it) */
        if (!wh_dtype_is_contig(rdt, (size_t)rcount * (size_t)n, rbuf, &dst))
            dst = NULL;
        rc = wh_cma_allgather(src, (char *)(uintptr_t)dst, blk, c);
        if (rc != WH_FALLBACK) {
            wh_coll_count(c, WH_CK_ALLGATHER, WH_CA_CMA);
            return rc;
        }
    }
    if (wh_shmc_usable(c, blk)) {
        wh_coll_count(c, WH_CK_ALLGATHER, WH_CA_SHM);
        return wh_shmc_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    }
    if (wh_shmc_large_usable(c, blk, 1)) {
        wh_coll_count(c, WH_CK_ALLGATHER, WH_CA_SHM_LARGE);
        return wh_shmc_allgather_large(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    }
    wh_coll_count(c, WH_CK_ALLGATHER, WH_CA_P2P);
    if ((n & (n - 1)) == 0 && total < wh_tun.coll_allgather_long)
        return wh_allgather_recdbl(sbuf, scount, sdt, rbuf, rcount, rdt, c);
    return wh_allgather_ring(sbuf, scount, sdt, rbuf, rcount, rdt, c);
}

int wh_allgatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                  const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c)
{
    /* the largest block decides; rcounts are the same on every rank */
    size_t maxb = 0;
    for (int r = 0; r < c->size; r++)
        if ((size_t)rcounts[r] * rdt->size > maxb)
            maxb = (size_t)rcounts[r] * rdt->size;
    if (maxb > 0 && wh_cma_usable(c, maxb)) {
        /* single copy as the allgather: rdt one contiguous run per element */
        size_t off[WH_CMA_MAXN], len[WH_CMA_MAXN];
        const char *src = NULL;
        char *dst = rdt->contig && rdt->true_lb == 0 ? rbuf : NULL;
        for (int r = 0; r < c->size; r++) {
            if (displs[r] < 0)
                dst = NULL;
            off[r] = (size_t)displs[r] * (size_t)rdt->extent;
            len[r] = (size_t)rcounts[r] * rdt->size;
        }
        if (sbuf == MPI_IN_PLACE)
            src = dst ? dst + off[c->rank] : NULL;
        else if (!wh_dtype_is_contig(sdt, (size_t)scount, sbuf, &src) || (size_t)scount * sdt->size != len[c->rank])
            src = NULL; /* (a count that differs: the fallback reports it) */
        int rc = wh_cma_allgatherv(src, dst, off, len, c);
        if (rc != WH_FALLBACK) {
            wh_coll_count(c, WH_CK_ALLGATHERV, WH_CA_CMA);
            return rc;
        }
    }
    if (c->size > 1 && maxb > 0 && maxb <= wh_tun.coll_shm_max && wh_shmc_usable(c, maxb)) {
        wh_coll_count(c, WH_CK_ALLGATHERV, WH_CA_SHM);
        return wh_shmc_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    }
    if (c->size > 1 && maxb > 0 && wh_shmc_large_usable(c, maxb, 1)) {
        wh_coll_count(c, WH_CK_ALLGATHERV, WH_CA_SHM_LARGE);
        return wh_shmc_allgatherv_large(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
    }
    wh_coll_count(c, WH_CK_ALLGATHERV, WH_CA_P2P);
    return wh_allgatherv_ring(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c);
}

int wh_alltoall(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                wh_comm_t *c)
{
    size_t blk = (size_t)rcount * rdt->size; /* the same on every rank */
    if (blk == 0)
        return MPI_SUCCESS;
    if (c->size > 1 && blk * (size_t)c->size <= wh_tun.coll_shm_max && wh_shmc_usable(c, blk * (size_t)c->size)) {
        wh_coll_count(c, WH_CK_ALLTOALL, WH_CA_SHM);
        return wh_shmc_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, blk, c);
    }
    /* (no single-copy variant: pairwise rendezvous already read each block
     * in place, and publishing addresses first was no faster at 2 ranks and
     * slower at 4: 909 against 836 us at 1 MiB) */
    return wh_alltoall_pairwise(sbuf, scount, sdt, rbuf, rcount, rdt, c);
}

/* alltoallv and alltoallw: through the node block's cells, or point to point */
static int alltoall_sides(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c,
                          int kind)
{
    if (c->size > 1 && wh_shmc_usable(c, 0)) {
        wh_coll_count(c, kind, WH_CA_SHM);
        return wh_shmc_alltoallv(sbuf, ss, rbuf, rs, c);
    }
    wh_coll_count(c, kind, WH_CA_P2P);
    return wh_a2a_pairwise(sbuf, ss, rbuf, rs, c);
}

int wh_alltoallv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls, wh_dtype_t *sdt, void *rbuf,
                 const MPI_Count *rcounts, const MPI_Aint *rdispls, wh_dtype_t *rdt, wh_comm_t *c)
{
    wh_a2a_side_t ss = {.counts = scounts, .displs = sdispls, .type = sdt};
    wh_a2a_side_t rs = {.counts = rcounts, .displs = rdispls, .type = rdt};
    return alltoall_sides(sbuf, &ss, rbuf, &rs, c, WH_CK_ALLTOALLV);
}

int wh_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls, wh_dtype_t *const *sdts,
                 void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls, wh_dtype_t *const *rdts, wh_comm_t *c)
{
    wh_a2a_side_t ss = {.counts = scounts, .displs = sdispls, .types = sdts};
    wh_a2a_side_t rs = {.counts = rcounts, .displs = rdispls, .types = rdts};
    return alltoall_sides(sbuf, &ss, rbuf, &rs, c, WH_CK_ALLTOALLW);
}

int wh_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth, wh_dtype_t *dt,
                      wh_op_t *op, wh_comm_t *c)
{
    if (dt->size == 0)
        return MPI_SUCCESS;
    MPI_Count all = 0;
    for (int r = 0; r < c->size; r++)
        all += rcounts[r];
    size_t total = (size_t)all * dt->size; /* the same on every rank: rcounts are */
    if (total > 0 && c->size > 1 && total <= wh_tun.coll_shm_max && shm_contig(dt, all) &&
        wh_shmc_usable(c, total)) {
        wh_coll_count(c, WH_CK_REDUCE_SCATTER, WH_CA_SHM);
        return wh_shmc_reduce_scatter(sbuf, rbuf, rcounts, dth, dt, op, total, c);
    }
    wh_coll_count(c, WH_CK_REDUCE_SCATTER, WH_CA_P2P);
    if (op->commute)
        return wh_reduce_scatter_pairwise(sbuf, rbuf, rcounts, dth, dt, op, c);
    return wh_reduce_scatter_ordered(sbuf, rbuf, rcounts, dth, dt, op, c);
}

int wh_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dth, wh_dtype_t *dt,
                            wh_op_t *op, wh_comm_t *c)
{
    if (rcount == 0 || dt->size == 0)
        return MPI_SUCCESS;
    MPI_Count one[64] = {0}, *counts = c->size <= 64 ? one : malloc((size_t)c->size * sizeof *counts);
    if (!counts)
        return wh_coll_nomem("reduce_scatter_block counts", (size_t)c->size * sizeof *counts);
    for (int i = 0; i < c->size; i++)
        counts[i] = rcount;
    int rc = wh_reduce_scatter(sbuf, rbuf, counts, dth, dt, op, c);
    if (counts != one)
        free(counts);
    return rc;
}

/* large scans along the chain (chain.c): by size, and a contiguous layout
 * as the shared-memory reductions ask (shm_contig); from 3 ranks (at 2 the
 * chain is recursive doubling's one message, cut in chunks for nothing) */
static int scan_chain(const wh_dtype_t *dt, MPI_Count count, const wh_comm_t *c)
{
    size_t nbytes = (size_t)count * dt->size;
    return c->size > 2 && wh_tun.coll_scan_chain && nbytes >= wh_tun.coll_scan_chain && shm_contig(dt, count);
}

int wh_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
            wh_comm_t *c)
{
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    if (c->size == 1)
        return sbuf == MPI_IN_PLACE ? MPI_SUCCESS : wh_coll_copy(sbuf, count, dt, rbuf, count, dt);
    if (scan_chain(dt, count, c)) {
        wh_coll_count(c, WH_CK_SCAN, WH_CA_CHAIN);
        return wh_scan_chain(sbuf, rbuf, count, dth, dt, op, c, 0);
    }
    if (shm_contig(dt, count) && wh_shmc_usable(c, (size_t)count * dt->size)) {
        wh_coll_count(c, WH_CK_SCAN, WH_CA_SHM);
        return wh_shmc_scan(sbuf, rbuf, count, dth, dt, op, 0, c);
    }
    wh_coll_count(c, WH_CK_SCAN, WH_CA_P2P);
    return wh_scan_recdbl(sbuf, rbuf, count, dth, dt, op, c);
}

int wh_exscan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
              wh_comm_t *c)
{
    if (count == 0 || dt->size == 0 || c->size == 1)
        return MPI_SUCCESS;
    if (scan_chain(dt, count, c)) {
        wh_coll_count(c, WH_CK_EXSCAN, WH_CA_CHAIN);
        return wh_scan_chain(sbuf, rbuf, count, dth, dt, op, c, 1);
    }
    if (shm_contig(dt, count) && wh_shmc_usable(c, (size_t)count * dt->size)) {
        wh_coll_count(c, WH_CK_EXSCAN, WH_CA_SHM);
        return wh_shmc_scan(sbuf, rbuf, count, dth, dt, op, 1, c);
    }
    wh_coll_count(c, WH_CK_EXSCAN, WH_CA_P2P);
    return wh_exscan_recdbl(sbuf, rbuf, count, dth, dt, op, c);
}
