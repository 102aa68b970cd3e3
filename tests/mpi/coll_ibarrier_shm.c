/* MPI_Ibarrier and MPI_Barrier_init among the other collectives, as they run
 * through the node-shared-memory block where the communicator has one
 * (WHARF_COLL_SHM_NBC=1, the default; 0 runs the same checks over the
 * point-to-point schedule).
 *
 * 1. Barrier semantics through a shared window: in each round every rank
 *    writes the round number into its slot (some after a sleep), starts the
 *    barrier and tests it; once it completes, every slot must hold this
 *    round: no rank leaves before all have arrived.
 * 2. Order: barriers started before, between and after blocking bcasts,
 *    allreduces and MPI_Ibcasts, on two communicators at once, a
 *    persistent barrier started among them, completed in reverse order,
 *    with MPI_Test and MPI_Waitany; every data result checked.
 * 3. The same through the p2p schedule on a communicator whose first
 *    collective is the nonblocking barrier (no block yet: a nonblocking call
 *    never sets one up), then a blocking collective, then again.
 * Every loop is bounded (60 s). */
#include <time.h>

#include "p2p_check.h"

#define LIMIT 60.0

static int R, N;

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_until(MPI_Request *q, const char *what)
{
    double t0 = MPI_Wtime();
    for (int done = 0; !done;) {
        CHECK(MPI_Wtime() - t0 < LIMIT, "%s: not complete after %g s of MPI_Test", what, LIMIT);
        MPI_OK(MPI_Test(q, &done, MPI_STATUS_IGNORE));
    }
}

static void semantics(void)
{
    p2p_setstep("barrier semantics through a shared window");
    MPI_Comm sh;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
    int n, me;
    MPI_Comm_size(sh, &n);
    MPI_Comm_rank(sh, &me);
    volatile int *slot;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, sh, (void *)&slot, &win));
    volatile int *all[64];
    CHECK(n <= 64, "at most 64 co-resident ranks here (%d)", n);
    for (int r = 0; r < n; r++) {
        MPI_Aint sz;
        int du;
        MPI_OK(MPI_Win_shared_query(win, r, &sz, &du, (void *)&all[r]));
    }
    *slot = -1;
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    MPI_OK(MPI_Barrier(sh)); /* sets the block up (blocking) */
    MPI_Request pers;
    MPI_OK(MPI_Barrier_init(sh, MPI_INFO_NULL, &pers));
    for (int round = 0; round < 40; round++) {
        if (round % 5 == me % 5)
            nap_ms(2 + me); /* a late arrival, a different rank each time */
        *slot = round;
        MPI_OK(MPI_Win_sync(win));
        MPI_Request q;
        if (round % 3 == 2) {
            MPI_OK(MPI_Start(&pers));
            q = pers;
        } else {
            MPI_OK(MPI_Ibarrier(sh, &q));
        }
        if (round % 2)
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        else
            test_until(&q, "MPI_Ibarrier");
        MPI_OK(MPI_Win_sync(win));
        for (int r = 0; r < n; r++)
            CHECK(all[r][0] == round, "round %d: rank %d's slot holds %d after the barrier completed", round, r,
                  all[r][0]);
        /* nobody writes the next round before everyone read this one */
        MPI_OK(MPI_Barrier(sh));
    }
    MPI_OK(MPI_Request_free(&pers));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&sh));
}

static void order(MPI_Comm a, MPI_Comm b)
{
    p2p_setstep("barriers among other collectives, two communicators");
    MPI_Request pers;
    MPI_OK(MPI_Barrier_init(b, MPI_INFO_NULL, &pers));
    for (int it = 0; it < 200; it++) {
        MPI_Request q[6];
        int v = R == it % N ? it * 3 + 1 : -1, w = R == 0 ? it : -1, sum = 0, x[4];
        MPI_OK(MPI_Ibarrier(a, &q[0]));
        MPI_OK(MPI_Bcast(&v, 1, MPI_INT, it % N, a));
        MPI_OK(MPI_Ibarrier(b, &q[1]));
        MPI_OK(MPI_Ibcast(&w, 1, MPI_INT, 0, a, &q[2]));
        MPI_OK(MPI_Ibarrier(a, &q[3]));
        MPI_OK(MPI_Start(&pers));
        q[4] = pers;
        int one = R + it;
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, b));
        for (int k = 0; k < 4; k++)
            x[k] = R == 1 % N ? it + k : 0;
        MPI_OK(MPI_Ibcast(x, 4, MPI_INT, 1 % N, b, &q[5]));
        if (it % 2) {
            for (int k = 5; k >= 0; k--)
                test_until(&q[k], "a collective started in a mixed sequence");
        } else {
            for (int k = 0; k < 6; k++) {
                int idx;
                MPI_OK(MPI_Waitany(6, q, &idx, MPI_STATUS_IGNORE));
            }
        }
        CHECK(v == it * 3 + 1, "iteration %d: bcast gave %d, want %d", it, v, it * 3 + 1);
        CHECK(w == it, "iteration %d: ibcast gave %d, want %d", it, w, it);
        CHECK(sum == N * (N - 1) / 2 + N * it, "iteration %d: allreduce gave %d", it, sum);
        for (int k = 0; k < 4; k++)
            CHECK(x[k] == it + k, "iteration %d: ibcast[%d] gave %d", it, k, x[k]);
    }
    MPI_OK(MPI_Request_free(&pers));
}

static void first_nonblocking(void)
{
    p2p_setstep("a nonblocking barrier as a communicator's first collective");
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    for (int k = 0; k < 3; k++) {
        MPI_Request q;
        if (R == N - 1)
            nap_ms(5);
        MPI_OK(MPI_Ibarrier(c, &q));
        test_until(&q, "MPI_Ibarrier");
        int s = 0, one = 1;
        MPI_OK(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, c));
        CHECK(s == N, "allreduce gave %d, want %d", s, N);
    }
    MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    first_nonblocking();
    semantics();
    MPI_Comm b;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    MPI_OK(MPI_Barrier(b));
    order(MPI_COMM_WORLD, b);
    MPI_OK(MPI_Comm_free(&b));
    MPI_Finalize();
    return 0;
}
