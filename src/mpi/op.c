/* MPI entry points for reduction operations: MPI_Op_create(_c), MPI_Op_free,
 * MPI_Op_commutative and MPI_Reduce_local(_c).  Errors are raised on the
 * default handler (no communicator is involved). */
#include "mpi/coll_dev.h"
#include "mpi/reqapi.h"
#include "op/op.h"

static int bad_op(const char *fname, MPI_Op h)
{
    if (h == MPI_OP_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OP, "op is MPI_OP_NULL"));
    return wh_raise_comm(NULL, fname,
                         wh_error(MPI_ERR_OP, "op 0x%x is not a valid operation (freed or never created)", (unsigned)h));
}

static int op_create(const char *fname, MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    if (!fn && !fn_c)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "user_fn is NULL"));
    if (!op)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "op is NULL"));
    wh_op_t *o = wh_op_create(fn, fn_c, commute);
    if (!o)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory creating an op"));
    *op = o->obj.handle;
    return MPI_SUCCESS;
}

static int body_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", user_fn, NULL, commute, op);
}

static int body_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", NULL, user_fn, commute, op);
}

static int body_Op_free(MPI_Op *op)
{
    if (!op)
        return wh_raise_comm(NULL, "MPI_Op_free", wh_error(MPI_ERR_ARG, "op is NULL"));
    wh_op_t *o = wh_op_get(*op);
    if (!o)
        return bad_op("MPI_Op_free", *op);
    if (o->builtin > 0)
        return wh_raise_comm(NULL, "MPI_Op_free",
                             wh_error(MPI_ERR_OP, "%s is a predefined operation and cannot be freed", wh_op_name(o)));
    wh_op_release(o); /* pending operations may still hold references */
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

static int body_Op_commutative(MPI_Op op, int *commute)
{
    wh_op_t *o = wh_op_get(op);
    if (!o)
        return bad_op("MPI_Op_commutative", op);
    if (!commute)
        return wh_raise_comm(NULL, "MPI_Op_commutative", wh_error(MPI_ERR_ARG, "commute is NULL"));
    *commute = o->commute;
    return MPI_SUCCESS;
}

static int reduce_local(const char *fname, const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype dth,
                        MPI_Op oph)
{
    wh_dtype_t *dt;
    int rc;
    if (count < 0)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COUNT, "count is negative (%lld)", (long long)count));
    if ((rc = wh_dtype_check_comm(dth, &dt)) != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    wh_op_t *op = wh_op_get(oph);
    if (!op)
        return bad_op(fname, oph);
    if ((rc = wh_op_check_reduce(op, dt)) != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    if (count > 0 && dt->size > 0) {
        if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
            return wh_raise_comm(NULL, fname,
                                 wh_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in MPI_Reduce_local"));
        if (inbuf == inoutbuf)
            return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_BUFFER, "inbuf and inoutbuf are the same buffer"));
        if ((!inbuf || !inoutbuf) && dt->predefined)
            return wh_raise_comm(NULL, fname,
                                 wh_error(MPI_ERR_BUFFER, "%s is NULL but count is %lld", !inbuf ? "inbuf" : "inoutbuf",
                                          (long long)count));
    }
    WH_CDEV_STAGE(fname, NULL, NULL, (wh_cdev_buf(&inbuf, count, dt, WH_CDEV_IN),
                                      wh_cdev_buf(&inoutbuf, count, dt, WH_CDEV_INOUT)));
    rc = wh_op_apply(op, inbuf, inoutbuf, (size_t)count, dth, dt);
    if (WH_CDEV_ON() && wh_cdev_cur.n)
        rc = wh_cdev_finish(rc); /* device buffers go back */
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, fname, rc);
}

static int body_Reduce_local(const char *fname, const void *inbuf, void *inoutbuf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Op op)
{
    return reduce_local(fname, inbuf, inoutbuf, count, datatype, op);
}

#include "entry/op.h"
