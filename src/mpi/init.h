/* Job-level services implemented by src/mpi/init.c and used across layers. */
#ifndef WH_MPI_INIT_H
#define WH_MPI_INIT_H
#include "core/job.h"
/* implemented by src/core/comm.c */
int wh_comm_init_world(void);
void wh_comm_finalize_attrs(void); /* MPI_COMM_SELF attributes: first step of MPI_Finalize */
void wh_comm_finalize(void);
/* implemented by src/proto/send.c */
int wh_pending_count(void);
#endif
