/* Unit tests of the datatype engine (src/dtype): bounds of every constructor
 * against hand-computed values, and pack/unpack/iov/copy of random byte
 * ranges of random nested types against a naive reference that expands each
 * type into its byte-level type map (one displacement per stream byte). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/err.h"
#include "dtype/dtype.h"

/* ---------- reference type maps ---------- */

typedef struct tmap {
    int64_t *off; /* displacement of stream byte j */
    size_t n, cap;
} tm_t;

static void tm_push(tm_t *m, int64_t o)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->off = realloc(m->off, m->cap * sizeof *m->off);
    }
    m->off[m->n++] = o;
}

static tm_t tm_bytes(const int64_t *ranges, int nr) /* (start, len) pairs */
{
    tm_t m = {0};
    for (int r = 0; r < nr; r++)
        for (int64_t b = 0; b < ranges[2 * r + 1]; b++)
            tm_push(&m, ranges[2 * r] + b);
    return m;
}

static tm_t tm_hvector(int64_t count, int64_t bl, int64_t stride, const tm_t *old, int64_t oext)
{
    tm_t m = {0};
    for (int64_t i = 0; i < count; i++)
        for (int64_t j = 0; j < bl; j++)
            for (size_t b = 0; b < old->n; b++)
                tm_push(&m, i * stride + j * oext + old->off[b]);
    return m;
}

static tm_t tm_blocks(int n, const MPI_Count *bl, const MPI_Aint *disp, tm_t *const *olds, const int64_t *oext)
{
    tm_t m = {0};
    for (int i = 0; i < n; i++)
        for (int64_t j = 0; j < bl[i]; j++)
            for (size_t b = 0; b < olds[i]->n; b++)
                tm_push(&m, disp[i] + j * oext[i] + olds[i]->off[b]);
    return m;
}

/* Elements of an ndims array in storage order; keep(idx) decides membership. */
typedef int (*keep_fn)(int ndims, const int64_t *idx, const void *arg);
static tm_t tm_array(int ndims, const MPI_Count *sizes, int order, const tm_t *old, int64_t oext, keep_fn keep,
                     const void *arg)
{
    tm_t m = {0};
    int64_t idx[8] = {0};
    for (;;) {
        if (keep(ndims, idx, arg)) {
            int64_t lin = 0;
            for (int j = 0; j < ndims; j++) {
                int d = order == MPI_ORDER_C ? j : ndims - 1 - j; /* slowest first */
                lin = lin * sizes[d] + idx[d];
            }
            for (size_t b = 0; b < old->n; b++)
                tm_push(&m, lin * oext + old->off[b]);
        }
        int j = 0;
        for (; j < ndims; j++) { /* increment, fastest dimension first */
            int d = order == MPI_ORDER_C ? ndims - 1 - j : j;
            if (++idx[d] < sizes[d])
                break;
            idx[d] = 0;
        }
        if (j == ndims)
            break;
    }
    return m;
}

typedef struct subarg {
    const MPI_Count *sub, *start;
} subarg_t;

static int keep_sub(int ndims, const int64_t *idx, const void *arg)
{
    const subarg_t *a = arg;
    for (int d = 0; d < ndims; d++)
        if (idx[d] < a->start[d] || idx[d] >= a->start[d] + a->sub[d])
            return 0;
    return 1;
}

typedef struct darg {
    const MPI_Count *gs;
    const int *dist, *darg, *ps;
    int coord[8];
} darg_t;

static int keep_darray(int ndims, const int64_t *idx, const void *arg)
{
    const darg_t *a = arg;
    for (int d = 0; d < ndims; d++) {
        int64_t owner = 0;
        if (a->dist[d] == MPI_DISTRIBUTE_BLOCK) {
            int64_t b = a->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (a->gs[d] + a->ps[d] - 1) / a->ps[d] : a->darg[d];
            owner = idx[d] / b;
        } else if (a->dist[d] == MPI_DISTRIBUTE_CYCLIC) {
            int64_t k = a->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : a->darg[d];
            owner = (idx[d] / k) % a->ps[d];
        }
        if (owner != a->coord[d])
            return 0;
    }
    return 1;
}

