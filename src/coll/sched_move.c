/* Schedule builders of the collectives that move data without reducing it:
 * barrier (dissemination), broadcast (binomial tree; large messages: binomial
 * scatter of the packed bytes, then a ring allgather, as ring.c), gather(v) and
 * scatter(v) (the root talks to every rank; all messages in flight at once),
 * allgather(v) (ring) and all-to-all (v, w) (every pair at once, posted in
 * pairwise-exchange order so that no rank is everybody's first target). */
#include "coll/algo.h"
#include "coll/sched.h"
#include "coll/shmcoll.h"
#include "util/tunables.h"

/* lowest set bit of vr, or the smallest power of two >= n for the root */
static int lowbit(int vr, int n)
{
    int m = 1;
    while (m < n && !(vr & m))
        m <<= 1;
    return m;
}

int wh_sched_barrier(wh_sched_t *s)
{
    wh_comm_t *c = s->comm;
    int n = c->size, r = c->rank;
    /* every rank on the node block already: raise a flag at the start, test
     * the others' from the engine; no rank waits for another's progress
     * (the dissemination's second round needs the partner to have polled) */
    if (n > 1 && c == s->home && !c->is_inter && wh_shmc_ready(c)) {
        s->shmbar = 1;
        return s->build_err;
    }
    for (int k = 1; k < n; k <<= 1) {
        wh_sched_signal(s, (r + k) % n, (r - k + n) % n);
        wh_sched_fence(s);
    }
    return s->build_err;
}

/* segment i of a packed message of nbytes cut in segments of ss bytes */
static inline size_t seg_lo(int i, size_t ss, size_t nbytes)
{
    size_t o = (size_t)i * ss;
    return o < nbytes ? o : nbytes;
}

static int bcast_scatter_ring(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int root)
{
    wh_comm_t *c = s->comm;
    int n = c->size, vr = (c->rank - root + n) % n, low = lowbit(vr, n);
    size_t nbytes = (size_t)count * dt->size, ss = (nbytes + (size_t)n - 1) / (size_t)n;
    wh_dtype_t *byte = wh_coll_byte();
    const char *start;
    char *work;
    int packed = !wh_dtype_is_contig(dt, (size_t)count, buf, &start);
    if (!packed) {
        work = (char *)start;
    } else {
        if (!(work = wh_sched_bytes(s, nbytes)))
            return s->build_err;
        if (vr == 0)
            wh_sched_copy(s, buf, count, dt, work, (MPI_Count)nbytes, byte);
    }
    if (vr != 0) { /* my subtree [vr, vr + low) gets its segments */
        size_t lo = seg_lo(vr, ss, nbytes), hi = seg_lo(vr + low < n ? vr + low : n, ss, nbytes);
        wh_sched_recv(s, work + lo, (MPI_Count)(hi - lo), byte, (vr - low + root) % n);
        wh_sched_fence(s);
    }
    for (int m = low >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        size_t lo = seg_lo(vr + m, ss, nbytes), hi = seg_lo(vr + 2 * m < n ? vr + 2 * m : n, ss, nbytes);
        wh_sched_send(s, work + lo, (MPI_Count)(hi - lo), byte, (vr + m + root) % n);
    }
    wh_sched_fence(s);
    int left = (c->rank - 1 + n) % n, right = (c->rank + 1) % n;
    for (int i = 0; i < n - 1; i++) {
        int sseg = (vr - i + n) % n, rseg = (vr - i - 1 + n) % n;
        size_t slo = seg_lo(sseg, ss, nbytes), shi = seg_lo(sseg + 1, ss, nbytes);
        size_t rlo = seg_lo(rseg, ss, nbytes), rhi = seg_lo(rseg + 1, ss, nbytes);
        wh_sched_recv(s, work + rlo, (MPI_Count)(rhi - rlo), byte, left);
        wh_sched_send(s, work + slo, (MPI_Count)(shi - slo), byte, right);
        wh_sched_fence(s);
    }
    if (packed && vr != 0)
        wh_sched_copy(s, work, (MPI_Count)nbytes, byte, buf, count, dt);
    wh_sched_fence(s);
    return s->build_err;
}

int wh_sched_bcast(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int root)
{
    wh_comm_t *c = s->comm;
    int n = c->size, vr = (c->rank - root + n) % n, low = lowbit(vr, n);
    size_t nbytes = (size_t)count * dt->size;
    if (n == 1 || nbytes == 0)
        return s->build_err;
    if (n > 2 && nbytes >= wh_tun.coll_bcast_long && nbytes >= (size_t)n)
        return bcast_scatter_ring(s, buf, count, dt, root);
    if (vr != 0) {
        wh_sched_recv(s, buf, count, dt, (vr - low + root) % n);
        wh_sched_fence(s);
    }
    for (int m = low >> 1; m > 0; m >>= 1)
        if (vr + m < n)
            wh_sched_send(s, buf, count, dt, (vr + m + root) % n);
    wh_sched_fence(s);
    return s->build_err;
}

/* block i of a gather/scatter buffer: counts[i] at displs[i], or count at i*count */
static inline MPI_Count blk_count(const MPI_Count *counts, MPI_Count count, int i)
{
    return counts ? counts[i] : count;
}
static inline char *blk_addr(const void *buf, const MPI_Count *counts, MPI_Count count, const MPI_Aint *displs,
                             const wh_dtype_t *dt, int i)
{
    return wh_coll_elt(buf, counts ? displs[i] : (MPI_Aint)i * count, dt);
}

