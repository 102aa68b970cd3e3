/* Nonblocking (MPI_I*) and, with argument "persist", persistent (MPI_*_init +
 * MPI_Start, two runs per request with new input each time, then
 * MPI_Request_free) collectives: every collective on every root, counts
 * from 0 to past the rendezvous threshold, MPI_IN_PLACE, a strided derived
 * type, a non-commutative user op (2x2 matrix product, which must come out
 * in rank order), and the v/w variants.  Every result is compared value by
 * value with the value computed here.  The last part keeps several
 * collectives on two communicators outstanding at once together with
 * point-to-point traffic and completes them in one MPI_Waitall. */
#include "p2p_check.h"

static int R, N, PERSIST;
static MPI_Datatype stride2; /* an int with extent 2 ints */
static MPI_Datatype mat;     /* 2x2 long long matrix */
static MPI_Op matmul_op;

typedef struct {
    long long a[4];
} mat_t;

static mat_t factor(int i, int e)
{
    int k = i + 1 + e % 5;
    mat_t m = {{1, 0, 0, 1}};
    if (i % 2 == 0)
        m.a[1] = k;
    else
        m.a[2] = k;
    return m;
}

static mat_t mul(mat_t x, mat_t y)
{
    mat_t r = {{x.a[0] * y.a[0] + x.a[1] * y.a[2], x.a[0] * y.a[1] + x.a[1] * y.a[3],
                x.a[2] * y.a[0] + x.a[3] * y.a[2], x.a[2] * y.a[1] + x.a[3] * y.a[3]}};
    return r;
}

static mat_t prod(int lo, int hi, int e)
{
    mat_t r = {{1, 0, 0, 1}};
    for (int i = lo; i < hi; i++)
        r = mul(r, factor(i, e));
    return r;
}

static int mat_eq(mat_t x, mat_t y)
{
    return !memcmp(&x, &y, sizeof x);
}

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mul(a[i], b[i]);
}

static int val(int seed, int rank, int i)
{
    return (seed * 131 + rank * 17 + i * 7) % 1000 - 300;
}

static int vsum(int seed, int lo, int hi, int i)
{
    int s = 0;
    for (int r = lo; r < hi; r++)
        s += val(seed, r, i);
    return s;
}

/* Start (nonblocking call, or the persistent request made on the first
 * run), then complete the request; the completion call rotates through the
 * request API. */
static int ncomplete;
#define COLL(icall, pcall)                                                                        \
    do {                                                                                          \
        if (PERSIST) {                                                                            \
            if (rep == 0)                                                                         \
                MPI_OK(pcall);                                                                    \
            MPI_OK(MPI_Start(&req));                                                              \
        } else {                                                                                  \
            MPI_OK(icall);                                                                        \
        }                                                                                         \
        complete(&req);                                                                           \
    } while (0)
#define REPS (PERSIST ? 2 : 1)
#define DONE()                                                                                    \
    do {                                                                                          \
        if (PERSIST)                                                                              \
            MPI_OK(MPI_Request_free(&req));                                                       \
        CHECK(req == MPI_REQUEST_NULL, "request not released");                                   \
    } while (0)

static void complete(MPI_Request *req)
{
    MPI_Status st;
    int flag = 0, idx = -1, outc = 0;
    switch (ncomplete++ % 4) {
    case 0: MPI_OK(MPI_Wait(req, &st)); break;
    case 1:
        while (!flag)
            MPI_OK(MPI_Test(req, &flag, &st));
        break;
    case 2: MPI_OK(MPI_Waitany(1, req, &idx, &st)); break;
    default:
        while (outc == 0)
            MPI_OK(MPI_Testsome(1, req, &outc, &idx, &st));
        break;
    }
    CHECK(PERSIST || *req == MPI_REQUEST_NULL, "completed request not set to MPI_REQUEST_NULL");
    CHECK(!PERSIST || *req != MPI_REQUEST_NULL, "persistent request released by its completion");
}

