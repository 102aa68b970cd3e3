/* Helpers for defining MPI entry points. */
#ifndef WH_MPI_API_H
#define WH_MPI_API_H
#include <mpi.h>
#include "core/core.h"

#define WH_API __attribute__((visibility("default")))
/* Define PMPI_name, and make MPI_name an alias of it (after the definition):
 *   WH_ALIAS(MPI_Send, PMPI_Send)
 *   int PMPI_Send(...) { ... }            (definition marked WH_API) */
#define WH_ALIAS(mpiname, pmpiname) \
    extern __typeof__(pmpiname) mpiname __attribute__((alias(#pmpiname), visibility("default")));
#endif
