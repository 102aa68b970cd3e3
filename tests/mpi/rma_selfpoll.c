/* Passive-target progress while a process only talks to itself: rank 0
 * spins on its own memory of a dynamic window (lock/get/unlock of itself, then
 * lock_all + get + flush of itself) until other ranks change it.  Those
 * changes arrive as messages rank 0 must poll for: every lock, unlock and
 * flush polls once, even when the self channel satisfies it at once (else
 * rank 0 never grants the others' locks nor applies their puts: livelock).
 * Found by MPICH's rma/linked_list_bench_lock_excl and _lock_all.  Bounded:
 * rank 0 gives up after 20 s and fails. */
#include "p2p_check.h"

static void spin_until(MPI_Win win, int *cell, MPI_Aint disp, int want, int use_lock)
{
    double t0 = MPI_Wtime();
    int v = -1;
    for (;;) {
        if (use_lock)
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Get(&v, 1, MPI_INT, 0, disp, 1, MPI_INT, win));
        if (use_lock)
            MPI_OK(MPI_Win_unlock(0, win));
        else
            MPI_OK(MPI_Win_flush(0, win));
        if (v == want)
            return;
        CHECK(MPI_Wtime() - t0 < 20.0, "still %d after 20 s, want %d (cell %d): others' operations not served", v,
              want, *cell);
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *cell = NULL;
    MPI_Aint disp = 0;
    if (me == 0) {
        MPI_OK(MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &cell));
        *cell = 0;
        MPI_OK(MPI_Win_attach(win, cell, sizeof(int)));
        MPI_OK(MPI_Get_address(cell, &disp));
    }
    MPI_OK(MPI_Bcast(&disp, 1, MPI_AINT, 0, MPI_COMM_WORLD));

    /* 1: exclusive locks; every other rank adds 1 under its own exclusive lock */
    p2p_setstep("lock/unlock");
    if (me == 0) {
        spin_until(win, cell, disp, n - 1, 1);
    } else {
        int one = 1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, disp, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 2: lock_all and flush; every other rank adds 1 more */
    p2p_setstep("lock_all/flush");
    MPI_OK(MPI_Win_lock_all(0, win));
    if (me == 0) {
        spin_until(win, cell, disp, 2 * (n - 1), 0);
    } else {
        int one = 1;
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, disp, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        CHECK(*cell == 2 * (n - 1), "final %d, want %d", *cell, 2 * (n - 1));
        MPI_OK(MPI_Win_detach(win, cell));
    }
    MPI_OK(MPI_Win_free(&win));
    if (cell)
        MPI_OK(MPI_Free_mem(cell));
    MPI_Finalize();
    if (me == 0)
        printf("rma_selfpoll: OK on %d ranks\n", n);
    return 0;
}
