/* The data-movement engine: pack, unpack and describe (iovec) any byte range
 * of the packed stream of (buf, count, type), and local typed copies.
 *
 * One walker serves the three operations (the operation is a field of the
 * walk; the per-block loops are specialised per operation and, for the common
 * small block sizes, per size so the compiler emits fixed-size moves).  A
 * range is located without scanning: repetitions by division, lists by binary
 * search over prefix sums.  Addresses are computed as uintptr_t so that
 * MPI_BOTTOM-relative absolute displacements are well defined. */
#include "dtype/dtype_impl.h"
#include "core/err.h"
#include "mem/mem.h"

#include <string.h>

enum { W_PACK, W_UNPACK, W_IOV };

typedef struct walk {
    int op;
    char *s;             /* stream cursor: pack output / unpack input */
    struct iovec *iov;
    int niov, maxiov;
} walk_t;

#define WH_ALWAYS_INLINE static inline __attribute__((always_inline))

/* one contiguous piece; returns bytes handled (iov mode: len or 0 when full) */
WH_ALWAYS_INLINE size_t leaf(walk_t *w, uintptr_t a, size_t len)
{
    switch (w->op) {
    case W_PACK:
        memcpy(w->s, (const void *)a, len);
        w->s += len;
        return len;
    case W_UNPACK:
        memcpy((void *)a, w->s, len);
        w->s += len;
        return len;
    default:
        if (w->niov > 0) {
            struct iovec *last = &w->iov[w->niov - 1];
            if ((uintptr_t)last->iov_base + last->iov_len == a) {
                last->iov_len += len;
                return len;
            }
        }
        if (w->niov == w->maxiov)
            return 0;
        w->iov[w->niov].iov_base = (void *)a;
        w->iov[w->niov].iov_len = len;
        w->niov++;
        return len;
    }
}

WH_ALWAYS_INLINE void gather_k(char *d, uintptr_t a, MPI_Aint stride, size_t k, size_t n)
{
    for (size_t i = 0; i < n; i++, d += k, a += (uintptr_t)stride)
        memcpy(d, (const void *)a, k);
}

WH_ALWAYS_INLINE void scatter_k(uintptr_t a, MPI_Aint stride, const char *s, size_t k, size_t n)
{
    for (size_t i = 0; i < n; i++, s += k, a += (uintptr_t)stride)
        memcpy((void *)a, s, k);
}

/* n whole blocks of k bytes at a, a+stride, ...; returns bytes handled */
static size_t blocks(walk_t *w, uintptr_t a, MPI_Aint stride, size_t k, size_t n)
{
    switch (w->op) {
    case W_PACK:
        switch (k) {
        case 1: gather_k(w->s, a, stride, 1, n); break;
        case 2: gather_k(w->s, a, stride, 2, n); break;
        case 4: gather_k(w->s, a, stride, 4, n); break;
        case 8: gather_k(w->s, a, stride, 8, n); break;
        case 12: gather_k(w->s, a, stride, 12, n); break;
        case 16: gather_k(w->s, a, stride, 16, n); break;
        case 32: gather_k(w->s, a, stride, 32, n); break;
        default: gather_k(w->s, a, stride, k, n); break;
        }
        w->s += n * k;
        return n * k;
    case W_UNPACK:
        switch (k) {
        case 1: scatter_k(a, stride, w->s, 1, n); break;
        case 2: scatter_k(a, stride, w->s, 2, n); break;
        case 4: scatter_k(a, stride, w->s, 4, n); break;
        case 8: scatter_k(a, stride, w->s, 8, n); break;
        case 12: scatter_k(a, stride, w->s, 12, n); break;
        case 16: scatter_k(a, stride, w->s, 16, n); break;
        case 32: scatter_k(a, stride, w->s, 32, n); break;
        default: scatter_k(a, stride, w->s, k, n); break;
        }
        w->s += n * k;
        return n * k;
    default: {
        size_t done = 0;
        for (size_t i = 0; i < n; i++, a += (uintptr_t)stride) {
            if (!leaf(w, a, k))
                break;
            done += k;
        }
        return done;
    }
    }
}

