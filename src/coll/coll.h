/* Internal collective entry points (used by the MPI layer and by
 * communicator management, e.g. context-id agreement and Comm_split).
 * Datatypes and ops are resolved; arguments are assumed checked.
 *
 * Conventions (as in the MPI calls): sbuf == MPI_IN_PLACE selects the
 * in-place variant where the standard has one; arguments the standard calls
 * insignificant on a rank (e.g. rbuf/rcount of a non-root in gather) are not
 * looked at.  Counts are element counts of the given type; displacements
 * (displs) are in elements of the type, except for alltoallw (bytes).
 * Every function is a selector that picks an algorithm (src/coll/select.c);
 * the algorithms live in one file per family (binomial.c, recdbl.c, ...).
 * The nonblocking and persistent forms build schedules instead (sched.h).
 * Intracommunicators only. */
#ifndef WH_COLL_COLL_H
#define WH_COLL_COLL_H
#include <stdlib.h>
#include <mpi.h>
#include "core/core.h"
#include "dtype/dtype.h"
#include "op/op.h"

int wh_barrier(wh_comm_t *c);
int wh_bcast(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c);
int wh_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
              int root, wh_comm_t *c);
int wh_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                 wh_op_t *op, wh_comm_t *c);
int wh_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                 wh_dtype_t *rdt, wh_comm_t *c);
int wh_gather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
              wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_alltoall(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                wh_dtype_t *rdt, wh_comm_t *c);

int wh_gatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
               const MPI_Aint *displs, wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_scatter(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
               wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_scatterv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf,
                MPI_Count rcount, wh_dtype_t *rdt, int root, wh_comm_t *c);
int wh_allgatherv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                  const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c);
int wh_alltoallv(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls, wh_dtype_t *sdt, void *rbuf,
                 const MPI_Count *rcounts, const MPI_Aint *rdispls, wh_dtype_t *rdt, wh_comm_t *c);
/* sdispls/rdispls in bytes; one type per peer */
int wh_alltoallw(const void *sbuf, const MPI_Count *scounts, const MPI_Aint *sdispls, wh_dtype_t *const *sdts,
                 void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls, wh_dtype_t *const *rdts,
                 wh_comm_t *c);
int wh_reduce_scatter_block(const void *sbuf, void *rbuf, MPI_Count rcount, MPI_Datatype dth, wh_dtype_t *dt,
                            wh_op_t *op, wh_comm_t *c);
int wh_reduce_scatter(const void *sbuf, void *rbuf, const MPI_Count *rcounts, MPI_Datatype dth, wh_dtype_t *dt,
                      wh_op_t *op, wh_comm_t *c);
int wh_scan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
            wh_comm_t *c);
int wh_exscan(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
              wh_comm_t *c);

/* MPI_Finalize: WHARF_REPORT=coll for MPI_COMM_WORLD (other communicators
 * report when they are freed) */
void wh_coll_finalize(void);

/* ---------- argument checks of the MPI collective entry points ----------
 * Implemented in src/mpi/coll.c, shared by the src/mpi/coll*.c files
 * (blocking, nonblocking and persistent forms).  Each raises the error on the
 * right handler and returns its code, or returns MPI_SUCCESS. */
/* valid intracommunicator (MPI_ERR_COMM for an intercommunicator: the MPI
 * layer hands intercommunicators to its own checks before, where defined) */
int wh_collchk_comm(const char *fname, MPI_Comm comm, wh_comm_t **cp);
int wh_collchk_root(const char *fname, wh_comm_t *c, int root);
/* one buffer description: count >= 0 (cname names it), committed type,
 * buffer (bname) not NULL/MPI_IN_PLACE when it holds data */
int wh_collchk_buf(const char *fname, wh_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dth,
                   wh_dtype_t **dtp, const char *cname, const char *bname);
/* n counts >= 0 (array not NULL) */
int wh_collchk_counts(const char *fname, wh_comm_t *c, const MPI_Count *counts, int n, const char *name);
/* a required array argument */
int wh_collchk_ptr(const char *fname, wh_comm_t *c, const void *p, const char *name);
/* valid op defined on dt for reductions */
int wh_collchk_op(const char *fname, wh_comm_t *c, MPI_Op oph, const wh_dtype_t *dt, wh_op_t **opp);
/* int counts/displacements of the non-_c functions widened to MPI_Count /
 * MPI_Aint: n entries in w->c / w->d (a NULL array stays NULL), held in w
 * itself up to WH_WIDEN_FEW entries (a malloc and free per call were ~6% of a
 * 2-rank 8-byte alltoallv), else on the heap.  The collectives copy what they
 * keep, so w is released (wh_widen_free) when the call returns.  A w that may
 * not be widened is set up with wh_widen_none first. */
enum { WH_WIDEN_FEW = 32 };
typedef struct {
    MPI_Count *c;
    MPI_Aint *d;
    void *mem;
    MPI_Count cf[WH_WIDEN_FEW];
    MPI_Aint df[WH_WIDEN_FEW];
} wh_widen_t;
int wh_collchk_widen(const char *fname, wh_comm_t *c, int n, const int *ic, const int *id, wh_widen_t *w);
static inline void wh_widen_none(wh_widen_t *w)
{
    w->c = NULL, w->d = NULL, w->mem = NULL;
}
static inline void wh_widen_free(wh_widen_t *w)
{
    free(w->mem);
}
/* MPI_ERR_BUFFER with a message (aliasing, misplaced MPI_IN_PLACE) */
int wh_collchk_buffer_error(const char *fname, wh_comm_t *c, const char *msg);
#endif
