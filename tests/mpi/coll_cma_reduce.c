/* MPI_Reduce (and MPI_Allreduce) through the single-copy slices
 * (wh_cma_reduce_*, src/coll/shmcma.c; the allreduce only with every buffer
 * in the node heap)
 * and the cases around them, every element checked against MPI_Reduce_local
 * applied in rank order to every rank's input (each rank can compute them):
 *  - counts just under and over the switch point ((n - 1)^2 x
 *    WHARF_COLL_CMA_MIN bytes) and odd counts (ragged slices and chunks),
 *    several roots;
 *  - types of 1, 2, 4, 8 and 16 bytes with SUM, PROD, MAX, BAND, BXOR,
 *    MINLOC on MPI_2INT, a user commutative op; a non-commutative user op,
 *    a padded pair type (MPI_DOUBLE_INT) and a strided type take the cells;
 *  - the root in place (single copy only once a write to the root has been
 *    seen: the first reduce in place takes the cells), and not.
 * Then the other single-copy collectives over the same buffers: bcast
 * (2 ranks: the root writes half), allgather, allgatherv.
 * argv[1] = "heap": every buffer from MPI_Alloc_mem (the node-shared heap:
 * region loads and stores instead of CMA, in containers too).
 * ctest runs it with WHARF_REPORT=coll and looks for reduces on the cma
 * path, so the path is known to run; with every write refused (the
 * nowritev shim) all fall back and the results stay right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np, errs, heap;

static void *buf_alloc(size_t n)
{
    void *p = NULL;
    if (heap)
        MPI_Alloc_mem((MPI_Aint)(n ? n : 1), MPI_INFO_NULL, &p);
    else
        p = malloc(n ? n : 1);
    return p;
}
static void buf_free(void *p)
{
    if (heap)
        MPI_Free_mem(p);
    else
        free(p);
}

#define CHECK_RANK me
#define CHECK_FAILS errs
#include "count_check.h"

/* commutative: elementwise a + 2b mod 2^31 is not associative, so take
 * max(a, b) + 0 written as a user function (commutative, associative) */
static void umax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] > b[i] ? a[i] : b[i];
}
/* non-commutative (associative): 2x2 matrix product on 4 ints mod 1000 */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c[4] = {(a[0] * b[0] + a[1] * b[2]) % 1000, (a[0] * b[1] + a[1] * b[3]) % 1000,
                    (a[2] * b[0] + a[3] * b[2]) % 1000, (a[2] * b[1] + a[3] * b[3]) % 1000};
        memcpy(b, c, sizeof c);
    }
}

enum { T_SCHAR, T_SHORT, T_INT, T_FLOAT, T_DOUBLE, T_LL, T_CPLX, T_2INT, T_DINT, T_MAT, T_VEC };

typedef struct {
    const char *name;
    int kind;
    MPI_Datatype type; /* set in main for the derived ones */
    MPI_Op op;
    size_t size; /* bytes per element (the type's size) */
} case_t;

/* rank r's element j, written at p (small values: sums and products stay exact) */
static void gen(int kind, int r, size_t j, MPI_Op op, void *p)
{
    int v = (int)((j * 7 + (size_t)r * 13) % 29);
    if (op == MPI_PROD)
        v = (j + (size_t)r) % 3 == 0 ? 2 : 1;
    switch (kind) {
    case T_SCHAR: *(signed char *)p = (signed char)(v - 3); break;
    case T_SHORT: *(short *)p = (short)(v * 11 - r); break;
    case T_INT: *(int *)p = v * 1001 + r; break;
    case T_FLOAT: *(float *)p = (float)v; break;
    case T_DOUBLE: *(double *)p = v + 0.5; break;
    case T_LL: *(long long *)p = (long long)v << 33 | (unsigned)r; break;
    case T_CPLX: ((double *)p)[0] = v, ((double *)p)[1] = op == MPI_PROD ? 0 : -v; break;
    case T_2INT: ((int *)p)[0] = v, ((int *)p)[1] = r; break;
    case T_DINT: { struct { double d; int i; } x = {v, r}; memcpy(p, &x, sizeof x); break; }
    case T_MAT: for (int k = 0; k < 4; k++) ((int *)p)[k] = (v + k * r + 1) % 10; break;
    case T_VEC: ((double *)p)[0] = v, ((double *)p)[1] = -1; break; /* the gap holds -1 */
    }
}

