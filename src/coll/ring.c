/* Ring algorithms: in n-1 steps every rank passes to its right neighbour
 * the block it received from its left one in the step before.  Bandwidth
 * optimal for large data and any communicator size.
 *
 * The large broadcast (van de Geijn) cuts the packed message into n
 * segments, scatters them down a binomial tree and then rings them around. */
#include <stdlib.h>

#include "coll/algo.h"
#include "util/scratch.h"

int wh_allgather_ring(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int left = (r - 1 + n) % n, right = (r + 1) % n;
    if (sbuf != MPI_IN_PLACE)
        wh_coll_ecopy(sbuf, scount, sdt, wh_coll_elt(rbuf, (MPI_Aint)r * rcount, rdt), rcount, rdt, &err);
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        wh_coll_esendrecv(wh_coll_elt(rbuf, (MPI_Aint)sb * rcount, rdt), rcount, rdt, right,
                          wh_coll_elt(rbuf, (MPI_Aint)rb * rcount, rdt), rcount, rdt, left, WH_TAG_ALLGATHER, c,
                          &err);
    }
    return err;
}

int wh_allgatherv_ring(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                       const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int left = (r - 1 + n) % n, right = (r + 1) % n;
    if (sbuf != MPI_IN_PLACE)
        wh_coll_ecopy(sbuf, scount, sdt, wh_coll_elt(rbuf, displs[r], rdt), rcounts[r], rdt, &err);
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        wh_coll_esendrecv(wh_coll_elt(rbuf, displs[sb], rdt), rcounts[sb], rdt, right,
                          wh_coll_elt(rbuf, displs[rb], rdt), rcounts[rb], rdt, left, WH_TAG_ALLGATHER, c, &err);
    }
    return err;
}

/* segment i of the packed message: bytes [lo(i), lo(i+1)) */
static inline size_t seg_lo(int i, size_t ss, size_t nbytes)
{
    size_t o = (size_t)i * ss;
    return o < nbytes ? o : nbytes;
}

int wh_bcast_scatter_ring(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, err = MPI_SUCCESS;
    size_t nbytes = (size_t)count * dt->size, ss = (nbytes + (size_t)n - 1) / (size_t)n;
    wh_dtype_t *byte = wh_coll_byte();
    const char *start;
    char *work, *tmp = NULL;
    if (wh_dtype_is_contig(dt, (size_t)count, buf, &start)) {
        work = (char *)start;
    } else {
        if (!(work = tmp = wh_scratch_get(nbytes))) {
            wh_coll_note(wh_coll_nomem("broadcast staging", nbytes), &err);
            nbytes = 0; /* every segment empty: the messages still travel */
        } else if (vr == 0) {
            wh_coll_note(wh_dtype_pack(buf, (size_t)count, dt, 0, tmp, nbytes), &err);
        }
    }
    /* binomial scatter: my subtree [vr, vr + low) gets its segments */
    int low = 1;
    while (low < n && !(vr & low))
        low <<= 1;
    if (vr != 0) {
        int end = vr + low < n ? vr + low : n;
        size_t lo = seg_lo(vr, ss, nbytes), hi = seg_lo(end, ss, nbytes);
        wh_coll_erecv(work + lo, (MPI_Count)(hi - lo), byte, (vr - low + root) % n, WH_TAG_BCAST, c, &err);
    }
    for (int m = low >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        int end = vr + 2 * m < n ? vr + 2 * m : n;
        size_t lo = seg_lo(vr + m, ss, nbytes), hi = seg_lo(end, ss, nbytes);
        wh_coll_esend(work + lo, (MPI_Count)(hi - lo), byte, (vr + m + root) % n, WH_TAG_BCAST, c, &err);
    }
    /* ring allgather of the segments (relative numbering) */
    int left = (c->rank - 1 + n) % n, right = (c->rank + 1) % n;
    for (int i = 0; i < n - 1; i++) {
        int sseg = (vr - i + n) % n, rseg = (vr - i - 1 + n) % n;
        size_t slo = seg_lo(sseg, ss, nbytes), shi = seg_lo(sseg + 1, ss, nbytes);
        size_t rlo = seg_lo(rseg, ss, nbytes), rhi = seg_lo(rseg + 1, ss, nbytes);
        wh_coll_esendrecv(work + slo, (MPI_Count)(shi - slo), byte, right, work + rlo, (MPI_Count)(rhi - rlo), byte,
                          left, WH_TAG_BCAST_RING, c, &err);
    }
    if (tmp && vr != 0 && err == MPI_SUCCESS)
        wh_coll_note(wh_dtype_unpack(buf, (size_t)count, dt, 0, tmp, nbytes), &err);
    wh_scratch_put(tmp);
    return err;
}
