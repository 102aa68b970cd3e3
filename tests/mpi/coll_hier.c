/* Hierarchical collectives (src/coll/hier.c): run with ranks in several node
 * groups (tests/coll: emulated hosts through WHARF_LOCALITY=launcher and a
 * WHARF_HOST_ID per rank; tests/scenarios: twohost).  Barrier, broadcast
 * (every root, small, above WHARF_COLL_SHM_MAX, a derived type), reduce and
 * allreduce (sum, MPI_IN_PLACE, a non-commutative user op that must see rank
 * order), allgather (MPI_IN_PLACE too), on MPI_COMM_WORLD and on
 * communicators whose node groups interleave or run backwards (Comm_split),
 * odd sizes included.  Exits 1 if fewer than 2 node groups were found (the
 * test would not test the hierarchy) unless given "any".  "loop N": only N
 * rounds of 8-byte allreduce, broadcast and barrier on MPI_COMM_WORLD (for
 * counting the messages between nodes, tests/scenarios/coll_hier.py). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, errs;
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
    if (r % 2)
        m[0] = 1, m[1] = 0, m[2] = r, m[3] = 1;
    else
        m[0] = 1, m[1] = r + 1, m[2] = 0, m[3] = 1;
}

static void run(MPI_Comm c, int iters, const char *what)
{
    int r, n;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    MPI_Datatype mat, vec;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec); /* ints 0, 2, 4 of 5 */
    MPI_Type_commit(&vec);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    size_t big = 3000; /* longs: 24000 B, beyond WHARF_COLL_SHM_MAX */
    long *lv = malloc(big * sizeof(long)), *lr = malloc(big * sizeof(long));
    long *ag = malloc((size_t)n * 40 * sizeof(long));
    for (int it = 0; it < iters; it++) {
        MPI_Barrier(c);
        int root = it % n;
        size_t cnt = it % 3 == 2 ? big : (size_t)(1 + it % 7);
        for (size_t j = 0; j < cnt; j++)
            lv[j] = r == root ? (long)(it * 1000003L + (long)j) : -1;
        MPI_Bcast(lv, (int)cnt, MPI_LONG, root, c);
        for (size_t j = 0; j < cnt; j++)
            CHECK(lv[j] == it * 1000003L + (long)j, "%s: bcast it %d root %d [%zu] = %ld", what, it, root, j, lv[j]);
        /* derived type: the gaps stay untouched */
        int v5[5];
        for (int j = 0; j < 5; j++)
            v5[j] = r == root ? 100 * it + j : -7;
        MPI_Bcast(v5, 1, vec, root, c);
        for (int j = 0; j < 5; j++)
            CHECK(v5[j] == (j % 2 == 0 || r == root ? 100 * it + j : -7), "%s: vector bcast it %d [%d] = %d", what,
                  it, j, v5[j]);
        /* allreduce sum, in place on odd iterations */
        for (size_t j = 0; j < cnt; j++)
            lv[j] = (long)(r + 1) * (long)(j + (size_t)it);
        long tri = (long)n * (n + 1) / 2;
        if (it % 2)
            MPI_Allreduce(MPI_IN_PLACE, lv, (int)cnt, MPI_LONG, MPI_SUM, c);
        else
            MPI_Allreduce(lv, lr, (int)cnt, MPI_LONG, MPI_SUM, c);
        long *res = it % 2 ? lv : lr;
        for (size_t j = 0; j < cnt; j++)
            CHECK(res[j] == tri * (long)(j + (size_t)it), "%s: allreduce it %d [%zu] = %ld", what, it, j, res[j]);
        /* reduce sum to a rotating root, in place at the root on odd iterations */
        for (size_t j = 0; j < cnt; j++)
            lv[j] = (long)(r + 1) * (long)(j + 1), lr[j] = -5;
        if (it % 2 && r == root)
            MPI_Reduce(MPI_IN_PLACE, lv, (int)cnt, MPI_LONG, MPI_SUM, root, c);
        else
            MPI_Reduce(lv, lr, (int)cnt, MPI_LONG, MPI_SUM, root, c);
        if (r == root) {
            res = it % 2 ? lv : lr;
            for (size_t j = 0; j < cnt; j++)
                CHECK(res[j] == tri * (long)(j + 1), "%s: reduce it %d root %d [%zu] = %ld", what, it, root, j, res[j]);
        }
        /* non-commutative user op: rank order, allreduce and reduce */
        int m[4], out[4] = {0}, want[4] = {1, 0, 0, 1};
        rank_matrix(r, m);
        for (int q = 0; q < n; q++) {
            int x[4], len = 1;
            rank_matrix(q, x);
            matmul(want, x, &len, NULL);
            memcpy(want, x, sizeof x);
        }
        MPI_Allreduce(m, out, 1, mat, op, c);
        CHECK(!memcmp(out, want, sizeof want), "%s: matrix allreduce it %d: %d %d %d %d, want %d %d %d %d", what, it,
              out[0], out[1], out[2], out[3], want[0], want[1], want[2], want[3]);
        memset(out, 0, sizeof out);
        MPI_Reduce(m, out, 1, mat, op, root, c);
        if (r == root)
            CHECK(!memcmp(out, want, sizeof want), "%s: matrix reduce it %d root %d", what, it, root);
        /* allgather of k longs per rank, in place on odd iterations */
        int k = 1 + it % 40;
        for (int q = 0; q < n * k; q++)
            ag[q] = -1;
        long mine[40];
        for (int j = 0; j < k; j++)
            mine[j] = 1000L * r + j + it;
        if (it % 2) {
            memcpy(ag + (size_t)r * (size_t)k, mine, (size_t)k * sizeof(long));
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, k, MPI_LONG, c);
        } else {
            MPI_Allgather(mine, k, MPI_LONG, ag, k, MPI_LONG, c);
        }
        for (int q = 0; q < n; q++)
            for (int j = 0; j < k; j++)
                CHECK(ag[q * k + j] == 1000L * q + j + it, "%s: allgather it %d [%d][%d] = %ld", what, it, q, j,
                      ag[q * k + j]);
    }
    free(lv);
    free(lr);
    free(ag);
    MPI_Op_free(&op);
    MPI_Type_free(&mat);
    MPI_Type_free(&vec);
}

