/* Reduction operations: predefined ops on the types the standard allows
 * (plus the pairs MPICH also accepts, see op.c), and user ops (MPI_Op_create).
 *
 * Predefined ops are the builtin handles MPI_MAX (0x58000001) .. MPI_NO_OP
 * (0x5800000e); their wh_op_t objects are static and `builtin` is the handle
 * index (WH_OPI_*).  User ops live in wh_op_tab (indirect WH_H_OP handles). */
#ifndef WH_OP_OP_H
#define WH_OP_OP_H
#include <mpi.h>
#include "core/handle.h"
#include "dtype/dtype.h"

/* index of a predefined op = low bits of its handle */
enum wh_op_index {
    WH_OPI_MAX = 1,
    WH_OPI_MIN,
    WH_OPI_SUM,
    WH_OPI_PROD,
    WH_OPI_LAND,
    WH_OPI_BAND,
    WH_OPI_LOR,
    WH_OPI_BOR,
    WH_OPI_LXOR,
    WH_OPI_BXOR,
    WH_OPI_MINLOC,
    WH_OPI_MAXLOC,
    WH_OPI_REPLACE,
    WH_OPI_NO_OP,
    WH_OPI_COUNT /* one past the last */
};

typedef struct wh_op {
    wh_obj_t obj;
    int builtin;           /* index of the predefined op (WH_OPI_*), or -1 for user ops */
    int commute;
    MPI_User_function *fn; /* user op (MPI_Op_create) */
    MPI_User_function_c *fn_c; /* user op (MPI_Op_create_c) */
} wh_op_t;

extern wh_tab_t wh_op_tab;

wh_op_t *wh_op_get(MPI_Op h);   /* NULL if invalid (including MPI_OP_NULL) */
int wh_op_init(void);
void wh_op_finalize(void);
/* "MPI_SUM", ..., or "user-defined op" */
const char *wh_op_name(const wh_op_t *op);

/* User ops: create (refs = 1, the user's reference); NULL when out of memory.
 * Pending operations that hold an op take a reference; the object is freed
 * when the last reference goes (predefined ops ignore both calls). */
wh_op_t *wh_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute);
void wh_op_addref(wh_op_t *op);
void wh_op_release(wh_op_t *op);

/* Is op defined on this type?  MPI_SUCCESS or an MPI_ERR_OP code naming both.
 * Predefined types are judged by their handle (t->obj.handle), so e.g.
 * MPI_LOGICAL admits MPI_LAND while MPI_INTEGER does not; derived types whose
 * elements are all of one basic type are judged by t->basic.  User ops,
 * MPI_REPLACE and MPI_NO_OP accept every type. */
int wh_op_check(const wh_op_t *op, const wh_dtype_t *t);
/* Same, for reductions in collectives and MPI_Reduce_local: additionally
 * rejects MPI_REPLACE and MPI_NO_OP (only meaningful for RMA accumulates). */
int wh_op_check_reduce(const wh_op_t *op, const wh_dtype_t *t);

/* inout[i] = in[i] op inout[i] for count elements of type t (the MPI order:
 * `in` comes from the lower rank).  Handles MPI_REPLACE and MPI_NO_OP.  Both
 * buffers are in the layout of (count, t), which may be non-contiguous.
 * User functions get (in, inout, &count, &th).  Returns MPI_SUCCESS or an
 * MPI_ERR_OP code when the op is not defined on t. */
int wh_op_apply(const wh_op_t *op, const void *in, void *inout, size_t count, MPI_Datatype th, const wh_dtype_t *t);
/* out = in op b (b keeps its value), in one pass over the three buffers for
 * predefined ops on naturally laid out, aligned elements; otherwise b is
 * copied to out and wh_op_apply(in, out) runs.  out overlaps neither. */
int wh_op_apply3(const wh_op_t *op, const void *in, const void *b, void *out, size_t count, MPI_Datatype th,
                 const wh_dtype_t *t);

/* Bytes (1, 2, 4, 8) of the integer representation predefined ops compute
 * on for t (C and Fortran integers, logicals, MPI_BYTE, MPI_AINT/OFFSET/COUNT;
 * *sgn = signed), or 0 when t is not one integer element (one-sided
 * accumulates use it to pick CPU atomics, src/rma/atomic.c). */
int wh_op_int_bytes(const wh_dtype_t *t, int *sgn);
#endif
