/* Collectives called with different counts on different ranks (erroneous:
 * type signatures must match) return an error on the ranks that receive the
 * wrong amount, never hang, and leave the communicator usable.
 *
 * 1. Nonblocking forms (schedules) and the blocking bcast, allreduce,
 *    scatter, allgather, alltoall: rank 0 (the root) passes `a` elements,
 *    the others `b` (receive counts of allgather/alltoall: `b` everywhere).
 * 2. Every collective (bcast, reduce, allreduce, gather(v), scatter(v),
 *    allgather(v), alltoall(v), reduce_scatter(_block), scan, exscan; commutative
 *    and not), small and large (scatter + ring broadcast, Rabenseifner
 *    allreduce, linear gather/scatter, ring allgather, and rendezvous
 *    messages): one rank (`odd`: 0, the root, or the last one) passes `a`
 *    for all its counts, the others `b`.  Blocking: the ranks that must
 *    notice are checked (a rank that received or relayed wrong-sized data:
 *    the point-to-point algorithms keep running their steps after an error
 *    and send empty messages from then on, so the ranks after it fail too),
 *    and a rank that returns success must hold the right data.
 *    Nonblocking: some rank fails, and one that succeeds has the right data.
 * Which algorithms run follows the environment (tests/coll): shared memory
 * (default), point-to-point (WHARF_COLL_SHM=0 or WHARF_CHANNEL=net), or
 * "hier" (argv[1]; node groups from WHARF_HOST_ID): there the intra-node
 * phase of a node whose leader met the error cannot tell its ranks (a
 * shared-memory phase has no error flag), so only "someone fails, nobody
 * hangs" is checked.  The large shared-memory paths (above
 * WHARF_COLL_SHM_MAX: bcast, reduce, allreduce, allgather) do not compare
 * sizes yet: there only "nobody hangs" is checked, with sizes that fit one
 * pipeline chunk (WHARF_COLL_SHM_CHUNK) on every rank, since ranks that
 * count different numbers of chunks wait for each other forever.  For the
 * same reason the hierarchical allgather (its node phase broadcasts all
 * blocks) runs only small there. */
#include "p2p_check.h"

static int R, N, hier, shm_large;

static int class_of(int rc)
{
    int cl = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cl);
    return cl;
}

/* a failure must be of class OTHER or TRUNCATE and say what differs */
static void check_class(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    int cl = class_of(rc);
    CHECK(cl == MPI_ERR_OTHER || cl == MPI_ERR_TRUNCATE, "%s: class %d, expected MPI_ERR_OTHER or MPI_ERR_TRUNCATE",
          what, cl);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "bytes") != NULL, "%s: the message does not say what differs: %s", what, msg);
}

/* rc of a rank that must see the mismatch: an error of class OTHER or TRUNCATE */
static void must_fail(int rc, const char *what)
{
    CHECK(rc != MPI_SUCCESS, "%s: returned MPI_SUCCESS on a rank that must see the mismatch", what);
    check_class(rc, what);
}

static int wait_rc(int rc, MPI_Request *q)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(q, MPI_STATUS_IGNORE);
}

/* the communicator still works: a correct allreduce and bcast */
static void still_usable(const char *after)
{
    p2p_setstep("usable after %s", after);
    int v = R + 1, sum = 0, x = R == 0 ? 42 : -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == N * (N + 1) / 2, "allreduce gave %d, expected %d", sum, N * (N + 1) / 2);
    MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(x == 42, "bcast gave %d", x);
}

