/* Private to src/coll: the algorithms (one file per family) that the
 * selectors in select.c choose from, and the helpers they share.
 *
 * Every message travels on the collective context (WH_CTX_COLL) with a tag
 * per collective; sources are always explicit (never MPI_ANY_SOURCE), so
 * two collectives in a row cannot cross (messages between two ranks on one
 * context and tag arrive in order).
 *
 * Reductions apply `inout = in op inout` with `in` the contribution of the
 * lower ranks, so non-commutative ops see their operands in rank order. */
#ifndef WH_COLL_ALGO_H
#define WH_COLL_ALGO_H
#include "coll/a2a.h"
#include "coll/coll.h"
#include "proto/p2p.h"

/* tags of the blocking algorithms; schedules (sched.h) use tags from
 * WH_TAG_NBC_BASE up, MPI_Comm_create_group negative ones (core/comm.c) */
enum wh_coll_tag {
    WH_TAG_BARRIER = 1,
    WH_TAG_BCAST,
    WH_TAG_BCAST_RING,
    WH_TAG_REDUCE,
    WH_TAG_ALLREDUCE,
    WH_TAG_ALLREDUCE_AG, /* allgather phase of Rabenseifner */
    WH_TAG_GATHER,
    WH_TAG_SCATTER,
    WH_TAG_ALLGATHER,
    WH_TAG_ALLTOALL,
    WH_TAG_REDSCAT,
    WH_TAG_SCAN,
    WH_TAG_EXSCAN,
};

/* ---------- helpers (util.c) ---------- */
/* A temporary able to hold count elements of dt in dt's own layout (sized by
 * the true extent, so it works for any lower bound or negative extent).
 * Returns the typed buffer pointer (use it with (count, dt)); *raw is what
 * to free().  NULL (and *raw NULL) when out of memory; count 0 gives a valid
 * non-NULL pointer. */
void *wh_coll_tmp(MPI_Count count, const wh_dtype_t *dt, void **raw);
/* Same, but uses `stack` (of `room` bytes, 16-byte aligned) when the data
 * fits, so small reductions do not allocate; *raw is then NULL. */
void *wh_coll_tmp_in(MPI_Count count, const wh_dtype_t *dt, void *stack, size_t room, void **raw);
#define WH_COLL_STACK 512
/* Address of element i of a typed buffer. */
static inline char *wh_coll_elt(const void *buf, MPI_Aint i, const wh_dtype_t *dt)
{
    return (char *)buf + i * dt->extent;
}
/* the MPI_BYTE type object, for moving packed data */
wh_dtype_t *wh_coll_byte(void);
/* Local copy between typed buffers (a no-op when both are the same). */
int wh_coll_copy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt);
/* Largest power of two <= n (n >= 1). */
static inline int wh_coll_pof2(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}
/* Split count elements into n nearly equal blocks: block i is elements
 * [disp[i], disp[i+1]); disp has n+1 entries (disp[n] == count). */
void wh_coll_split(MPI_Count count, int n, MPI_Aint *disp);
/* out-of-memory error code */
int wh_coll_nomem(const char *what, size_t bytes);

/* ---------- error propagation (util.c) ----------
 * A collective called with different counts on different ranks (erroneous:
 * the type signatures must match) fails instead of hanging.  A rank that
 * meets an error keeps running every remaining step of its algorithm, so
 * the peers waiting for its messages complete, and returns the first error
 * at the end (MPICH: MPIR_ERR_COLL).  `err` holds that first error
 * (MPI_SUCCESS while none).  After an error the rank's messages are empty:
 * a receiver expecting bytes sees the size mismatch and fails too instead of
 * using bad data (the schedules of sched.c do the same).  A receive checks
 * that exactly the bytes it posted arrived: more is MPI_ERR_TRUNCATE (from
 * the receive itself), fewer MPI_ERR_OTHER.  Local steps (copies, ops,
 * packing) run only while err is MPI_SUCCESS; a buffer that could not be
 * allocated receives 0 elements (the message is dropped as truncated).
 * Both ends of every message stay independent of the counts, so ranks that
 * disagree on them still run the same steps. */
static inline void wh_coll_note(int rc, int *err)
{
    if (__builtin_expect(rc != MPI_SUCCESS, 0) && *err == MPI_SUCCESS)
        *err = rc;
}
/* the error of a receive from src that got `got` bytes where `want` were posted */
int wh_coll_short_error(int src, size_t got, size_t want);
void wh_coll_esend(const void *buf, MPI_Count n, wh_dtype_t *dt, int dst, int tag, wh_comm_t *c, int *err);
void wh_coll_erecv(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int *err);
void wh_coll_esendrecv(const void *sb, MPI_Count sn, wh_dtype_t *sdt, int dst, void *rb, MPI_Count rn,
                       wh_dtype_t *rdt, int src, int tag, wh_comm_t *c, int *err);
