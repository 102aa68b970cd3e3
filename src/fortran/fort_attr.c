/* Attributes from Fortran: keyvals whose copy/delete callbacks are Fortran subroutines,
 * attribute values as INTEGER(KIND=MPI_ADDRESS_KIND) (INTEGER for the MPI-1 MPI_ATTR_*), the
 * predefined keyvals' Fortran values (MPICH's: the C value + 1; the attribute's value is
 * returned, not a pointer to it) and the predefined callbacks MPI_COMM_DUP_FN & co.
 *
 * A keyval created from Fortran is a C keyval whose callbacks are the trampolines below and
 * whose extra_state points to a struct whf_keyval holding the Fortran callbacks and the user's
 * EXTRA_STATE.  (That struct lives as long as the process: MPI_*_FREE_KEYVAL does not know
 * when the last attribute using the keyval is gone.) */
#include "fort.h"
#include "../core/attrlang.h"

/* Fortran attribute callbacks (all arguments by reference). val is MPI_Aint for the MPI-2
 * interfaces, MPI_Fint for MPI-1's MPI_KEYVAL_CREATE. */
typedef void whf_copy_fn(MPI_Fint *oldobj, MPI_Fint *keyval, void *extra, void *val_in,
                         void *val_out, MPI_Fint *flag, MPI_Fint *ierr);
typedef void whf_delete_fn(MPI_Fint *obj, MPI_Fint *keyval, void *val, void *extra, MPI_Fint *ierr);

struct whf_keyval {
    whf_copy_fn *copy;
    whf_delete_fn *del;
    MPI_Aint extra;      /* MPI-2: INTEGER(KIND=MPI_ADDRESS_KIND) */
    MPI_Fint extra_mpi1; /* MPI-1: INTEGER */
    int mpi1;
};

static int whf_copy(int oldobj, int keyval, void *extra, void *in, void *out, int *flag)
{
    struct whf_keyval *k = extra;
    MPI_Fint o = oldobj, kv = keyval, fflag = WHF_FALSE, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint vin = (MPI_Fint)(intptr_t)in, vout = 0;
        k->copy(&o, &kv, &k->extra_mpi1, &vin, &vout, &fflag, &ierr);
        if (WHF_L2C(fflag))
            *(void **)out = (void *)(intptr_t)vout;
    } else {
        MPI_Aint vin = (MPI_Aint)(intptr_t)in, vout = 0;
        k->copy(&o, &kv, &k->extra, &vin, &vout, &fflag, &ierr);
        if (WHF_L2C(fflag))
            *(void **)out = (void *)(intptr_t)vout;
    }
    *flag = WHF_L2C(fflag);
    return ierr;
}

static int whf_delete(int obj, int keyval, void *val, void *extra)
{
    struct whf_keyval *k = extra;
    MPI_Fint o = obj, kv = keyval, ierr = MPI_SUCCESS;
    if (k->mpi1) {
        MPI_Fint v = (MPI_Fint)(intptr_t)val;
        k->del(&o, &kv, &v, &k->extra_mpi1, &ierr);
    } else {
        MPI_Aint v = (MPI_Aint)(intptr_t)val;
        k->del(&o, &kv, &v, &k->extra, &ierr);
    }
    return ierr;
}

/* The C callback types differ only in the handle type, which is int for all three. */
static int whf_comm_copy(MPI_Comm o, int kv, void *x, void *in, void *out, int *flag)
{
    return whf_copy(o, kv, x, in, out, flag);
}
static int whf_comm_delete(MPI_Comm o, int kv, void *v, void *x)
{
    return whf_delete(o, kv, v, x);
}
static int whf_type_copy(MPI_Datatype o, int kv, void *x, void *in, void *out, int *flag)
{
    return whf_copy(o, kv, x, in, out, flag);
}
static int whf_type_delete(MPI_Datatype o, int kv, void *v, void *x)
{
    return whf_delete(o, kv, v, x);
}
static int whf_win_copy(MPI_Win o, int kv, void *x, void *in, void *out, int *flag)
{
    return whf_copy(o, kv, x, in, out, flag);
}
static int whf_win_delete(MPI_Win o, int kv, void *v, void *x)
{
    return whf_delete(o, kv, v, x);
}

