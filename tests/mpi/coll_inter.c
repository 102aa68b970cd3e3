/* Collectives on intercommunicators, blocking (no argument), nonblocking
 * ("nb") or persistent ("persist": MPI_*_init, started twice): barrier,
 * bcast, gather(v), scatter(v), allgather(v), alltoall(v,w), reduce,
 * allreduce, reduce_scatter(_block), over groups of unequal sizes (1 : n-1 and
 * about 1 : 2) and interleaved ones (even : odd, on a dup of the
 * intercommunicator), rooted calls rooted in each group in turn (MPI_ROOT,
 * MPI_PROC_NULL, the remote root's rank).  Every received element is checked
 * against the remote process that contributed it; buffers of processes
 * that take no part stay untouched.  Then the errors: scan/exscan
 * (MPI_ERR_COMM), MPI_IN_PLACE (MPI_ERR_BUFFER), a bad root. */
#include "p2p_check.h"

#define MAXP 16
#define BIG (MAXP * MAXP * 8)

static int MODE; /* 0 blocking, 1 nonblocking, 2 persistent */

#define C3(B, I, P, ...)                                                                          \
    do {                                                                                          \
        if (MODE == 0) {                                                                          \
            MPI_OK(B(__VA_ARGS__));                                                               \
            break;                                                                                \
        }                                                                                         \
        MPI_Request q_;                                                                           \
        if (MODE == 1)                                                                            \
            MPI_OK(I(__VA_ARGS__, &q_));                                                          \
        else                                                                                      \
            MPI_OK(P(__VA_ARGS__, MPI_INFO_NULL, &q_));                                           \
        for (int k_ = 0; k_ < (MODE == 2 ? 2 : 1); k_++) {                                        \
            if (MODE == 2)                                                                        \
                MPI_OK(MPI_Start(&q_));                                                           \
            MPI_OK(MPI_Wait(&q_, MPI_STATUS_IGNORE));                                             \
        }                                                                                         \
        if (MODE == 2)                                                                            \
            MPI_OK(MPI_Request_free(&q_));                                                        \
    } while (0)

static int g, lr, nl, nr; /* my group (0/1), local rank, local and remote sizes */

static int v(int grp, int r, int j)
{
    return grp * 1000000 + r * 1000 + j;
}

static void clear(int *b, int n, int x)
{
    for (int i = 0; i < n; i++)
        b[i] = x;
}

/* root argument when group rg roots the call at its rank rr */
static int root_arg(int rg, int rr)
{
    return g == rg ? (lr == rr ? MPI_ROOT : MPI_PROC_NULL) : rr;
}

static void t_bcast(MPI_Comm ic)
{
    int b[8];
    for (int rg = 0; rg < 2; rg++) {
        int rsize = rg == g ? nl : nr, rr = rsize - 1, root = root_arg(rg, rr);
        p2p_setstep("bcast rooted in group %d", rg);
        for (int j = 0; j < 8; j++)
            b[j] = root == MPI_ROOT ? v(rg, rr, j) : -7;
        C3(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, b, 8, MPI_INT, root, ic);
        for (int j = 0; j < 8; j++) {
            int want = root == MPI_PROC_NULL ? -7 : v(rg, rr, j);
            CHECK(b[j] == want, "bcast elem %d = %d, expected %d", j, b[j], want);
        }
    }
}

static int vcnt(int s, int t)
{
    return (s + t) % 3 + 1;
}

