/* MPI-level tests of the data-movement collectives: barrier, bcast,
 * gather(v), scatter(v), allgather(v).  Every root, MPI_IN_PLACE, derived
 * (non-contiguous) datatypes on either side, count 0, and message sizes on
 * both sides of each algorithm switch (the thresholds are set here, before
 * MPI_Init, so both algorithms of every collective run). */
#include <unistd.h>

#include "p2p_check.h"

static int R, N;

/* value of element j of rank i's contribution in test `seed` */
static int val(int seed, int i, int j)
{
    return seed * 1000003 + i * 10007 + j;
}

/* ints with extent 2 ints: every other slot (a non-contiguous type) */
static MPI_Datatype stride2;
/* 2 ints at offsets 0 and 3, extent 4 ints */
static MPI_Datatype vec;

static void make_types(void)
{
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2));
    MPI_OK(MPI_Type_commit(&stride2));
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
}

static void test_barrier(void)
{
    p2p_setstep("barrier");
    for (int i = 0; i < 5; i++)
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* nobody leaves before the last rank entered */
    int late = N - 1;
    double t0 = MPI_Wtime();
    if (R == late)
        usleep(300000);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double dt = MPI_Wtime() - t0;
    CHECK(dt > 0.25, "left the barrier after %.3f s while rank %d slept 0.3 s", dt, late);
}

static void test_bcast(void)
{
    static const int counts[] = {0, 1, 7, 1000, 3000, 70001};
    for (int root = 0; root < N; root++) {
        for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            int cnt = counts[k];
            p2p_setstep("bcast root %d count %d", root, cnt);
            int *b = malloc(sizeof(int) * (size_t)(cnt + 1));
            for (int j = 0; j <= cnt; j++)
                b[j] = R == root ? val(k, root, j) : -1;
            MPI_OK(MPI_Bcast(b, cnt, MPI_INT, root, MPI_COMM_WORLD));
            for (int j = 0; j < cnt; j++)
                CHECK(b[j] == val(k, root, j), "b[%d] = %d, want %d", j, b[j], val(k, root, j));
            CHECK(b[cnt] == (R == root ? val(k, root, cnt) : -1), "wrote past the end");
            free(b);
        }
    }
    /* non-contiguous: `vec` (holes at 4k+1, 4k+2 must stay), small and large */
    static const int vcounts[] = {3, 20000};
    for (unsigned k = 0; k < 2; k++) {
        int cnt = vcounts[k], root = (N > 1) ? 1 : 0;
        p2p_setstep("bcast vec root %d count %d", root, cnt);
        int *b = malloc(sizeof(int) * 4 * (size_t)cnt);
        for (int j = 0; j < 4 * cnt; j++)
            b[j] = R == root ? val(9, root, j) : -7;
        MPI_OK(MPI_Bcast(b, cnt, vec, root, MPI_COMM_WORLD));
        for (int j = 0; j < 4 * cnt; j++) {
            int data = j % 4 == 0 || j % 4 == 3;
            int want = R == root || data ? val(9, root, j) : -7;
            CHECK(b[j] == want, "vec bcast: b[%d] = %d, want %d", j, b[j], want);
        }
        free(b);
    }
}

/* gather into `rt` (MPI_INT or stride2) of cnt ints per rank; sbuf of vec
 * type when use_vec (cnt even) */
static void gather_case(int root, int cnt, int seed, MPI_Datatype rt, int use_vec, int in_place)
{
    p2p_setstep("gather root %d cnt %d rt %s vec %d inplace %d", root, cnt, rt == MPI_INT ? "int" : "stride2",
                use_vec, in_place);
    int stretch = rt == MPI_INT ? 1 : 2;
    size_t rn = (size_t)cnt * (size_t)N * (size_t)stretch + 1;
    int *rb = malloc(sizeof(int) * rn);
    for (size_t j = 0; j < rn; j++)
        rb[j] = -3;
    int *sb = malloc(sizeof(int) * (size_t)(2 * cnt + 2));
    int scnt = cnt;
    MPI_Datatype st = MPI_INT;
    if (use_vec) { /* cnt/2 vec elements: ints at 4k and 4k+3 */
        scnt = cnt / 2;
        st = vec;
        for (int j = 0; j < cnt; j++)
            sb[4 * (j / 2) + 3 * (j % 2)] = val(seed, R, j);
    } else {
        for (int j = 0; j < cnt; j++)
            sb[j] = val(seed, R, j);
    }
    if (in_place && R == root) {
        for (int j = 0; j < cnt; j++)
            rb[((size_t)root * cnt + j) * stretch] = val(seed, R, j);
        MPI_OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, cnt, rt, root, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Gather(sb, scnt, st, rb, cnt, rt, root, MPI_COMM_WORLD));
    }
    if (R == root) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < cnt; j++) {
                size_t at = ((size_t)i * cnt + j) * stretch;
                CHECK(rb[at] == val(seed, i, j), "rb[%zu] = %d, want %d (rank %d elt %d)", at, rb[at],
                      val(seed, i, j), i, j);
                if (stretch == 2)
                    CHECK(rb[at + 1] == -3, "stride2 hole %zu written", at + 1);
            }
        CHECK(rb[rn - 1] == -3, "wrote past the end");
    }
    free(rb);
    free(sb);
}