static size_t walk_ent(walk_t *w, uintptr_t base, const wh_ent_t *e, size_t off, size_t len);

/* bytes [off, off+len) of count copies of child c at p + i*stride */
static size_t walk_vec(walk_t *w, uintptr_t p, MPI_Aint stride, const wh_ent_t *c, size_t off, size_t len)
{
    size_t cl = c->len, i = off / cl, o = off % cl, done = 0, r, take;
    uintptr_t q = p + (uintptr_t)i * (uintptr_t)stride;
    if (!c->sub) {
        q += (uintptr_t)c->disp;
        if (o) {
            take = cl - o < len ? cl - o : len;
            r = leaf(w, q + o, take);
            done += r;
            if (r < take || done == len)
                return done;
            q += (uintptr_t)stride;
        }
        size_t nfull = (len - done) / cl;
        if (nfull) {
            r = blocks(w, q, stride, cl, nfull);
            done += r;
            if (r < nfull * cl)
                return done;
            q += (uintptr_t)stride * nfull;
        }
        if (done < len)
            done += leaf(w, q, len - done);
        return done;
    }
    while (done < len) {
        take = cl - o < len - done ? cl - o : len - done;
        r = walk_ent(w, q, c, o, take);
        done += r;
        if (r < take)
            break;
        o = 0;
        q += (uintptr_t)stride;
    }
    return done;
}

static size_t walk_list(walk_t *w, uintptr_t p, const wh_lay_t *l, size_t off, size_t len)
{
    /* largest i with pre[i] <= off (entries of a repeated list start at 0) */
    size_t lo = 0, hi = off ? l->n - 1 : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (l->pre[mid] <= off)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t i = lo, o = off - l->pre[i], done = 0;
    while (done < len && i < l->n) {
        const wh_ent_t *e = &l->ents[i];
        size_t take = e->len - o < len - done ? e->len - o : len - done;
        size_t r = walk_ent(w, p, e, o, take);
        done += r;
        if (r < take)
            break;
        o = 0;
        i++;
    }
    return done;
}

static size_t walk_ent(walk_t *w, uintptr_t base, const wh_ent_t *e, size_t off, size_t len)
{
    uintptr_t p = base + (uintptr_t)e->disp;
    if (!e->sub)
        return leaf(w, p + off, len);
    if (e->sub->kind == WH_LAY_VEC)
        return walk_vec(w, p, e->sub->stride, &e->sub->child, off, len);
    return walk_list(w, p, e->sub, off, len);
}

static int range_error(size_t offset, size_t len, size_t total)
{
    return wh_error(MPI_ERR_INTERN, "datatype stream range [%zu, %zu) lies outside the %zu-byte message", offset,
                    offset + len, total);
}

/* Shared driver of pack/unpack/iov: the stream of count elements is count
 * copies of the root entry at the extent. */
static int walk_top(walk_t *w, const void *buf, size_t count, const wh_dtype_t *t, size_t offset, size_t len,
                    size_t *done)
{
    size_t total = t->size * count;
    *done = 0;
    if (offset > total || len > total - offset)
        return range_error(offset, len, total);
    if (len == 0)
        return MPI_SUCCESS;
    *done = walk_vec(w, (uintptr_t)buf, t->extent, wh_dtype_root(t), offset, len);
    return MPI_SUCCESS;
}

int wh_dtype_pack(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len)
{
    if (__builtin_expect(wh_mem_nonhost, 0)) {
        int kb = wh_mem_query(buf), ko = wh_mem_query(out);
        if (kb | ko)
            return wh_dtype_pack_dev(buf, count, t, offset, out, len, kb, ko);
    }
    return wh_dtype_pack_host(buf, count, t, offset, out, len);
}

int wh_dtype_pack_host(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len)
{
    const char *start;
    if (wh_dtype_is_contig(t, count, buf, &start)) {
        if (offset > t->size * count || len > t->size * count - offset)
            return range_error(offset, len, t->size * count);
        if (len)
            memcpy(out, start + offset, len);
        return MPI_SUCCESS;
    }
    walk_t w = {.op = W_PACK, .s = out};
    size_t done;
    return walk_top(&w, buf, count, t, offset, len, &done);
}

