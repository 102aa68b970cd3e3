/* Dynamic process management, as far as it exists without spawning: a
 * process started by a launcher (never by MPI_Comm_spawn) has no parent. */
#include "mpi/api.h"

static int body_Comm_get_parent(MPI_Comm *parent)
{
    if (!parent)
        return wh_raise_comm(NULL, "MPI_Comm_get_parent", wh_error(MPI_ERR_ARG, "parent is NULL"));
    *parent = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#include "entry/dynamic.h"
