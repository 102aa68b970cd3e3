/* Private to src/coll: hierarchical collectives (hier.c), chosen by the
 * selectors when a communicator spans several node groups. */
#ifndef WH_COLL_HIER_H
#define WH_COLL_HIER_H
#include "coll/cstate.h"

/* c's hierarchy, set up on first use (collective over c: every rank must
 * ask at the same call); NULL when c is not hierarchical (*rc: an error of
 * the setup) */
wh_coll_hier_t *wh_hier_get(wh_comm_t *c, int *rc);
int wh_hier_barrier(wh_coll_hier_t *h);
int wh_hier_bcast(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_coll_hier_t *h);
/* any op when h->contiguous, else commutative ops only */
int wh_hier_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   int root, wh_comm_t *c, wh_coll_hier_t *h);
int wh_hier_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                      wh_coll_hier_t *h);
int wh_hier_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c, wh_coll_hier_t *h);
#endif