static void run(int nonblocking, int a, int b)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int cnt = R == 0 ? a : b, buf[64], out[64 * 16], rc;
    MPI_Request q;
    for (int i = 0; i < 64; i++)
        buf[i] = R * 100 + i;
    const char *form = nonblocking ? "nonblocking" : "blocking";

    p2p_setstep("%s bcast %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Ibcast(buf, cnt, MPI_INT, 0, w, &q), &q) : MPI_Bcast(buf, cnt, MPI_INT, 0, w);
    if (R != 0)
        must_fail(rc, "bcast");
    still_usable("bcast");

    p2p_setstep("%s allreduce %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iallreduce(buf, out, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                     : MPI_Allreduce(buf, out, cnt, MPI_INT, MPI_SUM, w);
    if (nonblocking ? R != 0 : 1) /* blocking: every rank exchanges with rank 0, or with a rank that failed */
        must_fail(rc, "allreduce");
    still_usable("allreduce");

    p2p_setstep("%s scatter %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iscatter(out, cnt, MPI_INT, buf, b, MPI_INT, 0, w, &q), &q)
                     : MPI_Scatter(out, cnt, MPI_INT, buf, b, MPI_INT, 0, w);
    if (R != 0)
        must_fail(rc, "scatter");
    still_usable("scatter");

    p2p_setstep("%s allgather %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iallgather(buf, cnt, MPI_INT, out, b, MPI_INT, w, &q), &q)
                     : MPI_Allgather(buf, cnt, MPI_INT, out, b, MPI_INT, w);
    must_fail(rc, "allgather"); /* rank 0: its own block; the others: rank 0's */
    still_usable("allgather");

    p2p_setstep("%s alltoall %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Ialltoall(out, cnt, MPI_INT, out + 64 * 8, b, MPI_INT, w, &q), &q)
                     : MPI_Alltoall(out, cnt, MPI_INT, out + 64 * 8, b, MPI_INT, w);
    must_fail(rc, "alltoall");
    still_usable("alltoall");
}

/* ---------- 2: every blocking collective, one rank out of step ---------- */

enum {
    C_BCAST, C_REDUCE, C_REDUCE_NC, C_ALLREDUCE, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLGATHER,
    C_ALLTOALL, C_REDSCAT, C_REDSCAT_NC, C_REDSCAT_BLOCK, C_SCAN, C_EXSCAN, C_ALLGATHERV, C_ALLTOALLV, C_N
};
static const char *cname[C_N] = {"bcast",         "reduce",         "reduce(non-commutative)",
                                 "allreduce",     "gather",         "gatherv",
                                 "scatter",       "scatterv",       "allgather",
                                 "alltoall",      "reduce_scatter", "reduce_scatter(non-commutative)",
                                 "reduce_scatter_block", "scan",    "exscan",
                                 "allgatherv",    "alltoallv"};

/* Must rank r fail when rank `odd` passes a different count (root 0)?
 * Rooted one-to-all: the ranks whose count differs from the root's (all
 * but the root when the root is odd).  All-to-one: the root.  Scans: odd
 * and every rank after it (their results need odd's part).  Everything
 * else: all ranks (each one receives odd's data, or data from a rank that
 * failed before). */
static int must(int coll, int odd, int r)
{
    switch (coll) {
    case C_BCAST:
    case C_SCATTER:
    case C_SCATTERV:
        return odd == 0 ? r != 0 : r == odd;
    case C_REDUCE:
    case C_REDUCE_NC:
    case C_GATHER:
    case C_GATHERV:
        return r == 0;
    case C_SCAN:
    case C_EXSCAN:
        return r >= (odd > 0 ? odd : 1);
    default:
        return 1;
    }
}

/* a op b = a: associative, not commutative */
static void first_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static int *sbuf, *rbuf, *counts, *displs;
static MPI_Op first;

static int nb; /* the nonblocking forms (schedules): someone fails, a rank that succeeds has the right data */

/* a started nonblocking collective, waited for */
static int done(int rc, MPI_Request *q)
{
    return rc != MPI_SUCCESS ? rc : MPI_Wait(q, MPI_STATUS_IGNORE);
}

static int call(int coll, int cnt)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request q;
    for (int i = 0; i < N; i++) {
        counts[i] = cnt;
        displs[i] = i * cnt;
    }
    switch (coll) {
    case C_BCAST:
        return nb ? done(MPI_Ibcast(rbuf, cnt, MPI_INT, 0, w, &q), &q) : MPI_Bcast(rbuf, cnt, MPI_INT, 0, w);
    case C_REDUCE:
    case C_REDUCE_NC: {
        MPI_Op op = coll == C_REDUCE ? MPI_SUM : first;
        return nb ? done(MPI_Ireduce(sbuf, rbuf, cnt, MPI_INT, op, 0, w, &q), &q)
                  : MPI_Reduce(sbuf, rbuf, cnt, MPI_INT, op, 0, w);
    }
    case C_ALLREDUCE:
        return nb ? done(MPI_Iallreduce(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                  : MPI_Allreduce(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w);
    case C_GATHER:
        return nb ? done(MPI_Igather(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, 0, w, &q), &q)
                  : MPI_Gather(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, 0, w);
    case C_GATHERV:
        return nb ? done(MPI_Igatherv(sbuf, cnt, MPI_INT, rbuf, counts, displs, MPI_INT, 0, w, &q), &q)
                  : MPI_Gatherv(sbuf, cnt, MPI_INT, rbuf, counts, displs, MPI_INT, 0, w);
    case C_SCATTER:
        return nb ? done(MPI_Iscatter(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, 0, w, &q), &q)
                  : MPI_Scatter(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, 0, w);
    case C_SCATTERV:
        return nb ? done(MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rbuf, cnt, MPI_INT, 0, w, &q), &q)
                  : MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, cnt, MPI_INT, 0, w);
    case C_ALLGATHER:
        return nb ? done(MPI_Iallgather(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, w, &q), &q)
                  : MPI_Allgather(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, w);
    case C_ALLTOALL:
        return nb ? done(MPI_Ialltoall(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, w, &q), &q)
                  : MPI_Alltoall(sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT, w);
    case C_REDSCAT:
    case C_REDSCAT_NC: {
        MPI_Op op = coll == C_REDSCAT ? MPI_SUM : first;
        return nb ? done(MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, op, w, &q), &q)
                  : MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, op, w);
    }
    case C_REDSCAT_BLOCK:
        return nb ? done(MPI_Ireduce_scatter_block(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                  : MPI_Reduce_scatter_block(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w);
    case C_SCAN:
        return nb ? done(MPI_Iscan(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                  : MPI_Scan(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w);
    case C_EXSCAN:
        return nb ? done(MPI_Iexscan(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                  : MPI_Exscan(sbuf, rbuf, cnt, MPI_INT, MPI_SUM, w);
    case C_ALLGATHERV:
        return nb ? done(MPI_Iallgatherv(sbuf, cnt, MPI_INT, rbuf, counts, displs, MPI_INT, w, &q), &q)
                  : MPI_Allgatherv(sbuf, cnt, MPI_INT, rbuf, counts, displs, MPI_INT, w);
    default:
        return nb ? done(MPI_Ialltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, w, &q), &q)
                  : MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT, w);
    }
}

/* input element i of rank r */
static int val(int r, int i)
{
    return r * 1000 + i % 1000;
}

/* a rank that returned success holds the right data (where it is defined) */
static void check_data(int coll, int cnt)
{
    int bad = -1;
    for (int i = 0; i < cnt && bad < 0; i++) {
        int want = rbuf[i];
        switch (coll) {
        case C_BCAST:
            want = val(0, i);
            break;
        case C_SCATTER:
        case C_SCATTERV:
            want = val(0, R * cnt + i);
            break;
        case C_SCAN:
        case C_EXSCAN: {
            int last = coll == C_SCAN ? R : R - 1;
            want = 0;
            for (int k = 0; k <= last; k++)
                want += val(k, i);
            if (last < 0)
                want = rbuf[i]; /* exscan on rank 0: undefined */
            break;
        }
        default:
            break;
        }
        if (rbuf[i] != want)
            bad = i;
    }
    CHECK(bad < 0, "%s returned MPI_SUCCESS but element %d is %d, expected another value", cname[coll], bad,
          bad >= 0 ? rbuf[bad] : 0);
}

static void one_out(int coll, int odd, int a, int b)
{
    int cnt = R == odd ? a : b, total = N * (a > b ? a : b), large = a > 4096 || b > 4096;
    if (hier && shm_large && large && coll == C_ALLGATHER)
        return; /* (see the top) */
    p2p_setstep("%s %s, rank %d passes %d, the others %d", nb ? "nonblocking" : "blocking", cname[coll], odd, a, b);
    for (int i = 0; i < total; i++) {
        sbuf[i] = val(R, i);
        rbuf[i] = R == 0 && coll == C_BCAST ? val(0, i) : -1;
    }
    int rc = call(coll, cnt);
    check_class(rc, cname[coll]);
    if (!nb && shm_large && large &&
        (coll == C_BCAST || coll == C_REDUCE || coll == C_REDUCE_NC || coll == C_ALLREDUCE || coll == C_ALLGATHER ||
         coll == C_REDSCAT_NC)) {
        /* large shared-memory paths: no size check yet (see the top) */
    } else if (hier || nb) { /* someone must notice */
        int failed = rc != MPI_SUCCESS, any = 0;
        MPI_OK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(any, "%s: no rank returned an error", cname[coll]);
        if (nb && rc == MPI_SUCCESS)
            check_data(coll, cnt);
    } else if (must(coll, odd, R)) {
        must_fail(rc, cname[coll]);
    } else if (rc == MPI_SUCCESS) {
        check_data(coll, cnt);
    }
    still_usable(cname[coll]);
}

static void one_out_all(void)
{
    /* small (tree and recursive-doubling algorithms) and large (above every
     * default switch point: scatter + ring bcast, Rabenseifner, linear
     * gather/scatter, ring allgather; rendezvous messages) */
    static const int pairs[][2] = {{1, 8}, {8, 1}, {17000, 20000}, {20000, 17000}};
    int max = 20000;
    sbuf = malloc((size_t)N * max * sizeof(int));
    rbuf = malloc((size_t)N * max * sizeof(int));
    counts = malloc((size_t)N * sizeof(int));
    displs = malloc((size_t)N * sizeof(int));
    CHECK(sbuf && rbuf && counts && displs, "out of memory");
    MPI_Op_create(first_op, 0, &first);
    for (unsigned p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int odd = 0; odd < N; odd += N - 1 > 0 ? N - 1 : 1)
            for (int coll = 0; coll < C_N; coll++)
                one_out(coll, odd, pairs[p][0], pairs[p][1]);
    MPI_Op_free(&first);
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    hier = argc > 1 && strcmp(argv[1], "hier") == 0;
    const char *ch = getenv("WHARF_CHANNEL"), *on = getenv("WHARF_COLL_SHM"), *chunk = getenv("WHARF_COLL_SHM_CHUNK");
    shm_large = !(ch && strcmp(ch, "net") == 0) && !(on && strcmp(on, "0") == 0) && !(chunk && strcmp(chunk, "0") == 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* root/first rank longer, then shorter, than the others */
    run(1, 1, 8);
    run(1, 8, 1);
    if (!hier) {
        run(0, 1, 8);
        run(0, 8, 1);
    }
    for (nb = 0; nb < 2; nb++)
        one_out_all();
    MPI_Barrier(MPI_COMM_WORLD);
    if (R == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