static void t_gather_scatter(MPI_Comm ic)
{
    static int sb[BIG], rb[BIG];
    int cnt[MAXP], dsp[MAXP];
    for (int rg = 0; rg < 2; rg++) {
        int rsize = rg == g ? nl : nr, rr = rsize / 2, root = root_arg(rg, rr);
        p2p_setstep("gather rooted in group %d", rg);
        clear(rb, BIG, -1);
        for (int e = 0; e < 2; e++)
            sb[e] = v(g, lr, e);
        C3(MPI_Gather, MPI_Igather, MPI_Gather_init, sb, 2, MPI_INT, rb, 2, MPI_INT, root, ic);
        for (int i = 0; i < nr * 2; i++) {
            int want = root == MPI_ROOT ? v(1 - g, i / 2, i % 2) : -1;
            CHECK(rb[i] == want, "gather elem %d = %d, expected %d", i, rb[i], want);
        }
        CHECK(rb[nr * 2] == -1, "gather wrote past the end");

        p2p_setstep("gatherv rooted in group %d", rg);
        /* remote rank i sends vcnt(i, 0) elements; blocks reversed with gaps */
        int o = 0;
        for (int i = nr - 1; i >= 0; i--) {
            cnt[i] = vcnt(i, 0);
            dsp[i] = o;
            o += cnt[i] + 1;
        }
        clear(rb, BIG, -1);
        for (int e = 0; e < 3; e++)
            sb[e] = v(g, lr, e);
        C3(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, sb, vcnt(lr, 0), MPI_INT, rb, cnt, dsp, MPI_INT, root, ic);
        for (int i = 0; i < nr; i++) {
            for (int e = 0; e < cnt[i]; e++) {
                int want = root == MPI_ROOT ? v(1 - g, i, e) : -1;
                CHECK(rb[dsp[i] + e] == want, "gatherv block %d elem %d = %d, expected %d", i, e, rb[dsp[i] + e], want);
            }
            CHECK(rb[dsp[i] + cnt[i]] == -1, "gatherv wrote into the gap after block %d", i);
        }

        p2p_setstep("scatter rooted in group %d", rg);
        for (int i = 0; i < nr * 2; i++)
            sb[i] = root == MPI_ROOT ? v(g, i / 2, 500 + i % 2) : -3;
        clear(rb, BIG, -1);
        C3(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, sb, 2, MPI_INT, rb, 2, MPI_INT, root, ic);
        for (int e = 0; e < 3; e++) {
            int want = e < 2 && g != rg ? v(rg, lr, 500 + e) : -1;
            CHECK(rb[e] == want, "scatter elem %d = %d, expected %d", e, rb[e], want);
        }

        p2p_setstep("scatterv rooted in group %d", rg);
        /* remote rank i gets vcnt(i, 1) elements */
        o = 0;
        for (int i = nr - 1; i >= 0; i--) {
            cnt[i] = vcnt(i, 1);
            dsp[i] = o;
            for (int e = 0; e < cnt[i]; e++)
                sb[o + e] = v(g, i, 600 + e);
            o += cnt[i] + 1;
        }
        clear(rb, BIG, -1);
        C3(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, sb, cnt, dsp, MPI_INT, rb, vcnt(lr, 1), MPI_INT, root, ic);
        for (int e = 0; e < 4; e++) {
            int want = g != rg && e < vcnt(lr, 1) ? v(rg, lr, 600 + e) : -1;
            CHECK(rb[e] == want, "scatterv elem %d = %d, expected %d", e, rb[e], want);
        }
    }
}

