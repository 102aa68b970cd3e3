/* MPI_GREQUEST_START(QUERY_FN, FREE_FN, CANCEL_FN, EXTRA_STATE, REQUEST, IERROR) with Fortran
 * callbacks: QUERY_FN(EXTRA_STATE, STATUS, IERROR), FREE_FN(EXTRA_STATE, IERROR),
 * CANCEL_FN(EXTRA_STATE, COMPLETE, IERROR), EXTRA_STATE an INTEGER(KIND=MPI_ADDRESS_KIND) and
 * COMPLETE a LOGICAL.  The C request gets trampolines and a struct holding the Fortran
 * procedures and the address of EXTRA_STATE, released after FREE_FN ran (the standard calls it
 * exactly once).  As in MPICH and Open MPI the callbacks get the program's own EXTRA_STATE
 * variable, so what FREE_FN stores there is seen by the program. */
#include "fort.h"

typedef void whf_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr);
typedef void whf_free_fn(MPI_Aint *extra, MPI_Fint *ierr);
typedef void whf_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr);

struct whf_greq {
    whf_query_fn *query;
    whf_free_fn *free;
    whf_cancel_fn *cancel;
    MPI_Aint *extra;
};

static int whf_greq_query(void *extra, MPI_Status *status)
{
    struct whf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->query(g->extra, (MPI_Fint *)status, &ierr); /* same layout: MPI_STATUS_SIZE integers */
    return ierr;
}

static int whf_greq_free(void *extra)
{
    struct whf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS;
    g->free(g->extra, &ierr);
    free(g);
    return ierr;
}

static int whf_greq_cancel(void *extra, int complete)
{
    struct whf_greq *g = extra;
    MPI_Fint ierr = MPI_SUCCESS, fcomplete = WHF_C2L(complete);
    g->cancel(g->extra, &fcomplete, &ierr);
    return ierr;
}

WHF_PUBLIC void mpi_grequest_start_(void *query_fn, void *free_fn, void *cancel_fn,
                                    MPI_Aint *extra_state, MPI_Fint *request, MPI_Fint *ierr)
{
    struct whf_greq *g = malloc(sizeof(*g));
    if (!g) {
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    g->query = (whf_query_fn *)query_fn;
    g->free = (whf_free_fn *)free_fn;
    g->cancel = (whf_cancel_fn *)cancel_fn;
    g->extra = extra_state;
    *ierr = MPI_Grequest_start(whf_greq_query, whf_greq_free, whf_greq_cancel, g, request);
    if (*ierr != MPI_SUCCESS)
        free(g);
}
WHF_ALL_NAMES(mpi_grequest_start, "MPI_GREQUEST_START")
