/* MPI-level tests of the reductions: reduce, allreduce, reduce_scatter(_block),
 * scan, exscan and MPI_Reduce_local.  Every root, MPI_IN_PLACE, count 0,
 * derived types, MINLOC with ties, a non-commutative user op (2x2 matrix
 * product: the result must be the product in rank order), a commutative
 * user op on the large-message path, and bit-identical floating-point
 * allreduce results on all ranks (both algorithms: the switch threshold is
 * set low here before MPI_Init). */
#include <math.h>

#include "p2p_check.h"

static int R, N;
static MPI_Datatype stride2; /* an int with extent 2 ints */
static MPI_Datatype mat;     /* 2x2 long long matrix (contiguous 4) */
static MPI_Op matmul_op, usum_op;
static int matmul_calls;

typedef struct {
    long long a[4];
} mat_t;

/* non-commuting factors: rank i, element e */
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

/* product of the factors of ranks lo..hi-1, in order */
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

/* inout = in * inout; `in` holds the lower ranks' product */
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat_t *a = in, *b = inout;
    if (*dt != mat) {
        printf("FAIL rank %d: user op got datatype 0x%x instead of 0x%x\n", R, (unsigned)*dt, (unsigned)mat);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    matmul_calls++;
    for (int i = 0; i < *len; i++)
        b[i] = mul(a[i], b[i]);
}

static void usum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

static int ival(int seed, int i, int e)
{
    return (seed * 31 + i * 7 + e * 3) % 1001 - 500;
}

/* sum over ranks of ival(seed, ., e) */
static int isum(int seed, int e)
{
    int s = 0;
    for (int i = 0; i < N; i++)
        s += ival(seed, i, e);
    return s;
}

static void test_reduce(void)
{
    static const int counts[] = {0, 1, 7, 5000};
    for (int root = 0; root < N; root++)
        for (int k = 0; k < 4; k++) {
            int cnt = counts[k];
            for (int mode = 0; mode < 3; mode++) { /* 0 plain, 1 in place, 2 stride2 type */
                p2p_setstep("reduce root %d cnt %d mode %d", root, cnt, mode);
                int st = mode == 2 ? 2 : 1;
                int *sb = malloc(sizeof(int) * ((size_t)cnt * st + 1)), *rb = malloc(sizeof(int) * ((size_t)cnt * st + 1));
                for (int e = 0; e < cnt * st + 1; e++)
                    sb[e] = rb[e] = -99;
                for (int e = 0; e < cnt; e++)
                    sb[e * st] = ival(k, R, e);
                MPI_Datatype t = mode == 2 ? stride2 : MPI_INT;
                if (mode == 1 && R == root) {
                    memcpy(rb, sb, sizeof(int) * (size_t)cnt);
                    MPI_OK(MPI_Reduce(MPI_IN_PLACE, rb, cnt, t, MPI_SUM, root, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Reduce(sb, rb, cnt, t, MPI_SUM, root, MPI_COMM_WORLD));
                }
                if (R == root) {
                    for (int e = 0; e < cnt; e++) {
                        CHECK(rb[e * st] == isum(k, e), "rb[%d] = %d, want %d", e * st, rb[e * st], isum(k, e));
                        if (st == 2)
                            CHECK(rb[e * st + 1] == -99, "hole written");
                    }
                    CHECK(rb[cnt * st] == -99, "wrote past the end");
                }
                free(sb);
                free(rb);
            }
            /* non-commutative: ordered matrix product */
            p2p_setstep("reduce matmul root %d cnt %d", root, cnt);
            mat_t *ms = malloc(sizeof(mat_t) * (size_t)(cnt + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(cnt + 1));
            for (int e = 0; e < cnt; e++)
                ms[e] = factor(R, e);
            int in_place = (root + cnt) % 2 && R == root;
            if (in_place)
                memcpy(mr, ms, sizeof(mat_t) * (size_t)cnt);
            MPI_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : ms, mr, cnt, mat, matmul_op, root, MPI_COMM_WORLD));
            if (R == root)
                for (int e = 0; e < cnt; e++)
                    CHECK(mat_eq(mr[e], prod(0, N, e)), "matrix product %d out of order: %lld %lld %lld %lld", e,
                          mr[e].a[0], mr[e].a[1], mr[e].a[2], mr[e].a[3]);
            free(ms);
            free(mr);
        }
}