static void run_splits(MPI_Comm node)
{
    /* node groups interleaved: ranks sorted by (rank within node, node) */
    int nr;
    MPI_Comm_rank(node, &nr);
    MPI_Comm il, rev, odd;
    MPI_Comm_split(MPI_COMM_WORLD, 0, nr * np + me, &il);
    run(il, 30, "interleaved");
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - me, &rev);
    run(rev, 30, "reversed");
    /* all but the last rank (odd sizes from even ones) */
    MPI_Comm_split(MPI_COMM_WORLD, me == np - 1 ? MPI_UNDEFINED : 0, me, &odd);
    if (odd != MPI_COMM_NULL) {
        run(odd, 30, "all-but-last");
        MPI_Comm_free(&odd);
    }
    MPI_Comm_free(&il);
    MPI_Comm_free(&rev);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsz, lead, groups = 0;
    MPI_Comm_size(node, &nsz);
    MPI_Comm_rank(node, &lead);
    lead = lead == 0;
    MPI_Allreduce(&lead, &groups, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (groups < 2 && !(argc > 1 && !strcmp(argv[1], "any"))) {
        if (me == 0)
            fprintf(stderr, "FAIL: %d node group(s): the hierarchy is not exercised\n", groups);
        MPI_Finalize();
        return 1;
    }
    if (argc > 2 && !strcmp(argv[1], "loop")) {
        int iters = atoi(argv[2]);
        for (int it = 0; it < iters; it++) {
            long v = me + it, sum = 0, b = me == it % np ? 77L * it : -1;
            MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            CHECK(sum == (long)np * (np - 1) / 2 + (long)np * it, "loop allreduce it %d = %ld", it, sum);
            MPI_Bcast(&b, 1, MPI_LONG, it % np, MPI_COMM_WORLD);
            CHECK(b == 77L * it, "loop bcast it %d = %ld", it, b);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    } else {
        run(MPI_COMM_WORLD, 60, "world");
        run_splits(node);
    }
    MPI_Comm_free(&node);
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s: %d errors (%d node groups, %d ranks)\n", tot ? "FAIL" : "ok", tot, groups, np);
    MPI_Finalize();
    return tot != 0;
}