int wh_sched_gatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                     const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt, int root)
{
    wh_comm_t *c = s->comm;
    int n = c->size, r = c->rank;
    if (r != root) {
        wh_sched_send(s, sbuf, scount, sdt, root);
        wh_sched_fence(s);
        return s->build_err;
    }
    if (sbuf != MPI_IN_PLACE)
        wh_sched_copy(s, sbuf, scount, sdt, blk_addr(rbuf, rcounts, rcount, displs, rdt, r),
                      blk_count(rcounts, rcount, r), rdt);
    for (int i = 1; i < n; i++) {
        int from = (r + i) % n;
        wh_sched_recv(s, blk_addr(rbuf, rcounts, rcount, displs, rdt, from), blk_count(rcounts, rcount, from), rdt,
                      from);
    }
    wh_sched_fence(s);
    return s->build_err;
}

int wh_sched_scatterv(wh_sched_t *s, const void *sbuf, const MPI_Count *scounts, MPI_Count scount,
                      const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                      int root)
{
    wh_comm_t *c = s->comm;
    int n = c->size, r = c->rank;
    if (r != root) {
        wh_sched_recv(s, rbuf, rcount, rdt, root);
        wh_sched_fence(s);
        return s->build_err;
    }
    if (rbuf != MPI_IN_PLACE)
        wh_sched_copy(s, blk_addr(sbuf, scounts, scount, displs, sdt, r), blk_count(scounts, scount, r), sdt, rbuf,
                      rcount, rdt);
    for (int i = 1; i < n; i++) {
        int to = (r + i) % n;
        wh_sched_send(s, blk_addr(sbuf, scounts, scount, displs, sdt, to), blk_count(scounts, scount, to), sdt, to);
    }
    wh_sched_fence(s);
    return s->build_err;
}

int wh_sched_allgatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                        const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt)
{
    wh_comm_t *c = s->comm;
    int n = c->size, r = c->rank, left = (r - 1 + n) % n, right = (r + 1) % n;
    if (sbuf != MPI_IN_PLACE)
        wh_sched_copy(s, sbuf, scount, sdt, blk_addr(rbuf, rcounts, rcount, displs, rdt, r),
                      blk_count(rcounts, rcount, r), rdt);
    /* ring: in step i pass on the block received in step i-1 */
    for (int i = 0; i < n - 1; i++) {
        int sb = (r - i + n) % n, rb = (r - i - 1 + n) % n;
        wh_sched_recv(s, blk_addr(rbuf, rcounts, rcount, displs, rdt, rb), blk_count(rcounts, rcount, rb), rdt,
                      left);
        wh_sched_send(s, blk_addr(rbuf, rcounts, rcount, displs, rdt, sb), blk_count(rcounts, rcount, sb), rdt,
                      right);
        wh_sched_fence(s);
    }
    wh_sched_fence(s);
    return s->build_err;
}

/* ---------- all-to-all ---------- */

/* In place, the data for peer j is taken from (and replaced in) the receive
 * buffer: each outgoing block is packed into a temporary first, then sent
 * as bytes while the receives land in the buffer. */
int wh_sched_alltoall(wh_sched_t *s, const void *sbuf, const wh_sched_a2a_t *ss, void *rbuf,
                      const wh_sched_a2a_t *rs)
{
    wh_comm_t *c = s->comm;
    int n = c->size, r = c->rank, pof2 = (n & (n - 1)) == 0;
    wh_dtype_t *byte = wh_coll_byte();
    char **packed = NULL;
    if (sbuf == MPI_IN_PLACE) {
        if (!(packed = wh_sched_bytes(s, (size_t)n * sizeof *packed)))
            return s->build_err;
        for (int j = 0; j < n; j++) {
            size_t nb = (size_t)wh_a2a_count(rs, j) * wh_a2a_type(rs, j)->size;
            packed[j] = NULL;
            if (j == r || nb == 0 || !(packed[j] = wh_sched_bytes(s, nb)))
                continue;
            wh_sched_copy(s, wh_a2a_addr(rs, rbuf, j), wh_a2a_count(rs, j), wh_a2a_type(rs, j), packed[j], (MPI_Count)nb,
                          byte);
        }
    } else {
        wh_sched_copy(s, wh_a2a_addr(ss, sbuf, r), wh_a2a_count(ss, r), wh_a2a_type(ss, r), wh_a2a_addr(rs, rbuf, r),
                      wh_a2a_count(rs, r), wh_a2a_type(rs, r));
    }
    for (int i = 1; i < n; i++) {
        int from = pof2 ? r ^ i : (r - i + n) % n;
        wh_sched_recv(s, wh_a2a_addr(rs, rbuf, from), wh_a2a_count(rs, from), wh_a2a_type(rs, from), from);
    }
    for (int i = 1; i < n; i++) {
        int to = pof2 ? r ^ i : (r + i) % n;
        if (packed) {
            if (packed[to])
                wh_sched_send(s, packed[to], (MPI_Count)(wh_a2a_count(rs, to) * (MPI_Count)wh_a2a_type(rs, to)->size),
                              byte, to);
        } else {
            wh_sched_send(s, wh_a2a_addr(ss, sbuf, to), wh_a2a_count(ss, to), wh_a2a_type(ss, to), to);
        }
    }
    wh_sched_fence(s);
    return s->build_err;
}
