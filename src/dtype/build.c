/* Datatype constructors of the engine: bounds (lb/ub with MPI_LB/MPI_UB
 * markers and resizing, true bounds, struct alignment padding as MPICH and
 * the C compiler do it) and the layout of one element.  Every byte
 * computation is overflow-checked here, so the layout code and the engine can
 * rely on all addresses of a type fitting in MPI_Aint. */
#include "dtype/dtype_impl.h"
#include "core/err.h"

#include <stdlib.h>
#include <string.h>

typedef struct bnd {
    MPI_Aint lb, ub, tlb, tub;
} bnd_t;

static int overflow(const char *what)
{
    return wh_error(MPI_ERR_ARG, "datatype %s overflows the address range (MPI_Aint)", what);
}

static int add_chk(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
    return __builtin_add_overflow(a, b, r);
}

static int mul_chk(MPI_Aint a, MPI_Aint b, MPI_Aint *r)
{
    return __builtin_mul_overflow(a, b, r);
}

static uint64_t sat_mul64(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t sat_add64(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline MPI_Aint amin(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static inline MPI_Aint amax(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

static int is_marker(const wh_dtype_t *t)
{
    return t->predefined && (t->obj.handle == MPI_LB || t->obj.handle == MPI_UB);
}

/* Bounds of bl copies of old placed at disp: the copies sit at disp + j*extent. */
static int blk_bounds(const wh_dtype_t *old, MPI_Count bl, MPI_Aint disp, bnd_t *b)
{
    MPI_Aint span, ub, tub, lo, hi;
    if (mul_chk(bl - 1, old->extent, &span) || add_chk(old->lb, old->extent, &ub) ||
        add_chk(old->true_lb, old->true_extent, &tub))
        return overflow("block");
    lo = amin(0, span);
    hi = amax(0, span);
    if (add_chk(disp, old->lb, &b->lb) || add_chk(b->lb, lo, &b->lb) || add_chk(disp, ub, &b->ub) ||
        add_chk(b->ub, hi, &b->ub) || add_chk(disp, old->true_lb, &b->tlb) || add_chk(b->tlb, lo, &b->tlb) ||
        add_chk(disp, tub, &b->tub) || add_chk(b->tub, hi, &b->tub))
        return overflow("displacement");
    return MPI_SUCCESS;
}

static int no_mem(void)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory creating a datatype");
}

static void set_base(wh_dtype_t *t, wh_dtype_t *base)
{
    wh_dtype_impl_t *im = t->impl;
    im->base = base;
    wh_dtype_addref(base);
}

/* dense/contig from the layout, once size, extent and root are set */
static void settle(wh_dtype_t *t)
{
    const wh_ent_t *r = wh_dtype_root(t);
    if (t->size == 0) {
        t->true_lb = t->true_extent = 0;
        t->dense = t->contig = 1;
        return;
    }
    t->dense = r->sub == NULL;
    if (t->dense)
        t->true_lb = r->disp; /* same value as the bounds arithmetic; layout is authoritative */
    t->contig = t->dense && (MPI_Aint)t->size == t->extent;
}

static int zerolen(wh_dtype_t *old, wh_dtype_t **out)
{
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t)
        return no_mem();
    t->align = old ? old->align : 1;
    t->basic = old ? old->basic : WH_BT_NONE;
    t->basic_size = old ? old->basic_size : 0;
    if (old)
        set_base(t, old);
    settle(t);
    *out = t;
    return MPI_SUCCESS;
}

static void inherit_basic(wh_dtype_t *t, const wh_dtype_t *old)
{
    t->basic = old->basic;
    t->basic_size = old->basic_size;
    t->align = old->align;
    t->sticky_lb = old->sticky_lb;
    t->sticky_ub = old->sticky_ub;
}

int wh_dtype_create_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride, wh_dtype_t *old,
                            wh_dtype_t **out)
{
    if (count < 0 || blocklen < 0)
        return wh_error(MPI_ERR_COUNT, "negative count or block length");
    if (count == 0 || blocklen == 0)
        return zerolen(old, out);
    size_t n, size;
    MPI_Aint span;
    bnd_t b;
    if (__builtin_mul_overflow((size_t)count, (size_t)blocklen, &n) || __builtin_mul_overflow(n, old->size, &size) ||
        size > (size_t)INT64_MAX)
        return wh_error(MPI_ERR_COUNT, "datatype of %lld blocks of %lld elements of %zu bytes is too large",
                        (long long)count, (long long)blocklen, old->size);
    WH_CHECK(blk_bounds(old, blocklen, 0, &b));
    MPI_Aint extent, textent;
    if (mul_chk(count - 1, stride, &span) || add_chk(b.lb, amin(0, span), &b.lb) ||
        add_chk(b.ub, amax(0, span), &b.ub) || add_chk(b.tlb, amin(0, span), &b.tlb) ||
        add_chk(b.tub, amax(0, span), &b.tub) || __builtin_sub_overflow(b.ub, b.lb, &extent) ||
        __builtin_sub_overflow(b.tub, b.tlb, &textent))
        return overflow("stride");

    wh_ent_t blk, root;
    WH_CHECK(wh_lay_rep(&blk, (size_t)blocklen, old->extent, wh_dtype_root(old)));
    int rc = wh_lay_rep(&root, (size_t)count, stride, &blk);
    wh_lay_unref(blk.sub);
    if (rc)
        return rc;
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t) {
        wh_lay_unref(root.sub);
        return no_mem();
    }
    ((wh_dtype_impl_t *)t->impl)->root = root;
    inherit_basic(t, old);
    set_base(t, old);
    t->size = size;
    t->lb = b.lb;
    t->extent = extent;
    t->true_lb = b.tlb;
    t->true_extent = textent;
    t->nelem = sat_mul64(n, old->nelem);
    settle(t);
    *out = t;
    return MPI_SUCCESS;
}

