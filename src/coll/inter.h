/* Intercommunicator collectives as schedules (src/coll/inter.c), on s->home
 * being an intercommunicator: rank = my rank in the local group, size = the
 * remote group's size.  Messages between the groups go point to point on the
 * intercommunicator's collective context; steps inside a group run on the
 * local group's intracommunicator (wh_sched_local) with the intracommunicator
 * builders.  Blocking intercommunicator collectives run the same schedules.
 *
 * Rooted calls (MPI-4.1 6.2.2): in the root's group the root passes MPI_ROOT
 * and the others MPI_PROC_NULL (they take no part); the other group passes
 * the root's rank in the remote group.  Results always come from the other
 * group.  Algorithms are simple and linear where that is correct: the root
 * talks to every remote rank (gather, scatter), every process to every
 * remote process (allgather, alltoall); reductions reduce inside a group to
 * its rank 0, the two leaders exchange, and a local broadcast or scatter
 * hands the result out. */
#ifndef WH_COLL_INTER_H
#define WH_COLL_INTER_H
#include "coll/sched.h"

int wh_isched_barrier(wh_sched_t *s);
int wh_isched_bcast(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int root);
/* rcounts NULL: rcount for every remote rank, blocks at j * rcount */
int wh_isched_gatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                      const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt, int root);
int wh_isched_scatterv(wh_sched_t *s, const void *sbuf, const MPI_Count *scounts, MPI_Count scount,
                       const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                       int root);
int wh_isched_allgatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                         const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt);
/* blocks per remote rank as wh_sched_a2a_t describes them */
int wh_isched_alltoall(wh_sched_t *s, const void *sbuf, const wh_sched_a2a_t *ss, void *rbuf,
                       const wh_sched_a2a_t *rs);
/* reductions use the schedule's op and type (wh_sched_set_op) */
int wh_isched_reduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int root);
int wh_isched_allreduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count);
/* rcounts: the local group's (one per local rank); the remote group reduces
 * as many elements in total */
int wh_isched_reduce_scatter(wh_sched_t *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts);
#endif
