/* Node-shared-memory collectives (shmcoll.c), chosen by the selectors. */
#ifndef WH_COLL_SHMCOLL_H
#define WH_COLL_SHMCOLL_H
#include "coll/a2a.h"
#include "coll/coll.h"

/* 1 when c can run a shared-memory collective of `bytes` bytes per rank
 * (sets the block up on first use: collective over c, so every rank must ask
 * at the same call with the same bytes). */
int wh_shmc_usable(wh_comm_t *c, size_t bytes);
int wh_shmc_barrier(wh_comm_t *c);
int wh_shmc_bcast(void *buf, size_t bytes, int root, wh_comm_t *c);
/* root < 0: allreduce.  Contiguous (count, dt) only. */
int wh_shmc_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   int root, wh_comm_t *c);
/* Nonblocking barrier (MPI_Ibarrier, MPI_Barrier_init) through the block:
 * _ready says whether c's block is already set up (never sets it up: a
 * nonblocking call must not wait for the others; every rank sees the same,
 * since only collectives called in the same order set blocks up); _arrive
 * raises this rank's flag (at the start: the others need nothing more
 * from this rank) and returns the barrier's number; _arrived is a test. */
int wh_shmc_ready(wh_comm_t *c);
uint64_t wh_shmc_arrive(wh_comm_t *c);
int wh_shmc_arrived(wh_comm_t *c, uint64_t k);
/* Large messages (above WHARF_COLL_SHM_MAX) in chunks through a second
 * block (set up on first use: collective, like wh_shmc_usable). */
int wh_shmc_large_usable(wh_comm_t *c, size_t bytes, size_t elem); /* elem: bytes per element */
int wh_shmc_bcast_large(void *buf, size_t bytes, int root, wh_comm_t *c);
/* cma: where single copy may be offered (a reduce to a root); *cma = 1 when it ran */
int wh_shmc_reduce_large(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                         wh_op_t *op, int root, wh_comm_t *c, int *cma);
/* blk = rcount x rdt->size bytes per rank; small (wh_shmc_usable(c, blk))
 * or large (wh_shmc_large_usable(c, blk, 1)); any datatypes */
int wh_shmc_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c);
/* Through the inline cells (blk = bytes per rank's block, the same on
 * every rank; gather: blk <= WHARF_COLL_SHM_MAX, scatter and alltoall:
 * n x blk <= WHARF_COLL_SHM_MAX, checked with wh_shmc_usable); any
 * datatypes, packed into and unpacked out of the cells directly. */
int wh_shmc_gather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                   wh_dtype_t *rdt, int root, size_t blk, wh_comm_t *c);
int wh_shmc_scatter(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                    wh_dtype_t *rdt, int root, size_t blk, wh_comm_t *c);
int wh_shmc_alltoall(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                     wh_dtype_t *rdt, size_t blk, wh_comm_t *c);

/* scan (exclusive 0) or exscan (1) of count x dt, one contiguous block of
 * at most WHARF_COLL_SHM_MAX bytes (wh_shmc_usable) */
int wh_shmc_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                 int exclusive, wh_comm_t *c);
/* total = sum(rcounts) x dt->size bytes, contiguous (wh_shmc_usable(c, total)) */
int wh_shmc_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth, wh_dtype_t *dt,
                           wh_op_t *op, size_t total, wh_comm_t *c);
/* every block (rcounts[r] x rdt->size) at most WHARF_COLL_SHM_MAX bytes, any datatypes */
int wh_shmc_allgatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                       const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c);
/* any block above WHARF_COLL_SHM_MAX (wh_shmc_large_usable(c, largest, 1)
 * on every rank), through the big cells in lockstep; any datatypes */
int wh_shmc_allgather_large(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                            wh_dtype_t *rdt, wh_comm_t *c);
int wh_shmc_allgatherv_large(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                             const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c);
/* alltoallv and alltoallw (algo.h's sides; sbuf may be MPI_IN_PLACE): each
 * rank's outgoing blocks through its cell when they fit, else as messages;
 * the block must exist (wh_shmc_usable(c, 0) on every rank) */
int wh_shmc_alltoallv(const void *sbuf, const wh_a2a_side_t *ss, void *rbuf, const wh_a2a_side_t *rs, wh_comm_t *c);
/* Single-copy collectives (shmcma.c): owners publish their buffers' addresses,
 * readers copy out of them with CMA.  wh_cma_usable: by size and communicator
 * only (the same on every rank; WHARF_COLL_CMA, WHARF_COLL_CMA_MIN, at most
 * WH_CMA_MAXN ranks).  The calls agree among all ranks: MPI_SUCCESS, an error,
 * or WH_FALLBACK on every rank (no buffer changed that the caller's fallback
 * would read).  Contiguous buffers only: pass NULL for one that is not. */
#define WH_CMA_MAXN 128
int wh_cma_usable(wh_comm_t *c, size_t bytes);
int wh_cma_allgather(const void *src, char *dst, size_t blk, wh_comm_t *c);
/* rank r's len[r] bytes go to dst + off[r] (the same arrays on every rank) */
int wh_cma_allgatherv(const void *src, char *dst, const size_t *off, const size_t *len, wh_comm_t *c);
int wh_cma_bcast(void *buf, size_t bytes, int root, wh_comm_t *c);
/* A reduce's single-copy slices, decided in the first step of the cells'
 * reduce (shmcoll.c) from every rank's offer: _offer fills this rank's (1
 * if it can take part), _agree says whether all go, _run moves this rank's
 * slice (its status: MPI_SUCCESS, WH_FALLBACK for a refused transfer, an
 * error), and _settle turns the worst status of all (0 ok, 1 refused, 2
 * error) into the call's result or WH_FALLBACK (all rerun on the cells). */
typedef struct {
    uint64_t addr; /* input */
    uint64_t out;  /* the root's result buffer */
    uint32_t want; /* 1: can take part; 2: a write to the root has been seen (or is the root) */
    uint32_t pad;
} wh_cma_offer_t;
int wh_cma_reduce_offer(wh_comm_t *c, const char *in, char *out, size_t bytes, const wh_op_t *op, int root,
                        wh_cma_offer_t *o);
int wh_cma_reduce_agree(const wh_cma_offer_t *all, int n, int root);
int wh_cma_reduce_run(const wh_cma_offer_t *all, const char *in, char *out, size_t count, MPI_Datatype dth,
                      wh_dtype_t *dt, wh_op_t *op, int root, wh_comm_t *c);
int wh_cma_reduce_settle(const wh_cma_offer_t *all, int n, int my, int worst, int root);
/* allreduce (root -1, every buffer in the node heap): once every slice is
 * combined into its rank's result buffer, copy the others' slices in */
int wh_cma_allreduce_collect(const wh_cma_offer_t *all, char *out, size_t count, size_t esz, wh_comm_t *c);
#endif