static void t_all(MPI_Comm ic)
{
    static int sb[BIG], rb[BIG];
    int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    int sbd[MAXP], rbd[MAXP]; /* alltoallw: displacements in bytes */
    MPI_Datatype st[MAXP], rt[MAXP];

    p2p_setstep("allgather");
    for (int e = 0; e < 2; e++)
        sb[e] = v(g, lr, e);
    clear(rb, BIG, -1);
    C3(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, sb, 2, MPI_INT, rb, 2, MPI_INT, ic);
    for (int i = 0; i < nr * 2 + 1; i++) {
        int want = i < nr * 2 ? v(1 - g, i / 2, i % 2) : -1;
        CHECK(rb[i] == want, "allgather elem %d = %d, expected %d", i, rb[i], want);
    }

    p2p_setstep("allgatherv");
    int o = 0;
    for (int i = nr - 1; i >= 0; i--) {
        rc[i] = vcnt(i, 2);
        rd[i] = o;
        o += rc[i] + 1;
    }
    for (int e = 0; e < 3; e++)
        sb[e] = v(g, lr, 100 + e);
    clear(rb, BIG, -1);
    C3(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, sb, vcnt(lr, 2), MPI_INT, rb, rc, rd, MPI_INT, ic);
    for (int i = 0; i < nr; i++) {
        for (int e = 0; e < rc[i]; e++)
            CHECK(rb[rd[i] + e] == v(1 - g, i, 100 + e), "allgatherv block %d elem %d = %d", i, e, rb[rd[i] + e]);
        CHECK(rb[rd[i] + rc[i]] == -1, "allgatherv wrote into a gap");
    }

    p2p_setstep("alltoall");
    for (int j = 0; j < nr; j++)
        for (int e = 0; e < 2; e++)
            sb[2 * j + e] = v(g, lr, j * 10 + e);
    clear(rb, BIG, -1);
    C3(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, sb, 2, MPI_INT, rb, 2, MPI_INT, ic);
    for (int i = 0; i < nr * 2 + 1; i++) {
        int want = i < nr * 2 ? v(1 - g, i / 2, lr * 10 + i % 2) : -1;
        CHECK(rb[i] == want, "alltoall elem %d = %d, expected %d", i, rb[i], want);
    }

    /* v and w: from s to t go vcnt(s, t) elements; receive blocks reversed */
    int so = 0, ro = 0;
    for (int j = 0; j < nr; j++) {
        sc[j] = vcnt(lr, j);
        sd[j] = so;
        sbd[j] = (int)sizeof(int) * so;
        st[j] = MPI_INT;
        for (int e = 0; e < sc[j]; e++)
            sb[so + e] = v(g, lr, j * 10 + e);
        so += sc[j];
    }
    for (int i = nr - 1; i >= 0; i--) {
        rc[i] = vcnt(i, lr);
        rd[i] = ro;
        rbd[i] = (int)sizeof(int) * ro;
        rt[i] = MPI_INT;
        ro += rc[i] + 1;
    }
    for (int w = 0; w < 2; w++) {
        p2p_setstep("alltoall%s", w ? "w" : "v");
        clear(rb, BIG, -1);
        if (w)
            C3(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, sb, sc, sbd, st, rb, rc, rbd, rt, ic);
        else
            C3(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic);
        for (int i = 0; i < nr; i++) {
            for (int e = 0; e < rc[i]; e++) {
                int want = v(1 - g, i, lr * 10 + e);
                CHECK(rb[rd[i] + e] == want, "block %d elem %d = %d, expected %d", i, e, rb[rd[i] + e], want);
            }
            CHECK(rb[rd[i] + rc[i]] == -1, "wrote into the gap after block %d", i);
        }
    }
}

static void t_reduce(MPI_Comm ic, int na, int nb)
{
    static int sb[BIG], rb[BIG];
    int rsum[64];
    /* sum over the remote group of v(other, i, j) */
    for (int j = 0; j < 64; j++) {
        rsum[j] = 0;
        for (int i = 0; i < nr; i++)
            rsum[j] += v(1 - g, i, j);
    }
    for (int rg = 0; rg < 2; rg++) {
        int rsize = rg == g ? nl : nr, rr = 0, root = root_arg(rg, rr);
        p2p_setstep("reduce rooted in group %d", rg);
        for (int j = 0; j < 5; j++)
            sb[j] = v(g, lr, j);
        clear(rb, BIG, -1);
        (void)rsize;
        C3(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, sb, rb, 5, MPI_INT, MPI_SUM, root, ic);
        for (int j = 0; j < 6; j++) {
            int want = root == MPI_ROOT && j < 5 ? rsum[j] : -1;
            CHECK(rb[j] == want, "reduce elem %d = %d, expected %d", j, rb[j], want);
        }
    }

    p2p_setstep("allreduce");
    for (int j = 0; j < 7; j++)
        sb[j] = v(g, lr, j);
    clear(rb, BIG, -1);
    C3(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, sb, rb, 7, MPI_INT, MPI_SUM, ic);
    for (int j = 0; j < 8; j++)
        CHECK(rb[j] == (j < 7 ? rsum[j] : -1), "allreduce elem %d = %d, expected %d", j, rb[j], j < 7 ? rsum[j] : -1);

    /* reduce-scatter: both groups reduce na * nb elements */
    int total = na * nb, rc = total / nl;
    for (int j = 0; j < total; j++)
        sb[j] = v(g, lr, j);
    p2p_setstep("reduce_scatter_block");
    clear(rb, BIG, -1);
    C3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, sb, rb, rc, MPI_INT,
       MPI_SUM, ic);
    for (int j = 0; j < rc + 1; j++) {
        int want = j < rc ? rsum[lr * rc + j] : -1;
        CHECK(rb[j] == want, "reduce_scatter_block elem %d = %d, expected %d", j, rb[j], want);
    }

    p2p_setstep("reduce_scatter");
    /* uneven: rank 0 takes two shares, rank 1 none */
    int cnts[MAXP], off = 0, mine = 0;
    for (int i = 0; i < nl; i++) {
        cnts[i] = nl > 1 && i < 2 ? (i == 0 ? 2 * rc : 0) : rc;
        if (i < lr)
            off += cnts[i];
    }
    mine = cnts[lr];
    clear(rb, BIG, -1);
    C3(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, sb, rb, cnts, MPI_INT, MPI_SUM, ic);
    for (int j = 0; j < mine + 1; j++) {
        int want = j < mine ? rsum[off + j] : -1;
        CHECK(rb[j] == want, "reduce_scatter elem %d = %d, expected %d", j, rb[j], want);
    }
}

