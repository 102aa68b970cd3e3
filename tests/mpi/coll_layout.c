/* Every data-moving collective where the ranks describe the same bytes with
 * different layouts of one type signature: by rank, contiguous ints (n x
 * MPI_INT), strided ints (n x an int of extent 2 ints) or one strided vector
 * (1 x vector(n, 1, 2) resized to 2n ints).  Every rank must pick the same
 * algorithm whatever its own layout (a layout-dependent choice hangs), at
 * sizes below and above the shared-memory switch points (WHARF_COLL_SHM_MAX,
 * WHARF_COLL_SHM_CHUNK).  Also MPI_IN_PLACE on one rank only (gather,
 * scatter, reduce roots) and reductions over a strided type.
 * Argument: "" blocking, "nb" MPI_I* + MPI_Wait, "persist" MPI_*_init +
 * MPI_Start twice.  Every value and every gap between strided ints checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAP (-7) /* the ints between strided ones: never written */

static int R, N, MODE, errs;
static MPI_Datatype stride2; /* an int with extent 2 ints */

/* one rank's description of n ints */
typedef struct {
    MPI_Datatype t;
    int cnt, stride, own; /* own: t to free */
} lay_t;

static lay_t layout(int kind, int n)
{
    lay_t l = {MPI_INT, n, 1, 0};
    if (kind == 1) {
        l.t = stride2;
        l.stride = 2;
    } else if (kind == 2) {
        MPI_Datatype v;
        MPI_Type_vector(n, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &l.t);
        MPI_Type_free(&v);
        MPI_Type_commit(&l.t);
        l.cnt = 1;
        l.stride = 2;
        l.own = 1;
    }
    return l;
}
static void unlay(lay_t *l)
{
    if (l->own)
        MPI_Type_free(&l->t);
}

static int val(int from, int blk, int i, int it)
{
    return ((from * 16 + blk) * 4 + it) * 65536 + i;
}

/* ints [0, n) of a block at p with stride s: set to v(i) or GAP between */
static void fill(int *p, int n, int s, int from, int blk, int it)
{
    for (int i = 0; i < n; i++) {
        p[i * s] = val(from, blk, i, it);
        if (s == 2)
            p[i * s + 1] = GAP;
    }
}
static void clear(int *p, size_t ints)
{
    for (size_t i = 0; i < ints; i++)
        p[i] = GAP;
}
static void expect(const char *what, int n, const int *p, int s, int from, int blk, int it)
{
    for (int i = 0; i < n; i++) {
        int want = val(from, blk, i, it);
        if (p[i * s] != want && errs++ < 10)
            printf("rank %d: %s n=%d: from %d block %d [%d] = %d, expected %d\n", R, what, n, from, blk, i, p[i * s],
                   want);
        if (s == 2 && p[i * s + 1] != GAP && errs++ < 10)
            printf("rank %d: %s n=%d: gap after [%d] written (%d)\n", R, what, n, i, p[i * s + 1]);
    }
}

/* run one collective in the mode: blocking call B, or the nonblocking call I
 * / persistent init P (both with a trailing request) */
#define RUN(B, I, P)                                                                                                 \
    do {                                                                                                             \
        MPI_Request rq_;                                                                                             \
        if (MODE == 0)                                                                                               \
            B;                                                                                                       \
        else if (MODE == 1) {                                                                                        \
            I;                                                                                                       \
            MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                                                       \
        } else {                                                                                                     \
            P;                                                                                                       \
            MPI_Start(&rq_);                                                                                         \
            MPI_Wait(&rq_, MPI_STATUS_IGNORE);                                                                       \
            MPI_Request_free(&rq_);                                                                                  \
        }                                                                                                            \
    } while (0)