static void test_allreduce(void)
{
    static const int counts[] = {0, 1, 7, 600, 20000};
    for (int k = 0; k < 5; k++) {
        int cnt = counts[k];
        for (int mode = 0; mode < 4; mode++) { /* plain, in place, stride2, commutative user op */
            p2p_setstep("allreduce cnt %d mode %d", cnt, mode);
            int st = mode == 2 ? 2 : 1;
            int *sb = malloc(sizeof(int) * ((size_t)cnt * st + 1)), *rb = malloc(sizeof(int) * ((size_t)cnt * st + 1));
            for (int e = 0; e < cnt * st + 1; e++)
                sb[e] = rb[e] = -99;
            for (int e = 0; e < cnt; e++)
                sb[e * st] = ival(k + 5, R, e);
            MPI_Datatype t = mode == 2 ? stride2 : MPI_INT;
            MPI_Op op = mode == 3 ? usum_op : MPI_SUM;
            if (mode == 1) {
                memcpy(rb, sb, sizeof(int) * (size_t)cnt);
                MPI_OK(MPI_Allreduce(MPI_IN_PLACE, rb, cnt, t, op, MPI_COMM_WORLD));
            } else {
                MPI_OK(MPI_Allreduce(sb, rb, cnt, t, op, MPI_COMM_WORLD));
            }
            for (int e = 0; e < cnt; e++) {
                CHECK(rb[e * st] == isum(k + 5, e), "rb[%d] = %d, want %d", e * st, rb[e * st], isum(k + 5, e));
                if (st == 2)
                    CHECK(rb[e * st + 1] == -99, "hole written");
            }
            CHECK(rb[cnt * st] == -99, "wrote past the end");
            free(sb);
            free(rb);
        }
        p2p_setstep("allreduce matmul cnt %d", cnt);
        mat_t *ms = malloc(sizeof(mat_t) * (size_t)(cnt + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(cnt + 1));
        for (int e = 0; e < cnt; e++)
            ms[e] = factor(R, e);
        MPI_OK(MPI_Allreduce(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD));
        for (int e = 0; e < cnt; e++)
            CHECK(mat_eq(mr[e], prod(0, N, e)), "allreduce matrix product %d out of order", e);
        free(ms);
        free(mr);
    }
    /* MAX on doubles, MINLOC/MAXLOC with ties (smallest index wins) */
    p2p_setstep("allreduce minloc");
    struct {
        double v;
        int k;
    } in[3], out[3];
    for (int e = 0; e < 3; e++) {
        in[e].v = (R * (e + 1)) % 3; /* repeated values */
        in[e].k = 100 + R;
    }
    MPI_OK(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    for (int e = 0; e < 3; e++) {
        double best = 1e9;
        int at = -1;
        for (int i = 0; i < N; i++)
            if ((i * (e + 1)) % 3 < best)
                best = (i * (e + 1)) % 3, at = i;
        CHECK(out[e].v == best && out[e].k == 100 + at, "minloc %d: (%g,%d) want (%g,%d)", e, out[e].v, out[e].k,
              best, 100 + at);
    }
    MPI_OK(MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int e = 0; e < 3; e++) {
        double best = -1;
        int at = -1;
        for (int i = 0; i < N; i++)
            if ((i * (e + 1)) % 3 > best)
                best = (i * (e + 1)) % 3, at = i;
        CHECK(out[e].v == best && out[e].k == 100 + at, "maxloc %d", e);
    }
    double dmax = R * 1.5, dres = 0;
    MPI_OK(MPI_Allreduce_c(&dmax, &dres, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dres == (N - 1) * 1.5, "max %g", dres);
    /* count 0 with NULL buffers */
    MPI_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, N - 1, MPI_COMM_WORLD));
}

/* Floating-point sums whose value depends on the order of operations: every
 * rank must get the same bits (small: recursive doubling; large: Rabenseifner). */
static void test_bitwise(void)
{
    static const int counts[] = {5, 3001};
    for (int k = 0; k < 2; k++) {
        int cnt = counts[k];
        p2p_setstep("bit-identical allreduce cnt %d", cnt);
        double *x = malloc(sizeof(double) * cnt), *y = malloc(sizeof(double) * cnt), *z = malloc(sizeof(double) * cnt);
        for (int e = 0; e < cnt; e++)
            x[e] = sin(R * 1000.0 + e) * pow(10.0, (e + 3 * R) % 17 - 8);
        MPI_OK(MPI_Allreduce(x, y, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        memcpy(z, y, sizeof(double) * cnt);
        MPI_OK(MPI_Bcast(z, cnt, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        CHECK(!memcmp(y, z, sizeof(double) * cnt), "allreduce results differ between rank 0 and rank %d", R);
        for (int e = 0; e < cnt; e++) { /* and they are the sum, up to rounding */
            double s = 0, mag = 0;
            for (int i = 0; i < N; i++) {
                double v = sin(i * 1000.0 + e) * pow(10.0, (e + 3 * i) % 17 - 8);
                s += v;
                mag += fabs(v);
            }
            CHECK(fabs(y[e] - s) <= 1e-12 * mag, "element %d: %.17g vs %.17g", e, y[e], s);
        }
        free(x), free(y), free(z);
    }
}

static void test_reduce_scatter(void)
{
    static const int counts[] = {0, 1, 900};
    for (int k = 0; k < 3; k++) {
        int rc = counts[k];
        for (int mode = 0; mode < 3; mode++) { /* plain SUM, in-place SUM, matmul */
            p2p_setstep("reduce_scatter_block rcount %d mode %d", rc, mode);
            if (mode < 2) {
                int *sb = malloc(sizeof(int) * ((size_t)rc * N + 1)), *rb = malloc(sizeof(int) * ((size_t)rc * N + 1));
                for (int e = 0; e < rc * N; e++)
                    sb[e] = ival(k + 9, R, e);
                rb[rc] = -99;
                if (mode == 1) {
                    memcpy(rb, sb, sizeof(int) * (size_t)rc * N);
                    MPI_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, rb, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Reduce_scatter_block(sb, rb, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
                    CHECK(rb[rc] == -99, "wrote past the block");
                }
                for (int e = 0; e < rc; e++)
                    CHECK(rb[e] == isum(k + 9, R * rc + e), "rb[%d] = %d", e, rb[e]);
                free(sb), free(rb);
            } else {
                mat_t *ms = malloc(sizeof(mat_t) * ((size_t)rc * N + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(rc + 1));
                for (int e = 0; e < rc * N; e++)
                    ms[e] = factor(R, e);
                MPI_OK(MPI_Reduce_scatter_block(ms, mr, rc, mat, matmul_op, MPI_COMM_WORLD));
                for (int e = 0; e < rc; e++)
                    CHECK(mat_eq(mr[e], prod(0, N, R * rc + e)), "reduce_scatter_block matrix %d", e);
                free(ms), free(mr);
            }
        }
    }
    /* varying counts, some zero */
    int *rcs = malloc(sizeof(int) * N), total = 0;
    for (int i = 0; i < N; i++) {
        rcs[i] = (i % 3) * 250 + (i == 1);
        total += rcs[i];
    }
    int off = 0;
    for (int i = 0; i < R; i++)
        off += rcs[i];
    for (int mode = 0; mode < 3; mode++) {
        p2p_setstep("reduce_scatter mode %d", mode);
        if (mode < 2) {
            int *sb = malloc(sizeof(int) * ((size_t)total + 1)), *rb = malloc(sizeof(int) * ((size_t)total + 1));
            for (int e = 0; e < total; e++)
                sb[e] = ival(20, R, e);
            if (mode == 1) {
                memcpy(rb, sb, sizeof(int) * (size_t)total);
                MPI_OK(MPI_Reduce_scatter(MPI_IN_PLACE, rb, rcs, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            } else {
                rb[rcs[R]] = -99;
                MPI_OK(MPI_Reduce_scatter(sb, rb, rcs, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
                CHECK(rb[rcs[R]] == -99, "wrote past the block");
            }
            for (int e = 0; e < rcs[R]; e++)
                CHECK(rb[e] == isum(20, off + e), "rb[%d] = %d, want %d", e, rb[e], isum(20, off + e));
            free(sb), free(rb);
        } else {
            mat_t *ms = malloc(sizeof(mat_t) * ((size_t)total + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(rcs[R] + 1));
            for (int e = 0; e < total; e++)
                ms[e] = factor(R, e);
            MPI_OK(MPI_Reduce_scatter(ms, mr, rcs, mat, matmul_op, MPI_COMM_WORLD));
            for (int e = 0; e < rcs[R]; e++)
                CHECK(mat_eq(mr[e], prod(0, N, off + e)), "reduce_scatter matrix %d", e);
            free(ms), free(mr);
        }
    }
    /* a rank whose block is empty may pass NULL as rbuf (mpi4py does); all-empty with NULL buffers */
    p2p_setstep("reduce_scatter NULL rbuf for an empty block");
    int *sb = malloc(sizeof(int) * ((size_t)total + 1)), *rb = rcs[R] ? malloc(sizeof(int) * (size_t)rcs[R]) : NULL;
    for (int e = 0; e < total; e++)
        sb[e] = ival(21, R, e);
    MPI_OK(MPI_Reduce_scatter(sb, rb, rcs, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int e = 0; e < rcs[R]; e++)
        CHECK(rb[e] == isum(21, off + e), "rb[%d] = %d, want %d", e, rb[e], isum(21, off + e));
    free(sb), free(rb);
    int *zeros = calloc((size_t)N, sizeof(int));
    MPI_OK(MPI_Reduce_scatter(NULL, NULL, zeros, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    free(zeros);
    free(rcs);
}

static void test_scan(void)
{
    static const int counts[] = {0, 1, 7, 3000};
    for (int k = 0; k < 4; k++) {
        int cnt = counts[k];
        for (int in_place = 0; in_place < 2; in_place++) {
            p2p_setstep("scan cnt %d inplace %d", cnt, in_place);
            int *sb = malloc(sizeof(int) * ((size_t)cnt + 1)), *rb = malloc(sizeof(int) * ((size_t)cnt + 1));
            for (int e = 0; e < cnt; e++)
                sb[e] = ival(k + 30, R, e);
            rb[cnt] = -99;
            if (in_place)
                memcpy(rb, sb, sizeof(int) * (size_t)cnt);
            MPI_OK(MPI_Scan(in_place ? MPI_IN_PLACE : sb, rb, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            for (int e = 0; e < cnt; e++) {
                int s = 0;
                for (int i = 0; i <= R; i++)
                    s += ival(k + 30, i, e);
                CHECK(rb[e] == s, "scan rb[%d] = %d, want %d", e, rb[e], s);
            }
            CHECK(rb[cnt] == -99, "wrote past the end");

            p2p_setstep("exscan cnt %d inplace %d", cnt, in_place);
            for (int e = 0; e <= cnt; e++)
                rb[e] = -99;
            if (in_place)
                memcpy(rb, sb, sizeof(int) * (size_t)cnt);
            MPI_OK(MPI_Exscan(in_place ? MPI_IN_PLACE : sb, rb, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            if (R > 0)
                for (int e = 0; e < cnt; e++) {
                    int s = 0;
                    for (int i = 0; i < R; i++)
                        s += ival(k + 30, i, e);
                    CHECK(rb[e] == s, "exscan rb[%d] = %d, want %d", e, rb[e], s);
                }
            CHECK(rb[cnt] == -99, "wrote past the end");
            free(sb), free(rb);
        }
        p2p_setstep("scan matmul cnt %d", cnt);
        mat_t *ms = malloc(sizeof(mat_t) * (size_t)(cnt + 1)), *mr = malloc(sizeof(mat_t) * (size_t)(cnt + 1));
        for (int e = 0; e < cnt; e++)
            ms[e] = factor(R, e);
        MPI_OK(MPI_Scan(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD));
        for (int e = 0; e < cnt; e++)
            CHECK(mat_eq(mr[e], prod(0, R + 1, e)), "scan matrix %d out of order", e);
        MPI_OK(MPI_Exscan(ms, mr, cnt, mat, matmul_op, MPI_COMM_WORLD));
        if (R > 0)
            for (int e = 0; e < cnt; e++)
                CHECK(mat_eq(mr[e], prod(0, R, e)), "exscan matrix %d out of order", e);
        free(ms), free(mr);
    }
}

static void test_local(void)
{
    p2p_setstep("reduce_local");
    mat_t a[2] = {factor(0, 0), factor(1, 1)}, b[2] = {factor(2, 0), factor(3, 1)};
    int before = matmul_calls;
    MPI_OK(MPI_Reduce_local(a, b, 2, mat, matmul_op));
    CHECK(matmul_calls > before, "user function not called");
    CHECK(mat_eq(b[0], mul(factor(0, 0), factor(2, 0))) && mat_eq(b[1], mul(factor(1, 1), factor(3, 1))),
          "reduce_local is not in * inout");
    int x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
    MPI_OK(MPI_Reduce_local_c(x, y, 3, MPI_INT, MPI_PROD));
    CHECK(y[0] == 10 && y[1] == 40 && y[2] == 90, "reduce_local prod");
    int commute = -1;
    MPI_OK(MPI_Op_commutative(matmul_op, &commute));
    CHECK(commute == 0, "matmul reported commutative");
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_SUM reported non-commutative");
}

int main(int argc, char **argv)
{
    setenv("WHARF_COLL_ALLREDUCE_LONG", "1024", 1);
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2));
    MPI_OK(MPI_Type_commit(&stride2));
    MPI_OK(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_OK(MPI_Op_create(matmul_fn, 0, &matmul_op));
    MPI_OK(MPI_Op_create(usum_fn, 1, &usum_op));
    test_reduce();
    test_allreduce();
    test_bitwise();
    test_reduce_scatter();
    test_scan();
    test_local();
    MPI_OK(MPI_Op_free(&matmul_op));
    CHECK(matmul_op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    MPI_OK(MPI_Op_free(&usum_op));
    MPI_OK(MPI_Type_free(&stride2));
    MPI_OK(MPI_Type_free(&mat));
    if (R == 0)
        printf("coll_reduce: OK on %d ranks\n", N);
    MPI_Finalize();
    return 0;
}