int wh_dtype_create_contig(MPI_Count count, wh_dtype_t *old, wh_dtype_t **out)
{
    return wh_dtype_create_hvector(1, count, 0, old, out);
}

int wh_dtype_create_blocks(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *displs, wh_dtype_t *old,
                           wh_dtype_t *const *types, wh_dtype_t **out)
{
    int is_struct = types != NULL, rc = MPI_SUCCESS;
    int have = 0, have_data = 0, have_slb = 0, have_sub = 0, basic_set = 0;
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0, slb = 0, sub = 0;
    size_t size = 0, align = 1, nparts = 0, k = 0;
    uint64_t nelem = 0;
    wh_basic_t basic = WH_BT_NONE;
    size_t basic_size = 0;

    if (count < 0)
        return wh_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    wh_ent_t *ents = malloc(((size_t)count ? (size_t)count : 1) * sizeof *ents);
    if (!ents)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a datatype of %lld blocks", (long long)count);
    for (MPI_Count i = 0; i < count; i++) {
        wh_dtype_t *ty = is_struct ? types[i] : old;
        MPI_Count bl = blocklens[i];
        if (bl < 0) {
            rc = wh_error(MPI_ERR_ARG, "negative block length %lld in block %lld", (long long)bl, (long long)i);
            goto fail;
        }
        if (bl == 0)
            continue;
        if (is_marker(ty)) {
            if (ty->obj.handle == MPI_LB)
                slb = have_slb++ ? amin(slb, displs[i]) : displs[i];
            else
                sub = have_sub++ ? amax(sub, displs[i]) : displs[i];
            continue;
        }
        bnd_t b;
        size_t bytes;
        if ((rc = blk_bounds(ty, bl, displs[i], &b)))
            goto fail;
        if (__builtin_mul_overflow((size_t)bl, ty->size, &bytes) || __builtin_add_overflow(size, bytes, &size) ||
            size > (size_t)INT64_MAX) {
            rc = wh_error(MPI_ERR_COUNT, "datatype size overflows at block %lld", (long long)i);
            goto fail;
        }
        if (ty->sticky_lb)
            slb = have_slb++ ? amin(slb, b.lb) : b.lb;
        if (ty->sticky_ub)
            sub = have_sub++ ? amax(sub, b.ub) : b.ub;
        lb = have ? amin(lb, b.lb) : b.lb;
        ub = have ? amax(ub, b.ub) : b.ub;
        have = 1;
        if (ty->align > align)
            align = ty->align;
        nelem = sat_add64(nelem, sat_mul64((uint64_t)bl, ty->nelem));
        nparts++;
        if (ty->size == 0)
            continue;
        tlb = have_data ? amin(tlb, b.tlb) : b.tlb;
        tub = have_data ? amax(tub, b.tub) : b.tub;
        have_data = 1;
        if (!basic_set) {
            basic = ty->basic;
            basic_size = ty->basic_size;
            basic_set = 1;
        } else if (basic != ty->basic) {
            basic = WH_BT_NONE;
            basic_size = 0;
        }
        wh_ent_t e;
        if ((rc = wh_lay_rep(&e, (size_t)bl, ty->extent, wh_dtype_root(ty))))
            goto fail;
        e.disp = (MPI_Aint)((uint64_t)e.disp + (uint64_t)displs[i]); /* within [tlb, tub] */
        ents[k++] = e;
    }
    if (!have && !have_slb && !have_sub) {
        free(ents);
        return zerolen(is_struct ? NULL : old, out);
    }
    if (have_slb)
        lb = slb;
    else if (!have)
        lb = 0;
    if (have_sub)
        ub = sub;
    else if (!have)
        ub = 0;
    MPI_Aint extent, textent = 0;
    if (__builtin_sub_overflow(ub, lb, &extent) || (have_data && __builtin_sub_overflow(tub, tlb, &textent))) {
        rc = overflow("extent");
        goto fail;
    }
    if (is_struct && !have_slb && !have_sub && extent > 0 && (MPI_Aint)align > 1 && extent % (MPI_Aint)align) {
        /* pad the extent as a C compiler pads the struct it describes */
        MPI_Aint pad = (MPI_Aint)align - extent % (MPI_Aint)align;
        if (add_chk(ub, pad, &ub) || add_chk(extent, pad, &extent)) {
            rc = overflow("extent");
            goto fail;
        }
    }
    wh_ent_t root;
    if ((rc = wh_lay_list(&root, ents, k))) {
        k = 0; /* references were released by wh_lay_list */
        goto fail;
    }
    free(ents);
    ents = NULL;
    k = 0;
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t) {
        wh_lay_unref(root.sub);
        return no_mem();
    }
    wh_dtype_impl_t *im = t->impl;
    im->root = root;
    t->size = size;
    t->lb = lb;
    t->extent = extent;
    t->true_lb = have_data ? tlb : 0;
    t->true_extent = textent;
    t->nelem = nelem;
    t->align = align;
    t->sticky_lb = (uint8_t)!!have_slb;
    t->sticky_ub = (uint8_t)!!have_sub;
    t->basic = basic;
    t->basic_size = basic_size;
    if (!is_struct) {
        set_base(t, old);
    } else {
        /* remember the parts for MPI_Get_elements and byte swapping */
        im->part_bl = malloc((nparts ? nparts : 1) * sizeof *im->part_bl);
        im->part_types = malloc((nparts ? nparts : 1) * sizeof *im->part_types);
        if (!im->part_bl || !im->part_types) {
            wh_dtype_user_free(t);
            return wh_error(MPI_ERR_NO_MEM, "out of memory creating a struct datatype");
        }
        for (MPI_Count i = 0; i < count; i++) {
            if (blocklens[i] == 0 || is_marker(types[i]))
                continue;
            im->part_bl[im->nparts] = blocklens[i];
            im->part_types[im->nparts++] = types[i];
            wh_dtype_addref(types[i]);
        }
    }
    settle(t);
    *out = t;
    return MPI_SUCCESS;
