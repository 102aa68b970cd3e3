/* Layout nodes of the datatype engine: repetitions (VEC) and lists (LIST) of
 * placed entries, with normalisation so that common shapes reach the fast
 * paths of engine.c: contiguous runs are merged, regular lists become
 * repetitions, repetitions of repetitions with matching strides fuse, and
 * small sub-lists are inlined into their parent list. */
#include "dtype/dtype_impl.h"
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

/* sub-lists up to this many entries are inlined into the parent list */
#define WH_LAY_INLINE_MAX 16

void wh_lay_ref(wh_lay_t *l)
{
    if (l)
        __atomic_add_fetch(&l->refs, 1, __ATOMIC_RELAXED);
}

void wh_lay_unref(wh_lay_t *l)
{
    if (!l || __atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (l->kind == WH_LAY_VEC) {
        wh_lay_unref(l->child.sub);
    } else {
        for (size_t i = 0; i < l->n; i++)
            wh_lay_unref(l->ents[i].sub);
        free(l->ents);
    }
    free(l);
}

static size_t sat_add(size_t a, size_t b)
{
    size_t r;
    return __builtin_add_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t sat_mul(size_t a, size_t b)
{
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

size_t wh_ent_nblocks(const wh_ent_t *e)
{
    if (e->len == 0)
        return 0;
    return e->sub ? e->sub->nblocks : 1;
}

static int no_mem(void)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory building a datatype layout");
}

static int new_vec(wh_ent_t *out, MPI_Aint disp, size_t count, MPI_Aint stride, const wh_ent_t *child,
                   size_t total)
{
    wh_lay_t *l = calloc(1, sizeof *l);
    if (!l)
        return no_mem();
    l->refs = 1;
    l->kind = WH_LAY_VEC;
    l->count = count;
    l->stride = stride;
    l->child = *child;
    wh_lay_ref(child->sub);
    l->nblocks = sat_mul(count, wh_ent_nblocks(child));
    out->disp = disp;
    out->len = total;
    out->sub = l;
    return MPI_SUCCESS;
}

int wh_lay_rep(wh_ent_t *out, size_t count, MPI_Aint stride, const wh_ent_t *e)
{
    size_t total;
    if (count == 0 || e->len == 0) {
        *out = (wh_ent_t){0, 0, NULL};
        return MPI_SUCCESS;
    }
    if (__builtin_mul_overflow(count, e->len, &total) || total > (size_t)INT64_MAX)
        return wh_error(MPI_ERR_COUNT, "datatype size overflows: %zu copies of %zu bytes", count, e->len);
    if (count == 1) {
        *out = *e;
        wh_lay_ref(e->sub);
        return MPI_SUCCESS;
    }
    if (!e->sub && stride == (MPI_Aint)e->len) {
        *out = (wh_ent_t){e->disp, total, NULL};
        return MPI_SUCCESS;
    }
    if (e->sub && e->sub->kind == WH_LAY_VEC) {
        const wh_lay_t *v = e->sub;
        MPI_Aint span;
        size_t n;
        if (!__builtin_mul_overflow(v->stride, (MPI_Aint)v->count, &span) && span == stride &&
            !__builtin_mul_overflow(v->count, count, &n))
            return new_vec(out, e->disp, n, v->stride, &v->child, total);
    }
    wh_ent_t child = {0, e->len, e->sub};
    return new_vec(out, e->disp, count, stride, &child, total);
}

/* all entries identical up to a constant displacement step? */
static int regular(const wh_ent_t *ents, size_t n, MPI_Aint *step)
{
    if (n < 3)
        return 0;
    MPI_Aint d;
    if (__builtin_sub_overflow(ents[1].disp, ents[0].disp, &d))
        return 0;
    for (size_t i = 1; i < n; i++) {
        MPI_Aint di;
        if (ents[i].len != ents[0].len || ents[i].sub != ents[0].sub ||
            __builtin_sub_overflow(ents[i].disp, ents[i - 1].disp, &di) || di != d)
            return 0;
    }
    *step = d;
    return 1;
}

int wh_lay_list(wh_ent_t *out, wh_ent_t *ents, size_t n)
{
    /* pass 1: count entries after inlining small sub-lists */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const wh_ent_t *e = &ents[i];
        if (e->len == 0)
            continue;
        if (e->sub && e->sub->kind == WH_LAY_LIST && e->sub->n <= WH_LAY_INLINE_MAX)
            m += e->sub->n;
        else
            m++;
    }
    wh_ent_t *v = malloc((m ? m : 1) * sizeof *v);
    if (!v) {
        for (size_t i = 0; i < n; i++)
            wh_lay_unref(ents[i].sub);
        return no_mem();
    }
    /* pass 2: flatten and merge contiguous neighbours (references move into v) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        wh_ent_t *e = &ents[i];
        if (e->len == 0) {
            wh_lay_unref(e->sub);
            continue;
        }
        size_t cnt = 1;
        const wh_ent_t *src = e;
        wh_lay_t *inl = NULL;
        if (e->sub && e->sub->kind == WH_LAY_LIST && e->sub->n <= WH_LAY_INLINE_MAX) {
            inl = e->sub;
            cnt = inl->n;
            src = inl->ents;
        }
        for (size_t j = 0; j < cnt; j++) {
            wh_ent_t x = src[j];
            if (inl) {
                /* in range: the bounds of the whole type were checked by the caller */
                x.disp = (MPI_Aint)((uint64_t)x.disp + (uint64_t)e->disp);
                wh_lay_ref(x.sub);
            }
            if (k > 0 && !x.sub && !v[k - 1].sub &&
                (uint64_t)v[k - 1].disp + (uint64_t)v[k - 1].len == (uint64_t)x.disp) {
                v[k - 1].len += x.len;
                continue;
            }
            v[k++] = x;
        }
        if (inl)
            wh_lay_unref(inl);
    }
    if (k == 0) {
        free(v);
        *out = (wh_ent_t){0, 0, NULL};
        return MPI_SUCCESS;
    }
    if (k == 1) {
        *out = v[0];
        free(v);
        return MPI_SUCCESS;
    }
    size_t total = 0;
    for (size_t i = 0; i < k; i++)
        total += v[i].len; /* each fits and their sum was checked by the caller */
    MPI_Aint step;
    if (regular(v, k, &step)) {
        wh_ent_t child = {0, v[0].len, v[0].sub};
        int rc = new_vec(out, v[0].disp, k, step, &child, total);
        for (size_t i = 0; i < k; i++)
            wh_lay_unref(v[i].sub);
        free(v);
        return rc;
    }
    wh_lay_t *l = malloc(sizeof *l + (k + 1) * sizeof(size_t));
    if (!l) {
        for (size_t i = 0; i < k; i++)
            wh_lay_unref(v[i].sub);
        free(v);
        return no_mem();
    }
    memset(l, 0, sizeof *l);
    l->refs = 1;
    l->kind = WH_LAY_LIST;
    l->n = k;
    /* shrink to fit; keep the original block when k == 0 or realloc fails */
    void *shrunk = k ? realloc(v, k * sizeof *v) : NULL;
    l->ents = shrunk ? shrunk : v;
    l->pre = (size_t *)(l + 1);
    size_t acc = 0, nb = 0;
    for (size_t i = 0; i < k; i++) {
        l->pre[i] = acc;
        acc += l->ents[i].len;
        nb = sat_add(nb, wh_ent_nblocks(&l->ents[i]));
    }
    l->pre[k] = acc;
    l->nblocks = nb;
    *out = (wh_ent_t){0, total, l};
    return MPI_SUCCESS;
}

/* Lowest and one-past-highest byte address of the data of entry e (relative
 * to its parent's origin); *lo == *hi == 0 for an empty entry. */
void wh_ent_bounds(const wh_ent_t *e, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint l = 0, h = 0;
    if (e->len == 0) {
        *lo = *hi = 0;
        return;
    }
    if (!e->sub) {
        l = 0;
        h = (MPI_Aint)e->len;
    } else if (e->sub->kind == WH_LAY_VEC) {
        const wh_lay_t *v = e->sub;
        MPI_Aint cl, ch, span = (MPI_Aint)((uint64_t)v->stride * (uint64_t)(v->count - 1));
        wh_ent_bounds(&v->child, &cl, &ch);
        l = span < 0 ? cl + span : cl;
        h = span > 0 ? ch + span : ch;
    } else {
        const wh_lay_t *s = e->sub;
        for (size_t i = 0; i < s->n; i++) {
            MPI_Aint cl, ch;
            wh_ent_bounds(&s->ents[i], &cl, &ch);
            if (i == 0 || cl < l)
                l = cl;
            if (i == 0 || ch > h)
                h = ch;
        }
    }
    *lo = l + e->disp;
    *hi = h + e->disp;
}
