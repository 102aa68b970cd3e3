/* Small collectives through node shared memory (src/coll/shmcoll.c), and the
 * same calls where they fall back: thousands of back-to-back barriers,
 * broadcasts from rotating roots, reductions and allreduces (predefined ops,
 * MPI_IN_PLACE, a non-commutative user op that must see rank order), sizes
 * on both sides of WHARF_COLL_SHM_MAX, many short-lived communicators (their
 * blocks are allocated and freed), and a rank that arrives late.  Large
 * messages (the chunked shm-large path): broadcast, reduce, allreduce and allgather of
 * sizes crossing WHARF_COLL_SHM_CHUNK (ragged last chunks), in place, with
 * the non-commutative op over thousands of elements. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np, errs, large_budget = 19;
#define CHECK_RANK me
#define CHECK_FAILS errs
#include "count_check.h"

/* 2x2 integer matrix product: associative, not commutative */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void rank_matrix(int r, int *m)
{
    m[0] = 1, m[1] = r + 1, m[2] = 0, m[3] = 1; /* [[1, r+1], [0, 1]]: upper unitriangular */
    if (r % 2) {
        m[0] = 1, m[1] = 0, m[2] = r, m[3] = 1;
    }
}

/* element i of rank r's contribution to the large matrix reductions */
static void elem_matrix(int r, size_t i, int *m)
{
    rank_matrix((int)((size_t)r * 7 + i) % 11, m);
}

static void large(MPI_Comm c, int it)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    static const size_t sizes[] = {600, 16411, 40000}; /* longs: 4.8 KB, 131 KB (chunk + 1 element), 320 KB */
    size_t cnt = sizes[(it / 20 + large_budget) % 3], want_f = (size_t)n * (size_t)(n + 1) / 2;
    int root = (it / 20 + large_budget) % n;
    long *a = malloc(cnt * sizeof(long)), *b = malloc(cnt * sizeof(long));
    for (size_t j = 0; j < cnt; j++)
        a[j] = r == root ? (long)(j * 3 + (size_t)it) : -1;
    MPI_Bcast(a, (int)cnt, MPI_LONG, root, c);
    for (size_t j = 0; j < cnt; j++)
        CHECK(a[j] == (long)(j * 3 + (size_t)it), "large bcast it %d n %zu [%zu] = %ld", it, cnt, j, a[j]);
    for (size_t j = 0; j < cnt; j++)
        a[j] = (long)(r + 1) * (long)(j + 1);
    if ((it / 20 + large_budget) % 2)
        MPI_Allreduce(MPI_IN_PLACE, a, (int)cnt, MPI_LONG, MPI_SUM, c);
    else
        MPI_Allreduce(a, b, (int)cnt, MPI_LONG, MPI_SUM, c), memcpy(a, b, cnt * sizeof(long));
    for (size_t j = 0; j < cnt; j++)
        CHECK(a[j] == (long)want_f * (long)(j + 1), "large allreduce it %d n %zu [%zu] = %ld", it, cnt, j, a[j]);
    for (size_t j = 0; j < cnt; j++)
        a[j] = (long)(r + 1) * (long)(j + 1), b[j] = -3;
    if (r == root && (it / 20 + large_budget) % 2)
        MPI_Reduce(MPI_IN_PLACE, a, (int)cnt, MPI_LONG, MPI_SUM, root, c), memcpy(b, a, cnt * sizeof(long));
    else
        MPI_Reduce(a, b, (int)cnt, MPI_LONG, MPI_SUM, root, c);
    if (r == root)
        for (size_t j = 0; j < cnt; j++)
            CHECK(b[j] == (long)want_f * (long)(j + 1), "large reduce it %d n %zu [%zu] = %ld", it, cnt, j, b[j]);
    /* allgather of cnt / 4 longs per rank, in place on odd rounds */
    size_t per = cnt / 4;
    long *g = malloc(per * (size_t)n * sizeof(long));
    for (size_t j = 0; j < per * (size_t)n; j++)
        g[j] = (it / 20) % 2 && j / per == (size_t)r ? (long)(r * 100000 + (int)(j % per)) : -9;
    for (size_t j = 0; j < per; j++)
        a[j] = r * 100000L + (long)j;
    if ((it / 20) % 2)
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, (int)per, MPI_LONG, c);
    else
        MPI_Allgather(a, (int)per, MPI_LONG, g, (int)per, MPI_LONG, c);
    for (size_t j = 0; j < per * (size_t)n; j++)
        CHECK(g[j] == (long)(j / per) * 100000L + (long)(j % per), "large allgather it %d per %zu [%zu] = %ld", it,
              per, j, g[j]);
    free(g);
    /* non-commutative, 2x2 int matrices (16 B): rank order in every slice */
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    size_t nm = cnt / 2;
    int *x = malloc(nm * 16), *y = malloc(nm * 16), want[11][4];
    for (int k = 0; k < 11; k++) {
        int w[4] = {1, 0, 0, 1};
        for (int q = 0; q < n; q++) {
            int e[4], len = 1;
            elem_matrix(q, (size_t)k, e);
            matmul(w, e, &len, NULL);
            memcpy(w, e, sizeof e);
        }
        memcpy(want[k], w, sizeof w);
    }
    for (size_t i = 0; i < nm; i++)
        elem_matrix(r, i % 11, x + 4 * i);
    MPI_Allreduce(x, y, (int)nm, mat, op, c);
    for (size_t i = 0; i < nm; i++)
        CHECK(!memcmp(y + 4 * i, want[i % 11], 16), "large matrix allreduce it %d n %zu [%zu]", it, nm, i);
    MPI_Reduce(x, y, (int)nm, mat, op, root, c);
    if (r == root)
        for (size_t i = 0; i < nm; i++)
            CHECK(!memcmp(y + 4 * i, want[i % 11], 16), "large matrix reduce it %d n %zu [%zu]", it, nm, i);
    free(x);
    free(y);
    free(a);
    free(b);
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
}