fail:
    for (size_t j = 0; j < k; j++)
        wh_lay_unref(ents[j].sub);
    free(ents);
    return rc;
}

int wh_dtype_create_resized(wh_dtype_t *old, MPI_Aint lb, MPI_Aint extent, wh_dtype_t **out)
{
    MPI_Aint ub;
    if (add_chk(lb, extent, &ub))
        return overflow("upper bound (lb + extent)");
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t)
        return no_mem();
    wh_dtype_impl_t *im = t->impl;
    im->root = *wh_dtype_root(old);
    wh_lay_ref(im->root.sub);
    inherit_basic(t, old);
    set_base(t, old);
    t->size = old->size;
    t->true_lb = old->true_lb;
    t->true_extent = old->true_extent;
    t->nelem = old->nelem;
    t->lb = lb;
    t->extent = extent;
    t->sticky_lb = t->sticky_ub = 1;
    settle(t);
    *out = t;
    return MPI_SUCCESS;
}

int wh_dtype_create_dup(wh_dtype_t *old, wh_dtype_t **out)
{
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t)
        return no_mem();
    wh_dtype_impl_t *im = t->impl;
    im->root = *wh_dtype_root(old);
    wh_lay_ref(im->root.sub);
    inherit_basic(t, old);
    set_base(t, old);
    t->size = old->size;
    t->lb = old->lb;
    t->extent = old->extent;
    t->true_lb = old->true_lb;
    t->true_extent = old->true_extent;
    t->nelem = old->nelem;
    t->committed = old->committed;
    settle(t);
    *out = t;
    return MPI_SUCCESS;
}