static struct whf_keyval *whf_keyval_new(void *copy, void *del, int mpi1)
{
    struct whf_keyval *k = calloc(1, sizeof(*k));
    if (k) {
        k->copy = (whf_copy_fn *)copy;
        k->del = (whf_delete_fn *)del;
        k->mpi1 = mpi1;
    }
    return k;
}

#define WHF_CREATE_KEYVAL(lo, UP, Cfn, pre)                                                   \
    WHF_PUBLIC void lo##_(void *copy_fn, void *delete_fn, MPI_Fint *keyval, MPI_Aint *extra,  \
                          MPI_Fint *ierr)                                                     \
    {                                                                                          \
        struct whf_keyval *k = whf_keyval_new(copy_fn, delete_fn, 0);                        \
        if (!k) {                                                                              \
            *ierr = MPI_ERR_NO_MEM;                                                            \
            return;                                                                            \
        }                                                                                      \
        k->extra = *extra;                                                                     \
        *ierr = Cfn(pre##_copy, pre##_delete, keyval, k);                                      \
        if (*ierr != MPI_SUCCESS)                                                              \
            free(k);                                                                           \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)

WHF_CREATE_KEYVAL(mpi_comm_create_keyval, "MPI_COMM_CREATE_KEYVAL", MPI_Comm_create_keyval, whf_comm)
WHF_CREATE_KEYVAL(mpi_type_create_keyval, "MPI_TYPE_CREATE_KEYVAL", MPI_Type_create_keyval, whf_type)
WHF_CREATE_KEYVAL(mpi_win_create_keyval, "MPI_WIN_CREATE_KEYVAL", MPI_Win_create_keyval, whf_win)

/* MPI_KEYVAL_CREATE(COPY_FN, DELETE_FN, KEYVAL, EXTRA_STATE, IERROR), MPI-1, INTEGER values. */
WHF_PUBLIC void mpi_keyval_create_(void *copy_fn, void *delete_fn, MPI_Fint *keyval,
                                   MPI_Fint *extra, MPI_Fint *ierr)
{
    struct whf_keyval *k = whf_keyval_new(copy_fn, delete_fn, 1);
    if (!k) {
        *ierr = MPI_ERR_NO_MEM;
        return;
    }
    k->extra_mpi1 = *extra;
    *ierr = MPI_Comm_create_keyval(whf_comm_copy, whf_comm_delete, keyval, k);
    if (*ierr != MPI_SUCCESS)
        free(k);
}
WHF_ALL_NAMES(mpi_keyval_create, "MPI_KEYVAL_CREATE")

/* ---- attribute values ---- */

enum { WHF_ATTR_USER, WHF_ATTR_INT, WHF_ATTR_AINT, WHF_ATTR_PTR };

/* The C keyval for a Fortran one, and how to turn the C attribute into the Fortran value. */
static int whf_keyval_f2c(MPI_Fint kv, int *how)
{
    static const struct { int c; int how; } predef[] = {
        {MPI_TAG_UB, WHF_ATTR_INT},          {MPI_HOST, WHF_ATTR_INT},
        {MPI_IO, WHF_ATTR_INT},              {MPI_WTIME_IS_GLOBAL, WHF_ATTR_INT},
        {MPI_UNIVERSE_SIZE, WHF_ATTR_INT},   {MPI_LASTUSEDCODE, WHF_ATTR_INT},
        {MPI_APPNUM, WHF_ATTR_INT},          {MPI_WIN_BASE, WHF_ATTR_PTR},
        {MPI_WIN_SIZE, WHF_ATTR_AINT},       {MPI_WIN_DISP_UNIT, WHF_ATTR_INT},
        {MPI_WIN_CREATE_FLAVOR, WHF_ATTR_INT}, {MPI_WIN_MODEL, WHF_ATTR_INT},
    };
    for (size_t i = 0; i < sizeof(predef) / sizeof(predef[0]); i++)
        if (kv == predef[i].c + 1 || kv == predef[i].c) {
            *how = predef[i].how;
            return predef[i].c;
        }
    *how = WHF_ATTR_USER;
    return kv;
}

static MPI_Aint whf_attr_value(void *v, int how)
{
    switch (how) {
    case WHF_ATTR_INT: return *(int *)v;
    case WHF_ATTR_AINT: return *(MPI_Aint *)v;
    default: return (MPI_Aint)(intptr_t)v; /* stored by value (Fortran) or a base address */
    }
}

typedef int whf_get_fn(int obj, int keyval, void *val, int *flag);
typedef int whf_set_fn(int obj, int keyval, void *val);

static void whf_get_attr(whf_get_fn *get, MPI_Fint obj, MPI_Fint keyval, MPI_Aint *val,
                         MPI_Fint *fint_val, MPI_Fint *flag, MPI_Fint *ierr)
{
    int how, cflag = 0;
    void *v = NULL;
    int ckv = whf_keyval_f2c(keyval, &how);
    wharf_attr_lang(val ? WH_ATTR_FAINT : WH_ATTR_FINT); /* a Fortran reader: values, not pointers to them */
    *ierr = get(obj, ckv, &v, &cflag);
    wharf_attr_lang(WH_ATTR_C);
    *flag = WHF_C2L(*ierr == MPI_SUCCESS && cflag);
    if (*ierr != MPI_SUCCESS || !cflag)
        return;
    MPI_Aint a = whf_attr_value(v, how);
    if (val)
        *val = a;
    else
        *fint_val = (MPI_Fint)a;
}

#define WHF_GET_ATTR(lo, UP, Cfn)                                                              \
    static int lo##_c(int o, int kv, void *v, int *f) { return Cfn(o, kv, v, f); }            \
    WHF_PUBLIC void lo##_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *flag,      \
                          MPI_Fint *ierr)                                                      \
    {                                                                                          \
        whf_get_attr(lo##_c, *obj, *keyval, val, NULL, flag, ierr);                           \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)
#define WHF_SET_ATTR(lo, UP, Cfn)                                                              \
    WHF_PUBLIC void lo##_(MPI_Fint *obj, MPI_Fint *keyval, MPI_Aint *val, MPI_Fint *ierr)      \
    {                                                                                          \
        wharf_attr_lang(WH_ATTR_FAINT);                                                       \
        *ierr = Cfn(*obj, *keyval, (void *)(intptr_t)*val);                                    \
        wharf_attr_lang(WH_ATTR_C);                                                            \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)

WHF_GET_ATTR(mpi_comm_get_attr, "MPI_COMM_GET_ATTR", MPI_Comm_get_attr)
WHF_GET_ATTR(mpi_type_get_attr, "MPI_TYPE_GET_ATTR", MPI_Type_get_attr)
WHF_GET_ATTR(mpi_win_get_attr, "MPI_WIN_GET_ATTR", MPI_Win_get_attr)
WHF_SET_ATTR(mpi_comm_set_attr, "MPI_COMM_SET_ATTR", MPI_Comm_set_attr)
WHF_SET_ATTR(mpi_type_set_attr, "MPI_TYPE_SET_ATTR", MPI_Type_set_attr)
WHF_SET_ATTR(mpi_win_set_attr, "MPI_WIN_SET_ATTR", MPI_Win_set_attr)

/* MPI-1: MPI_ATTR_GET / MPI_ATTR_PUT with a default INTEGER value. */
static int whf_attr_get_c(int o, int kv, void *v, int *f)
{
    return MPI_Comm_get_attr(o, kv, v, f);
}
WHF_PUBLIC void mpi_attr_get_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *flag,
                              MPI_Fint *ierr)
{
    whf_get_attr(whf_attr_get_c, *comm, *keyval, NULL, val, flag, ierr);
}
WHF_ALL_NAMES(mpi_attr_get, "MPI_ATTR_GET")

WHF_PUBLIC void mpi_attr_put_(MPI_Fint *comm, MPI_Fint *keyval, MPI_Fint *val, MPI_Fint *ierr)
{
    wharf_attr_lang(WH_ATTR_FINT);
    *ierr = MPI_Comm_set_attr(*comm, *keyval, (void *)(intptr_t)*val);
    wharf_attr_lang(WH_ATTR_C);
}
WHF_ALL_NAMES(mpi_attr_put, "MPI_ATTR_PUT")

/* ---- predefined callbacks, callable from Fortran (mpif.h declares them EXTERNAL) ---- */

#define WHF_NULL_COPY(lo, UP, T)                                                               \
    WHF_PUBLIC void lo##_(MPI_Fint *o, MPI_Fint *kv, T *x, T *in, T *out, MPI_Fint *flag,      \
                          MPI_Fint *ierr)                                                      \
    {                                                                                          \
        (void)o, (void)kv, (void)x, (void)in, (void)out;                                       \
        *flag = WHF_FALSE;                                                                     \
        *ierr = MPI_SUCCESS;                                                                   \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)