static void fill(const case_t *t, int r, size_t cnt, char *buf, size_t ext)
{
    for (size_t j = 0; j < cnt; j++)
        gen(t->kind, r, j, t->op, buf + j * ext);
}

static void one(const case_t *t, size_t cnt, int root, int inplace, MPI_Aint ext)
{
    size_t bytes = cnt * (size_t)ext;
    char *in = buf_alloc(bytes), *out = buf_alloc(bytes), *want = malloc(bytes), *tmp = malloc(bytes);
    fill(t, me, cnt, in, (size_t)ext);
    memset(out, 0x5a, bytes);
    if (me == root && inplace)
        memcpy(out, in, bytes);
    int rc = MPI_Reduce(me == root && inplace ? MPI_IN_PLACE : in, out, (int)cnt, t->type, t->op, root,
                        MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "%s count %zu root %d: MPI_Reduce failed", t->name, cnt, root);
    /* want = x0 op (x1 op (... op x(n-1))): Reduce_local(in, inout) is inout = in op inout */
    fill(t, np - 1, cnt, want, (size_t)ext);
    for (int r = np - 2; r >= 0; r--) {
        fill(t, r, cnt, tmp, (size_t)ext);
        MPI_Reduce_local(tmp, want, (int)cnt, t->type, t->op);
    }
    int sz;
    MPI_Type_size(t->type, &sz);
    size_t cmp = t->kind == T_DINT ? 12 : t->kind == T_VEC ? 8 : (size_t)sz;
    if (me == root) {
        size_t bad = (size_t)-1;
        for (size_t j = 0; j < cnt && bad == (size_t)-1; j++)
            if (memcmp(out + j * (size_t)ext, want + j * (size_t)ext, cmp))
                bad = j;
        CHECK(bad == (size_t)-1, "%s count %zu root %d%s: element %zu wrong", t->name, cnt, root,
              inplace ? " in place" : "", bad);
    }
    /* the same as an allreduce (in place where the reduce was), once per root round */
    if (root == 0) {
        fill(t, me, cnt, in, (size_t)ext);
        memset(out, 0x5a, bytes);
        if (inplace)
            memcpy(out, in, bytes);
        rc = MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, (int)cnt, t->type, t->op, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS, "%s count %zu: MPI_Allreduce failed", t->name, cnt);
        size_t bad = (size_t)-1;
        for (size_t j = 0; j < cnt && bad == (size_t)-1; j++)
            if (memcmp(out + j * (size_t)ext, want + j * (size_t)ext, cmp))
                bad = j;
        CHECK(bad == (size_t)-1, "%s count %zu allreduce%s: element %zu wrong", t->name, cnt,
              inplace ? " in place" : "", bad);
    }
    buf_free(in);
    buf_free(out);
    free(want);
    free(tmp);
}

