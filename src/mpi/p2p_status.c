/* Status accessors: MPI_Test_cancelled, MPI_Status_set_cancelled,
 * MPI_Status_set_elements(_x,_c), MPI_Status_{get,set}_{source,tag,error}
 * (MPI-4.1) and the Fortran conversions MPI_Status_f2c/c2f.
 * (MPI_Get_count/Get_elements belong to the datatype layer.) */
#include "mpi/reqapi.h"
#include "proto/p2p.h"

#define STATUS_ARG(fname, st)                                                                     \
    do {                                                                                          \
        if (!(st) || (st) == MPI_STATUS_IGNORE)                                                   \
            return wh_p2p_raise(NULL, fname,                                                     \
                                 wh_error(MPI_ERR_ARG, "status is %s", (st) ? "MPI_STATUS_IGNORE" : "NULL")); \
    } while (0)

static int body_Test_cancelled(const MPI_Status *status, int *flag)
{
    STATUS_ARG("MPI_Test_cancelled", status);
    WH_CHK_PTR("MPI_Test_cancelled", NULL, flag, "flag");
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}

static int body_Status_set_cancelled(MPI_Status *status, int flag)
{
    STATUS_ARG("MPI_Status_set_cancelled", status);
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}

/* Store the byte count of the first `count` basic elements of datatype's
 * stream, so that MPI_Get_elements(status, datatype) returns count. */
static int set_elements(const char *fname, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    STATUS_ARG(fname, status);
    wh_dtype_t *dt = wh_dtype_get(datatype);
    if (!dt)
        return wh_p2p_raise(NULL, fname, wh_error(MPI_ERR_TYPE, "datatype 0x%x is not a valid datatype",
                                                   (unsigned)datatype));
    if (count < 0)
        return wh_p2p_bad(fname, NULL, WH_BAD_COUNT, count, "count");
    int64_t b = wh_dtype_elements_bytes(dt, (uint64_t)count);
    if (b < 0)
        return wh_p2p_raise(NULL, fname,
                             wh_error(MPI_ERR_COUNT, "%lld basic elements of datatype %s do not fit in a status",
                                      (long long)count, dt->name[0] ? dt->name : "(unnamed)"));
    MPI_Count bytes = (MPI_Count)b;
    int cancelled = status->count_hi_and_cancelled & 1;
    status->count_lo = (int)(bytes & 0xffffffff);
    status->count_hi_and_cancelled = (int)((((unsigned long long)bytes >> 32) << 1) | (unsigned)cancelled);
    return MPI_SUCCESS;
}

static int body_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}

static int body_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

static int body_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_c", status, datatype, count);
}

/* MPI-4.1 field accessors (usable before MPI_Init, like the status itself) */
#define WH_STATUS_FIELD(Get, Set, FIELD, lower)                                                   \
    WH_API int PMPI_Status_##Get(MPI_Status *status, int *lower)                                  \
    {                                                                                             \
        STATUS_ARG("MPI_Status_" #Get, status);                                                   \
        WH_CHK_PTR("MPI_Status_" #Get, NULL, lower, #lower);                                      \
        *lower = status->FIELD;                                                                   \
        return MPI_SUCCESS;                                                                       \
    }                                                                                             \
    WH_ALIAS(MPI_Status_##Get, PMPI_Status_##Get)                                                 \
    WH_API int PMPI_Status_##Set(MPI_Status *status, int lower)                                   \
    {                                                                                             \
        STATUS_ARG("MPI_Status_" #Set, status);                                                   \
        status->FIELD = lower;                                                                    \
        return MPI_SUCCESS;                                                                       \
    }                                                                                             \
    WH_ALIAS(MPI_Status_##Set, PMPI_Status_##Set)

WH_STATUS_FIELD(get_source, set_source, MPI_SOURCE, source)
WH_STATUS_FIELD(get_tag, set_tag, MPI_TAG, tag)
WH_STATUS_FIELD(get_error, set_error, MPI_ERROR, error)

/* Fortran INTEGER status(MPI_STATUS_SIZE) has the C layout (5 ints). */
static int body_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || f_status == MPI_F_STATUS_IGNORE)
        return wh_p2p_raise(NULL, "MPI_Status_f2c", wh_error(MPI_ERR_ARG, "f_status is %s",
                                                               f_status ? "MPI_F_STATUS_IGNORE" : "NULL"));
    STATUS_ARG("MPI_Status_f2c", c_status);
    c_status->count_lo = f_status[0];
    c_status->count_hi_and_cancelled = f_status[1];
    c_status->MPI_SOURCE = f_status[MPI_F_SOURCE];
    c_status->MPI_TAG = f_status[MPI_F_TAG];
    c_status->MPI_ERROR = f_status[MPI_F_ERROR];
    return MPI_SUCCESS;
}

static int body_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    STATUS_ARG("MPI_Status_c2f", c_status);
    if (!f_status || f_status == MPI_F_STATUS_IGNORE)
        return wh_p2p_raise(NULL, "MPI_Status_c2f", wh_error(MPI_ERR_ARG, "f_status is %s",
                                                               f_status ? "MPI_F_STATUS_IGNORE" : "NULL"));
    f_status[0] = c_status->count_lo;
    f_status[1] = c_status->count_hi_and_cancelled;
    f_status[MPI_F_SOURCE] = c_status->MPI_SOURCE;
    f_status[MPI_F_TAG] = c_status->MPI_TAG;
    f_status[MPI_F_ERROR] = c_status->MPI_ERROR;
    return MPI_SUCCESS;
}

#include "entry/p2p_status.h"