/* Type of an array region: the layout `root` built by the caller (moved in),
 * lb 0 and extent = the whole array, as MPI defines subarray/darray. */
static int region_type(wh_ent_t root, size_t size, MPI_Aint extent, uint64_t nelems, wh_dtype_t *old,
                       wh_dtype_t **out)
{
    wh_dtype_t *t = wh_dtype_alloc();
    if (!t) {
        wh_lay_unref(root.sub);
        return no_mem();
    }
    ((wh_dtype_impl_t *)t->impl)->root = root;
    inherit_basic(t, old);
    set_base(t, old);
    t->size = size;
    t->lb = 0;
    t->extent = extent;
    t->sticky_lb = t->sticky_ub = 1;
    t->nelem = sat_mul64(nelems, old->nelem);
    MPI_Aint lo, hi;
    wh_ent_bounds(&root, &lo, &hi);
    t->true_lb = lo;
    t->true_extent = hi - lo;
    settle(t);
    *out = t;
    return MPI_SUCCESS;
}

/* strides (bytes per index) of each dimension; *total = bytes of the array */
static int dim_strides(int ndims, const MPI_Count *sizes, int order, MPI_Aint ext, MPI_Aint *stride, MPI_Aint *total)
{
    MPI_Aint s = ext;
    for (int j = 0; j < ndims; j++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - j : j; /* fastest dimension first */
        stride[d] = s;
        if (mul_chk(s, (MPI_Aint)sizes[d], &s))
            return overflow("array size");
    }
    *total = s;
    return MPI_SUCCESS;
}

int wh_dtype_create_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                             int order, wh_dtype_t *old, wh_dtype_t **out)
{
    MPI_Aint *stride = malloc((size_t)ndims * sizeof *stride), total = 0;
    if (!stride)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a subarray datatype");
    int rc = dim_strides(ndims, sizes, order, old->extent, stride, &total);
    uint64_t n = 1;
    size_t size = old->size;
    for (int d = 0; d < ndims && !rc; d++) {
        n = sat_mul64(n, (uint64_t)subsizes[d]);
        if (__builtin_mul_overflow(size, (size_t)subsizes[d], &size) || size > (size_t)INT64_MAX)
            rc = wh_error(MPI_ERR_COUNT, "subarray datatype is too large");
    }
    /* every element lies inside the array, so only the array's bytes must fit;
       the old type's own bounds add to that */
    MPI_Aint chk;
    if (!rc && (add_chk(total, old->true_lb, &chk) || add_chk(chk, old->true_extent, &chk)))
        rc = overflow("array");
    wh_ent_t e = *wh_dtype_root(old);
    wh_lay_ref(e.sub);
    for (int j = 0; j < ndims && !rc; j++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - j : j;
        wh_ent_t ne;
        rc = wh_lay_rep(&ne, (size_t)subsizes[d], stride[d], &e);
        wh_lay_unref(e.sub);
        e = ne;
        if (!rc && e.len)
            e.disp = (MPI_Aint)((uint64_t)e.disp + (uint64_t)starts[d] * (uint64_t)stride[d]);
    }
    free(stride);
    if (rc) {
        wh_lay_unref(e.sub);
        return rc;
    }
    if (size == 0)
        e = (wh_ent_t){0, 0, NULL};
    return region_type(e, size, total, n, old, out);
}

/* Local index blocks of one darray dimension: nfull blocks of length k every
 * step indices starting at first, then (optionally) one block of length
 * lastlen at last. */
