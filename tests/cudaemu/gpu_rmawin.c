/* Windows over CUDA device memory (the emulated driver, whose device memory
 * the cpu cannot touch: a direct load, store, CMA or memcpy into a window
 * crashes the test): MPI_Win_create over device memory with puts, gets and
 * accumulates from host and device origins in fence epochs, a strided target
 * layout, MINLOC on MPI_DOUBLE_INT (an element type with a gap), concurrent
 * accumulates of every rank to one element, fetch-and-op, compare-and-swap,
 * get-accumulate, request-based operations, a get larger than the target
 * stages at once, operations on a rank's own
 * device window, and a dynamic window with device memory attached beside
 * host memory. */
#include "gpu_common.h"

enum { N = 3000, K = 50 };

static int val(int r, int i)
{
    return r * 1000003 + i;
}

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int *h = malloc(3 * N * sizeof(int)), *want = malloc(3 * N * sizeof(int)), *got = malloc(N * sizeof(int));
    for (int i = 0; i < 3 * N; i++)
        h[i] = i < N || i >= 2 * N ? -1 : 0;
    int *wd = dev_from(h, 3 * N * sizeof(int)); /* the window: [0,N) puts, [N,2N) sums, [2N,3N) strided */
    for (int i = 0; i < N; i++)
        h[i] = val(rank, i);
    void *d = dev_from(h, N * sizeof(int));
    MPI_Win win;
    CHECK(MPI_Win_create(wd, 3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win) == MPI_SUCCESS);

    /* fence: a host-origin put, device- and host-origin accumulates, a strided target */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Win_fence(0, win);
    MPI_Put(h, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Accumulate(d, N, MPI_INT, right, N, N, MPI_INT, MPI_SUM, win);
    MPI_Accumulate(h, N, MPI_INT, right, N, N, MPI_INT, MPI_SUM, win);
    MPI_Put(h, N / 2, MPI_INT, right, 2 * N, 1, vec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        want[i] = val(left, i);
        want[N + i] = 2 * val(left, i);
        want[2 * N + i] = i % 2 ? -1 : val(left, i / 2);
    }
    check_ints(wd, want, 3 * N, "device window after puts and accumulates");
    /* gets out of a device window into host and device memory */
    void *g = dev_from(NULL, N * sizeof(int));
    MPI_Get(got, N, MPI_INT, left, N, N, MPI_INT, win);
    MPI_Get(g, N / 2, MPI_INT, left, 2 * N, 1, vec, win);
    MPI_Win_fence(0, win);
    int ll = (left + nprocs - 1) % nprocs;
    for (int i = 0; i < N; i++)
        CHECK(got[i] == 2 * val(ll, i));
    for (int i = 0; i < N / 2; i++)
        want[i] = val(ll, i);
    check_ints(g, want, N / 2, "strided get from a device window into device memory");
    /* my own device window, through my own handlers */
    int mine[4] = {7, 8, 9, 10}, back[4] = {0};
    MPI_Put(mine, 4, MPI_INT, rank, 2 * N + 1, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(back, 4, MPI_INT, rank, 2 * N + 1, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    CHECK(back[0] == 7 && back[3] == 10);

    /* passive target: every rank adds 1 to rank 0's element 0 of [N,2N) K times, at once */
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1, base0 = 0;
    if (rank == 0) {
        int *w0 = dev_get(wd, 3 * N * sizeof(int));
        base0 = w0[N];
        free(w0);
    }
    MPI_Bcast(&base0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (int k = 0; k < K; k++)
        MPI_Accumulate(&one, 1, MPI_INT, 0, N, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int *w0 = dev_get(wd, 3 * N * sizeof(int));
        CHECK(w0[N] == base0 + nprocs * K);
        free(w0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* fetch-and-op, compare-and-swap, get-accumulate, request-based, on right's window */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    int old = 0, cmp = -1, nv = 4242, res = 0;
    MPI_Fetch_and_op(&one, &old, MPI_INT, right, 2 * N + 1, MPI_SUM, win); /* right put 7 there itself */
    MPI_Win_flush(right, win);
    CHECK(old == 7);
    cmp = 8;
    MPI_Compare_and_swap(&nv, &cmp, &res, MPI_INT, right, 2 * N + 1, win);
    MPI_Win_flush(right, win);
    CHECK(res == 8);
    MPI_Get_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, right, 2 * N + 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(right, win);
    CHECK(res == 4242);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Request q[2];
    int r4[2] = {0, 0};
    MPI_Rput(mine, 2, MPI_INT, right, 2 * N + 2, 2, MPI_INT, win, &q[0]);
    MPI_Win_flush(right, win);
    MPI_Rget(r4, 2, MPI_INT, right, 2 * N + 1, 2, MPI_INT, win, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(win);
    CHECK(r4[0] == 4243 && r4[1] == 7);
    MPI_Win_free(&win);

    /* a get larger than the target stages at once (1 MiB) */
    enum { BIG = 640 * 1024 };
    int *bh = malloc(BIG * sizeof(int)), *bg = malloc(BIG * sizeof(int));
    for (int i = 0; i < BIG; i++)
        bh[i] = val(rank, i);
    void *bd = dev_from(bh, BIG * sizeof(int));
    MPI_Win_create(bd, BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(bg, BIG, MPI_INT, left, 0, BIG, MPI_INT, win);
    MPI_Win_unlock(left, win);
    MPI_Win_free(&win);
    int bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += bg[i] != val(left, i);
    CHECK(bad == 0);
    dev_free(bd);
    free(bh);
    free(bg);

    /* MINLOC on pairs with a gap (MPI_DOUBLE_INT): the smallest value is rank's */
    struct di { double v; int i; } pr[8], *ph = malloc(8 * sizeof *ph);
    for (int i = 0; i < 8; i++)
        pr[i].v = 100.0 + i, pr[i].i = -1;
    struct di *pd = dev_from(pr, sizeof pr);
    MPI_Win_create(pd, sizeof pr, sizeof pr[0], MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int i = 0; i < 8; i++)
        pr[i].v = (double)((rank + i) % nprocs), pr[i].i = rank;
    MPI_Win_fence(0, win);
    MPI_Accumulate(pr, 8, MPI_DOUBLE_INT, 0, 0, 8, MPI_DOUBLE_INT, MPI_MINLOC, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    if (rank == 0) {
        struct di *r = dev_get(pd, sizeof pr);
        for (int i = 0; i < 8; i++) /* value 0 comes from rank (nprocs - i) % nprocs */
            CHECK(r[i].v == 0.0 && r[i].i == (nprocs - i % nprocs) % nprocs);
        free(r);
    }

    /* dynamic window: device memory attached beside host memory */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *dd = dev_from(NULL, N * sizeof(int)), hmem[4] = {0};
    MPI_Win_attach(win, dd, N * sizeof(int));
    MPI_Win_attach(win, hmem, sizeof hmem);
    MPI_Aint addr[2], all[2 * 64];
    MPI_Get_address(dd, &addr[0]);
    MPI_Get_address(hmem, &addr[1]);
    MPI_Allgather(addr, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_fence(0, win);
    MPI_Put(d, N, MPI_INT, right, all[2 * right], N, MPI_INT, win);
    MPI_Put(mine, 4, MPI_INT, right, all[2 * right + 1], 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        want[i] = val(left, i);
    check_ints(dd, want, N, "dynamic window's device region");
    CHECK(hmem[2] == 9);
    memset(got, 0, N * sizeof(int));
    MPI_Get(got, N, MPI_INT, left, all[2 * left], N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == val(ll, i));
    MPI_Win_detach(win, dd);
    MPI_Win_detach(win, hmem);
    MPI_Win_free(&win);

    MPI_Type_free(&vec);
    dev_free(wd);
    dev_free(d);
    dev_free(g);
    dev_free(pd);
    dev_free(dd);
    free(h);
    free(want);
    free(got);
    free(ph);
    return gpu_finish("gpu rma windows");
}
