/* MPI-level tests of alltoall, alltoallv and alltoallw: plain, MPI_IN_PLACE,
 * derived (non-contiguous) types, zero-sized blocks, gaps and reversed
 * displacements, per-peer types, and the large-count (_c) variants. */
#include "p2p_check.h"

static int R, N;
static MPI_Datatype stride2; /* an int with extent 2 ints */

/* element e of the block rank i sends to rank j */
static int val(int seed, int i, int j, int e)
{
    return seed * 1000003 + i * 10007 + j * 101 + e;
}

static void alltoall_case(int cnt, int seed, MPI_Datatype rt, int in_place)
{
    p2p_setstep("alltoall cnt %d rt %s inplace %d", cnt, rt == MPI_INT ? "int" : "stride2", in_place);
    int st = rt == MPI_INT ? 1 : 2;
    size_t rn = (size_t)cnt * (size_t)N * (size_t)st + 1;
    int *sb = malloc(sizeof(int) * ((size_t)cnt * N + 1)), *rb = malloc(sizeof(int) * rn);
    for (int j = 0; j < N; j++)
        for (int e = 0; e < cnt; e++)
            sb[j * cnt + e] = val(seed, R, j, e);
    for (size_t k = 0; k < rn; k++)
        rb[k] = -1;
    if (in_place) {
        for (int j = 0; j < N; j++)
            for (int e = 0; e < cnt; e++)
                rb[((size_t)j * cnt + e) * st] = val(seed, R, j, e);
        MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, cnt, rt, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Alltoall(sb, cnt, MPI_INT, rb, cnt, rt, MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++)
        for (int e = 0; e < cnt; e++) {
            size_t at = ((size_t)i * cnt + e) * st;
            CHECK(rb[at] == val(seed, i, R, e), "from %d elt %d: %d, want %d", i, e, rb[at], val(seed, i, R, e));
            if (st == 2)
                CHECK(rb[at + 1] == -1, "hole written");
        }
    CHECK(rb[rn - 1] == -1, "wrote past the end");
    free(sb);
    free(rb);
}

/* alltoallv: rank i sends (i + j) % 3 * m elements to rank j.  Skewed, so
 * that one rank's blocks are too big for a shared-memory cell (4 KB) while
 * the others' fit theirs: skew 1, rank 0 sends 1100 more to everyone (4.4
 * KB a block); skew 2 (symmetric, for in place), 600 more both ways between
 * rank 0 and each other rank (rank 0 sends 2.4 KB x (N - 1)) */
static int skew;
static int vcnt(int i, int j, int m)
{
    int extra = skew == 1 ? (i == 0) * 1100 : skew == 2 ? (i == 0 || j == 0) * (i != j) * 600 : 0;
    return (i + j) % 3 * m + extra;
}

static void alltoallv_case(int m, int seed, int in_place, int large)
{
    p2p_setstep("alltoallv m %d inplace %d large %d", m, in_place, large);
    int *sc = malloc(sizeof(int) * N), *sd = malloc(sizeof(int) * N), *rc = malloc(sizeof(int) * N),
        *rd = malloc(sizeof(int) * N);
    int stot = 0, rtot = 0;
    for (int j = 0; j < N; j++) { /* send blocks in order with a gap of 1 */
        sc[j] = vcnt(R, j, m);
        sd[j] = stot;
        stot += sc[j] + 1;
    }
    for (int i = N - 1; i >= 0; i--) { /* receive blocks in reverse order, gap 3 */
        rc[i] = vcnt(i, R, m);
        rd[i] = rtot;
        rtot += rc[i] + 3;
    }
    int *sb = malloc(sizeof(int) * (size_t)(stot + 1)), *rb = malloc(sizeof(int) * (size_t)(rtot + 1));
    for (int j = 0; j < N; j++)
        for (int e = 0; e < sc[j]; e++)
            sb[sd[j] + e] = val(seed, R, j, e);
    for (int k = 0; k <= rtot; k++)
        rb[k] = -6;
    if (in_place) { /* symmetric counts: my block for peer j sits where j's data will land */
        for (int j = 0; j < N; j++)
            for (int e = 0; e < rc[j]; e++)
                rb[rd[j] + e] = val(seed, R, j, e);
    }
    const void *sbuf = in_place ? MPI_IN_PLACE : sb;
    if (large) {
        MPI_Count *scc = malloc(sizeof(MPI_Count) * N), *rcc = malloc(sizeof(MPI_Count) * N);
        MPI_Aint *sda = malloc(sizeof(MPI_Aint) * N), *rda = malloc(sizeof(MPI_Aint) * N);
        for (int j = 0; j < N; j++)
            scc[j] = sc[j], rcc[j] = rc[j], sda[j] = sd[j], rda[j] = rd[j];
        MPI_OK(MPI_Alltoallv_c(sbuf, scc, sda, MPI_INT, rb, rcc, rda, MPI_INT, MPI_COMM_WORLD));
        free(scc), free(rcc), free(sda), free(rda);
    } else {
        MPI_OK(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++) {
        for (int e = 0; e < rc[i]; e++)
            CHECK(rb[rd[i] + e] == val(seed, i, R, e), "from %d elt %d: %d", i, e, rb[rd[i] + e]);
        for (int g = 0; g < 3; g++)
            CHECK(rb[rd[i] + rc[i] + g] == -6, "gap after block %d written", i);
    }
    free(sb), free(rb), free(sc), free(sd), free(rc), free(rd);
}

/* alltoallw: to even peers MPI_INT blocks, to odd peers stride2 blocks;
 * received as MPI_INT from odd ranks and as stride2 from even ones; byte
 * displacements */
static void alltoallw_case(int m, int seed, int in_place)
{
    p2p_setstep("alltoallw m %d inplace %d", m, in_place);
    int *sc = malloc(sizeof(int) * N), *sd = malloc(sizeof(int) * N), *rc = malloc(sizeof(int) * N),
        *rd = malloc(sizeof(int) * N);
    MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * N), *rts = malloc(sizeof(MPI_Datatype) * N);
    int soff = 0, roff = 0; /* in ints */
    for (int j = 0; j < N; j++) {
        sc[j] = vcnt(R, j, m);
        sts[j] = j % 2 ? stride2 : MPI_INT;
        sd[j] = soff * (int)sizeof(int);
        soff += sc[j] * (j % 2 ? 2 : 1) + 1;
        rc[j] = vcnt(j, R, m);
        rts[j] = j % 2 ? MPI_INT : stride2;
        rd[j] = roff * (int)sizeof(int);
        roff += rc[j] * (j % 2 ? 1 : 2) + 1;
    }
    int *sb = calloc((size_t)soff + 1, sizeof(int)), *rb = malloc(sizeof(int) * ((size_t)roff + 1));
    for (int j = 0; j < N; j++)
        for (int e = 0; e < sc[j]; e++)
            sb[sd[j] / (int)sizeof(int) + e * (j % 2 ? 2 : 1)] = val(seed, R, j, e);
    for (int k = 0; k <= roff; k++)
        rb[k] = -7;
    if (in_place) {
        /* data for peer j, laid out as the receive side describes it */
        for (int j = 0; j < N; j++)
            for (int e = 0; e < rc[j]; e++)
                rb[rd[j] / (int)sizeof(int) + e * (j % 2 ? 1 : 2)] = val(seed, R, j, e);
        MPI_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rb, rc, rd, rts, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Alltoallw(sb, sc, sd, sts, rb, rc, rd, rts, MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++) {
        int st = i % 2 ? 1 : 2, base = rd[i] / (int)sizeof(int);
        for (int e = 0; e < rc[i]; e++) {
            CHECK(rb[base + e * st] == val(seed, i, R, e), "from %d elt %d: %d", i, e, rb[base + e * st]);
            if (st == 2)
                CHECK(rb[base + e * st + 1] == -7, "hole written");
        }
        CHECK(rb[base + rc[i] * st] == -7, "gap after block %d written", i);
    }
    free(sb), free(rb), free(sc), free(sd), free(rc), free(rd), free(sts), free(rts);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2));
    MPI_OK(MPI_Type_commit(&stride2));
    static const int counts[] = {0, 1, 3, 5000, 70000}; /* 70000: rendezvous by single copy where CMA works */
    for (int k = 0; k < 5; k++) {
        alltoall_case(counts[k], k, MPI_INT, 0);
        alltoall_case(counts[k], k + 10, MPI_INT, 1);
        alltoall_case(counts[k], k + 20, stride2, 0);
        alltoall_case(counts[k], k + 30, stride2, 1);
    }
    static const int ms[] = {0, 1, 4, 3000};
    for (int k = 0; k < 4; k++) {
        alltoallv_case(ms[k], k, 0, 0);
        alltoallv_case(ms[k], k + 10, 1, 0);
        alltoallv_case(ms[k], k + 20, 0, 1);
        alltoallw_case(ms[k], k + 30, 0);
        alltoallw_case(ms[k], k + 40, 1);
    }
    /* one rank's blocks as messages, the others' through the cells, in one call */
    for (int k = 0; k < 3; k++) {
        skew = 1;
        alltoallv_case(ms[k], k + 50, 0, 0);
        alltoallw_case(ms[k], k + 70, 0);
        skew = 2;
        alltoallv_case(ms[k], k + 60, 1, 0);
        alltoallw_case(ms[k], k + 80, 1);
    }
    skew = 0;
    /* alltoall with large count API */
    p2p_setstep("alltoall_c");
    int sb[64], rb[64];
    for (int j = 0; j < N; j++)
        sb[j] = val(99, R, j, 0);
    MPI_OK(MPI_Alltoall_c(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        CHECK(rb[i] == val(99, i, R, 0), "alltoall_c from %d", i);
    MPI_OK(MPI_Type_free(&stride2));
    if (R == 0)
        printf("coll_alltoall: OK on %d ranks\n", N);
    MPI_Finalize();
    return 0;
}
