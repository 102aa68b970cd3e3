/* Internal collective entry points (used by the MPI layer and by
 * communicator management, e.g. context-id agreement and Comm_split).
 * Datatypes and ops are resolved; arguments are assumed checked. */
#ifndef WH_COLL_COLL_H
#define WH_COLL_COLL_H
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
#endif