static void test_bcast(void)
{
    static const int counts[] = {0, 1, 1000, 40000};
    MPI_Request req = MPI_REQUEST_NULL;
    for (int root = 0; root < N; root++)
        for (int k = 0; k < 4; k++)
            for (int strided = 0; strided < 2; strided++) {
                int cnt = counts[k], st = strided ? 2 : 1;
                MPI_Datatype t = strided ? stride2 : MPI_INT;
                int *b = malloc(sizeof(int) * ((size_t)cnt * st + 1));
                for (int rep = 0; rep < REPS; rep++) {
                    p2p_setstep("bcast root %d cnt %d strided %d rep %d", root, cnt, strided, rep);
                    for (int e = 0; e < cnt * st + 1; e++)
                        b[e] = R == root && e % st == 0 && e < cnt * st ? val(rep + k, root, e / st) : -99;
                    COLL(MPI_Ibcast(b, cnt, t, root, MPI_COMM_WORLD, &req),
                         MPI_Bcast_init(b, cnt, t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                    for (int e = 0; e < cnt; e++) {
                        CHECK(b[e * st] == val(rep + k, root, e), "b[%d] = %d, want %d", e * st, b[e * st],
                              val(rep + k, root, e));
                        if (st == 2)
                            CHECK(b[e * st + 1] == -99, "hole %d written", e * st + 1);
                    }
                    CHECK(b[cnt * st] == -99, "wrote past the end");
                }
                DONE();
                free(b);
            }
}

static void test_reduce(void)
{
    static const int counts[] = {0, 1, 7, 3000};
    MPI_Request req = MPI_REQUEST_NULL;
    for (int root = 0; root < N; root++)
        for (int k = 0; k < 4; k++) {
            int cnt = counts[k], in_place = (root + k) % 2 && R == root;
            int *sb = malloc(sizeof(int) * ((size_t)cnt + 1)), *rb = malloc(sizeof(int) * ((size_t)cnt + 1));
            for (int rep = 0; rep < REPS; rep++) {
                p2p_setstep("reduce root %d cnt %d rep %d", root, cnt, rep);
                for (int e = 0; e <= cnt; e++) {
                    sb[e] = e < cnt ? val(rep * 3 + k, R, e) : -99;
                    rb[e] = in_place ? sb[e] : -99;
                }
                COLL(MPI_Ireduce(in_place ? MPI_IN_PLACE : sb, rb, cnt, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req),
                     MPI_Reduce_init(in_place ? MPI_IN_PLACE : sb, rb, cnt, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &req));
                if (R == root)
                    for (int e = 0; e < cnt; e++)
                        CHECK(rb[e] == vsum(rep * 3 + k, 0, N, e), "rb[%d] = %d, want %d", e, rb[e],
                              vsum(rep * 3 + k, 0, N, e));
                CHECK(rb[cnt] == -99, "wrote past the end");
            }
            DONE();
            /* non-commutative op: the product in rank order */
            mat_t *ms = malloc(sizeof(mat_t) * (size_t)(cnt + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(cnt + 1));
            for (int rep = 0; rep < REPS; rep++) {
                p2p_setstep("reduce matmul root %d cnt %d rep %d", root, cnt, rep);
                for (int e = 0; e < cnt; e++)
                    ms[e] = mr[e] = factor(R, e + rep);
                COLL(MPI_Ireduce(in_place ? MPI_IN_PLACE : ms, mr, cnt, mat, matmul_op, root, MPI_COMM_WORLD, &req),
                     MPI_Reduce_init(in_place ? MPI_IN_PLACE : ms, mr, cnt, mat, matmul_op, root, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, &req));
                if (R == root)
                    for (int e = 0; e < cnt; e++)
                        CHECK(mat_eq(mr[e], prod(0, N, e + rep)), "matrix product %d out of order", e);
            }
            DONE();
            free(ms);
            free(mr);
            free(sb);
            free(rb);
        }
}

/* allreduce (which 0), scan (1), exscan (2); 6000 ints pass the large-vector
 * threshold of allreduce (WHARF_COLL_ALLREDUCE_LONG) */
static void test_allred(int which)
{
    static const int counts[] = {0, 1, 7, 3000, 6000};
    MPI_Request req = MPI_REQUEST_NULL;
    for (int k = 0; k < 5; k++)
        for (int mode = 0; mode < 3; mode++) { /* plain, in place, stride2 */
            int cnt = counts[k], st = mode == 2 ? 2 : 1;
            MPI_Datatype t = mode == 2 ? stride2 : MPI_INT;
            size_t len = (size_t)cnt * st + 1;
            int *sb = malloc(sizeof(int) * len), *rb = malloc(sizeof(int) * len);
            for (int rep = 0; rep < REPS; rep++) {
                int seed = rep * 5 + k + which * 100;
                p2p_setstep("allred %d cnt %d mode %d rep %d", which, cnt, mode, rep);
                for (int e = 0; e < (int)len; e++) {
                    sb[e] = e % st == 0 && e < cnt * st ? val(seed, R, e / st) : -99;
                    rb[e] = mode == 1 ? sb[e] : -99;
                }
                const void *s = mode == 1 ? MPI_IN_PLACE : sb;
                if (which == 0)
                    COLL(MPI_Iallreduce(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, &req),
                         MPI_Allreduce_init(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                else if (which == 1)
                    COLL(MPI_Iscan(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, &req),
                         MPI_Scan_init(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                else
                    COLL(MPI_Iexscan(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, &req),
                         MPI_Exscan_init(s, rb, cnt, t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                int hi = which == 0 ? N : which == 1 ? R + 1 : R;
                for (int e = 0; e < cnt && !(which == 2 && R == 0); e++) {
                    CHECK(rb[e * st] == vsum(seed, 0, hi, e), "rb[%d] = %d, want %d", e * st, rb[e * st],
                          vsum(seed, 0, hi, e));
                    if (st == 2)
                        CHECK(rb[e * st + 1] == -99, "hole written");
                }
                CHECK(rb[cnt * st] == -99, "wrote past the end");
            }
            DONE();
            free(sb);
            free(rb);
        }
    /* non-commutative */
    int cnt = 5;
    mat_t ms[5], mr[5];
    for (int rep = 0; rep < REPS; rep++) {
        p2p_setstep("allred %d matmul rep %d", which, rep);
        for (int e = 0; e < cnt; e++) {
            ms[e] = factor(R, e + rep);
            mr[e] = (mat_t){{-1, -1, -1, -1}};
        }
        if (which == 0)
            COLL(MPI_Iallreduce(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, &req),
                 MPI_Allreduce_init(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        else if (which == 1)
            COLL(MPI_Iscan(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, &req),
                 MPI_Scan_init(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        else
            COLL(MPI_Iexscan(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, &req),
                 MPI_Exscan_init(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        int hi = which == 0 ? N : which == 1 ? R + 1 : R;
        for (int e = 0; e < cnt && !(which == 2 && R == 0); e++)
            CHECK(mat_eq(mr[e], prod(0, hi, e + rep)), "matrix product %d (ranks 0..%d) out of order", e, hi - 1);
    }
    DONE();
}

static void test_redscat(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int *rcounts = malloc(sizeof(int) * (size_t)N), total = 0;
    for (int i = 0; i < N; i++)
        total += rcounts[i] = i % 3 == 1 ? 0 : i % 3 + 2;
    int off = 0;
    for (int i = 0; i < R; i++)
        off += rcounts[i];
    for (int block = 0; block < 2; block++)
        for (int in_place = 0; in_place < 2; in_place++) {
            int bc = 3, all = block ? bc * N : total, mine = block ? bc : rcounts[R], moff = block ? bc * R : off;
            int *sb = malloc(sizeof(int) * ((size_t)all + 1)), *rb = malloc(sizeof(int) * ((size_t)all + 1));
            for (int rep = 0; rep < REPS; rep++) {
                int seed = 40 + rep + block * 7 + in_place;
                p2p_setstep("reduce_scatter block %d in_place %d rep %d", block, in_place, rep);
                for (int e = 0; e <= all; e++) {
                    sb[e] = e < all ? val(seed, R, e) : -99;
                    rb[e] = in_place ? sb[e] : -99;
                }
                const void *s = in_place ? MPI_IN_PLACE : sb;
                if (block)
                    COLL(MPI_Ireduce_scatter_block(s, rb, bc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                         MPI_Reduce_scatter_block_init(s, rb, bc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                                       &req));
                else
                    COLL(MPI_Ireduce_scatter(s, rb, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                         MPI_Reduce_scatter_init(s, rb, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                                 &req));
                for (int e = 0; e < mine; e++)
                    CHECK(rb[e] == vsum(seed, 0, N, moff + e), "rb[%d] = %d, want %d", e, rb[e],
                          vsum(seed, 0, N, moff + e));
                if (!in_place)
                    CHECK(rb[mine] == -99, "wrote past my block");
            }
            DONE();
            free(sb);
            free(rb);
        }
    /* non-commutative reduce_scatter_block */
    mat_t *ms = malloc(sizeof(mat_t) * 2 * (size_t)N), mr[2];
    for (int rep = 0; rep < REPS; rep++) {
        p2p_setstep("reduce_scatter_block matmul rep %d", rep);
        for (int e = 0; e < 2 * N; e++)
            ms[e] = factor(R, e + rep);
        COLL(MPI_Ireduce_scatter_block(ms, mr, 2, mat, matmul_op, MPI_COMM_WORLD, &req),
             MPI_Reduce_scatter_block_init(ms, mr, 2, mat, matmul_op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int e = 0; e < 2; e++)
            CHECK(mat_eq(mr[e], prod(0, N, 2 * R + e + rep)), "matrix product %d out of order", e);
    }
    DONE();
    free(ms);
    free(rcounts);
}

#include "coll_nbc_move.h"

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    PERSIST = argc > 1 && !strcmp(argv[1], "persist");
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2));
    MPI_OK(MPI_Type_commit(&stride2));
    MPI_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_OK(MPI_Op_create(matmul_fn, 0, &matmul_op));

    test_bcast();
    test_reduce();
    test_allred(0);
    test_allred(1);
    test_allred(2);
    test_redscat();
    test_rooted();
    test_allgather();
    test_alltoall();
    test_barrier();
    test_mixed();

    MPI_OK(MPI_Op_free(&matmul_op));
    MPI_OK(MPI_Type_free(&mat));
    MPI_OK(MPI_Type_free(&stride2));
    MPI_Finalize();
    return 0;
}
