/* One-sided error classes with MPI_ERRORS_RETURN on the window: epoch misuse
 * (MPI_ERR_RMA_SYNC), out-of-window access (MPI_ERR_RMA_RANGE), flavor misuse
 * (MPI_ERR_RMA_FLAVOR), bad rank, lock type, op, window handle; the default
 * handler; a user window error handler and MPI_Win_call_errhandler; window
 * attributes with keyvals and their delete callbacks. */
#include "p2p_check.h"

static int handler_calls, handler_code;
static MPI_Win handler_win;

static void on_error(MPI_Win *win, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_win = *win;
}

static int deletes;
static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)win;
    (void)keyval;
    (void)extra;
    deletes += (int)(long)val;
    return MPI_SUCCESS;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    int *mem = calloc(8, sizeof(int));
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Errhandler eh;
    MPI_OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default window handler 0x%x", (unsigned)eh);
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int x = 1, y = 0;

    p2p_setstep("epochs");
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_flush_all(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_wait(win));
    int flag;
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_test(win, &flag));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock_all(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
    MPI_OK(MPI_Win_unlock(me, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MPI_OK(MPI_Win_unlock_all(win));
    /* after a fence with NOSUCCEED no epoch is open */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    /* a fence followed by a lock opened no fence epoch: none is open after the unlock,
     * nor after MPI_Win_unlock_all (MPICH's errors/rma/win_sync_lock_fence) */
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_OK(MPI_Get(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Get(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_FAILS(MPI_ERR_RMA_SYNC, MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win));

    p2p_setstep("arguments");
    MPI_OK(MPI_Win_fence(0, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Put(&x, 1, MPI_INT, 0, 8, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Get(&y, 2, MPI_INT, 0, 7, 2, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Put(&x, 1, MPI_INT, 0, -1, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RANK, MPI_Put(&x, 1, MPI_INT, n, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Put(&x, -1, MPI_INT, 0, 0, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Put(&x, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win));
    /* compare-and-swap: integer, logical, byte, multi-language types only */
    {
        MPI_Datatype four;
        MPI_OK(MPI_Type_contiguous(4, MPI_BYTE, &four));
        MPI_OK(MPI_Type_commit(&four));
        static int a, b, c; /* the valid one completes at the next fence, after this block */
        static float fa, fb, fc;
        MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&a, &b, &c, four, 0, 0, win));
        MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&fa, &fb, &fc, MPI_FLOAT, 0, 0, win));
        MPI_FAILS(MPI_ERR_TYPE, MPI_Compare_and_swap(&a, &b, &c, MPI_2INT, 0, 0, win));
        MPI_OK(MPI_Compare_and_swap(&a, &b, &c, MPI_INT, 0, 0, win));
        MPI_OK(MPI_Type_free(&four));
    }
    MPI_Op uop;
    MPI_OK(MPI_Op_create(user_sum, 1, &uop));
    MPI_FAILS(MPI_ERR_OP, MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win));
    MPI_FAILS(MPI_ERR_OP, MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, win));
    MPI_OK(MPI_Op_free(&uop));
    /* nothing to move: accepted whatever the types (MPICH's rma/badrma) */
    {
        MPI_Datatype empty;
        MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
        MPI_OK(MPI_Type_commit(&empty));
        double d = 0;
        MPI_OK(MPI_Accumulate(&d, 0, MPI_DOUBLE, 0, 0, 0, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(NULL, 1, empty, 0, 0, 0, MPI_DOUBLE, MPI_SUM, win));
        MPI_OK(MPI_Get_accumulate(&d, 0, MPI_DOUBLE, &y, 0, MPI_INT, 0, 0, 1, empty, MPI_SUM, win));
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_INT, NULL, 1, empty, 0, 0, 0, MPI_DOUBLE, MPI_SUM, win));
        MPI_OK(MPI_Type_free(&empty));
    }
    MPI_OK(MPI_Win_fence(0, win));
    MPI_FAILS(MPI_ERR_LOCKTYPE, MPI_Win_lock(12345, 0, 0, win));
    MPI_Aint qs;
    int qd;
    void *qp;
    /* MPI-4.1: a Win_create window reports the memory this process can load
     * and store: its own, and size 0 / NULL for the others */
    MPI_OK(MPI_Win_shared_query(win, me, &qs, &qd, &qp));
    CHECK(qs == (MPI_Aint)(8 * sizeof(int)) && qd == (int)sizeof(int) && qp == (void *)mem,
          "shared_query of my own Win_create memory: size %ld disp %d base %p", (long)qs, qd, qp);
    if (n > 1) {
        MPI_OK(MPI_Win_shared_query(win, (me + 1) % n, &qs, &qd, &qp));
        CHECK(qs == 0 && qp == NULL, "shared_query of a peer's private Win_create memory: size %ld base %p", (long)qs,
              qp);
    }
    /* MPI_PROC_NULL: the lowest rank with memory (rank 0 here), so only rank 0 sees memory */
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qd, &qp));
    CHECK(me == 0 ? (qs == (MPI_Aint)(8 * sizeof(int)) && qp == (void *)mem) : (qs == 0 && qp == NULL),
          "shared_query(MPI_PROC_NULL) of Win_create memory on rank %d: size %ld base %p", me, (long)qs, qp);
    MPI_FAILS(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(win, mem, 4));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_WIN, MPI_Win_fence(0, MPI_WIN_NULL));
    MPI_FAILS(MPI_ERR_WIN, MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, (MPI_Win)0xa0001234));
    MPI_Win bad;
    MPI_FAILS(MPI_ERR_DISP, MPI_Win_create(mem, 8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad));
    MPI_FAILS(MPI_ERR_SIZE, MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &qp, &bad));

    p2p_setstep("user handler");
    MPI_Errhandler uh;
    MPI_OK(MPI_Win_create_errhandler(on_error, &uh));
    MPI_OK(MPI_Win_set_errhandler(win, uh));
    MPI_OK(MPI_Errhandler_free(&uh));
    int rc = MPI_Win_unlock(0, win);
    int cls;
    MPI_Error_class(handler_code, &cls);
    CHECK(handler_calls == 1 && cls == MPI_ERR_RMA_SYNC && handler_win == win && rc == handler_code,
          "handler calls %d, class %d, rc %d", handler_calls, cls, rc);
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler: calls %d code %d", handler_calls,
          handler_code);
    MPI_OK(MPI_Win_get_errhandler(win, &uh));
    MPI_OK(MPI_Errhandler_free(&uh));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    p2p_setstep("attributes");
    int kv;
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL));
    MPI_OK(MPI_Win_set_attr(win, kv, (void *)(long)5));
    void *val;
    MPI_OK(MPI_Win_get_attr(win, kv, &val, &flag));
    CHECK(flag && val == (void *)(long)5, "attribute %p", val);
    MPI_OK(MPI_Win_set_attr(win, kv, (void *)(long)7)); /* replaces: deletes 5 */
    CHECK(deletes == 5, "deletes %d after replace", deletes);
    MPI_OK(MPI_Win_delete_attr(win, kv));
    CHECK(deletes == 12, "deletes %d after delete", deletes);
    MPI_OK(MPI_Win_get_attr(win, kv, &val, &flag));
    CHECK(!flag, "attribute still set");
    MPI_OK(MPI_Win_set_attr(win, kv, (void *)(long)100));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, MPI_WIN_BASE, NULL));
    MPI_OK(MPI_Win_free_keyval(&kv));
    MPI_OK(MPI_Win_free(&win)); /* runs the delete callback */
    CHECK(deletes == 112, "deletes %d after free", deletes);
    free(mem);
    MPI_Finalize();
    if (me == 0)
        printf("rma_errors: OK on %d ranks\n", n);
    return 0;
}
