/* MPI_Type_create_f90_integer / _real / _complex: the predefined sized type (MPI_INTEGERn,
 * MPI_REALn, MPI_COMPLEXn) that holds a Fortran variable of KIND selected_int_kind(r) or
 * selected_real_kind(p, r) as gfortran on x86_64 chooses it.  (The handle returned is that
 * named type, so MPI_Type_get_envelope reports MPI_COMBINER_NAMED rather than
 * MPI_COMBINER_F90_*; freeing it is erroneous, as the standard says of these handles.) */
#include "mpi/api.h"

#define RAISE(fname, cls, ...) wh_raise_comm(NULL, (fname), wh_error((cls), __VA_ARGS__))

/* selected_real_kind(p, r) -> bytes of the gfortran kind with IEEE binary32/64/128; 0 for
 * none: the 80-bit extended kind 10 (p 16..18 or r 308..4931 with p <= 18) has no MPI type. */
static int real_bytes(int p, int r)
{
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p < 0 || r < 0)
        return 0;
    if (p <= 6 && r <= 37)
        return 4;
    if (p <= 15 && r <= 307)
        return 8;
    if (p <= 18 && r <= 4931)
        return 0; /* REAL(KIND=10) */
    if (p <= 33 && r <= 4931)
        return 16;
    return 0;
}

static int f90_real(const char *fname, int p, int r, int complex, MPI_Datatype *newtype)
{
    WH_CHECK_INIT(fname);
    if (!newtype)
        return RAISE(fname, MPI_ERR_ARG, "newtype is NULL");
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return RAISE(fname, MPI_ERR_ARG, "p and r are both MPI_UNDEFINED");
    switch (real_bytes(p, r)) {
    case 4: *newtype = complex ? MPI_COMPLEX8 : MPI_REAL4; return MPI_SUCCESS;
    case 8: *newtype = complex ? MPI_COMPLEX16 : MPI_REAL8; return MPI_SUCCESS;
    case 16: *newtype = complex ? MPI_COMPLEX32 : MPI_REAL16; return MPI_SUCCESS;
    default:
        return RAISE(fname, MPI_ERR_ARG, "no predefined MPI type for selected_real_kind(p=%d, r=%d)", p, r);
    }
}

WH_API int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90_real("MPI_Type_create_f90_real", p, r, 0, newtype);
}
WH_ALIAS(MPI_Type_create_f90_real, PMPI_Type_create_f90_real)

WH_API int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90_real("MPI_Type_create_f90_complex", p, r, 1, newtype);
}
WH_ALIAS(MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex)

WH_API int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_create_f90_integer";
    WH_CHECK_INIT(fname);
    if (!newtype)
        return RAISE(fname, MPI_ERR_ARG, "newtype is NULL");
    if (r >= 0 && r <= 2)
        *newtype = MPI_INTEGER1;
    else if (r >= 0 && r <= 4)
        *newtype = MPI_INTEGER2;
    else if (r >= 0 && r <= 9)
        *newtype = MPI_INTEGER4;
    else if (r >= 0 && r <= 18)
        *newtype = MPI_INTEGER8;
    else
        return RAISE(fname, MPI_ERR_ARG, "no predefined MPI type for selected_int_kind(r=%d)", r);
    return MPI_SUCCESS;
}
WH_ALIAS(MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer)
