/* Part of coll_nbc.c (included once): the collectives that move data
 * (gather, scatter, allgather, all-to-all and their v/w forms), barrier, and
 * many collectives outstanding at once on two communicators. */

static void test_rooted(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int *counts = malloc(sizeof(int) * (size_t)N), *displs = malloc(sizeof(int) * (size_t)N), total = 0;
    for (int i = 0; i < N; i++) {
        counts[i] = (i * 5) % 4 + (i == 1 ? 0 : 1) * 2; /* rank 1 has an empty block */
        displs[i] = total + 1;                          /* one hole before every block */
        total += counts[i] + 1;
    }
    for (int root = 0; root < N; root++)
        for (int v = 0; v < 2; v++)
            for (int in_place = 0; in_place < 2; in_place++) {
                int bc = 3, all = v ? total : bc * N, mine = v ? counts[R] : bc;
                int *big = malloc(sizeof(int) * ((size_t)all + 1)), *one = malloc(sizeof(int) * ((size_t)bc + 4));
                int ip = in_place && R == root;
#define BLK(i) (v ? displs[i] : (i) * bc)
#define CNT(i) (v ? counts[i] : bc)
                /* gather */
                for (int rep = 0; rep < REPS; rep++) {
                    int seed = 60 + rep + v * 3 + in_place;
                    p2p_setstep("gather root %d v %d in_place %d rep %d", root, v, in_place, rep);
                    for (int e = 0; e <= all; e++)
                        big[e] = -99;
                    for (int e = 0; e < mine; e++)
                        one[e] = val(seed, R, e);
                    if (ip)
                        for (int e = 0; e < mine; e++)
                            big[BLK(R) + e] = one[e];
                    const void *s = ip ? MPI_IN_PLACE : one;
                    if (v)
                        COLL(MPI_Igatherv(s, mine, MPI_INT, big, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &req),
                             MPI_Gatherv_init(s, mine, MPI_INT, big, counts, displs, MPI_INT, root, MPI_COMM_WORLD,
                                              MPI_INFO_NULL, &req));
                    else
                        COLL(MPI_Igather(s, bc, MPI_INT, big, bc, MPI_INT, root, MPI_COMM_WORLD, &req),
                             MPI_Gather_init(s, bc, MPI_INT, big, bc, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                                             &req));
                    if (R == root) {
                        for (int i = 0; i < N; i++)
                            for (int e = 0; e < CNT(i); e++)
                                CHECK(big[BLK(i) + e] == val(seed, i, e), "block %d [%d] = %d, want %d", i, e,
                                      big[BLK(i) + e], val(seed, i, e));
                        if (v)
                            for (int i = 0; i < N; i++)
                                CHECK(big[displs[i] - 1] == -99, "hole before block %d written", i);
                    }
                }
                DONE();
                /* scatter */
                for (int rep = 0; rep < REPS; rep++) {
                    int seed = 80 + rep + v * 3 + in_place;
                    p2p_setstep("scatter root %d v %d in_place %d rep %d", root, v, in_place, rep);
                    for (int e = 0; e <= all; e++)
                        big[e] = -99;
                    for (int e = 0; e < bc + 4; e++)
                        one[e] = -99;
                    if (R == root)
                        for (int i = 0; i < N; i++)
                            for (int e = 0; e < CNT(i); e++)
                                big[BLK(i) + e] = val(seed, i, e);
                    void *r = ip ? MPI_IN_PLACE : one;
                    if (v)
                        COLL(MPI_Iscatterv(big, counts, displs, MPI_INT, r, mine, MPI_INT, root, MPI_COMM_WORLD, &req),
                             MPI_Scatterv_init(big, counts, displs, MPI_INT, r, mine, MPI_INT, root, MPI_COMM_WORLD,
                                               MPI_INFO_NULL, &req));
                    else
                        COLL(MPI_Iscatter(big, bc, MPI_INT, r, bc, MPI_INT, root, MPI_COMM_WORLD, &req),
                             MPI_Scatter_init(big, bc, MPI_INT, r, bc, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                                              &req));
                    if (!ip) {
                        for (int e = 0; e < mine; e++)
                            CHECK(one[e] == val(seed, R, e), "one[%d] = %d, want %d", e, one[e], val(seed, R, e));
                        CHECK(one[mine] == -99, "wrote past the block");
                    } else {
                        for (int e = 0; e < mine; e++)
                            CHECK(big[BLK(R) + e] == val(seed, R, e), "in-place block changed");
                    }
                }
                DONE();
#undef BLK
#undef CNT
                free(big);
                free(one);
            }
    free(counts);
    free(displs);
}