#define WHF_DUP(lo, UP, T)                                                                     \
    WHF_PUBLIC void lo##_(MPI_Fint *o, MPI_Fint *kv, T *x, T *in, T *out, MPI_Fint *flag,      \
                          MPI_Fint *ierr)                                                      \
    {                                                                                          \
        (void)o, (void)kv, (void)x;                                                            \
        *out = *in;                                                                            \
        *flag = WHF_TRUE;                                                                      \
        *ierr = MPI_SUCCESS;                                                                   \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)
#define WHF_NULL_DELETE(lo, UP, T)                                                             \
    WHF_PUBLIC void lo##_(MPI_Fint *o, MPI_Fint *kv, T *v, T *x, MPI_Fint *ierr)               \
    {                                                                                          \
        (void)o, (void)kv, (void)v, (void)x;                                                   \
        *ierr = MPI_SUCCESS;                                                                   \
    }                                                                                          \
    WHF_ALL_NAMES(lo, UP)

WHF_NULL_COPY(mpi_comm_null_copy_fn, "MPI_COMM_NULL_COPY_FN", MPI_Aint)
WHF_NULL_COPY(mpi_type_null_copy_fn, "MPI_TYPE_NULL_COPY_FN", MPI_Aint)
WHF_NULL_COPY(mpi_win_null_copy_fn, "MPI_WIN_NULL_COPY_FN", MPI_Aint)
WHF_NULL_COPY(mpi_null_copy_fn, "MPI_NULL_COPY_FN", MPI_Fint)
WHF_DUP(mpi_comm_dup_fn, "MPI_COMM_DUP_FN", MPI_Aint)
WHF_DUP(mpi_type_dup_fn, "MPI_TYPE_DUP_FN", MPI_Aint)
WHF_DUP(mpi_win_dup_fn, "MPI_WIN_DUP_FN", MPI_Aint)
WHF_DUP(mpi_dup_fn, "MPI_DUP_FN", MPI_Fint)
WHF_NULL_DELETE(mpi_comm_null_delete_fn, "MPI_COMM_NULL_DELETE_FN", MPI_Aint)
WHF_NULL_DELETE(mpi_type_null_delete_fn, "MPI_TYPE_NULL_DELETE_FN", MPI_Aint)
WHF_NULL_DELETE(mpi_win_null_delete_fn, "MPI_WIN_NULL_DELETE_FN", MPI_Aint)
WHF_NULL_DELETE(mpi_null_delete_fn, "MPI_NULL_DELETE_FN", MPI_Fint)

