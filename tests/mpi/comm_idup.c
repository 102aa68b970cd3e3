/* MPI_Comm_idup is nonblocking: it returns before the other ranks call it,
 * completes through progress made by any MPI call (here MPI_Test on other
 * requests), and several idups can be outstanding at once, overlapped with
 * MPI_Comm_create_group and blocking constructors on other communicators.
 * Every result is checked by traffic on it. */
#include <unistd.h>

#include "p2p_check.h"

/* a ring exchange and an allreduce inside c */
static void use(MPI_Comm c, int tag)
{
    int n, r;
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &r));
    int out = r * 1000 + tag, in = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, tag, &in, 1, MPI_INT, (r + n - 1) % n, tag, c, &st));
    CHECK(in == ((r + n - 1) % n) * 1000 + tag, "ring got %d", in);
    CHECK(st.MPI_SOURCE == (r + n - 1) % n, "source %d", st.MPI_SOURCE);
    int sum = -1;
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce %d", sum);
}

static void congruent(MPI_Comm a, MPI_Comm b)
{
    int cmp = -1;
    MPI_OK(MPI_Comm_compare(a, b, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare gave %d", cmp);
}

/* wait for r with a time bound, calling only MPI_Test on it */
static void wait_bounded(MPI_Request *r, double secs, const char *what)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag) {
        MPI_OK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
        CHECK(flag || MPI_Wtime() - t0 < secs, "%s did not complete in %.0f s", what, secs);
    }
    CHECK(*r == MPI_REQUEST_NULL, "request not freed");
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_Comm c;
    MPI_Request req;

    p2p_setstep("idup returns while the other ranks sleep");
    if (p2p_rank == 0) {
        double t0 = MPI_Wtime();
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
        double dt = MPI_Wtime() - t0;
        CHECK(dt < 0.5, "MPI_Comm_idup blocked for %.3f s (the others call it 1 s later)", dt);
        CHECK(req != MPI_REQUEST_NULL && c != MPI_COMM_NULL, "no request or communicator");
    } else {
        sleep(1);
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
    }
    wait_bounded(&req, 60, "idup");
    congruent(c, MPI_COMM_WORLD);
    use(c, 1);

    p2p_setstep("idup completes from MPI_Test on other requests");
    /* rank 0 starts an idup and then only tests receives; every other rank
       sends once its own idup has completed, which needs rank 0's part */
    MPI_Comm c2;
    MPI_OK(MPI_Comm_idup(c, &c2, &req));
    if (p2p_rank == 0) {
        int got = 0, flag, tok[64];
        MPI_Request rr[64];
        for (int i = 1; i < p2p_size; i++)
            MPI_OK(MPI_Irecv(&tok[i], 1, MPI_INT, i, 7, MPI_COMM_WORLD, &rr[i]));
        double t0 = MPI_Wtime();
        while (got < p2p_size - 1) {
            for (int i = 1; i < p2p_size; i++) {
                if (rr[i] == MPI_REQUEST_NULL)
                    continue;
                MPI_OK(MPI_Test(&rr[i], &flag, MPI_STATUS_IGNORE));
                if (flag) {
                    CHECK(tok[i] == i, "token %d from %d", tok[i], i);
                    got++;
                }
            }
            CHECK(MPI_Wtime() - t0 < 60, "peers' idups never completed (got %d tokens)", got);
        }
        wait_bounded(&req, 60, "idup");
    } else {
        usleep(200000);
        wait_bounded(&req, 60, "idup");
        MPI_OK(MPI_Send(&p2p_rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }
    use(c2, 2);

    p2p_setstep("three idups outstanding, completed in reverse order");
    MPI_Comm d[3];
    MPI_Request rq[3];
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &rq[0]));
    MPI_OK(MPI_Comm_idup(c, &d[1], &rq[1]));
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &rq[2]));
    for (int i = 2; i >= 0; i--)
        wait_bounded(&rq[i], 60, "one of three idups");
    for (int i = 0; i < 3; i++) {
        congruent(d[i], MPI_COMM_WORLD);
        for (int j = 0; j < i; j++) {
            int cmp;
            MPI_OK(MPI_Comm_compare(d[i], d[j], &cmp));
            CHECK(cmp == MPI_CONGRUENT, "two idups compare %d", cmp);
        }
    }
    /* the same tag on all three at once: a context mix-up would cross them */
    int v[3], out[3];
    MPI_Request sr[6];
    for (int i = 0; i < 3; i++) {
        out[i] = p2p_rank * 10 + i;
        MPI_OK(MPI_Irecv(&v[i], 1, MPI_INT, (p2p_rank + p2p_size - 1) % p2p_size, 5, d[i], &sr[i]));
    }
    for (int i = 2; i >= 0; i--)
        MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, (p2p_rank + 1) % p2p_size, 5, d[i], &sr[3 + i]));
    MPI_OK(MPI_Waitall(6, sr, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        CHECK(v[i] == ((p2p_rank + p2p_size - 1) % p2p_size) * 10 + i, "comm %d got %d", i, v[i]);
    for (int i = 0; i < 3; i++)
        use(d[i], 10 + i);

    p2p_setstep("idups overlapped with Comm_create_group and a blocking dup");
    MPI_Group world, half;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_range_incl(world, 1, (int[][3]){{p2p_rank % 2, p2p_size - 1, 2}}, &half));
    MPI_Comm e[2], g, b;
    MPI_Request re[2];
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &e[0], &re[0]));
    /* every rank builds the communicator of its parity (concurrently, both halves) */
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, half, 3, &g));
    MPI_OK(MPI_Comm_idup(g, &e[1], &re[1]));
    MPI_OK(MPI_Comm_dup(d[0], &b)); /* blocking, on another communicator */
    use(b, 20);
    use(g, 21);
    if (p2p_rank == 0)
        sleep(1); /* the others wait for rank 0 inside MPI_Waitall */
    MPI_OK(MPI_Waitall(2, re, MPI_STATUSES_IGNORE));
    congruent(e[0], MPI_COMM_WORLD);
    congruent(e[1], g);
    int gs;
    MPI_OK(MPI_Comm_size(e[1], &gs));
    CHECK(gs == (p2p_size - p2p_rank % 2 + 1) / 2, "parity communicator size %d", gs);
    use(e[0], 22);
    use(e[1], 23);

    MPI_OK(MPI_Comm_free(&b));
    MPI_OK(MPI_Comm_free(&g));
    for (int i = 0; i < 2; i++)
        MPI_OK(MPI_Comm_free(&e[i]));
    for (int i = 0; i < 3; i++)
        MPI_OK(MPI_Comm_free(&d[i]));
    MPI_OK(MPI_Group_free(&half));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Comm_free(&c));
    MPI_Finalize();
    return 0;
}