typedef struct dblocks {
    MPI_Count first, k, step, nfull, last, lastlen;
} dblocks_t;

static void darray_dim(MPI_Count g, int distrib, int darg, int p, int c, dblocks_t *b)
{
    memset(b, 0, sizeof *b);
    if (distrib == MPI_DISTRIBUTE_NONE) {
        b->first = 0, b->k = g, b->step = g, b->nfull = 1;
        return;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        MPI_Count bs = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        MPI_Count start = bs * c, len = g - start < bs ? g - start : bs;
        if (len > 0)
            b->first = start, b->k = len, b->step = len, b->nfull = 1;
        return;
    }
    /* cyclic(k) */
    MPI_Count k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    MPI_Count step = k * p, start = k * c;
    if (start >= g)
        return;
    MPI_Count nblk = (g - start + step - 1) / step; /* blocks that start inside the array */
    MPI_Count lastl = g - (start + (nblk - 1) * step);
    b->first = start, b->k = k, b->step = step;
    if (lastl >= k) {
        b->nfull = nblk;
    } else {
        b->nfull = nblk - 1;
        b->last = start + (nblk - 1) * step;
        b->lastlen = lastl;
    }
}

int wh_dtype_create_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                           const int *dargs, const int *psizes, int order, wh_dtype_t *old, wh_dtype_t **out)
{
    (void)size;
    MPI_Aint *stride = malloc((size_t)ndims * sizeof *stride), total = 0;
    int *coord = malloc((size_t)ndims * sizeof *coord);
    if (!stride || !coord) {
        free(stride);
        free(coord);
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a darray datatype");
    }
    int rc = dim_strides(ndims, gsizes, order, old->extent, stride, &total);
    MPI_Aint chk;
    if (!rc && (add_chk(total, old->true_lb, &chk) || add_chk(chk, old->true_extent, &chk)))
        rc = overflow("array");
    /* the process grid is row-major whatever the array order */
    for (int d = ndims - 1, r = rank; d >= 0; d--) {
        coord[d] = r % psizes[d];
        r /= psizes[d];
    }
    wh_ent_t e = *wh_dtype_root(old);
    wh_lay_ref(e.sub);
    uint64_t n = 1;
    size_t bytes = old->size;
    for (int j = 0; j < ndims && !rc; j++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - j : j;
        dblocks_t b;
        darray_dim(gsizes[d], distribs[d], dargs[d], psizes[d], coord[d], &b);
        MPI_Count local = b.nfull * b.k + b.lastlen;
        n = sat_mul64(n, (uint64_t)local);
        if (__builtin_mul_overflow(bytes, (size_t)local, &bytes) || bytes > (size_t)INT64_MAX) {
            rc = wh_error(MPI_ERR_COUNT, "darray datatype is too large");
            break;
        }
        wh_ent_t parts[2] = {{0, 0, NULL}, {0, 0, NULL}}, blk;
        if (b.nfull > 0 && !(rc = wh_lay_rep(&blk, (size_t)b.k, stride[d], &e))) {
            rc = wh_lay_rep(&parts[0], (size_t)b.nfull, (MPI_Aint)((uint64_t)b.step * (uint64_t)stride[d]), &blk);
            wh_lay_unref(blk.sub);
            parts[0].disp = (MPI_Aint)((uint64_t)parts[0].disp + (uint64_t)b.first * (uint64_t)stride[d]);
        }
        if (!rc && b.lastlen > 0) {
            rc = wh_lay_rep(&parts[1], (size_t)b.lastlen, stride[d], &e);
            parts[1].disp = (MPI_Aint)((uint64_t)parts[1].disp + (uint64_t)b.last * (uint64_t)stride[d]);
        }
        wh_lay_unref(e.sub);
        e = (wh_ent_t){0, 0, NULL};
        if (rc) {
            wh_lay_unref(parts[0].sub);
            wh_lay_unref(parts[1].sub);
            break;
        }
        rc = wh_lay_list(&e, parts, 2);
    }
    free(stride);
    free(coord);
    if (rc) {
        wh_lay_unref(e.sub);
        return rc;
    }
    if (bytes == 0)
        e = (wh_ent_t){0, 0, NULL};
    return region_type(e, bytes, total, n, old, out);
}