static void t_bcast(int n, int root, int kind)
{
    lay_t l = layout(kind, n);
    int *b = malloc(sizeof(int) * 2 * (size_t)n);
    clear(b, 2 * (size_t)n);
    if (R == root)
        fill(b, n, l.stride, root, 0, 0);
    RUN(MPI_Bcast(b, l.cnt, l.t, root, MPI_COMM_WORLD), MPI_Ibcast(b, l.cnt, l.t, root, MPI_COMM_WORLD, &rq_),
        MPI_Bcast_init(b, l.cnt, l.t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    expect("bcast", n, b, l.stride, root, 0, 0);
    free(b);
    unlay(&l);
}

/* gather (inplace: the root passes MPI_IN_PLACE) */
static void t_gather(int n, int root, int kind, int inplace)
{
    lay_t l = layout(kind, n);
    size_t blk = (size_t)n * (size_t)l.stride;
    int *s = malloc(sizeof(int) * blk), *r = malloc(sizeof(int) * blk * (size_t)N);
    fill(s, n, l.stride, R, 0, 0);
    clear(r, blk * (size_t)N);
    const void *sb = s;
    if (R == root && inplace) {
        fill(r + (size_t)R * blk, n, l.stride, R, 0, 0);
        sb = MPI_IN_PLACE;
    }
    RUN(MPI_Gather(sb, l.cnt, l.t, r, l.cnt, l.t, root, MPI_COMM_WORLD),
        MPI_Igather(sb, l.cnt, l.t, r, l.cnt, l.t, root, MPI_COMM_WORLD, &rq_),
        MPI_Gather_init(sb, l.cnt, l.t, r, l.cnt, l.t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    if (R == root)
        for (int q = 0; q < N; q++)
            expect(inplace ? "gather in place" : "gather", n, r + (size_t)q * blk, l.stride, q, 0, 0);
    free(s);
    free(r);
    unlay(&l);
}

static void t_scatter(int n, int root, int kind, int inplace)
{
    lay_t l = layout(kind, n);
    size_t blk = (size_t)n * (size_t)l.stride;
    int *s = malloc(sizeof(int) * blk * (size_t)N), *r = malloc(sizeof(int) * blk);
    for (int q = 0; q < N; q++)
        fill(s + (size_t)q * blk, n, l.stride, root, q, 0);
    clear(r, blk);
    void *rb = r;
    if (R == root && inplace)
        rb = MPI_IN_PLACE;
    RUN(MPI_Scatter(s, l.cnt, l.t, rb, l.cnt, l.t, root, MPI_COMM_WORLD),
        MPI_Iscatter(s, l.cnt, l.t, rb, l.cnt, l.t, root, MPI_COMM_WORLD, &rq_),
        MPI_Scatter_init(s, l.cnt, l.t, rb, l.cnt, l.t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    if (rb == MPI_IN_PLACE)
        expect("scatter in place", n, s + (size_t)R * blk, l.stride, root, R, 0);
    else
        expect("scatter", n, r, l.stride, root, R, 0);
    free(s);
    free(r);
    unlay(&l);
}

static void t_allgather(int n, int kind)
{
    lay_t l = layout(kind, n);
    size_t blk = (size_t)n * (size_t)l.stride;
    int *s = malloc(sizeof(int) * blk), *r = malloc(sizeof(int) * blk * (size_t)N);
    fill(s, n, l.stride, R, 0, 0);
    clear(r, blk * (size_t)N);
    RUN(MPI_Allgather(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD),
        MPI_Iallgather(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD, &rq_),
        MPI_Allgather_init(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int q = 0; q < N; q++)
        expect("allgather", n, r + (size_t)q * blk, l.stride, q, 0, 0);
    free(s);
    free(r);
    unlay(&l);
}

static void t_alltoall(int n, int kind)
{
    lay_t l = layout(kind, n);
    size_t blk = (size_t)n * (size_t)l.stride;
    int *s = malloc(sizeof(int) * blk * (size_t)N), *r = malloc(sizeof(int) * blk * (size_t)N);
    for (int q = 0; q < N; q++)
        fill(s + (size_t)q * blk, n, l.stride, R, q, 0);
    clear(r, blk * (size_t)N);
    RUN(MPI_Alltoall(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD),
        MPI_Ialltoall(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD, &rq_),
        MPI_Alltoall_init(s, l.cnt, l.t, r, l.cnt, l.t, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int q = 0; q < N; q++)
        expect("alltoall", n, r + (size_t)q * blk, l.stride, q, R, 0);
    free(s);
    free(r);
    unlay(&l);
}

/* v-variants: block sizes n + (something of the pair); layouts 0 and 1
 * (counts in ints of the rank's type), blocks packed one after another */
static int vcnt(int n, int from, int to)
{
    return n + (from + 2 * to) % 3;
}

static void t_vcolls(int n, int root, int kind)
{
    lay_t l = layout(kind, n); /* kind 0 or 1: l.t is one int */
    int st = l.stride, *cnt = malloc(sizeof(int) * (size_t)N * 4), *dsp = cnt + N, *cnt2 = cnt + 2 * N,
        *dsp2 = cnt + 3 * N;
    size_t cap = (size_t)N * (size_t)(n + 2) * 2 + 2;
    int *s = malloc(sizeof(int) * cap), *r = malloc(sizeof(int) * cap);
    /* gatherv: rank q sends vcnt(n, q, root) ints */
    int mine = vcnt(n, R, root), off = 0;
    for (int q = 0; q < N; q++) {
        cnt[q] = vcnt(n, q, root);
        dsp[q] = off;
        off += cnt[q];
    }
    fill(s, mine, st, R, 0, 1);
    clear(r, cap);
    RUN(MPI_Gatherv(s, mine, l.t, r, cnt, dsp, l.t, root, MPI_COMM_WORLD),
        MPI_Igatherv(s, mine, l.t, r, cnt, dsp, l.t, root, MPI_COMM_WORLD, &rq_),
        MPI_Gatherv_init(s, mine, l.t, r, cnt, dsp, l.t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    if (R == root)
        for (int q = 0; q < N; q++)
            expect("gatherv", cnt[q], r + (size_t)dsp[q] * (size_t)st, st, q, 0, 1);
    /* scatterv: root sends vcnt(n, root, q) to q */
    off = 0;
    for (int q = 0; q < N; q++) {
        cnt[q] = vcnt(n, root, q);
        dsp[q] = off;
        off += cnt[q];
        fill(s + (size_t)dsp[q] * (size_t)st, cnt[q], st, root, q, 1);
    }
    mine = vcnt(n, root, R);
    clear(r, cap);
    RUN(MPI_Scatterv(s, cnt, dsp, l.t, r, mine, l.t, root, MPI_COMM_WORLD),
        MPI_Iscatterv(s, cnt, dsp, l.t, r, mine, l.t, root, MPI_COMM_WORLD, &rq_),
        MPI_Scatterv_init(s, cnt, dsp, l.t, r, mine, l.t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    expect("scatterv", mine, r, st, root, R, 1);
    /* allgatherv: rank q contributes vcnt(n, q, 0) */
    off = 0;
    for (int q = 0; q < N; q++) {
        cnt[q] = vcnt(n, q, 0);
        dsp[q] = off;
        off += cnt[q];
    }
    mine = vcnt(n, R, 0);
    fill(s, mine, st, R, 0, 2);
    clear(r, cap);
    RUN(MPI_Allgatherv(s, mine, l.t, r, cnt, dsp, l.t, MPI_COMM_WORLD),
        MPI_Iallgatherv(s, mine, l.t, r, cnt, dsp, l.t, MPI_COMM_WORLD, &rq_),
        MPI_Allgatherv_init(s, mine, l.t, r, cnt, dsp, l.t, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int q = 0; q < N; q++)
        expect("allgatherv", cnt[q], r + (size_t)dsp[q] * (size_t)st, st, q, 0, 2);
    /* alltoallv: q sends vcnt(n, q, p) to p */
    int so = 0, ro = 0;
    for (int q = 0; q < N; q++) {
        cnt[q] = vcnt(n, R, q);
        dsp[q] = so;
        so += cnt[q];
        fill(s + (size_t)dsp[q] * (size_t)st, cnt[q], st, R, q, 3);
        cnt2[q] = vcnt(n, q, R);
        dsp2[q] = ro;
        ro += cnt2[q];
    }
    clear(r, cap);
    RUN(MPI_Alltoallv(s, cnt, dsp, l.t, r, cnt2, dsp2, l.t, MPI_COMM_WORLD),
        MPI_Ialltoallv(s, cnt, dsp, l.t, r, cnt2, dsp2, l.t, MPI_COMM_WORLD, &rq_),
        MPI_Alltoallv_init(s, cnt, dsp, l.t, r, cnt2, dsp2, l.t, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int q = 0; q < N; q++)
        expect("alltoallv", cnt2[q], r + (size_t)dsp2[q] * (size_t)st, st, q, R, 3);
    free(s);
    free(r);
    free(cnt);
    unlay(&l);
}

/* reductions: the same type on every rank (the standard asks for it),
 * strided or not, with MPI_IN_PLACE at the reduce root only */
static void t_reduce(int n, int root, int kind, int inplace)
{
    lay_t l = layout(kind, n);
    int st = l.stride, sum = 0;
    for (int q = 0; q < N; q++)
        sum += q;
    int *s = malloc(sizeof(int) * (size_t)n * 2), *r = malloc(sizeof(int) * (size_t)n * 2);
    for (int i = 0; i < n; i++) {
        s[i * st] = R * 3 + i;
        if (st == 2)
            s[i * st + 1] = GAP;
    }
    clear(r, (size_t)n * 2);
    const void *sb = s;
    if (inplace && R == root) {
        memcpy(r, s, sizeof(int) * (size_t)n * (size_t)st);
        sb = MPI_IN_PLACE;
    }
    RUN(MPI_Reduce(sb, r, l.cnt, l.t, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Ireduce(sb, r, l.cnt, l.t, MPI_SUM, root, MPI_COMM_WORLD, &rq_),
        MPI_Reduce_init(sb, r, l.cnt, l.t, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    if (R == root)
        for (int i = 0; i < n; i++) {
            int want = 3 * sum + N * i;
            if (r[i * st] != want && errs++ < 10)
                printf("rank %d: reduce%s n=%d kind %d: [%d] = %d, expected %d\n", R, inplace ? " in place" : "", n,
                       kind, i, r[i * st], want);
            if (st == 2 && r[i * st + 1] != GAP && errs++ < 10)
                printf("rank %d: reduce n=%d: gap after [%d] written\n", R, n, i);
        }
    clear(r, (size_t)n * 2);
    RUN(MPI_Allreduce(s, r, l.cnt, l.t, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iallreduce(s, r, l.cnt, l.t, MPI_SUM, MPI_COMM_WORLD, &rq_),
        MPI_Allreduce_init(s, r, l.cnt, l.t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int i = 0; i < n; i++)
        if (r[i * st] != 3 * sum + N * i && errs++ < 10)
            printf("rank %d: allreduce n=%d kind %d: [%d] = %d, expected %d\n", R, n, kind, i, r[i * st],
                   3 * sum + N * i);
    free(s);
    free(r);
    unlay(&l);
}

/* reduce_scatter(_block), scan, exscan over one type on every rank (kind
 * 0: ints, 1: strided ints), sizes across the switch points */
static void t_redscan(int n, int kind)
{
    lay_t l = layout(kind, 1);
    int st = l.stride, tot = 0, *cnt = malloc(sizeof(int) * (size_t)N);
    for (int q = 0; q < N; q++)
        tot += cnt[q] = n + q % 2;
    int *s = malloc(sizeof(int) * (size_t)tot * 2), *r = malloc(sizeof(int) * (size_t)tot * 2);
    for (int i = 0; i < tot; i++) {
        s[i * st] = R + 2 * i;
        if (st == 2)
            s[i * st + 1] = GAP;
    }
    int sum = N * (N - 1) / 2, off = 0;
    for (int q = 0; q < R; q++)
        off += cnt[q];
    clear(r, (size_t)tot * 2);
    RUN(MPI_Reduce_scatter(s, r, cnt, l.t, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter(s, r, cnt, l.t, MPI_SUM, MPI_COMM_WORLD, &rq_),
        MPI_Reduce_scatter_init(s, r, cnt, l.t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int i = 0; i < cnt[R]; i++)
        if ((r[i * st] != sum + 2 * N * (off + i) || (st == 2 && r[i * st + 1] != GAP)) && errs++ < 10)
            printf("rank %d: reduce_scatter n=%d kind %d: [%d] = %d, expected %d\n", R, n, kind, i, r[i * st],
                   sum + 2 * N * (off + i));
    clear(r, (size_t)tot * 2);
    RUN(MPI_Reduce_scatter_block(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter_block(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, &rq_),
        MPI_Reduce_scatter_block_init(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
    for (int i = 0; i < n; i++)
        if ((r[i * st] != sum + 2 * N * (R * n + i) || (st == 2 && r[i * st + 1] != GAP)) && errs++ < 10)
            printf("rank %d: reduce_scatter_block n=%d kind %d: [%d] = %d, expected %d\n", R, n, kind, i, r[i * st],
                   sum + 2 * N * (R * n + i));
    for (int ex = 0; ex < 2; ex++) {
        clear(r, (size_t)tot * 2);
        if (ex)
            RUN(MPI_Exscan(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD),
                MPI_Iexscan(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, &rq_),
                MPI_Exscan_init(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
        else
            RUN(MPI_Scan(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD), MPI_Iscan(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, &rq_),
                MPI_Scan_init(s, r, n, l.t, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq_));
        int upto = ex ? R : R + 1; /* ranks summed */
        for (int i = 0; i < n && upto > 0; i++) {
            int want = upto * (upto - 1) / 2 + 2 * i * upto;
            if ((r[i * st] != want || (st == 2 && r[i * st + 1] != GAP)) && errs++ < 10)
                printf("rank %d: %s n=%d kind %d: [%d] = %d, expected %d\n", R, ex ? "exscan" : "scan", n, kind, i,
                       r[i * st], want);
        }
    }
    free(s);
    free(r);
    free(cnt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &N);
    MODE = argc > 1 && !strcmp(argv[1], "nb") ? 1 : argc > 1 && !strcmp(argv[1], "persist") ? 2 : 0;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &stride2);
    MPI_Type_commit(&stride2);
    /* below WHARF_COLL_SHM_MAX (4 KiB), between it and one chunk (128 KiB), above */
    static const int sizes[] = {1, 10, 1500, 40000};
    for (int k = 0; k < 4; k++) {
        int n = sizes[k];
        for (int root = 0; root < N; root += N - 1 > 0 ? N - 1 : 1) {
            /* every rank's layout by rank (and by root, so the root has each) */
            for (int shift = 0; shift < 3; shift++) {
                int kind = (R + shift) % 3;
                t_bcast(n, root, kind);
                t_gather(n, root, kind, 0);
                t_scatter(n, root, kind, 0);
                t_gather(n, root, kind, 1);
                t_scatter(n, root, kind, 1);
                t_vcolls(n, root, (R + shift) % 2);
            }
            for (int kind = 0; kind < 2; kind++)
                for (int inplace = 0; inplace < 2; inplace++)
                    t_reduce(n, root, kind, inplace);
            if (N == 1)
                break;
        }
        for (int kind = 0; kind < 2; kind++)
            t_redscan(n, kind);
        for (int shift = 0; shift < 3; shift++) {
            t_allgather(n, (R + shift) % 3);
            t_alltoall(n, (R + shift) % 3);
        }
    }
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0)
        printf(tot ? "coll_layout: %d errors\n" : "coll_layout: ok (%d ranks, mode %d)\n", tot ? tot : N, MODE);
    MPI_Type_free(&stride2);
    MPI_Finalize();
    return tot != 0;
}
