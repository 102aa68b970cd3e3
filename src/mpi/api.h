/* Helpers for defining MPI entry points.
 *
 * Entry points are generated (tools/gen/genapi.py, docs/DESIGN.md "Entry
 * points"): a file src/mpi/F.c defines static bodies body_X and ends with
 * #include "entry/F.h", which defines PMPI_X (initialization check, then
 * body_X) and its alias MPI_X for each of them. */
#ifndef WH_MPI_API_H
#define WH_MPI_API_H
#include <stddef.h>
#include <string.h>
#include <mpi.h>
#include "core/core.h"

#define WH_API __attribute__((visibility("default")))
/* Define PMPI_name, and make MPI_name an alias of it (after the definition):
 *   WH_ALIAS(MPI_Send, PMPI_Send)
 *   int PMPI_Send(...) { ... }            (definition marked WH_API)
 * Used by the generated entry points; hand-written code defines bodies. */
#define WH_ALIAS(mpiname, pmpiname) \
    extern __typeof__(pmpiname) mpiname __attribute__((alias(#pmpiname), visibility("default")));

/* In a body that serves both MPI_X and MPI_X_c without an `int large`
 * parameter: nonzero when called as MPI_X_c (fname is the entry's name). */
static inline int wh_api_large(const char *fname)
{
    size_t n = strlen(fname);
    return n > 2 && fname[n - 2] == '_' && fname[n - 1] == 'c';
}
#endif
