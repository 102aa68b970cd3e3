/* One-sided operations with CUDA device origin and result buffers (the
 * emulated driver): MPI_Put/Get/Accumulate in fence epochs, Get_accumulate,
 * Fetch_and_op, Compare_and_swap and MPI_Rget under locks, a strided origin
 * type on device memory (windows over device memory: gpu_rmawin.c). */
#include "gpu_common.h"

enum { N = 5000 };

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int *base;
    MPI_Win win;
    MPI_Win_allocate(3 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 3 * N; i++)
        base[i] = -1;
    int *h = malloc(N * sizeof(int)), *want = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        h[i] = rank * 1000003 + i;
    void *d = dev_from(h, N * sizeof(int));
    void *g = dev_from(NULL, N * sizeof(int));

    /* fence: put my ints into right's [0, N), accumulate them into [N, 2N) twice */
    MPI_Win_fence(0, win);
    MPI_Put(d, N, MPI_INT, right, 0, N, MPI_INT, win);
    MPI_Accumulate(d, N, MPI_INT, right, N, N, MPI_INT, MPI_REPLACE, win);
    MPI_Win_fence(0, win);
    MPI_Accumulate(d, N, MPI_INT, right, N, N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        CHECK(base[i] == left * 1000003 + i);
        CHECK(base[N + i] == 2 * (left * 1000003 + i));
    }
    /* get left's [0, N) (= what left-of-left put) into device memory */
    MPI_Get(g, N, MPI_INT, left, 0, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    int ll = (left + nprocs - 1) % nprocs;
    for (int i = 0; i < N; i++)
        want[i] = ll * 1000003 + i;
    check_ints(g, want, N, "get into device memory");

    /* a strided device origin: every other int of 2N goes to right's [2N, 3N) */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Put(d, 1, vec, right, 2 * N, N / 2, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        CHECK(base[2 * N + i] == left * 1000003 + 2 * i);
    MPI_Type_free(&vec);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* passive target: fetch-and-op, compare-and-swap, get-accumulate, rget */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    int one = 1;
    void *dop = dev_from(&one, sizeof one), *dres = dev_from(NULL, sizeof(int));
    MPI_Fetch_and_op(dop, dres, MPI_INT, right, 2 * N + N / 2, MPI_SUM, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    int exp_old = -1;
    check_ints(dres, &exp_old, 1, "fetch_and_op result");
    CHECK(base[2 * N + N / 2] == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    int cmpv = 0, newv = 4242;
    void *dcmp = dev_from(&cmpv, sizeof cmpv), *dnew = dev_from(&newv, sizeof newv);
    MPI_Compare_and_swap(dnew, dcmp, dres, MPI_INT, right, 2 * N + N / 2, win);
    MPI_Win_unlock(right, win);
    int exp0 = 0;
    check_ints(dres, &exp0, 1, "compare_and_swap result");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(base[2 * N + N / 2] == 4242);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Get_accumulate(d, N, MPI_INT, g, N, MPI_INT, right, N, N, MPI_INT, MPI_SUM, win);
    MPI_Win_unlock(right, win);
    for (int i = 0; i < N; i++)
        want[i] = 2 * h[i]; /* right's [N, 2N) held twice my ints */
    check_ints(g, want, N, "get_accumulate result");
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(base[N + i] == 3 * (left * 1000003 + i));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    MPI_Request q;
    void *g2 = dev_from(NULL, N * sizeof(int));
    MPI_Rget(g2, N, MPI_INT, right, N, N, MPI_INT, win, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(win);
    for (int i = 0; i < N; i++)
        want[i] = 3 * h[i];
    check_ints(g2, want, N, "rget into device memory");
    MPI_Win_free(&win);


    dev_free(d);
    dev_free(g);
    dev_free(g2);
    dev_free(dop);
    dev_free(dres);
    dev_free(dcmp);
    dev_free(dnew);
    free(h);
    free(want);
    return gpu_finish("gpu rma");
}
