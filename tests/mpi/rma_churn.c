/* Windows made and freed over and over beside long-lived ones, as coarray
 * runtimes do (OpenCoarrays: MPI_Win_allocate per coarray, lock_all with
 * MPI_MODE_NOCHECK, get/put plus flush, barriers for SYNC ALL).  Each round
 * every rank allocates two windows of sizes that change from round to round
 * (so node-heap chunks and communicator blocks are reused in new layouts),
 * stores a value that names rank and round, passes a barrier on a duplicate
 * of the world, reads its left neighbour's windows and adds to its right
 * neighbour's, passes another barrier, checks what arrived and frees.  Two
 * windows made before the first round hold values that must survive every
 * other window's and communicator's creation and freeing: memory handed out
 * twice or freed too early shows up as a wrong or zeroed value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 200
#define N 3 /* ints per coarray, as in OpenCoarrays' increment_my_neighbor */

static int rank, nranks, fails;

#define CHECK_RANK rank
#define CHECK_FAILS fails
#include "count_check.h"

static int val(int r, int round, int which) { return 1000000 * which + 1000 * round + r + 1; }

/* the long-lived windows still hold what each rank stored at the start (a
 * read of the left neighbour's and of this rank's own) */
static void check_kept(MPI_Win w, const int *mine, int which, int left, int round)
{
    int got[N];
    MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, w);
    MPI_Win_flush(left, w);
    for (int i = 0; i < N; i++) {
        CHECK(got[i] == val(left, 0, which), "round %d: long-lived window %d of rank %d holds %d, not %d", round,
              which, left, got[i], val(left, 0, which));
        CHECK(mine[i] == val(rank, 0, which), "round %d: own long-lived window %d holds %d, not %d", round, which,
              mine[i], val(rank, 0, which));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm cw;
    MPI_Comm_dup(MPI_COMM_WORLD, &cw);
    MPI_Comm_rank(cw, &rank);
    MPI_Comm_size(cw, &nranks);
    int left = (rank + nranks - 1) % nranks, right = (rank + 1) % nranks;

    int *k1, *k2;
    MPI_Win wk1, wk2;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, cw, &k1, &wk1);
    MPI_Win_allocate(5000, 1, MPI_INFO_NULL, cw, &k2, &wk2);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, wk1);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, wk2);
    for (int i = 0; i < N; i++) {
        k1[i] = val(rank, 0, 1);
        k2[i] = val(rank, 0, 2);
    }
    MPI_Barrier(cw);

    for (int round = 1; round <= ROUNDS; round++) { /* every round on every rank: collectives */
        int *a, *b;
        MPI_Win wa, wb;
        MPI_Aint bsize = (MPI_Aint)(N * sizeof(int)) + (round % 7) * 4096 + (round % 3) * 100;
        MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, cw, &a, &wa);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, wa);
        MPI_Win_allocate(bsize, 1, MPI_INFO_NULL, cw, &b, &wb);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, wb);
        for (int i = 0; i < N; i++) {
            a[i] = val(rank, round, 3);
            b[i] = val(rank, round, 4);
        }
        MPI_Barrier(cw); /* SYNC ALL */

        int got[N], add[N];
        MPI_Get(got, N, MPI_INT, left, 0, N, MPI_INT, wb);
        MPI_Win_flush(left, wb);
        for (int i = 0; i < N; i++) {
            CHECK(got[i] == val(left, round, 4), "round %d: rank %d's new window holds %d, not %d (read after the "
                  "barrier)", round, left, got[i], val(left, round, 4));
            add[i] = rank + 1;
        }
        MPI_Accumulate(add, N, MPI_INT, right, 0, N, MPI_INT, MPI_SUM, wa);
        MPI_Win_flush(right, wa);
        check_kept(wk1, k1, 1, left, round);
        MPI_Barrier(cw);

        MPI_Win_sync(wa);
        for (int i = 0; i < N; i++)
            CHECK(a[i] == val(rank, round, 3) + left + 1, "round %d: own window holds %d after rank %d's "
                  "accumulate, not %d", round, a[i], left, val(rank, round, 3) + left + 1);
        check_kept(wk2, k2, 2, left, round);
        MPI_Barrier(cw); /* nobody still reads a or b */

        MPI_Win_unlock_all(wb);
        MPI_Win_free(&wb);
        MPI_Win_unlock_all(wa);
        MPI_Win_free(&wa);
    }

    MPI_Win_unlock_all(wk2);
    MPI_Win_unlock_all(wk1);
    MPI_Win_free(&wk2);
    MPI_Win_free(&wk1);
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, cw);
    MPI_Comm_free(&cw);
    if (rank == 0)
        printf(all ? "rma_churn: %d failures\n" : "rma_churn: ok (%d ranks)\n", all ? all : nranks);
    MPI_Finalize();
    return all != 0;
}