static void scatter_case(int root, int cnt, int seed, MPI_Datatype st, int in_place)
{
    p2p_setstep("scatter root %d cnt %d st %s inplace %d", root, cnt, st == MPI_INT ? "int" : "stride2", in_place);
    int stretch = st == MPI_INT ? 1 : 2;
    size_t sn = (size_t)cnt * (size_t)N * (size_t)stretch + 1;
    int *sb = malloc(sizeof(int) * sn), *rb = malloc(sizeof(int) * (size_t)(cnt + 1));
    for (int i = 0; i < N; i++)
        for (int j = 0; j < cnt; j++)
            sb[((size_t)i * cnt + j) * stretch] = val(seed, i, j);
    for (int j = 0; j <= cnt; j++)
        rb[j] = -5;
    if (in_place && R == root) {
        MPI_OK(MPI_Scatter(sb, cnt, st, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
        for (int j = 0; j < cnt; j++)
            CHECK(sb[((size_t)root * cnt + j) * stretch] == val(seed, root, j), "root's own block changed");
    } else {
        MPI_OK(MPI_Scatter(sb, cnt, st, rb, cnt, MPI_INT, root, MPI_COMM_WORLD));
        for (int j = 0; j < cnt; j++)
            CHECK(rb[j] == val(seed, R, j), "rb[%d] = %d, want %d", j, rb[j], val(seed, R, j));
        CHECK(rb[cnt] == -5, "wrote past the end");
    }
    free(sb);
    free(rb);
}

static void test_gather_scatter(void)
{
    static const int counts[] = {0, 1, 6, 2000};
    for (int root = 0; root < N; root++)
        for (unsigned k = 0; k < 4; k++) {
            int cnt = counts[k];
            gather_case(root, cnt, (int)k, MPI_INT, 0, 0);
            gather_case(root, cnt, (int)k + 10, stride2, cnt % 2 == 0, 0);
            gather_case(root, cnt, (int)k + 20, MPI_INT, 0, 1);
            scatter_case(root, cnt, (int)k, MPI_INT, 0);
            scatter_case(root, cnt, (int)k + 30, stride2, 0);
            scatter_case(root, cnt, (int)k + 40, MPI_INT, 1);
        }
}

/* gatherv/scatterv: rank i has i % 3 + (i == 1 ? 5 : 0) elements (rank 0,
 * 3, ... none); blocks stored in reverse rank order with a gap of 2 */
static int vcount(int i)
{
    return i % 3 + (i == 1 ? 5 : 0);
}

static void test_v(void)
{
    int *counts = malloc(sizeof(int) * (size_t)N), *displs = malloc(sizeof(int) * (size_t)N);
    int total = 0;
    for (int i = N - 1; i >= 0; i--) {
        counts[i] = vcount(i);
        displs[i] = total;
        total += counts[i] + 2;
    }
    for (int root = 0; root < N; root++)
        for (int in_place = 0; in_place < 2; in_place++) {
            p2p_setstep("gatherv root %d inplace %d", root, in_place);
            int *rb = malloc(sizeof(int) * (size_t)(total + 1)), sb[8];
            for (int j = 0; j <= total; j++)
                rb[j] = -9;
            for (int j = 0; j < vcount(R); j++)
                sb[j] = val(50, R, j);
            if (in_place && R == root) {
                for (int j = 0; j < vcount(R); j++)
                    rb[displs[R] + j] = val(50, R, j);
                MPI_OK(MPI_Gatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, rb, counts, displs, MPI_INT, root,
                                   MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Gatherv(sb, vcount(R), MPI_INT, rb, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
            }
            if (R == root)
                for (int i = 0; i < N; i++) {
                    for (int j = 0; j < counts[i]; j++)
                        CHECK(rb[displs[i] + j] == val(50, i, j), "gatherv block %d elt %d", i, j);
                    CHECK(rb[displs[i] + counts[i]] == -9, "gatherv gap after block %d written", i);
                }
            free(rb);

            p2p_setstep("scatterv root %d inplace %d", root, in_place);
            int *src = malloc(sizeof(int) * (size_t)(total + 1)), rv[9];
            for (int i = 0; i < N; i++)
                for (int j = 0; j < counts[i]; j++)
                    src[displs[i] + j] = val(60, i, j);
            for (int j = 0; j < 9; j++)
                rv[j] = -4;
            if (in_place && R == root) {
                MPI_OK(MPI_Scatterv(src, counts, displs, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                                    MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Scatterv(src, counts, displs, MPI_INT, rv, vcount(R), MPI_INT, root, MPI_COMM_WORLD));
                for (int j = 0; j < vcount(R); j++)
                    CHECK(rv[j] == val(60, R, j), "scatterv rv[%d] = %d", j, rv[j]);
                CHECK(rv[vcount(R)] == -4, "scatterv wrote past the block");
            }
            free(src);
        }
    free(counts);
    free(displs);
}

static void allgather_case(int cnt, int seed, MPI_Datatype rt, int in_place)
{
    p2p_setstep("allgather cnt %d rt %s inplace %d", cnt, rt == MPI_INT ? "int" : "stride2", in_place);
    int stretch = rt == MPI_INT ? 1 : 2;
    size_t rn = (size_t)cnt * (size_t)N * (size_t)stretch + 1;
    int *rb = malloc(sizeof(int) * rn), *sb = malloc(sizeof(int) * (size_t)(cnt + 1));
    for (size_t j = 0; j < rn; j++)
        rb[j] = -2;
    for (int j = 0; j < cnt; j++)
        sb[j] = val(seed, R, j);
    if (in_place) {
        for (int j = 0; j < cnt; j++)
            rb[((size_t)R * cnt + j) * stretch] = val(seed, R, j);
        MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, cnt, rt, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Allgather(sb, cnt, MPI_INT, rb, cnt, rt, MPI_COMM_WORLD));
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < cnt; j++) {
            size_t at = ((size_t)i * cnt + j) * stretch;
            CHECK(rb[at] == val(seed, i, j), "rb[%zu] = %d, want %d", at, rb[at], val(seed, i, j));
            if (stretch == 2)
                CHECK(rb[at + 1] == -2, "stride2 hole written");
        }
    CHECK(rb[rn - 1] == -2, "wrote past the end");
    free(rb);
    free(sb);
}

static void test_allgather(void)
{
    static const int acounts[] = {0, 1, 5, 3000};
    for (unsigned k = 0; k < 4; k++) {
        allgather_case(acounts[k], (int)k, MPI_INT, 0);
        allgather_case(acounts[k], (int)k + 10, MPI_INT, 1);
        allgather_case(acounts[k], (int)k + 20, stride2, 0);
        allgather_case(acounts[k], (int)k + 30, stride2, 1);
    }
    int *counts = malloc(sizeof(int) * (size_t)N), *displs = malloc(sizeof(int) * (size_t)N);
    int total = 0;
    for (int i = N - 1; i >= 0; i--) {
        counts[i] = vcount(i) * 100;
        displs[i] = total;
        total += counts[i] + 1;
    }
    for (int in_place = 0; in_place < 2; in_place++) {
        p2p_setstep("allgatherv inplace %d", in_place);
        int *rb = malloc(sizeof(int) * (size_t)(total + 1)), *sb = malloc(sizeof(int) * 800);
        for (int j = 0; j <= total; j++)
            rb[j] = -8;
        for (int j = 0; j < counts[R]; j++)
            sb[j] = val(70, R, j);
        if (in_place) {
            memcpy(rb + displs[R], sb, sizeof(int) * (size_t)counts[R]);
            MPI_OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rb, counts, displs, MPI_INT, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Allgatherv(sb, counts[R], MPI_INT, rb, counts, displs, MPI_INT, MPI_COMM_WORLD));
        }
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < counts[i]; j++)
                CHECK(rb[displs[i] + j] == val(70, i, j), "allgatherv block %d elt %d", i, j);
            CHECK(rb[displs[i] + counts[i]] == -8, "allgatherv gap after block %d written", i);
        }
        free(rb);
        free(sb);
    }
    free(counts);
    free(displs);
}

int main(int argc, char **argv)
{
    /* small thresholds: both algorithms of each collective run below */
    setenv("WHARF_COLL_BCAST_LONG", "4096", 1);
    setenv("WHARF_COLL_ALLGATHER_LONG", "2048", 1);
    setenv("WHARF_COLL_GATHER_LONG", "2048", 1);
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    make_types();
    test_barrier();
    test_bcast();
    test_gather_scatter();
    test_v();
    test_allgather();
    MPI_OK(MPI_Type_free(&stride2));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (R == 0)
        printf("coll_basic: OK on %d ranks\n", N);
    MPI_Finalize();
    return 0;
}