static void run(MPI_Comm c, int iters)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Datatype mat;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    size_t big = 8192; /* beyond the default WHARF_COLL_SHM_MAX */
    long *lv = malloc(big * sizeof(long)), *lr = malloc(big * sizeof(long));
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(c);
        /* broadcast from a rotating root, small and large */
        int root = it % n;
        size_t cnt = it % 3 == 2 ? big : (size_t)(1 + it % 100);
        for (size_t j = 0; j < cnt; j++)
            lv[j] = r == root ? (long)(it * 1000003L + (long)j) : -1;
        MPI_Bcast(lv, (int)cnt, MPI_LONG, root, c);
        for (size_t j = 0; j < cnt; j++)
            CHECK(lv[j] == it * 1000003L + (long)j, "bcast it %d root %d [%zu] = %ld", it, root, j, lv[j]);
        /* allreduce sum, in place on odd iterations */
        for (size_t j = 0; j < cnt; j++)
            lv[j] = (long)(r + 1) * (long)(j + (size_t)it);
        long want_f = (long)n * (n + 1) / 2;
        if (it % 2)
            MPI_Allreduce(MPI_IN_PLACE, lv, (int)cnt, MPI_LONG, MPI_SUM, c);
        else
            MPI_Allreduce(lv, lr, (int)cnt, MPI_LONG, MPI_SUM, c);
        long *res = it % 2 ? lv : lr;
        for (size_t j = 0; j < cnt; j++)
            CHECK(res[j] == want_f * (long)(j + (size_t)it), "allreduce it %d [%zu] = %ld", it, j, res[j]);
        /* reduce max to the root */
        int v = r * 7 + it, mx = -1;
        MPI_Reduce(&v, &mx, 1, MPI_INT, MPI_MAX, root, c);
        if (r == root)
            CHECK(mx == (n - 1) * 7 + it, "reduce max it %d = %d", it, mx);
        /* non-commutative user op: rank order */
        int m[4], out[4] = {0}, want[4] = {1, 0, 0, 1};
        rank_matrix(r, m);
        for (int q = 0; q < n; q++) {
            int x[4];
            rank_matrix(q, x);
            int len = 1;
            matmul(want, x, &len, NULL); /* x = want * x */
            memcpy(want, x, sizeof x);
        }
        MPI_Allreduce(m, out, 1, mat, op, c);
        CHECK(!memcmp(out, want, sizeof want), "matrix allreduce it %d: %d %d %d %d, want %d %d %d %d", it, out[0],
              out[1], out[2], out[3], want[0], want[1], want[2], want[3]);
        if (it % 20 == 0 && large_budget-- > 0) /* world: 15 rounds; the first 4 short-lived communicators */
            large(c, it);
    }
    free(lv);
    free(lr);
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    run(MPI_COMM_WORLD, 300);
    /* a late rank: everyone else waits in the barrier (and must not leave
     * before it arrived: at least its 200 ms of sleep, whatever the load) */
    for (int late = np - 1; late >= 0; late -= np > 1 ? np - 1 : 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (me == late)
            usleep(200000);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(MPI_Wtime() - t0 >= 0.1, "left the barrier %.3f s after entering, before rank %d arrived (0.2 s late)",
              MPI_Wtime() - t0, late);
        if (late == 0)
            break;
    }
    /* short-lived communicators: blocks allocated and freed, reused */
    for (int k = 0; k < 40; k++) {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, (me + k) % 2, np - me, &sub);
        run(sub, 5);
        MPI_Comm_free(&sub);
    }
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %d errors\n", tot ? "FAIL" : "ok", tot);
    MPI_Finalize();
    return tot != 0;
}