int wh_dtype_unpack(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len)
{
    if (__builtin_expect(wh_mem_nonhost, 0)) {
        int kb = wh_mem_query(buf), ki = wh_mem_query(in);
        if (kb | ki)
            return wh_dtype_unpack_dev(buf, count, t, offset, in, len, kb, ki);
    }
    return wh_dtype_unpack_host(buf, count, t, offset, in, len);
}

int wh_dtype_unpack_host(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len)
{
    const char *start;
    if (wh_dtype_is_contig(t, count, buf, &start)) {
        if (offset > t->size * count || len > t->size * count - offset)
            return range_error(offset, len, t->size * count);
        if (len)
            memcpy((char *)start + offset, in, len);
        return MPI_SUCCESS;
    }
    walk_t w = {.op = W_UNPACK, .s = (char *)in};
    size_t done;
    return walk_top(&w, buf, count, t, offset, len, &done);
}

int wh_dtype_iov(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, size_t len, struct iovec *iov,
                 int maxiov, size_t *covered)
{
    const char *start;
    *covered = 0;
    if (len == 0 || maxiov <= 0)
        return 0;
    if (wh_dtype_is_contig(t, count, buf, &start)) {
        if (offset > t->size * count || len > t->size * count - offset)
            return 0;
        iov[0].iov_base = (void *)(start + offset);
        iov[0].iov_len = len;
        *covered = len;
        return 1;
    }
    walk_t w = {.op = W_IOV, .iov = iov, .maxiov = maxiov};
    if (walk_top(&w, buf, count, t, offset, len, covered) != MPI_SUCCESS)
        return 0;
    return w.niov;
}

size_t wh_dtype_nblocks(const wh_dtype_t *t, size_t count)
{
    const char *start;
    if (wh_dtype_is_contig(t, count, NULL, &start))
        return count && t->size ? 1 : 0;
    size_t per = wh_ent_nblocks(wh_dtype_root(t)), n;
    return __builtin_mul_overflow(per, count, &n) ? SIZE_MAX : n;
}

int wh_dtype_copy_any(const void *sbuf, size_t scount, const wh_dtype_t *st, void *rbuf, size_t rcount,
                      const wh_dtype_t *rt)
{
    size_t sbytes = st->size * scount, rbytes = rt->size * rcount;
    size_t n = sbytes < rbytes ? sbytes : rbytes;
    int rc = MPI_SUCCESS;
    if (sbytes > rbytes)
        rc = wh_error(MPI_ERR_TRUNCATE, "message of %zu bytes truncated to the receive buffer of %zu bytes", sbytes,
                      rbytes);
    if (n == 0)
        return rc;
    const char *s, *r;
    if (wh_dtype_is_contig(st, scount, sbuf, &s)) {
        int rc2 = wh_dtype_unpack(rbuf, rcount, rt, 0, s, n);
        return rc2 ? rc2 : rc;
    }
    if (wh_dtype_is_contig(rt, rcount, rbuf, &r)) {
        int rc2 = wh_dtype_pack(sbuf, scount, st, 0, (void *)r, n);
        return rc2 ? rc2 : rc;
    }
    /* both sides scattered: walk the source in iovec batches and unpack each
       piece straight into the destination (one copy, no temporary buffer) */
    struct iovec iov[64];
    size_t off = 0;
    while (off < n) {
        size_t covered;
        int k = wh_dtype_iov(sbuf, scount, st, off, n - off, iov, 64, &covered);
        if (k <= 0 || covered == 0)
            return wh_error(MPI_ERR_INTERN, "datatype copy made no progress at byte %zu of %zu", off, n);
        for (int i = 0; i < k; i++) {
            int rc2 = wh_dtype_unpack(rbuf, rcount, rt, off, iov[i].iov_base, iov[i].iov_len);
            if (rc2)
                return rc2;
            off += iov[i].iov_len;
        }
    }
    return rc;
}