/* MPI_CONVERSION_FN_NULL: named by mpif.h; wharf has no MPI I/O data representations. */
WHF_PUBLIC void mpi_conversion_fn_null_(void *userbuf, MPI_Fint *datatype, MPI_Fint *count,
                                        void *filebuf, MPI_Offset *position, MPI_Aint *extra,
                                        MPI_Fint *ierr)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position, (void)extra;
    *ierr = MPI_SUCCESS;
}
WHF_ALL_NAMES(mpi_conversion_fn_null, "MPI_CONVERSION_FN_NULL")

/* The same subroutines under the names of MPICH's mpi_f08_callbacks module (programs built
 * with MPICH's mpi_f08 pass these; the f08 interfaces also take every argument by reference). */
#define WHF_F08_CB(name)                                                                       \
    extern __typeof__(name##_) __mpi_f08_callbacks_MOD_##name                                  \
        __attribute__((alias(#name "_"), visibility("default")));
WHF_F08_CB(mpi_comm_dup_fn)
WHF_F08_CB(mpi_comm_null_copy_fn)
WHF_F08_CB(mpi_comm_null_delete_fn)
WHF_F08_CB(mpi_type_dup_fn)
WHF_F08_CB(mpi_type_null_copy_fn)
WHF_F08_CB(mpi_type_null_delete_fn)
WHF_F08_CB(mpi_win_dup_fn)
WHF_F08_CB(mpi_win_null_copy_fn)
WHF_F08_CB(mpi_win_null_delete_fn)
WHF_F08_CB(mpi_conversion_fn_null)