static void t_errors(MPI_Comm ic)
{
    p2p_setstep("errors");
    int a[MAXP * 4] = {0}, b[MAXP * 4];
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_COMM, MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, ic));
    MPI_FAILS(MPI_ERR_COMM, MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &q));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Ireduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic, &q));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, nr, ic));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, -5, ic));
    MPI_FAILS(MPI_ERR_ARG, MPI_Ibarrier(ic, NULL));
    CHECK(q == MPI_REQUEST_NULL, "a failed call returned a request");
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
}

/* both groups: in A iff inA(world rank); leaders are the lowest ranks */
static void run(int (*inA)(int, int), const char *what, int dup)
{
    int n = p2p_size, r = p2p_rank, na = 0, la = -1, lb = -1;
    for (int i = 0; i < n; i++) {
        if (inA(i, n)) {
            na++;
            la = la < 0 ? i : la;
        } else {
            lb = lb < 0 ? i : lb;
        }
    }
    g = inA(r, n) ? 0 : 1;
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g, r, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? la : lb, 42, &ic));
    if (dup) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(ic, &d));
        MPI_OK(MPI_Comm_free(&ic));
        ic = d;
    }
    MPI_OK(MPI_Comm_rank(ic, &lr));
    MPI_OK(MPI_Comm_size(ic, &nl));
    MPI_OK(MPI_Comm_remote_size(ic, &nr));
    CHECK(nl == (g ? n - na : na), "local size %d", nl);
    p2p_setstep("%s: barrier", what);
    C3(MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, ic);
    t_bcast(ic);
    t_gather_scatter(ic);
    t_all(ic);
    t_reduce(ic, na, n - na);
    /* two outstanding at once, completed in reverse order */
    if (MODE == 1) {
        p2p_setstep("%s: two outstanding", what);
        int bro = root_arg(0, 0);
        int x[4] = {v(g, lr, 0), bro == MPI_ROOT ? 77 : -1, 0, 0}, y[4] = {-1, -1, -1, -1};
        MPI_Request q[2];
        MPI_OK(MPI_Iallreduce(x, y, 1, MPI_INT, MPI_MAX, ic, &q[0]));
        MPI_OK(MPI_Ibcast(x + 1, 1, MPI_INT, bro, ic, &q[1]));
        MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        CHECK(x[1] == (bro == MPI_PROC_NULL ? -1 : 77), "ibcast = %d", x[1]);
        CHECK(y[0] == v(1 - g, nr - 1, 0), "iallreduce max = %d", y[0]);
    }
    t_errors(ic);
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

static int first_third(int r, int n)
{
    return r < (n / 3 > 0 ? n / 3 : 1);
}
static int even(int r, int n)
{
    (void)n;
    return r % 2 == 0;
}
static int last_one(int r, int n)
{
    return r == n - 1;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MODE = argc > 1 && !strcmp(argv[1], "nb") ? 1 : argc > 1 && !strcmp(argv[1], "persist") ? 2 : 0;
    CHECK(p2p_size >= 2 && p2p_size <= MAXP, "needs 2..%d ranks", MAXP);
    run(first_third, "first third : rest", 0);
    run(last_one, "rest : last one", 0);
    run(even, "even : odd, dup", 1);
    MPI_Finalize();
    return 0;
}
