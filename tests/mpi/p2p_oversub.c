/* Ranks that outnumber cores (run it under taskset on 1-2 cpus): a token
 * passed hop by hop around a ring (one rank has work, every other waits),
 * ping-pongs between pairs, nonblocking collectives (Iallreduce, Ibcast,
 * Ibarrier completed by MPI_Wait) and a flood of small messages into rank
 * 0 (ANY_SOURCE receives, the senders' rings fill up).  Every value is
 * checked; with argv[1] = seconds, rank 0 also fails when the run takes
 * longer: waiting ranks that only yield their cores (WHARF_WAIT_SLEEP=off)
 * burn the cpus that sleeping ranks give back.  With argv[2] = "sleeps", the
 * ranks together must have blocked (voluntary context switches during the
 * loop: futex sleeps on the doorbell; yields count as involuntary), which
 * fails where waiting ranks only yield (WHARF_WAIT_SLEEP=off, or before the
 * doorbell existed). */
#include "p2p_check.h"
#include <sys/resource.h>
#include <time.h>

#define ITERS 300
#define FLOOD 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    double bound = argc > 1 ? atof(argv[1]) : 0;
    int want_sleeps = argc > 2 && !strcmp(argv[2], "sleeps");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = now();
    for (int it = 0; it < ITERS; it++) {
        p2p_setstep("iteration %d: ring", it);
        long tok = it;
        if (me == 0) {
            MPI_OK(MPI_Send(&tok, 1, MPI_LONG, 1 % n, 1, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(&tok, 1, MPI_LONG, n - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(tok == (long)it + n - 1, "token %ld after the ring, expected %ld", tok, (long)it + n - 1);
        } else {
            MPI_OK(MPI_Recv(&tok, 1, MPI_LONG, me - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(tok == (long)it + me - 1, "token %ld at hop %d, expected %ld", tok, me, (long)it + me - 1);
            tok++;
            MPI_OK(MPI_Send(&tok, 1, MPI_LONG, (me + 1) % n, 1, MPI_COMM_WORLD));
        }

        p2p_setstep("iteration %d: ping-pong", it);
        int partner = me ^ 1;
        if (partner < n) {
            for (int k = 0; k < 4; k++) {
                int v = it * 8 + k, got = -1;
                if (me < partner) {
                    MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, 2, MPI_COMM_WORLD));
                    MPI_OK(MPI_Recv(&got, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CHECK(got == v + 1, "pong %d, expected %d", got, v + 1);
                } else {
                    MPI_OK(MPI_Recv(&got, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    CHECK(got == v, "ping %d, expected %d", got, v);
                    got++;
                    MPI_OK(MPI_Send(&got, 1, MPI_INT, partner, 3, MPI_COMM_WORLD));
                }
            }
        }

        p2p_setstep("iteration %d: nonblocking collectives", it);
        long x = me + it, sum = -1, root_val = me == it % n ? 1000 + it : -1;
        MPI_Request rq[3];
        MPI_OK(MPI_Iallreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Ibcast(&root_val, 1, MPI_LONG, it % n, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[2]));
        for (int k = 2; k >= 0; k--)
            MPI_OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
        long want = (long)n * (n - 1) / 2 + (long)n * it;
        CHECK(sum == want, "allreduce %ld, expected %ld", sum, want);
        CHECK(root_val == 1000 + it, "bcast %ld, expected %d", root_val, 1000 + it);

        if (it % 10 == 0) {
            p2p_setstep("iteration %d: flood", it);
            if (me == 0) {
                int seen[64] = {0};
                for (int k = 0; k < FLOOD * (n - 1); k++) {
                    int v[2];
                    MPI_Status st;
                    MPI_OK(MPI_Recv(v, 2, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st));
                    int s = st.MPI_SOURCE;
                    CHECK(s > 0 && s < n && s < 64, "flood from %d", s);
                    CHECK(v[0] == s && v[1] == seen[s], "flood message %d/%d from %d, expected %d/%d", v[0], v[1], s,
                          s, seen[s]);
                    seen[s]++;
                }
            } else {
                MPI_Request fr[FLOOD];
                int v[FLOOD][2];
                for (int k = 0; k < FLOOD; k++) {
                    v[k][0] = me;
                    v[k][1] = k;
                    MPI_OK(MPI_Isend(v[k], 2, MPI_INT, 0, 4, MPI_COMM_WORLD, &fr[k]));
                }
                MPI_OK(MPI_Waitall(FLOOD, fr, MPI_STATUSES_IGNORE));
            }
        }
    }
    double t = now() - t0, tmax = 0;
    getrusage(RUSAGE_SELF, &ru1);
    long vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw, ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw, sw[2] = {0, 0}, mine[2] = {vcsw, ivcsw};
    MPI_OK(MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Reduce(mine, sw, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0) {
        printf("%d ranks, %d iterations: %.2f s, %ld voluntary and %ld involuntary context switches\n", n, ITERS,
               tmax, sw[0], sw[1]);
        CHECK(bound <= 0 || tmax <= bound, "took %.2f s, bound %.1f s", tmax, bound);
        CHECK(!want_sleeps || sw[0] >= ITERS / 10, "only %ld voluntary context switches: waiting ranks did not sleep",
              sw[0]);
    }
    MPI_Finalize();
    return 0;
}
