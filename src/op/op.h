/* Reduction operations: predefined ops on the types the standard allows, and
 * user ops (MPI_Op_create). */
#ifndef WH_OP_OP_H
#define WH_OP_OP_H
#include <mpi.h>
#include "core/handle.h"
#include "dtype/dtype.h"

typedef struct wh_op {
    wh_obj_t obj;
    int builtin;           /* index of the predefined op, or -1 for user ops */
    int commute;
    MPI_User_function *fn; /* user op */
    MPI_User_function_c *fn_c;
} wh_op_t;

wh_op_t *wh_op_get(MPI_Op h);   /* NULL if invalid */
int wh_op_init(void);
void wh_op_finalize(void);
/* Is op defined on this type?  MPI_SUCCESS or an MPI_ERR_OP code naming both. */
int wh_op_check(const wh_op_t *op, const wh_dtype_t *t);
/* inout[i] = in[i] op inout[i] for count elements of type t (the MPI order:
 * `in` comes from the lower rank).  Handles MPI_REPLACE and MPI_NO_OP. */
int wh_op_apply(const wh_op_t *op, const void *in, void *inout, size_t count, MPI_Datatype th, const wh_dtype_t *t);
#endif