/* nonblocking forms: *req is NULL when the operation could not start (err set) */
void wh_coll_eisend(const void *buf, MPI_Count n, wh_dtype_t *dt, int dst, int tag, wh_comm_t *c, wh_req_t **req,
                    int *err);
void wh_coll_eirecv(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, wh_req_t **req,
                    int *err);
/* the same, asking the sender to write the data where it can (zero-copy
 * put: WH_IRECV_PUT), so a root receiving from many is not the one cpu
 * making every copy */
void wh_coll_eirecv_put(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, wh_req_t **req,
                        int *err);
/* complete (and release) a request of the above; NULL is skipped.  A receive
 * is checked against the bytes it posted. */
void wh_coll_ewait(wh_req_t *q, int *err);
/* A rank's own block, copied locally: both sides must hold the same bytes
 * (MPI_ERR_TRUNCATE when the send side is longer, else MPI_ERR_OTHER). */
void wh_coll_ecopy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                   wh_dtype_t *rdt, int *err);

/* unchecked forms (the algorithms use the ones above; these stop nothing on an error) */
#define WH_COLL_SEND(buf, n, dt, dst, tag, c) wh_send((buf), (n), (dt), (dst), (tag), (c), WH_CTX_COLL)
#define WH_COLL_RECV(buf, n, dt, src, tag, c) wh_recv((buf), (n), (dt), (src), (tag), (c), WH_CTX_COLL, NULL)
#define WH_COLL_SENDRECV(sb, sn, sdt, dst, rb, rn, rdt, src, tag, c)                                       \
    wh_sendrecv((sb), (sn), (sdt), (dst), (tag), (rb), (rn), (rdt), (src), (tag), (c), WH_CTX_COLL, NULL)

/* ---------- chain.c ---------- */
int wh_scan_chain(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                  wh_comm_t *c, int exclusive);

/* ---------- dissem.c ---------- */
int wh_barrier_dissem(wh_comm_t *c);

/* ---------- binomial.c: binomial trees ---------- */
int wh_bcast_binomial(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c);
/* commutative ops: tree rooted at root */
int wh_reduce_binomial(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                       wh_op_t *op, int root, wh_comm_t *c);
/* any op: tree rooted at rank 0 combining in rank order, then moved to root */
int wh_reduce_ordered(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                      wh_op_t *op, int root, wh_comm_t *c);
int wh_gather_binomial(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                       wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_scatter_binomial(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                        wh_dtype_t *rdt, int root, wh_comm_t *c);

/* ---------- linear.c: root talks to every rank ---------- */
int wh_gather_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                     wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_scatter_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_gatherv_linear(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *displs, wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_scatterv_linear(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, wh_dtype_t *sdt,
                       void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c);
/* reduce (ordered) to rank 0, then scatterv: any op, any counts */
int wh_reduce_scatter_ordered(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth,
                              wh_dtype_t *dt, wh_op_t *op, wh_comm_t *c);

/* ---------- recdbl.c: recursive doubling ---------- */
int wh_allreduce_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                        wh_op_t *op, wh_comm_t *c);
/* power-of-two communicators only */
int wh_allgather_recdbl(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                        wh_dtype_t *rdt, wh_comm_t *c);
int wh_scan_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   wh_comm_t *c);
int wh_exscan_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                     wh_op_t *op, wh_comm_t *c);

/* ---------- rabenseifner.c: reduce-scatter by recursive halving + allgather ---------- */
/* commutative ops, count >= largest power of two <= size */
int wh_allreduce_rabenseifner(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                              wh_op_t *op, wh_comm_t *c);

/* ---------- ring.c ---------- */
int wh_allgather_ring(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c);
int wh_allgatherv_ring(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                       const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c);
/* binomial scatter of the packed bytes, then ring allgather (large messages) */
int wh_bcast_scatter_ring(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c);

/* ---------- pairwise.c: pairwise exchange ---------- */
/* (pairwise.c) Copy of the blocks of `s` in buf, at the same displacements relative to
 * the returned base (*raw to free). */
char *wh_a2a_snapshot(const wh_a2a_side_t *s, const void *buf, int n, void **raw, int *rc);
int wh_alltoall_pairwise(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                         wh_dtype_t *rdt, wh_comm_t *c);
/* alltoallv and alltoallw (either side form of coll/a2a.h) */
int wh_a2a_pairwise(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c);
/* commutative ops */
int wh_reduce_scatter_pairwise(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth,
                               wh_dtype_t *dt, wh_op_t *op, wh_comm_t *c);
#endif
