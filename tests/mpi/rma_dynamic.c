/* MPI_Win_create_dynamic: attach regions, exchange their addresses, put, get
 * and accumulate by absolute address under lock_all and fence, detach;
 * attach errors and an access to memory nobody attached (reported by the
 * target, raised at the flush as MPI_ERR_RMA_RANGE). */
#include "p2p_check.h"

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    void *v;
    int flag;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", *(int *)v);

    p2p_setstep("attach");
    enum { M = 20000 };
    int *a = calloc(M, sizeof(int)), *b = calloc(16, sizeof(int));
    MPI_OK(MPI_Win_attach(win, a, M * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, b, 16 * sizeof(int)));
    MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_attach(win, a + 10, 4));  /* overlaps a */
    MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, a + 1));      /* not a base */
    MPI_Aint mine[2], *all = malloc(2 * sizeof(MPI_Aint) * (size_t)n);
    MPI_OK(MPI_Get_address(a, &mine[0]));
    MPI_OK(MPI_Get_address(b, &mine[1]));
    MPI_OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));

    p2p_setstep("lock_all put/get/acc");
    int *src = malloc(M * sizeof(int)), *dst = malloc(M * sizeof(int));
    for (int i = 0; i < M; i++)
        src[i] = me * M + i;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Put(src, M, MPI_INT, right, all[2 * right], M, MPI_INT, win));
    int one = 1;
    for (int t = 0; t < n; t++)
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, MPI_Aint_add(all[2 * t + 1], 3 * sizeof(int)), 1, MPI_INT,
                              MPI_SUM, win));
    MPI_OK(MPI_Win_flush_all(win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < M; i++)
        CHECK(a[i] == left * M + i, "a[%d] = %d", i, a[i]);
    CHECK(b[3] == n, "b[3] = %d", b[3]);
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(dst, M, MPI_INT, left, all[2 * left], M, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    int ll = (left + n - 1) % n;
    for (int i = 0; i < M; i++)
        CHECK(dst[i] == ll * M + i, "got [%d] = %d", i, dst[i]);

    /* an address nobody attached: the target refuses, the flush reports it */
    p2p_setstep("unattached");
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MPI_OK(MPI_Put(&one, 1, MPI_INT, right, MPI_Aint_add(all[2 * right + 1], 4096 * 1024), 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Win_flush(right, win));
    /* answered operations need no flush request: the refusal rides on their reply */
    MPI_Aint bad = MPI_Aint_add(all[2 * right + 1], 4096 * 1024);
    int g = -1, old = -1;
    MPI_OK(MPI_Get(&g, 1, MPI_INT, right, bad, 1, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Win_flush(right, win));
    MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, right, bad, MPI_SUM, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(&g, 1, MPI_INT, right, all[2 * right], 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win)); /* reported once */
    CHECK(g == me * M, "get after the refused ones: %d", g); /* right's a[0], written by me */
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Win_fence(0, win));

    /* two regions attached back to back: one access may span both (as MPICH;
       its rma/win_dynamic_rma_flush_get), one past their end is refused */
    p2p_setstep("adjacent regions");
    int *c = calloc(64, sizeof(int)), w[40];
    MPI_OK(MPI_Win_attach(win, c, 32 * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, c + 32, 32 * sizeof(int)));
    MPI_Aint cad, *call = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_OK(MPI_Get_address(c, &cad));
    MPI_OK(MPI_Allgather(&cad, 1, MPI_AINT, call, 1, MPI_AINT, MPI_COMM_WORLD));
    for (int i = 0; i < 40; i++)
        w[i] = 1000 * me + i;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    MPI_OK(MPI_Put(w, 40, MPI_INT, right, MPI_Aint_add(call[right], 16 * sizeof(int)), 40, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Put(w, 40, MPI_INT, right, MPI_Aint_add(call[right], 32 * sizeof(int)), 40, MPI_INT, win));
    MPI_FAILS(MPI_ERR_RMA_RANGE, MPI_Win_flush(right, win));
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 64; i++)
        CHECK(c[i] == (i >= 16 && i < 56 ? 1000 * left + i - 16 : 0), "c[%d] = %d", i, c[i]);
    MPI_OK(MPI_Win_detach(win, c));
    MPI_OK(MPI_Win_detach(win, c + 32));
    free(c);
    free(call);

    p2p_setstep("detach");
    MPI_OK(MPI_Win_detach(win, a));
    MPI_OK(MPI_Win_detach(win, b));
    MPI_FAILS(MPI_ERR_RMA_ATTACH, MPI_Win_detach(win, b));
    MPI_OK(MPI_Win_free(&win));
    free(a);
    free(b);
    free(all);
    free(src);
    free(dst);
    MPI_Finalize();
    if (me == 0)
        printf("rma_dynamic: OK on %d ranks\n", n);
    return 0;
}
