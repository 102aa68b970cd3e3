/* Synchronization modes: fence with assertions (the standard's halo example),
 * post/start/complete/wait and test (a ring, as in the standard's PSCW
 * example), exclusive locks as a mutex protecting a non-atomic
 * read-modify-write, lock_all with flush and flush_local, MODE_NOCHECK,
 * Win_sync with shared locks on my own window.  Both window kinds. */
#include "p2p_check.h"

#define N 16

static void make_win(int flavor, MPI_Aint size, int du, void *baseptr, MPI_Win *win)
{
    if (!flavor) {
        MPI_OK(MPI_Win_allocate(size, du, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win));
        memset(*(void **)baseptr, 0, (size_t)size);
        return;
    }
    void *m = calloc(1, (size_t)size);
    CHECK(m != NULL, "out of memory");
    *(void **)baseptr = m;
    MPI_OK(MPI_Win_create(m, size, du, MPI_INFO_NULL, MPI_COMM_WORLD, win));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        int *m;
        make_win(flavor, (2 * N + 8) * (MPI_Aint)sizeof(int), sizeof(int), &m, &win);

        /* ---- fence: halo exchange, several rounds, with assertions ---- */
        p2p_setstep("flavor %d fence", flavor);
        int halo[N];
        MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        for (int round = 0; round < 5; round++) {
            for (int i = 0; i < N; i++)
                halo[i] = round * 1000 + me * 10 + i;
            /* my row into the right neighbour's left halo [0,N) */
            MPI_OK(MPI_Put(halo, N, MPI_INT, right, 0, N, MPI_INT, win));
            MPI_OK(MPI_Win_fence(MPI_MODE_NOSTORE, win));
            for (int i = 0; i < N; i++)
                CHECK(m[i] == round * 1000 + left * 10 + i, "round %d halo %d = %d", round, i, m[i]);
            MPI_OK(MPI_Win_fence(0, win));
        }
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

        /* ---- PSCW: each rank exposes to its left, accesses its right ---- */
        p2p_setstep("flavor %d pscw", flavor);
        MPI_Group world, lg, rg;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        MPI_OK(MPI_Group_incl(world, 1, &left, &lg));
        MPI_OK(MPI_Group_incl(world, 1, &right, &rg));
        for (int round = 0; round < 4; round++) {
            MPI_OK(MPI_Win_post(lg, 0, win));
            MPI_OK(MPI_Win_start(rg, 0, win));
            int val = round * 100 + me;
            MPI_OK(MPI_Put(&val, 1, MPI_INT, right, N, 1, MPI_INT, win));
            int g = -1;
            MPI_OK(MPI_Get(&g, 1, MPI_INT, right, N + 1, 1, MPI_INT, win));
            MPI_OK(MPI_Win_complete(win));
            CHECK(g == (round ? (round - 1) * 7 + right : 0), "pscw get %d round %d", g, round);
            if (round & 1) {
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Win_test(win, &flag));
            } else {
                MPI_OK(MPI_Win_wait(win));
            }
            CHECK(m[N] == round * 100 + left, "pscw round %d: %d", round, m[N]);
            m[N + 1] = round * 7 + me; /* read by the left neighbour next round */
        }
        /* NOCHECK on both sides: the barrier orders post before start */
        MPI_OK(MPI_Win_post(lg, MPI_MODE_NOCHECK, win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_start(rg, MPI_MODE_NOCHECK, win));
        int nv = 4242 + me;
        MPI_OK(MPI_Put(&nv, 1, MPI_INT, right, N + 2, 1, MPI_INT, win));
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Win_wait(win));
        CHECK(m[N + 2] == 4242 + left, "nocheck pscw %d", m[N + 2]);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
        MPI_Group_free(&world);

        /* ---- exclusive lock as a mutex: get, add, put on rank 0 ---- */
        p2p_setstep("flavor %d mutex", flavor);
        if (me == 0)
            m[N + 3] = 0;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        for (int i = 0; i < 30; i++) {
            int c = -1;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            MPI_OK(MPI_Get(&c, 1, MPI_INT, 0, N + 3, 1, MPI_INT, win));
            MPI_OK(MPI_Win_flush(0, win));
            c++;
            MPI_OK(MPI_Put(&c, 1, MPI_INT, 0, N + 3, 1, MPI_INT, win));
            MPI_OK(MPI_Win_unlock(0, win));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MPI_OK(MPI_Win_sync(win));
            CHECK(m[N + 3] == 30 * n, "mutex counter %d, expected %d", m[N + 3], 30 * n);
            MPI_OK(MPI_Win_unlock(0, win));
        }

        /* ---- lock_all, flush_local, flush_all ---- */
        p2p_setstep("flavor %d lock_all", flavor);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock_all(0, win));
        int src = 77 + me;
        for (int t = 0; t < n; t++) {
            MPI_OK(MPI_Put(&src, 1, MPI_INT, t, N + 4, 1, MPI_INT, win));
            MPI_OK(MPI_Win_flush_local(t, win));
        }
        MPI_OK(MPI_Win_flush_all(win));
        MPI_OK(MPI_Win_flush_local_all(win));
        MPI_OK(MPI_Win_unlock_all(win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(m[N + 4] >= 77 && m[N + 4] < 77 + n, "lock_all put %d", m[N + 4]);
        /* each rank writes its own slot of rank 0 with NOCHECK */
        MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
        int w5 = 500 + me;
        if (me < 3)
            MPI_OK(MPI_Put(&w5, 1, MPI_INT, 0, N + 5 + me, 1, MPI_INT, win));
        MPI_OK(MPI_Win_unlock_all(win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0)
            for (int r = 0; r < n && r < 3; r++)
                CHECK(m[N + 5 + r] == 500 + r, "nocheck slot %d = %d", r, m[N + 5 + r]);

        MPI_OK(MPI_Win_free(&win));
        if (flavor)
            free(m);
    }
    MPI_Finalize();
    if (me == 0)
        printf("rma_sync: OK on %d ranks\n", n);
    return 0;
}