static void test_allgather(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int *counts = malloc(sizeof(int) * (size_t)N), *displs = malloc(sizeof(int) * (size_t)N), total = 0;
    for (int i = 0; i < N; i++) {
        counts[i] = i % 3 == 2 ? 0 : i % 4 + 1;
        displs[i] = total + 2;
        total += counts[i] + 2;
    }
    for (int v = 0; v < 2; v++)
        for (int mode = 0; mode < 3; mode++) { /* plain, in place, large (rendezvous) blocks */
            int bc = mode == 2 ? 5000 : 3, all = v ? total : bc * N, mine = v ? counts[R] : bc;
            if (v && mode == 2)
                continue;
            int *big = malloc(sizeof(int) * ((size_t)all + 1)), *one = malloc(sizeof(int) * (size_t)(bc + 1));
            for (int rep = 0; rep < REPS; rep++) {
                int seed = 90 + rep + v * 3 + mode;
                p2p_setstep("allgather v %d mode %d rep %d", v, mode, rep);
                for (int e = 0; e <= all; e++)
                    big[e] = -99;
                for (int e = 0; e < mine; e++)
                    one[e] = val(seed, R, e);
                int at = v ? displs[R] : R * bc;
                if (mode == 1)
                    for (int e = 0; e < mine; e++)
                        big[at + e] = one[e];
                const void *s = mode == 1 ? MPI_IN_PLACE : one;
                if (v)
                    COLL(MPI_Iallgatherv(s, mine, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD, &req),
                         MPI_Allgatherv_init(s, mine, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD,
                                             MPI_INFO_NULL, &req));
                else
                    COLL(MPI_Iallgather(s, bc, MPI_INT, big, bc, MPI_INT, MPI_COMM_WORLD, &req),
                         MPI_Allgather_init(s, bc, MPI_INT, big, bc, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                for (int i = 0; i < N; i++) {
                    int b = v ? displs[i] : i * bc, n = v ? counts[i] : bc;
                    for (int e = 0; e < n; e++)
                        CHECK(big[b + e] == val(seed, i, e), "block %d [%d] = %d, want %d", i, e, big[b + e],
                              val(seed, i, e));
                    if (v)
                        CHECK(big[b - 1] == -99 && big[b - 2] == -99, "hole before block %d written", i);
                }
                CHECK(big[all] == -99, "wrote past the end");
            }
            DONE();
            free(big);
            free(one);
        }
    free(counts);
    free(displs);
}

/* element e of the block rank i sends to rank j */
static int a2a_val(int seed, int i, int j, int e)
{
    return seed * 1000 + i * 100 + j * 10 + e;
}

static void test_alltoall(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int n = N;
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    int *sdb = malloc(sizeof(int) * (size_t)n), *rdb = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)n), *rt = malloc(sizeof(MPI_Datatype) * (size_t)n);
    int stot = 0, rtot = 0;
    for (int j = 0; j < n; j++) { /* I send (R + j) % 3 elements to j; j sends me (j + R) % 3 */
        sc[j] = (R + j) % 3;
        rc[j] = (j + R) % 3;
        sd[j] = stot;
        rd[j] = rtot;
        stot += sc[j] + 1;
        rtot += 2 * rc[j] + 1; /* room for the strided receive type of alltoallw */
        st[j] = MPI_INT;
        rt[j] = j % 2 ? stride2 : MPI_INT;
        sdb[j] = sd[j] * (int)sizeof(int);
        rdb[j] = rd[j] * (int)sizeof(int);
    }
    int bc = 4;
    int *sb = malloc(sizeof(int) * (size_t)(bc * n + stot + 1)), *rb = malloc(sizeof(int) * (size_t)(bc * n + rtot + 1));
    for (int kind = 0; kind < 5; kind++) { /* alltoall, in place, v, v in place, w */
        for (int rep = 0; rep < REPS; rep++) {
            int seed = kind + rep;
            p2p_setstep("alltoall kind %d rep %d", kind, rep);
            for (int e = 0; e < bc * n + rtot + 1; e++)
                rb[e] = -99;
            for (int j = 0; j < n; j++)
                for (int e = 0; e < (kind < 2 ? bc : sc[j]); e++)
                    sb[(kind < 2 ? j * bc : sd[j]) + e] = a2a_val(seed, R, j, e);
            if (kind == 1)
                for (int j = 0; j < n; j++)
                    for (int e = 0; e < bc; e++)
                        rb[j * bc + e] = a2a_val(seed, R, j, e);
            if (kind == 3) /* in place v: the send data is in the receive layout */
                for (int j = 0; j < n; j++)
                    for (int e = 0; e < rc[j]; e++)
                        rb[rd[j] + e] = a2a_val(seed, R, j, e);
            if (kind == 0)
                COLL(MPI_Ialltoall(sb, bc, MPI_INT, rb, bc, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Alltoall_init(sb, bc, MPI_INT, rb, bc, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            else if (kind == 1)
                COLL(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, bc, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, bc, MPI_INT, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &req));
            else if (kind == 2)
                COLL(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            else if (kind == 3)
                COLL(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, MPI_COMM_WORLD,
                                    &req),
                     MPI_Alltoallv_init(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT,
                                        MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            else
                COLL(MPI_Ialltoallw(sb, sc, sdb, st, rb, rc, rdb, rt, MPI_COMM_WORLD, &req),
                     MPI_Alltoallw_init(sb, sc, sdb, st, rb, rc, rdb, rt, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            for (int j = 0; j < n; j++) {
                int cnt = kind < 2 ? bc : rc[j], base = kind < 2 ? j * bc : rd[j], step = kind == 4 && j % 2 ? 2 : 1;
                for (int e = 0; e < cnt; e++)
                    CHECK(rb[base + e * step] == a2a_val(seed, j, R, e), "from %d [%d] = %d, want %d", j, e,
                          rb[base + e * step], a2a_val(seed, j, R, e));
                if (step == 2)
                    for (int e = 0; e < cnt; e++)
                        CHECK(rb[base + e * 2 + 1] == -99, "alltoallw hole written");
                if (kind >= 2)
                    CHECK(rb[base + cnt * step] == -99, "wrote past block %d", j);
            }
        }
        DONE();
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sdb);
    free(rdb);
    free(st);
    free(rt);
}

/* Barrier semantics: every rank's message sent before the barrier has been
 * matched by a receive posted before it, so after it an MPI_Iprobe for a
 * message that was never sent finds nothing, and the counts add up. */
static void test_barrier(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    for (int rep = 0; rep < REPS + 2; rep++) {
        p2p_setstep("barrier rep %d", rep);
        int to = (R + 1) % N, from = (R - 1 + N) % N, got = -1, x = R * 10 + rep;
        MPI_Request pr[2];
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, from, 700 + rep, MPI_COMM_WORLD, &pr[0]));
        MPI_OK(MPI_Isend(&x, 1, MPI_INT, to, 700 + rep, MPI_COMM_WORLD, &pr[1]));
        if (PERSIST) {
            if (rep == 0)
                MPI_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            MPI_OK(MPI_Start(&req));
        } else {
            MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
        }
        MPI_Request all[3] = {pr[0], pr[1], req};
        MPI_OK(MPI_Waitall(3, all, MPI_STATUSES_IGNORE));
        req = all[2];
        CHECK(got == from * 10 + rep, "got %d, want %d", got, from * 10 + rep);
    }
    DONE();
}

/* Several collectives outstanding on two communicators (a duplicate of
 * MPI_COMM_WORLD and one with the ranks reversed), interleaved with
 * point-to-point messages on MPI_COMM_WORLD, completed together in one
 * MPI_Waitall whose array lists them in another order than started. */
static void test_mixed(void)
{
    if (PERSIST)
        return;
    MPI_Comm a, b;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, N - R, &b));
    int rb_ = N - 1 - R; /* my rank in b */
    for (int rep = 0; rep < 3; rep++) {
        p2p_setstep("mixed rep %d", rep);
        enum { CNT = 2000 };
        int *s1 = malloc(sizeof(int) * CNT), *r1 = malloc(sizeof(int) * CNT), *r2 = malloc(sizeof(int) * CNT);
        int *bc = malloc(sizeof(int) * CNT), *ag = malloc(sizeof(int) * (size_t)N * 2);
        int *a2s = malloc(sizeof(int) * (size_t)N), *a2r = malloc(sizeof(int) * (size_t)N);
        int mine2[2] = {val(rep, R, 0), val(rep, R, 1)}, ptp_in = -1, ptp_out = R + 1000 * rep;
        for (int e = 0; e < CNT; e++) {
            s1[e] = val(rep, R, e);
            bc[e] = rb_ == rep % N ? val(rep + 9, rb_, e) : -1;
        }
        for (int j = 0; j < N; j++)
            a2s[j] = R * 100 + j;
        MPI_Request q[9];
        int k = 0;
        MPI_OK(MPI_Iallreduce(s1, r1, CNT, MPI_INT, MPI_SUM, a, &q[k++]));
        MPI_OK(MPI_Irecv(&ptp_in, 1, MPI_INT, (R + N - 1) % N, 5, MPI_COMM_WORLD, &q[k++]));
        MPI_OK(MPI_Ibcast(bc, CNT, MPI_INT, rep % N, b, &q[k++]));
        MPI_OK(MPI_Iallreduce(s1, r2, CNT, MPI_INT, MPI_MAX, b, &q[k++]));
        MPI_OK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, a, &q[k++]));
        MPI_OK(MPI_Isend(&ptp_out, 1, MPI_INT, (R + 1) % N, 5, MPI_COMM_WORLD, &q[k++]));
        MPI_OK(MPI_Iallgather(mine2, 2, MPI_INT, ag, 2, MPI_INT, b, &q[k++]));
        MPI_OK(MPI_Ibarrier(a, &q[k++]));
        MPI_OK(MPI_Ibarrier(b, &q[k++]));
        MPI_Request rev[9];
        for (int i = 0; i < k; i++)
            rev[i] = q[(i * 4) % k]; /* 4 and 9 are coprime: a permutation */
        MPI_OK(MPI_Waitall(k, rev, MPI_STATUSES_IGNORE));
        for (int i = 0; i < k; i++)
            CHECK(rev[i] == MPI_REQUEST_NULL, "request %d not released", i);
        for (int e = 0; e < CNT; e++) {
            int mx = val(rep, 0, e);
            for (int i = 1; i < N; i++)
                mx = val(rep, i, e) > mx ? val(rep, i, e) : mx;
            CHECK(r1[e] == vsum(rep, 0, N, e), "allreduce on a: [%d] = %d, want %d", e, r1[e], vsum(rep, 0, N, e));
            CHECK(r2[e] == mx, "allreduce max on b: [%d] = %d, want %d", e, r2[e], mx);
            CHECK(bc[e] == val(rep + 9, rep % N, e), "bcast on b: [%d] = %d", e, bc[e]);
        }
        for (int j = 0; j < N; j++) {
            int wr = N - 1 - j; /* world rank of b's rank j */
            CHECK(a2r[j] == j * 100 + R, "alltoall on a from %d: %d", j, a2r[j]);
            CHECK(ag[2 * j] == val(rep, wr, 0) && ag[2 * j + 1] == val(rep, wr, 1), "allgather on b block %d", j);
        }
        CHECK(ptp_in == (R + N - 1) % N + 1000 * rep, "point-to-point message %d", ptp_in);
        free(s1);
        free(r1);
        free(r2);
        free(bc);
        free(ag);
        free(a2s);
        free(a2r);
    }
    /* a request freed while active completes in the background */
    p2p_setstep("request_free");
    int x = R == 0 ? 77 : -1, y = -1;
    MPI_Request q;
    MPI_OK(MPI_Ibcast(&x, 1, MPI_INT, 0, a, &q));
    MPI_OK(MPI_Request_free(&q));
    CHECK(q == MPI_REQUEST_NULL, "freed request not set to MPI_REQUEST_NULL");
    MPI_OK(MPI_Bcast(&y, 0, MPI_INT, 0, a));
    MPI_OK(MPI_Allreduce(&R, &y, 1, MPI_INT, MPI_MAX, a));
    CHECK(y == N - 1, "allreduce after a freed ibcast: %d", y);
    MPI_OK(MPI_Barrier(a));
    MPI_OK(MPI_Comm_free(&a));
    MPI_OK(MPI_Comm_free(&b));
}
