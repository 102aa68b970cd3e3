/* Job-level services implemented by src/mpi/init.c and used across layers. */
#ifndef WH_MPI_INIT_H
#define WH_MPI_INIT_H
#include "core/job.h"
/* implemented by src/core/comm.c */
int wh_comm_init_world(void);
void wh_comm_finalize_attrs(void); /* MPI_COMM_SELF attributes: first step of MPI_Finalize */
void wh_comm_finalize(void);
/* the runtime shared by the world model and sessions (src/mpi/init.c):
 * acquire brings it up on first use (collective over the job), release
 * tears it down with the last user; acquire fails once it was torn down */
int wh_runtime_acquire(int required, int *provided);
int wh_runtime_release(void);
int wh_world_state(void); /* 0 before MPI_Init, 1 initialized, 2 finalized */
/* MPI_Init of a process started by MPI_Comm_spawn: connect to the parents (src/mpi/dynamic.c) */
int wh_dyn_connect_parent(void);
/* src/mpi/session.c: MPI_SUCCESS if h is a live session, else the raised error */
int wh_session_check(const char *fname, MPI_Session h);
/* raise code on session h's error handler (MPI_ERRORS_ARE_FATAL's path if h is not a session) */
int wh_session_raise(int h, const char *fname, int code);
/* src/mpi/bsend.c: MPI_Session_finalize detaches the session's buffer (waiting for its messages) */
void wh_bsend_session_end(MPI_Session session);
/* implemented by src/proto/send.c */
int wh_pending_count(void);
#endif
