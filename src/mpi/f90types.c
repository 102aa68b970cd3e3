/* MPI_Type_create_f90_real/complex/integer (MPI-4.1 19.1.9): the datatype of
 * the Fortran kind SELECTED_REAL_KIND(p, r) / SELECTED_INT_KIND(r) would
 * pick, as gfortran's kinds map onto MPICH's predefined types:
 *   real     (6, 37) MPI_REAL4   (15, 307) MPI_REAL8      (33, 4931) MPI_REAL16
 *   complex  the same precision and range as COMPLEX8 / COMPLEX16 / COMPLEX32
 *   integer  r <= 2 INTEGER1, 4 INTEGER2, 9 INTEGER4, 18 INTEGER8
 * MPI_UNDEFINED leaves p or r free.  The result is a duplicate of that type
 * whose envelope is MPI_COMBINER_F90_* with the arguments (p, r) / (r), made
 * once per argument set and returned again on later calls (such types must
 * not be freed, MPI says). */
#include "dtype/dtype.h"
#include "mpi/api.h"

#define RAISE(fname, cls, ...) wh_raise_comm(NULL, (fname), wh_error((cls), __VA_ARGS__))
#define NCACHE 64

typedef struct {
    int combiner, p, r;
    MPI_Datatype h;
} f90ent_t;
static f90ent_t cache[NCACHE];
static int ncache;

static int make(const char *fname, int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *newtype)
{
    if (!newtype)
        return RAISE(fname, MPI_ERR_ARG, "newtype is NULL");
    for (int i = 0; i < ncache; i++)
        if (cache[i].combiner == combiner && cache[i].p == p && cache[i].r == r) {
            if (wh_dtype_get_derived(cache[i].h)) { /* still alive (the user must not free it) */
                *newtype = cache[i].h;
                return MPI_SUCCESS;
            }
            cache[i] = cache[--ncache];
            break;
        }
    wh_dtype_t *t;
    int rc = wh_dtype_create_dup(wh_dtype_get(base), &t);
    int ints[2] = {p, r};
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (rc == MPI_SUCCESS &&
        (rc = wh_dtype_set_contents(t, combiner, 0, ni, ni == 1 ? &r : ints, 0, NULL, 0, NULL, 0, NULL)))
        wh_dtype_user_free(t);
    if (rc)
        return wh_raise_comm(NULL, fname, rc);
    t->committed = 1;
    if (ncache < NCACHE)
        cache[ncache++] = (f90ent_t){combiner, p, r, t->obj.handle};
    *newtype = t->obj.handle;
    return MPI_SUCCESS;
}

/* index of the smallest real kind with precision >= p and range >= r, or -1 */
static int real_kind(int p, int r)
{
    static const int prec[3] = {6, 15, 33}, range[3] = {37, 307, 4931};
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    for (int k = 0; k < 3; k++)
        if (p <= prec[k] && r <= range[k])
            return k;
    return -1;
}

static int chk_pr(const char *fname, int p, int r)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return RAISE(fname, MPI_ERR_ARG, "p and r are both MPI_UNDEFINED: at least one must be given");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return RAISE(fname, MPI_ERR_ARG, "negative precision %d or range %d", p, r);
    return MPI_SUCCESS;
}

WH_API int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_create_f90_real";
    static const MPI_Datatype types[3] = {MPI_REAL4, MPI_REAL8, MPI_REAL16};
    WH_CHECK_INIT(fname);
    int rc = chk_pr(fname, p, r), k;
    if (rc)
        return rc;
    if ((k = real_kind(p, r)) < 0)
        return RAISE(fname, MPI_ERR_ARG, "no Fortran REAL kind has precision %d and range %d (the largest is 33, 4931)",
                     p, r);
    return make(fname, MPI_COMBINER_F90_REAL, p, r, types[k], newtype);
}
WH_ALIAS(MPI_Type_create_f90_real, PMPI_Type_create_f90_real)

WH_API int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_create_f90_complex";
    static const MPI_Datatype types[3] = {MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    WH_CHECK_INIT(fname);
    int rc = chk_pr(fname, p, r), k;
    if (rc)
        return rc;
    if ((k = real_kind(p, r)) < 0)
        return RAISE(fname, MPI_ERR_ARG, "no Fortran COMPLEX kind has precision %d and range %d (the largest is 33, "
                     "4931)", p, r);
    return make(fname, MPI_COMBINER_F90_COMPLEX, p, r, types[k], newtype);
}
WH_ALIAS(MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex)

WH_API int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_create_f90_integer";
    static const int range[4] = {2, 4, 9, 18};
    static const MPI_Datatype types[4] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    WH_CHECK_INIT(fname);
    if (r < 0 || r == MPI_UNDEFINED)
        return RAISE(fname, MPI_ERR_ARG, "invalid decimal range %d", r);
    for (int k = 0; k < 4; k++)
        if (r <= range[k])
            return make(fname, MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, types[k], newtype);
    return RAISE(fname, MPI_ERR_ARG, "no Fortran INTEGER kind has a decimal range of %d (the largest is 18)", r);
}
WH_ALIAS(MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer)
