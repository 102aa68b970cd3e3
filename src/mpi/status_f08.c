/* MPI_Status_c2f08 / f082c / f082f / f2f08: the mpi_f08 TYPE(MPI_Status) (MPI_F08_status in C)
 * has the layout of MPI_Status and of the mpif.h INTEGER status(MPI_STATUS_SIZE), so each is a
 * field-by-field copy.  The *_IGNORE arguments are refused, as for MPI_Status_f2c/c2f. */
#include "mpi/api.h"

#define RAISE(fname, ...) wh_raise_comm(NULL, (fname), wh_error(MPI_ERR_ARG, __VA_ARGS__))
#define ARG(fname, p, ignore, what)                                                                \
    do {                                                                                           \
        if (!(p) || (const void *)(p) == (const void *)(ignore))                                   \
            return RAISE((fname), "%s is %s", (what), (p) ? #ignore : "NULL");                     \
    } while (0)

WH_API int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    ARG("MPI_Status_c2f08", c_status, MPI_STATUS_IGNORE, "c_status");
    ARG("MPI_Status_c2f08", f08_status, MPI_F08_STATUS_IGNORE, "f08_status");
    f08_status->count_lo = c_status->count_lo;
    f08_status->count_hi_and_cancelled = c_status->count_hi_and_cancelled;
    f08_status->MPI_SOURCE = c_status->MPI_SOURCE;
    f08_status->MPI_TAG = c_status->MPI_TAG;
    f08_status->MPI_ERROR = c_status->MPI_ERROR;
    return MPI_SUCCESS;
}
WH_ALIAS(MPI_Status_c2f08, PMPI_Status_c2f08)

WH_API int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    ARG("MPI_Status_f082c", f08_status, MPI_F08_STATUS_IGNORE, "f08_status");
    ARG("MPI_Status_f082c", c_status, MPI_STATUS_IGNORE, "c_status");
    c_status->count_lo = f08_status->count_lo;
    c_status->count_hi_and_cancelled = f08_status->count_hi_and_cancelled;
    c_status->MPI_SOURCE = f08_status->MPI_SOURCE;
    c_status->MPI_TAG = f08_status->MPI_TAG;
    c_status->MPI_ERROR = f08_status->MPI_ERROR;
    return MPI_SUCCESS;
}
WH_ALIAS(MPI_Status_f082c, PMPI_Status_f082c)

WH_API int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    MPI_Status c;
    int rc = PMPI_Status_f082c(f08_status, &c);
    return rc != MPI_SUCCESS ? rc : PMPI_Status_c2f(&c, f_status);
}
WH_ALIAS(MPI_Status_f082f, PMPI_Status_f082f)

WH_API int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    MPI_Status c;
    int rc = PMPI_Status_f2c(f_status, &c);
    return rc != MPI_SUCCESS ? rc : PMPI_Status_c2f08(&c, f08_status);
}
WH_ALIAS(MPI_Status_f2f08, PMPI_Status_f2f08)