/* ---------- random types ---------- */

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static int64_t rr(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

typedef struct rt {
    wh_dtype_t *t;
    tm_t m;
} rt_t;

static rt_t predef(int which)
{
    static const int64_t ch[] = {0, 1}, sh[] = {0, 2}, in[] = {0, 4}, db[] = {0, 8}, si[] = {0, 2, 4, 4},
                         di[] = {0, 12}, ldi[] = {0, 20}, ti[] = {0, 8};
    switch (which % 8) {
    case 0: return (rt_t){wh_dtype_get(MPI_CHAR), tm_bytes(ch, 1)};
    case 1: return (rt_t){wh_dtype_get(MPI_SHORT), tm_bytes(sh, 1)};
    case 2: return (rt_t){wh_dtype_get(MPI_INT), tm_bytes(in, 1)};
    case 3: return (rt_t){wh_dtype_get(MPI_DOUBLE), tm_bytes(db, 1)};
    case 4: return (rt_t){wh_dtype_get(MPI_SHORT_INT), tm_bytes(si, 2)};
    case 5: return (rt_t){wh_dtype_get(MPI_DOUBLE_INT), tm_bytes(di, 1)};
    case 6: return (rt_t){wh_dtype_get(MPI_LONG_DOUBLE_INT), tm_bytes(ldi, 1)};
    default: return (rt_t){wh_dtype_get(MPI_2INT), tm_bytes(ti, 1)};
    }
}

static void rt_free(rt_t *r)
{
    wh_dtype_user_free(r->t);
    free(r->m.off);
}

#define MAXBYTES 3000

static rt_t rand_type(int depth)
{
    if (depth == 0 || rr(0, 5) == 0)
        return predef((int)rr(0, 7));
    rt_t o = rand_type(depth - 1), r = {0};
    int64_t ext = o.t->extent;
    int rc = MPI_SUCCESS;
    switch (rr(0, 8)) {
    case 0: { /* contiguous */
        int64_t n = rr(0, 4);
        rc = wh_dtype_create_contig(n, o.t, &r.t);
        r.m = tm_hvector(1, n, 0, &o.m, ext);
        break;
    }
    case 1: { /* vector in elements, stride may be negative */
        int64_t n = rr(1, 4), bl = rr(1, 3), st = rr(-5, 5);
        rc = wh_dtype_create_hvector(n, bl, st * ext, o.t, &r.t);
        r.m = tm_hvector(n, bl, st * ext, &o.m, ext);
        break;
    }
    case 2: { /* hvector in bytes */
        int64_t n = rr(1, 4), bl = rr(1, 2), st = rr(-40, 40);
        rc = wh_dtype_create_hvector(n, bl, st, o.t, &r.t);
        r.m = tm_hvector(n, bl, st, &o.m, ext);
        break;
    }
    case 3: { /* hindexed / indexed incl. zero-length blocks */
        int n = (int)rr(1, 5);
        MPI_Count bl[5];
        MPI_Aint d[5];
        tm_t *olds[5];
        int64_t ex[5];
        for (int i = 0; i < n; i++) {
            bl[i] = rr(0, 3);
            d[i] = rr(0, 1) ? rr(-6, 6) * ext : rr(-50, 50);
            olds[i] = &o.m;
            ex[i] = ext;
        }
        rc = wh_dtype_create_blocks(n, bl, d, o.t, NULL, &r.t);
        r.m = tm_blocks(n, bl, d, olds, ex);
        break;
    }
    case 4: { /* struct of random parts */
        int n = (int)rr(1, 3);
        rt_t parts[3];
        MPI_Count bl[3];
        MPI_Aint d[3];
        wh_dtype_t *ty[3];
        tm_t *olds[3];
        int64_t ex[3];
        parts[0] = o;
        for (int i = 1; i < n; i++)
            parts[i] = rand_type(depth - 1);
        for (int i = 0; i < n; i++) {
            bl[i] = rr(0, 2);
            d[i] = rr(-64, 64);
            ty[i] = parts[i].t;
            olds[i] = &parts[i].m;
            ex[i] = parts[i].t->extent;
        }
        rc = wh_dtype_create_blocks(n, bl, d, NULL, ty, &r.t);
        r.m = tm_blocks(n, bl, d, olds, ex);
        for (int i = 1; i < n; i++)
            rt_free(&parts[i]);
        break;
    }
    case 5: { /* resized */
        MPI_Aint lb = rr(-16, 16), ex2 = rr(1, 48);
        rc = wh_dtype_create_resized(o.t, lb, ex2, &r.t);
        r.m = tm_hvector(1, 1, 0, &o.m, ext);
        break;
    }
    case 6: { /* subarray */
        int nd = (int)rr(1, 3), order = rr(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        MPI_Count sz[3], sub[3], st[3];
        for (int d = 0; d < nd; d++) {
            sz[d] = rr(1, 4);
            sub[d] = rr(0, sz[d]);
            st[d] = rr(0, sz[d] - sub[d]);
        }
        rc = wh_dtype_create_subarray(nd, sz, sub, st, order, o.t, &r.t);
        subarg_t a = {sub, st};
        r.m = tm_array(nd, sz, order, &o.m, ext, keep_sub, &a);
        break;
    }
    case 7: { /* darray */
        int nd = (int)rr(1, 3), order = rr(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, size = 1;
        MPI_Count gs[3];
        int dist[3], dg[3], ps[3];
        for (int d = 0; d < nd; d++) {
            gs[d] = rr(1, 7);
            dist[d] = (int)rr(0, 2) + MPI_DISTRIBUTE_BLOCK;
            ps[d] = dist[d] == MPI_DISTRIBUTE_NONE ? 1 : (int)rr(1, 3);
            dg[d] = MPI_DISTRIBUTE_DFLT_DARG;
            if (dist[d] == MPI_DISTRIBUTE_CYCLIC && rr(0, 1))
                dg[d] = (int)rr(1, 3);
            if (dist[d] == MPI_DISTRIBUTE_BLOCK && rr(0, 1))
                dg[d] = (int)((gs[d] + ps[d] - 1) / ps[d] + rr(0, 1));
            size *= ps[d];
        }
        int rank = (int)rr(0, size - 1);
        darg_t a = {gs, dist, dg, ps, {0}};
        for (int d = nd - 1, x = rank; d >= 0; d--) {
            a.coord[d] = x % ps[d];
            x /= ps[d];
        }
        rc = wh_dtype_create_darray(size, rank, nd, gs, dist, dg, ps, order, o.t, &r.t);
        r.m = tm_array(nd, gs, order, &o.m, ext, keep_darray, &a);
        break;
    }
    default: /* dup */
        rc = wh_dtype_create_dup(o.t, &r.t);
        r.m = tm_hvector(1, 1, 0, &o.m, ext);
        break;
    }
    CHECK(rc == MPI_SUCCESS);
    rt_free(&o);
    if (rc != MPI_SUCCESS || r.m.n > MAXBYTES) {
        if (rc == MPI_SUCCESS)
            rt_free(&r);
        return predef((int)rr(0, 7));
    }
    return r;
}

/* ---------- checks against the reference ---------- */

static unsigned char *region(int64_t lo, int64_t hi, unsigned char **base)
{
    unsigned char *mem = malloc((size_t)(hi - lo + 1));
    for (int64_t i = 0; i <= hi - lo; i++)
        mem[i] = (unsigned char)rnd();
    *base = mem - lo; /* buf such that buf + d is inside mem for d in [lo, hi] */
    return mem;
}

static int64_t stream_off(const rt_t *r, size_t j)
{
    size_t el = j / r->m.n;
    return (int64_t)el * r->t->extent + r->m.off[j % r->m.n];
}

static void span_of(const rt_t *r, size_t count, int64_t *lo, int64_t *hi)
{
    *lo = 0, *hi = 0;
    for (size_t j = 0; j < count * r->m.n; j++) {
        int64_t o = stream_off(r, j);
        if (o < *lo)
            *lo = o;
        if (o > *hi)
            *hi = o;
    }
}

static void check_against_ref(const rt_t *r)
{
    const wh_dtype_t *t = r->t;
    CHECK(t->size == r->m.n);
    if (r->m.n) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t j = 0; j < r->m.n; j++) {
            lo = r->m.off[j] < lo ? r->m.off[j] : lo;
            hi = r->m.off[j] > hi ? r->m.off[j] : hi;
        }
        CHECK(t->true_lb == lo);
        CHECK(t->true_extent == hi + 1 - lo);
        if (t->dense) /* one block in stream order */
            for (size_t j = 0; j < r->m.n; j++)
                CHECK(r->m.off[j] == lo + (int64_t)j);
    }
    for (size_t count = 0; count <= 3; count++) {
        size_t total = count * r->m.n;
        int64_t lo, hi;
        span_of(r, count, &lo, &hi);
        unsigned char *base, *mem = region(lo, hi, &base);
        unsigned char *ref = malloc(total + 1), *out = malloc(total + 1), *in = malloc(total + 1);
        for (size_t j = 0; j < total; j++)
            ref[j] = base[stream_off(r, j)];
        /* pack in consecutive random pieces (pipelining) */
        memset(out, 0, total + 1);
        for (size_t off = 0; off < total;) {
            size_t len = (size_t)rr(1, 40);
            len = len > total - off ? total - off : len;
            CHECK(wh_dtype_pack(base, count, t, off, out + off, len) == MPI_SUCCESS);
            off += len;
        }
        CHECK(memcmp(out, ref, total) == 0);
        /* random independent ranges */
        for (int k = 0; k < 8 && total; k++) {
            size_t off = (size_t)rr(0, (int64_t)total - 1), len = (size_t)rr(0, (int64_t)(total - off));
            CHECK(wh_dtype_pack(base, count, t, off, out, len) == MPI_SUCCESS);
            CHECK(memcmp(out, ref + off, len) == 0);
        }
        /* unpack: same writes in stream order as the reference (overlaps included) */
        size_t rs = (size_t)(hi - lo + 1);
        unsigned char *mcopy = malloc(rs);
        memcpy(mcopy, mem, rs);
        for (size_t j = 0; j < total; j++)
            in[j] = (unsigned char)rnd();
        for (size_t off = 0; off < total;) {
            size_t len = (size_t)rr(1, 33);
            len = len > total - off ? total - off : len;
            CHECK(wh_dtype_unpack(base, count, t, off, in + off, len) == MPI_SUCCESS);
            off += len;
        }
        for (size_t j = 0; j < total; j++)
            mcopy[stream_off(r, j) - lo] = in[j];
        CHECK(memcmp(mcopy, mem, rs) == 0);
        /* iovecs: cover the stream in order, maximal merging */
        for (int k = 0; k < 4 && total; k++) {
            size_t off = (size_t)rr(0, (int64_t)total - 1), end = (size_t)rr((int64_t)off + 1, (int64_t)total);
            int maxiov = (int)rr(1, 6);
            while (off < end) {
                struct iovec iov[6];
                size_t covered = 0;
                int n = wh_dtype_iov(base, count, t, off, end - off, iov, maxiov, &covered);
                CHECK(n >= 1 && n <= maxiov && covered > 0 && covered <= end - off);
                if (n < 1 || covered == 0)
                    break;
                size_t j = off, sum = 0;
                for (int i = 0; i < n; i++) {
                    if (i > 0)
                        CHECK((char *)iov[i - 1].iov_base + iov[i - 1].iov_len != (char *)iov[i].iov_base);
                    for (size_t b = 0; b < iov[i].iov_len; b++, j++)
                        CHECK((unsigned char *)iov[i].iov_base + b == base + stream_off(r, j));
                    sum += iov[i].iov_len;
                }
                CHECK(sum == covered);
                off += covered;
            }
        }
        free(mcopy);
        free(ref);
        free(out);
        free(in);
        free(mem);
    }
}

/* wh_dtype_copy between two random types against the reference */
static void check_copy(const rt_t *s, const rt_t *d)
{
    if (!s->m.n || !d->m.n)
        return;
    size_t sc = (size_t)rr(1, 3), dc = (sc * s->m.n + d->m.n - 1) / d->m.n + (size_t)rr(-1, 1);
    if ((int64_t)dc < 0)
        dc = 0;
    int64_t slo, shi, dlo, dhi;
    span_of(s, sc, &slo, &shi);
    span_of(d, dc, &dlo, &dhi);
    unsigned char *sb, *db, *smem = region(slo, shi, &sb), *dmem = region(dlo, dhi, &db);
    size_t ds = (size_t)(dhi - dlo + 1), n = sc * s->m.n < dc * d->m.n ? sc * s->m.n : dc * d->m.n;
    unsigned char *ref = malloc(ds);
    memcpy(ref, dmem, ds);
    for (size_t j = 0; j < n; j++)
        ref[stream_off(d, j) - dlo] = sb[stream_off(s, j)];
    int rc = wh_dtype_copy(sb, sc, s->t, db, dc, d->t);
    CHECK(sc * s->m.n > dc * d->m.n ? wh_error_class(rc) == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS);
    CHECK(memcmp(ref, dmem, ds) == 0);
    free(ref);
    free(smem);
    free(dmem);
}

/* ---------- hand-computed bounds ---------- */

static void expect(const wh_dtype_t *t, size_t size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb, MPI_Aint text)
{
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(t->size == size);
    CHECK(t->lb == lb);
    CHECK(t->extent == extent);
    CHECK(t->true_lb == tlb);
    CHECK(t->true_extent == text);
    if (t->size != size || t->lb != lb || t->extent != extent || t->true_lb != tlb || t->true_extent != text)
        fprintf(stderr, "  got size %zu lb %ld extent %ld true_lb %ld true_extent %ld\n", t->size, t->lb, t->extent,
                t->true_lb, t->true_extent);
}

static wh_dtype_t *T(MPI_Datatype h) { return wh_dtype_get(h); }

static void test_predefined(void)
{
    expect(T(MPI_INT), 4, 0, 4, 0, 4);
    expect(T(MPI_LONG_DOUBLE), 16, 0, 16, 0, 16);
    expect(T(MPI_C_LONG_DOUBLE_COMPLEX), 32, 0, 32, 0, 32);
    expect(T(MPI_FLOAT_INT), 8, 0, 8, 0, 8);
    expect(T(MPI_DOUBLE_INT), 12, 0, 16, 0, 12);
    expect(T(MPI_LONG_INT), 12, 0, 16, 0, 12);
    expect(T(MPI_SHORT_INT), 6, 0, 8, 0, 8);
    expect(T(MPI_LONG_DOUBLE_INT), 20, 0, 32, 0, 20);
    expect(T(MPI_2INT), 8, 0, 8, 0, 8);
    expect(T(MPI_2DOUBLE_PRECISION), 16, 0, 16, 0, 16);
    expect(T(MPI_LB), 0, 0, 0, 0, 0);
    CHECK(T(MPI_SHORT_INT)->contig == 0 && T(MPI_SHORT_INT)->dense == 0);
    CHECK(T(MPI_DOUBLE_INT)->contig == 0 && T(MPI_DOUBLE_INT)->dense == 1);
    CHECK(T(MPI_INT)->contig && T(MPI_INT)->predefined && T(MPI_INT)->committed);
    CHECK(T(MPI_DOUBLE)->basic == WH_BT_DOUBLE && T(MPI_REAL8)->basic == WH_BT_DOUBLE);
    CHECK(T(MPI_INTEGER)->size == 4 && T(MPI_INTEGER8)->basic == WH_BT_INT64);
    CHECK(T(MPI_DOUBLE_INT)->basic == WH_BT_DOUBLE_INT && T(MPI_DOUBLE_INT)->basic_size == 12);
    CHECK(T(MPI_AINT)->size == sizeof(MPI_Aint) && T(MPI_COUNT)->size == 8 && T(MPI_C_BOOL)->size == 1);
    CHECK(T(MPI_LONG_LONG) == T(MPI_LONG_LONG_INT));
    CHECK(strcmp(T(MPI_INT)->name, "MPI_INT") == 0 && strcmp(T(MPI_DOUBLE_INT)->name, "MPI_DOUBLE_INT") == 0);
    /* invalid handles */
    CHECK(wh_dtype_get(MPI_DATATYPE_NULL) == NULL);
    CHECK(wh_dtype_get((MPI_Datatype)0x4c00ff05) == NULL); /* wrong size bits */
    CHECK(wh_dtype_get((MPI_Datatype)0x4c0001fe) == NULL); /* unused slot */
    CHECK(wh_dtype_get((MPI_Datatype)0x8c000009) == NULL);
    CHECK(wh_dtype_get((MPI_Datatype)0xcc000123) == NULL);
    CHECK(wh_dtype_get(MPI_COMM_WORLD) == NULL);
    wh_dtype_t *t;
    CHECK(wh_dtype_check_comm(MPI_INT, &t) == MPI_SUCCESS && t == T(MPI_INT));
    CHECK(wh_error_class(wh_dtype_check_comm(MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE);
    CHECK(wh_error_class(wh_dtype_check_comm((MPI_Datatype)0x4c00ff05, &t)) == MPI_ERR_TYPE);
    CHECK(wh_error_class(wh_dtype_check_comm(MPI_UB, &t)) == MPI_ERR_TYPE);
}

static void test_bounds(void)
{
    wh_dtype_t *t, *u, *v;
    /* vector(3, 2, 4, MPI_INT) */
    CHECK(wh_dtype_create_hvector(3, 2, 16, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 24, 0, 40, 0, 40);
    CHECK(!t->contig && t->nelem == 6 && t->basic == WH_BT_INT);
    wh_dtype_user_free(t);
    /* negative stride: blocks at 0, -8, -16 */
    CHECK(wh_dtype_create_hvector(3, 1, -8, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 12, -16, 20, -16, 20);
    wh_dtype_user_free(t);
    /* contiguous blocks fuse into one */
    CHECK(wh_dtype_create_hvector(4, 3, 12, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 48, 0, 48, 0, 48);
    CHECK(t->contig && t->dense);
    wh_dtype_user_free(t);
    /* struct {int; char;} padded to the int alignment */
    MPI_Count bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {0, 4, 6};
    wh_dtype_t *ty[3] = {T(MPI_INT), T(MPI_CHAR), T(MPI_UB)};
    CHECK(wh_dtype_create_blocks(2, bl, d, NULL, ty, &t) == MPI_SUCCESS);
    expect(t, 5, 0, 8, 0, 5);
    CHECK(t->dense && !t->contig && t->basic == WH_BT_NONE && t->nelem == 2);
    /* ... but not when MPI_UB is given */
    CHECK(wh_dtype_create_blocks(3, bl, d, NULL, ty, &u) == MPI_SUCCESS);
    expect(u, 5, 0, 6, 0, 5);
    CHECK(u->sticky_ub && !u->sticky_lb);
    /* sticky UB survives nesting in a struct without markers: no padding */
    MPI_Count bl2[2] = {2, 1};
    MPI_Aint d2[2] = {0, 12};
    wh_dtype_t *ty2[2] = {u, T(MPI_CHAR)};
    CHECK(wh_dtype_create_blocks(2, bl2, d2, NULL, ty2, &v) == MPI_SUCCESS);
    expect(v, 11, 0, 12, 0, 13); /* ub = sticky 6 + 6 = 12, data up to 13 */
    wh_dtype_user_free(v);
    wh_dtype_user_free(u);
    wh_dtype_user_free(t);
    /* MPI_LB below the data */
    MPI_Aint d3[2] = {-4, 0};
    wh_dtype_t *ty3[2] = {T(MPI_LB), T(MPI_INT)};
    CHECK(wh_dtype_create_blocks(2, bl, d3, NULL, ty3, &t) == MPI_SUCCESS);
    expect(t, 4, -4, 8, 0, 4);
    wh_dtype_user_free(t);
    /* resized and a contiguous of it */
    CHECK(wh_dtype_create_resized(T(MPI_INT), -2, 10, &t) == MPI_SUCCESS);
    expect(t, 4, -2, 10, 0, 4);
    CHECK(!t->contig && t->dense);
    CHECK(wh_dtype_create_contig(2, t, &u) == MPI_SUCCESS);
    expect(u, 8, -2, 20, 0, 14);
    wh_dtype_user_free(u);
    wh_dtype_user_free(t);
    /* all blocks empty: zero-size type */
    MPI_Count z[2] = {0, 0};
    CHECK(wh_dtype_create_blocks(2, z, d, T(MPI_DOUBLE), NULL, &t) == MPI_SUCCESS);
    expect(t, 0, 0, 0, 0, 0);
    wh_dtype_user_free(t);
    CHECK(wh_dtype_create_contig(0, T(MPI_DOUBLE), &t) == MPI_SUCCESS);
    expect(t, 0, 0, 0, 0, 0);
    wh_dtype_user_free(t);
    /* indexed out of memory order: stream order is block order */
    MPI_Count bl4[2] = {1, 2};
    MPI_Aint d4[2] = {40, 0};
    CHECK(wh_dtype_create_blocks(2, bl4, d4, T(MPI_DOUBLE), NULL, &t) == MPI_SUCCESS);
    expect(t, 24, 0, 48, 0, 48);
    double src[6] = {0, 1, 2, 3, 4, 5}, out[3];
    CHECK(wh_dtype_pack(src, 1, t, 0, out, 24) == MPI_SUCCESS);
    CHECK(out[0] == 5 && out[1] == 0 && out[2] == 1);
    const char *start;
    CHECK(!wh_dtype_is_contig(t, 1, src, &start));
    wh_dtype_user_free(t);
    /* subarrays: 4x5 ints, 2x3 block at (1,2) */
    MPI_Count sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    CHECK(wh_dtype_create_subarray(2, sz, sub, st, MPI_ORDER_C, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 24, 0, 80, 28, 32);
    wh_dtype_user_free(t);
    CHECK(wh_dtype_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 24, 0, 80, 36, 40);
    wh_dtype_user_free(t);
    /* darray: 10 ints, block over 3 processes, rank 2 owns [8, 10) */
    MPI_Count gs[1] = {10};
    int dist[1] = {MPI_DISTRIBUTE_BLOCK}, dg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {3};
    CHECK(wh_dtype_create_darray(3, 2, 1, gs, dist, dg, ps, MPI_ORDER_C, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 8, 0, 40, 32, 8);
    wh_dtype_user_free(t);
    /* cyclic(2) over 3: rank 1 owns 2,3, 8,9 */
    dist[0] = MPI_DISTRIBUTE_CYCLIC;
    dg[0] = 2;
    CHECK(wh_dtype_create_darray(3, 1, 1, gs, dist, dg, ps, MPI_ORDER_C, T(MPI_INT), &t) == MPI_SUCCESS);
    expect(t, 16, 0, 40, 8, 32);
    wh_dtype_user_free(t);
    /* pairs inside a struct keep their C layout */
    MPI_Count bl5[1] = {2};
    MPI_Aint d5[1] = {0};
    wh_dtype_t *ty5[1] = {T(MPI_DOUBLE_INT)};
    CHECK(wh_dtype_create_blocks(1, bl5, d5, NULL, ty5, &t) == MPI_SUCCESS);
    expect(t, 24, 0, 32, 0, 28);
    CHECK(t->basic == WH_BT_DOUBLE_INT && t->nelem == 4);
    wh_dtype_user_free(t);
    /* regular displacements become one strided repetition */
    MPI_Count bl6[4] = {1, 1, 1, 1};
    MPI_Aint d6[4] = {36, 24, 12, 0};
    CHECK(wh_dtype_create_blocks(4, bl6, d6, T(MPI_INT), NULL, &t) == MPI_SUCCESS);
    expect(t, 16, 0, 40, 0, 40);
    int src6[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, out6[4];
    CHECK(wh_dtype_pack(src6, 1, t, 0, out6, 16) == MPI_SUCCESS);
    CHECK(out6[0] == 9 && out6[1] == 6 && out6[2] == 3 && out6[3] == 0);
    CHECK(wh_dtype_nblocks(t, 2) == 8);
    wh_dtype_user_free(t);
    /* markers only: no data, bounds from the markers */
    MPI_Aint d7[2] = {10, -3};
    wh_dtype_t *ty7[2] = {T(MPI_UB), T(MPI_LB)};
    CHECK(wh_dtype_create_blocks(1, bl, d7, NULL, ty7, &t) == MPI_SUCCESS);
    expect(t, 0, 0, 10, 0, 0);
    wh_dtype_user_free(t);
    CHECK(wh_dtype_create_blocks(2, bl, d7, NULL, ty7, &t) == MPI_SUCCESS);
    expect(t, 0, -3, 13, 0, 0);
    wh_dtype_user_free(t);
    /* dup keeps everything, committed state included */
    CHECK(wh_dtype_create_dup(T(MPI_SHORT_INT), &t) == MPI_SUCCESS);
    expect(t, 6, 0, 8, 0, 8);
    CHECK(t->committed && !t->predefined && t->basic == WH_BT_SHORT_INT);
    wh_dtype_user_free(t);
}

static void test_elements(void)
{
    wh_dtype_t *t, *c;
    MPI_Count bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    wh_dtype_t *ty[2] = {T(MPI_INT), T(MPI_DOUBLE)};
    CHECK(wh_dtype_create_blocks(2, bl, d, NULL, ty, &t) == MPI_SUCCESS);
    CHECK(t->size == 12 && t->extent == 16 && t->nelem == 2);
    CHECK(wh_dtype_elements(t, 0) == 0);
    CHECK(wh_dtype_elements(t, 4) == 1);
    CHECK(wh_dtype_elements(t, 6) == -1);
    CHECK(wh_dtype_elements(t, 12) == 2);
    CHECK(wh_dtype_elements(t, 16) == 3);
    CHECK(wh_dtype_elements(t, 24) == 4);
    CHECK(wh_dtype_elements(t, 20) == -1);
    CHECK(wh_dtype_elements_bytes(t, 3) == 16);
    CHECK(wh_dtype_elements_bytes(t, 4) == 24);
    CHECK(wh_dtype_create_contig(3, t, &c) == MPI_SUCCESS);
    CHECK(wh_dtype_elements(c, 36 + 16) == 9);
    CHECK(wh_dtype_elements_bytes(c, 9) == 52 && wh_dtype_elements_bytes(c, 8) == 48);
    /* external32 of a repeated mixed struct goes element by element */
    unsigned char s3[36], x3[36];
    for (int i = 0; i < 36; i++)
        s3[i] = (unsigned char)i;
    size_t xb = 0;
    CHECK(wh_dtype_ext32_bytes(c, 1, &xb) == MPI_SUCCESS && xb == 36);
    wh_dtype_to_ext32(c, 1, s3, x3);
    CHECK(x3[0] == 3 && x3[4] == 11 && x3[12] == 15 && x3[16] == 23 && x3[35] == 28);
    wh_dtype_user_free(c);
    CHECK(wh_dtype_elements(T(MPI_DOUBLE_INT), 12) == 2);
    CHECK(wh_dtype_elements(T(MPI_DOUBLE_INT), 8) == 1);
    CHECK(wh_dtype_elements(T(MPI_DOUBLE_INT), 20) == 3);
    CHECK(wh_dtype_elements(T(MPI_DOUBLE_INT), 4) == -1);
    CHECK(wh_dtype_elements(T(MPI_INT), 8) == 2 && wh_dtype_elements(T(MPI_INT), 6) == -1);
    CHECK(wh_dtype_elements_bytes(T(MPI_DOUBLE_INT), 3) == 20);
    /* to external32 and back */
    unsigned char s[12] = {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 8}, x[12], back[12];
    wh_dtype_to_ext32(t, 1, s, x);
    CHECK(x[0] == 4 && x[3] == 1 && x[4] == 8 && x[11] == 0);
    wh_dtype_from_ext32(t, 1, x, back);
    CHECK(!memcmp(back, s, sizeof s));
    wh_dtype_user_free(t);
    unsigned char p[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, q[12];
    wh_dtype_to_ext32(T(MPI_DOUBLE_INT), 1, p, q);
    CHECK(q[0] == 8 && q[7] == 1 && q[8] == 12 && q[11] == 9);
    /* MPI_LONG_INT: the long shrinks to 4 bytes */
    struct {
        long v;
        int i;
    } li = {-3, 5};
    unsigned char nat[12], ext[8];
    memcpy(nat, &li.v, 8);
    memcpy(nat + 8, &li.i, 4);
    CHECK(wh_dtype_ext32_bytes(T(MPI_LONG_INT), 2, &xb) == MPI_SUCCESS && xb == 16);
    wh_dtype_to_ext32(T(MPI_LONG_INT), 1, nat, ext);
    CHECK(ext[0] == 0xff && ext[3] == 0xfd && ext[4] == 0 && ext[7] == 5);
}

static void test_errors_and_refs(void)
{
    wh_dtype_t *t, *v;
    CHECK(wh_error_class(wh_dtype_create_hvector(INT64_MAX / 2, 4, 1, T(MPI_INT), &t)) == MPI_ERR_COUNT);
    CHECK(wh_error_class(wh_dtype_create_hvector(3, 1, INT64_MAX / 2, T(MPI_INT), &t)) == MPI_ERR_ARG);
    CHECK(wh_error_class(wh_dtype_create_contig(INT64_MAX / 2, T(MPI_INT), &t)) == MPI_ERR_COUNT);
    CHECK(wh_error_class(wh_dtype_create_resized(T(MPI_INT), INT64_MAX, 10, &t)) == MPI_ERR_ARG);
    MPI_Count bl[2] = {1, 1};
    MPI_Aint d[2] = {INT64_MAX - 2, 0};
    CHECK(wh_error_class(wh_dtype_create_blocks(2, bl, d, T(MPI_INT), NULL, &t)) == MPI_ERR_ARG);
    MPI_Count nb[1] = {-1};
    CHECK(wh_error_class(wh_dtype_create_blocks(1, nb, d, T(MPI_INT), NULL, &t)) == MPI_ERR_ARG);
    size_t bytes;
    CHECK(wh_error_class(wh_dtype_bytes_checked(T(MPI_DOUBLE), INT64_MAX / 4, &bytes)) == MPI_ERR_COUNT);
    CHECK(wh_dtype_bytes_checked(T(MPI_DOUBLE), 5, &bytes) == MPI_SUCCESS && bytes == 40);
    int out[4];
    CHECK(wh_error_class(wh_dtype_pack(out, 1, T(MPI_INT), 2, out, 4)) == MPI_ERR_INTERN);

    /* an uncommitted type cannot communicate; freed handles are invalid but
       the object lives while a pending operation holds it */
    CHECK(wh_dtype_create_contig(2, T(MPI_INT), &t) == MPI_SUCCESS);
    MPI_Datatype th = t->obj.handle;
    wh_dtype_t *got;
    CHECK(wh_error_class(wh_dtype_check_comm(th, &got)) == MPI_ERR_TYPE);
    t->committed = 1;
    CHECK(wh_dtype_check_comm(th, &got) == MPI_SUCCESS && got == t);
    CHECK(wh_dtype_create_hvector(3, 1, 16, t, &v) == MPI_SUCCESS);
    v->committed = 1;
    wh_dtype_user_free(t); /* v still references it */
    CHECK(wh_dtype_get(th) == NULL);
    CHECK(wh_error_class(wh_dtype_check_comm(th, &got)) == MPI_ERR_TYPE);
    wh_dtype_addref(v); /* a pending send */
    MPI_Datatype vh = v->obj.handle;
    wh_dtype_user_free(v);
    CHECK(wh_dtype_get(vh) == NULL);
    int src[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, dst[6];
    CHECK(wh_dtype_pack(src, 1, v, 0, dst, 24) == MPI_SUCCESS);
    CHECK(dst[0] == 0 && dst[1] == 1 && dst[2] == 4 && dst[3] == 5 && dst[4] == 8 && dst[5] == 9);
    wh_dtype_release(v); /* last reference: frees v and then t */
    wh_dtype_release(T(MPI_INT)); /* predefined: no-op */
    CHECK(T(MPI_INT)->size == 4);
}

static void test_large(void)
{
    /* a million strided doubles: compact layout, fast range packing */
    wh_dtype_t *t;
    size_t n = 1000000;
    CHECK(wh_dtype_create_hvector((MPI_Count)n, 1, 16, T(MPI_DOUBLE), &t) == MPI_SUCCESS);
    CHECK(wh_dtype_nblocks(t, 1) == n);
    double *a = malloc(2 * n * sizeof *a), *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < 2 * n; i++)
        a[i] = (double)i;
    clock_t c0 = clock();
    for (size_t off = 0; off < n * 8; off += 16384)
        wh_dtype_pack(a, 1, t, off, (char *)p + off, off + 16384 > n * 8 ? n * 8 - off : 16384);
    double secs = (double)(clock() - c0) / CLOCKS_PER_SEC;
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= p[i] == (double)(2 * i);
    CHECK(ok);
    printf("packed %zu strided doubles in 16 KiB pieces: %.1f ms\n", n, secs * 1e3);
    /* a struct of vectors repeated: deep nesting on a large count */
    struct iovec iov[4];
    size_t covered;
    CHECK(wh_dtype_iov(a, 1, t, 8 * (n - 2), 16, iov, 4, &covered) == 2 && covered == 16);
    CHECK(iov[0].iov_base == (void *)&a[2 * (n - 2)] && iov[1].iov_base == (void *)&a[2 * (n - 1)]);
    wh_dtype_user_free(t);
    free(a);
    free(p);
}

int main(int argc, char **argv)
{
    int rounds = 400;
    if (argc > 1) /* test_dtype SEED [ROUNDS]: fuzz with another seed */
        rng = strtoull(argv[1], NULL, 0) | 1;
    if (argc > 2)
        rounds = atoi(argv[2]);
    CHECK(wh_dtype_init() == MPI_SUCCESS);
    test_predefined();
    test_bounds();
    test_elements();
    test_errors_and_refs();
    test_large();
    for (int i = 0; i < rounds; i++) {
        rt_t r = rand_type((int)rr(1, 4));
        check_against_ref(&r);
        rt_t s = rand_type((int)rr(1, 3));
        check_copy(&r, &s);
        check_copy(&s, &r);
        rt_free(&s);
        rt_free(&r);
    }
    wh_dtype_finalize();
    return DONE();
}
