/* Nonblocking collectives progress without a wait on their request.
 *
 * 1. The last rank joins late (sleeps first).  Rank 0 starts an
 *    MPI_Ibarrier and an MPI_Iallreduce past the rendezvous size and then
 *    only calls MPI_Test on each, in a bounded loop: both must complete, the
 *    barrier not before the late rank joined, and the sum must be right.
 * 2. Rank 0 starts an MPI_Iallreduce and then only calls MPI_Iprobe on a
 *    point-to-point tag, waiting for a "done" message from every other rank,
 *    which they send after their own MPI_Wait returns.  With recursive
 *    doubling the others cannot finish unless rank 0's schedule advances, so
 *    this passes only if any MPI call drives the schedules.
 * Each loop gives up (and fails) after 60 seconds. */
#include <time.h>

#include "p2p_check.h"

#define CNT 50000 /* 200 kB: rendezvous on every channel */
#define LIMIT 60.0

static int R, N;

static int val(int seed, int rank, int i)
{
    return (seed * 7 + rank * 13 + i) % 977;
}

static void check_sum(const int *r, int seed)
{
    for (int e = 0; e < CNT; e++) {
        int s = 0;
        for (int i = 0; i < N; i++)
            s += val(seed, i, e);
        CHECK(r[e] == s, "sum[%d] = %d, want %d", e, r[e], s);
    }
}

static void late_joiner(void)
{
    p2p_setstep("late joiner");
    int *s = malloc(sizeof(int) * CNT), *r = malloc(sizeof(int) * CNT);
    for (int e = 0; e < CNT; e++) {
        s[e] = val(1, R, e);
        r[e] = -1;
    }
    if (R == N - 1 && N > 1) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MPI_Request q[2];
    double t0 = MPI_Wtime();
    MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &q[0]));
    MPI_OK(MPI_Iallreduce(s, r, CNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
    if (R == 0) {
        int fb = 0, fa = 0;
        double t_bar = 0;
        long polls = 0;
        while (!(fb && fa)) {
            CHECK(MPI_Wtime() - t0 < LIMIT, "no completion after %g s of MPI_Test (barrier %d, allreduce %d)", LIMIT,
                  fb, fa);
            if (!fb) {
                MPI_OK(MPI_Test(&q[0], &fb, MPI_STATUS_IGNORE));
                if (fb)
                    t_bar = MPI_Wtime();
            }
            if (!fa)
                MPI_OK(MPI_Test(&q[1], &fa, MPI_STATUS_IGNORE));
            polls++;
        }
        CHECK(N == 1 || polls > 1, "completed without waiting for the late rank");
        CHECK(N == 1 || t_bar - t0 > 0.2, "barrier completed after %g s, before the late rank joined (0.3 s)",
              t_bar - t0);
    } else {
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    }
    check_sum(r, 1);
    free(s);
    free(r);
}

static void probe_only(void)
{
    p2p_setstep("progress from MPI_Iprobe");
    int *s = malloc(sizeof(int) * CNT), *r = malloc(sizeof(int) * CNT);
    for (int e = 0; e < CNT; e++) {
        s[e] = val(2, R, e);
        r[e] = -1;
    }
    MPI_Request q;
    MPI_OK(MPI_Iallreduce(s, r, CNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q));
    if (R == 0) {
        double t0 = MPI_Wtime();
        for (int got = 0; got < N - 1;) {
            int flag = 0;
            MPI_Status st;
            CHECK(MPI_Wtime() - t0 < LIMIT, "only %d of %d ranks finished after %g s of MPI_Iprobe", got, N - 1,
                  LIMIT);
            MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st));
            if (flag) {
                int x;
                MPI_OK(MPI_Recv(&x, 1, MPI_INT, st.MPI_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                got++;
            }
        }
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&R, 1, MPI_INT, 0, 99, MPI_COMM_WORLD));
    }
    check_sum(r, 2);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    late_joiner();
    probe_only();
    MPI_Finalize();
    return 0;
}