/* bcast, allgather, allgatherv of about `bytes` per rank */
static void others(size_t bytes, int root)
{
    size_t tot = bytes * (size_t)np;
    unsigned char *a = buf_alloc(tot + 64), *g = buf_alloc(tot + 64);
    for (size_t j = 0; j < bytes; j++)
        a[j] = me == root ? (unsigned char)(j * 7 + (size_t)root) : 0;
    MPI_Bcast(a, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    size_t bad = (size_t)-1;
    for (size_t j = 0; j < bytes && bad == (size_t)-1; j++)
        if (a[j] != (unsigned char)(j * 7 + (size_t)root))
            bad = j;
    CHECK(bad == (size_t)-1, "bcast %zu root %d: byte %zu wrong", bytes, root, bad);
    for (size_t j = 0; j < bytes; j++)
        a[j] = (unsigned char)(j * 3 + (size_t)me * 11);
    memset(g, 0, tot);
    MPI_Allgather(a, (int)bytes, MPI_BYTE, g, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (size_t j = 0; j < tot && bad == (size_t)-1; j++)
        if (g[j] != (unsigned char)((j % bytes) * 3 + (j / bytes) * 11))
            bad = j;
    CHECK(bad == (size_t)-1, "allgather %zu: byte %zu wrong", bytes, bad);
    /* allgatherv: rank r gives bytes - r * 3 bytes, blocks in reverse order, in place on odd sizes */
    int *cnt = malloc(sizeof(int) * (size_t)np), *dis = malloc(sizeof(int) * (size_t)np);
    size_t pos = 0;
    for (int r = np - 1; r >= 0; r--) {
        cnt[r] = (int)(bytes - (size_t)r * 3);
        dis[r] = (int)pos;
        pos += (size_t)cnt[r] + 5;
    }
    memset(g, 0xcc, pos);
    for (int j = 0; j < cnt[me]; j++)
        (bytes % 2 ? g + dis[me] : a)[j] = (unsigned char)(j * 5 + me);
    MPI_Allgatherv(bytes % 2 ? MPI_IN_PLACE : a, cnt[me], MPI_BYTE, g, cnt, dis, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < np && bad == (size_t)-1; r++) {
        for (int j = 0; j < cnt[r]; j++)
            if (g[dis[r] + j] != (unsigned char)(j * 5 + r)) {
                bad = (size_t)dis[r] + (size_t)j;
                break;
            }
        for (int j = 0; j < 5 && bad == (size_t)-1; j++)
            if (g[dis[r] + cnt[r] + j] != 0xcc)
                bad = (size_t)(dis[r] + cnt[r] + j);
    }
    CHECK(bad == (size_t)-1, "allgatherv %zu: byte %zu wrong", bytes, bad);
    free(cnt);
    free(dis);
    buf_free(a);
    buf_free(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    heap = argc > 1 && !strcmp(argv[1], "heap");
    const char *e = getenv("WHARF_COLL_CMA_MIN");
    size_t k1 = (size_t)(np > 1 ? np - 1 : 1), thr = k1 * k1 * (e ? (size_t)atol(e) : 65536);
    MPI_Op uop, mop;
    MPI_Op_create(umax, 1, &uop);
    MPI_Op_create(matmul, 0, &mop);
    MPI_Datatype mat, vec;
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &vec); /* one double, extent 16 via resized */
    MPI_Datatype vecr;
    MPI_Type_create_resized(vec, 0, 16, &vecr);
    MPI_Type_commit(&vecr);
    case_t cases[] = {
        {"int sum", T_INT, MPI_INT, MPI_SUM, 4},
        {"signed char sum", T_SCHAR, MPI_SIGNED_CHAR, MPI_SUM, 1},
        {"short max", T_SHORT, MPI_SHORT, MPI_MAX, 2},
        {"float sum", T_FLOAT, MPI_FLOAT, MPI_SUM, 4},
        {"double prod", T_DOUBLE, MPI_DOUBLE, MPI_PROD, 8},
        {"long long bxor", T_LL, MPI_LONG_LONG, MPI_BXOR, 8},
        {"long long band", T_LL, MPI_LONG_LONG, MPI_BAND, 8},
        {"double complex sum", T_CPLX, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 16},
        {"double complex prod", T_CPLX, MPI_C_DOUBLE_COMPLEX, MPI_PROD, 16},
        {"2int minloc", T_2INT, MPI_2INT, MPI_MINLOC, 8},
        {"int user max", T_INT, MPI_INT, uop, 4},
        {"double_int maxloc (padded)", T_DINT, MPI_DOUBLE_INT, MPI_MAXLOC, 12},
        {"matrix (non-commutative)", T_MAT, mat, mop, 16},
        {"strided double sum", T_VEC, vecr, MPI_SUM, 8},
    };
    int roots[3] = {0, np - 1, np / 2};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        MPI_Aint lb, ext;
        MPI_Type_get_extent(cases[k].type, &lb, &ext);
        size_t el = cases[k].size;
        size_t counts[3] = {thr / el - 1, thr / el + 7, 3 * thr / el + 13};
        for (int c = 0; c < 3; c++)
            for (int ri = 0; ri < (np > 2 ? 3 : 2); ri++)
                for (int inplace = 1; inplace >= 0; inplace--)
                    one(&cases[k], counts[c], roots[ri], inplace, ext);
    }
    static const size_t osz[] = {70001, 65536, 300000, 1u << 20};
    for (size_t i = 0; i < sizeof osz / sizeof osz[0]; i++)
        for (int ri = 0; ri < 2; ri++)
            others(osz[i], roots[ri]);
    MPI_Op_free(&uop);
    MPI_Op_free(&mop);
    MPI_Type_free(&mat);
    MPI_Type_free(&vec);
    MPI_Type_free(&vecr);
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("%s\n", all ? "FAILED" : "OK");
    MPI_Finalize();
    return all != 0;
}
