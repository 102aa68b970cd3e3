/* The MPI tool information interface (MPI_T), shared by tool.c and tool_pvar.c. */
#ifndef WH_MPI_TOOL_H
#define WH_MPI_TOOL_H
#include <mpi.h>

/* MPI_T_ERR_NOT_INITIALIZED unless between MPI_T_init_thread and the matching MPI_T_finalize */
int wh_t_ready(void);
/* MPI_T's string convention: with dst NULL or *len 0 only *len (length with the NUL) is
 * returned; else at most *len - 1 characters and a NUL are copied, *len = what was copied + 1 */
void wh_t_str(const char *src, char *dst, int *len);
/* performance variables: the per-channel message and byte counters (tool_pvar.c) */
int wh_t_pvar_count(void);
const char *wh_t_pvar_name(int i);
/* categories refer to pvars through this: the channel of pvar i */
int wh_t_pvar_chan(int i);
#endif
