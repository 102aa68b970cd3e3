/* Predefined datatypes (resolved from their MPICH handle values), the table
 * of derived types, reference counting and recorded constructor contents. */
#include "dtype/dtype_impl.h"
#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

wh_dtype_t wh_dtype_builtin[256];
wh_dtype_t wh_dtype_direct[WH_DTYPE_NDIRECT];
static wh_dtype_impl_t builtin_impl[256];
static wh_dtype_impl_t direct_impl[WH_DTYPE_NDIRECT];
static wh_tab_t dtype_tab;
static int tab_ready, predef_ready;


typedef struct predef {
    MPI_Datatype h;
    const char *name;
    size_t size, align;
    wh_basic_t basic;
} predef_t;

#define P(h, ctype, basic) {h, #h, sizeof(ctype), _Alignof(ctype), basic}
static const predef_t plain[] = {
    P(MPI_CHAR, char, WH_BT_CHAR),
    P(MPI_SIGNED_CHAR, signed char, WH_BT_SCHAR),
    P(MPI_UNSIGNED_CHAR, unsigned char, WH_BT_UCHAR),
    P(MPI_BYTE, unsigned char, WH_BT_BYTE),
    P(MPI_WCHAR, wchar_t, WH_BT_WCHAR),
    P(MPI_SHORT, short, WH_BT_SHORT),
    P(MPI_UNSIGNED_SHORT, unsigned short, WH_BT_USHORT),
    P(MPI_INT, int, WH_BT_INT),
    P(MPI_UNSIGNED, unsigned, WH_BT_UINT),
    P(MPI_LONG, long, WH_BT_LONG),
    P(MPI_UNSIGNED_LONG, unsigned long, WH_BT_ULONG),
    P(MPI_LONG_LONG_INT, long long, WH_BT_LLONG),
    P(MPI_UNSIGNED_LONG_LONG, unsigned long long, WH_BT_ULLONG),
    P(MPI_FLOAT, float, WH_BT_FLOAT),
    P(MPI_DOUBLE, double, WH_BT_DOUBLE),
    P(MPI_LONG_DOUBLE, long double, WH_BT_LDOUBLE),
    P(MPI_PACKED, unsigned char, WH_BT_PACKED),
    P(MPI_INT8_T, int8_t, WH_BT_INT8),
    P(MPI_INT16_T, int16_t, WH_BT_INT16),
    P(MPI_INT32_T, int32_t, WH_BT_INT32),
    P(MPI_INT64_T, int64_t, WH_BT_INT64),
    P(MPI_UINT8_T, uint8_t, WH_BT_UINT8),
    P(MPI_UINT16_T, uint16_t, WH_BT_UINT16),
    P(MPI_UINT32_T, uint32_t, WH_BT_UINT32),
    P(MPI_UINT64_T, uint64_t, WH_BT_UINT64),
    P(MPI_C_BOOL, bool, WH_BT_BOOL),
    /* MPI_C_COMPLEX and MPI_C_FLOAT_COMPLEX share the handle: the name is the
       one the standard lists first (likewise MPI_LONG_LONG_INT above) */
    P(MPI_C_COMPLEX, float _Complex, WH_BT_CFLOAT),
    P(MPI_C_DOUBLE_COMPLEX, double _Complex, WH_BT_CDOUBLE),
    P(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, WH_BT_CLDOUBLE),
    P(MPIX_C_FLOAT16, _Float16, WH_BT_FLOAT16),
    P(MPI_AINT, MPI_Aint, WH_BT_AINT),
    P(MPI_OFFSET, MPI_Offset, WH_BT_OFFSET),
    P(MPI_COUNT, MPI_Count, WH_BT_COUNT),
    P(MPI_CXX_BOOL, bool, WH_BT_BOOL),
    P(MPI_CXX_FLOAT_COMPLEX, float _Complex, WH_BT_CFLOAT),
    P(MPI_CXX_DOUBLE_COMPLEX, double _Complex, WH_BT_CDOUBLE),
    P(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, WH_BT_CLDOUBLE),
    /* Fortran types, as their C equivalents */
    P(MPI_CHARACTER, char, WH_BT_CHAR),
    P(MPI_INTEGER, int, WH_BT_INT),
    P(MPI_REAL, float, WH_BT_FLOAT),
    P(MPI_LOGICAL, int, WH_BT_INT),
    P(MPI_COMPLEX, float _Complex, WH_BT_CFLOAT),
    P(MPI_DOUBLE_PRECISION, double, WH_BT_DOUBLE),
    P(MPI_DOUBLE_COMPLEX, double _Complex, WH_BT_CDOUBLE),
    P(MPI_REAL4, float, WH_BT_FLOAT),
    P(MPI_COMPLEX8, float _Complex, WH_BT_CFLOAT),
    P(MPI_REAL8, double, WH_BT_DOUBLE),
    P(MPI_COMPLEX16, double _Complex, WH_BT_CDOUBLE),
    P(MPI_REAL16, long double, WH_BT_LDOUBLE),
    P(MPI_COMPLEX32, long double _Complex, WH_BT_CLDOUBLE),
    P(MPI_INTEGER1, int8_t, WH_BT_INT8),
    P(MPI_INTEGER2, int16_t, WH_BT_INT16),
    P(MPI_INTEGER4, int32_t, WH_BT_INT32),
    P(MPI_INTEGER8, int64_t, WH_BT_INT64),
};
#undef P

/* value/index pairs: C struct layouts */
typedef struct pair {
    MPI_Datatype h;
    const char *name;
    size_t size1, off2, size2, extent, align;
    wh_basic_t basic;
} pair_t;

#define PAIR(h, t1, t2, basic)                                                                    \
    {h, #h, sizeof(t1), offsetof(struct { t1 a; t2 b; }, b), sizeof(t2), sizeof(struct { t1 a; t2 b; }), \
     _Alignof(struct { t1 a; t2 b; }), basic}
static const pair_t pairs[] = {
    PAIR(MPI_FLOAT_INT, float, int, WH_BT_FLOAT_INT),
    PAIR(MPI_DOUBLE_INT, double, int, WH_BT_DOUBLE_INT),
    PAIR(MPI_LONG_INT, long, int, WH_BT_LONG_INT),
    PAIR(MPI_SHORT_INT, short, int, WH_BT_SHORT_INT),
    PAIR(MPI_LONG_DOUBLE_INT, long double, int, WH_BT_LDOUBLE_INT),
    PAIR(MPI_2INT, int, int, WH_BT_2INT),
    PAIR(MPI_2INTEGER, int, int, WH_BT_2INT),
    PAIR(MPI_2REAL, float, float, WH_BT_2FLOAT),
    PAIR(MPI_2DOUBLE_PRECISION, double, double, WH_BT_2DOUBLE),
};
#undef PAIR

static wh_dtype_t *slot_for(MPI_Datatype h, wh_dtype_impl_t **impl)
{
    uint32_t u = (uint32_t)h;
    if (WH_HKIND(h) == WH_HK_BUILTIN && WH_HTYPE(h) == WH_H_DTYPE) {
        *impl = &builtin_impl[u & 0xffu];
        return &wh_dtype_builtin[u & 0xffu];
    }
    if (WH_HKIND(h) == WH_HK_DIRECT && WH_HTYPE(h) == WH_H_DTYPE && WH_HINDEX(h) < WH_DTYPE_NDIRECT) {
        *impl = &direct_impl[WH_HINDEX(h)];
        return &wh_dtype_direct[WH_HINDEX(h)];
    }
    return NULL;
}

static int predef_common(MPI_Datatype h, const char *name, wh_dtype_t **tp)
{
    wh_dtype_impl_t *impl;
    wh_dtype_t *t = slot_for(h, &impl);
    if (!t)
        return wh_error(MPI_ERR_INTERN, "predefined datatype %s has an unexpected handle 0x%x", name, (unsigned)h);
    if (t->obj.handle)
        return wh_error(MPI_ERR_INTERN, "predefined datatypes %s and %s share slot 0x%x", t->name, name,
                        (unsigned)h);
    memset(t, 0, sizeof *t);
    memset(impl, 0, sizeof *impl);
    t->obj.handle = h;
    t->obj.refs = 1;
    t->urefs = 1;
    t->impl = impl;
    t->committed = 1;
    t->predefined = 1;
    t->combiner = MPI_COMBINER_NAMED;
    snprintf(t->name, sizeof t->name, "%s", name);
    *tp = t;
    return MPI_SUCCESS;
}

static int add_plain(const predef_t *p)
{
    wh_dtype_t *t = NULL;
    WH_CHECK(predef_common(p->h, p->name, &t));
    if (WH_HKIND(p->h) == WH_HK_BUILTIN && (((uint32_t)p->h >> 8) & 0xffu) != p->size)
        return wh_error(MPI_ERR_INTERN, "%s: handle size bits disagree with sizeof (%zu)", p->name, p->size);
    t->size = p->size;
    t->extent = t->true_extent = (MPI_Aint)p->size;
    t->contig = t->dense = 1;
    t->align = p->align;
    t->basic = p->basic;
    t->basic_size = p->size;
    t->nelem = 1;
    ((wh_dtype_impl_t *)t->impl)->root = (wh_ent_t){0, p->size, NULL};
    return MPI_SUCCESS;
}

static int add_pair(const pair_t *p)
{
    wh_dtype_t *t = NULL;
    WH_CHECK(predef_common(p->h, p->name, &t));
    t->size = p->size1 + p->size2;
    t->extent = (MPI_Aint)p->extent;
    t->true_extent = (MPI_Aint)(p->off2 + p->size2);
    t->align = p->align;
    t->basic = p->basic;
    t->basic_size = t->size;
    t->nelem = 2;
    wh_ent_t ents[2] = {{0, p->size1, NULL}, {(MPI_Aint)p->off2, p->size2, NULL}};
    WH_CHECK(wh_lay_list(&((wh_dtype_impl_t *)t->impl)->root, ents, 2));
    t->dense = ((wh_dtype_impl_t *)t->impl)->root.sub == NULL;
    t->contig = t->dense && (MPI_Aint)t->size == t->extent;
    return MPI_SUCCESS;
}

static int add_marker(MPI_Datatype h, const char *name)
{
    wh_dtype_t *t;
    WH_CHECK(predef_common(h, name, &t));
    t->contig = t->dense = 1;
    t->align = 1;
    t->sticky_lb = h == MPI_LB;
    t->sticky_ub = h == MPI_UB;
    ((wh_dtype_impl_t *)t->impl)->root = (wh_ent_t){0, 0, NULL};
    return MPI_SUCCESS;
}

static void tab_ready_once(void)
{
    if (!tab_ready) {
        wh_tab_init(&dtype_tab, WH_H_DTYPE, sizeof(wh_dtype_t));
        tab_ready = 1;
    }
}

int wh_dtype_init(void)
{
    tab_ready_once();
    if (predef_ready)
        return MPI_SUCCESS;
    memset(wh_dtype_builtin, 0, sizeof wh_dtype_builtin);
    memset(wh_dtype_direct, 0, sizeof wh_dtype_direct);
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        WH_CHECK(add_plain(&plain[i]));
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        WH_CHECK(add_pair(&pairs[i]));
    WH_CHECK(add_marker(MPI_LB, "MPI_LB"));
    WH_CHECK(add_marker(MPI_UB, "MPI_UB"));
    predef_ready = 1;
    return MPI_SUCCESS;
}

static void impl_free(wh_dtype_impl_t *im);

void wh_dtype_finalize(void)
{
    /* derived types still alive (not freed by the user, or held by requests
       that were never completed) go with the table */
    if (tab_ready) {
        for (uint32_t i = 0; i < dtype_tab.nslots; i++) {
            uint32_t c = i / WH_TAB_CHUNK, s = i % WH_TAB_CHUNK;
            if (dtype_tab.used[c][s]) {
                wh_dtype_t *t = (wh_dtype_t *)((char *)dtype_tab.chunks[c] + (size_t)s * dtype_tab.objsize);
                impl_free(t->impl);
                t->impl = NULL;
            }
        }
        wh_tab_destroy(&dtype_tab);
        tab_ready = 0;
    }
    for (int i = 0; i < WH_DTYPE_NDIRECT; i++)
        wh_lay_unref(direct_impl[i].root.sub);
    for (int i = 0; i < 256; i++)
        wh_lay_unref(builtin_impl[i].root.sub);
    memset(builtin_impl, 0, sizeof builtin_impl);
    memset(direct_impl, 0, sizeof direct_impl);
    memset(wh_dtype_builtin, 0, sizeof wh_dtype_builtin);
    memset(wh_dtype_direct, 0, sizeof wh_dtype_direct);
    predef_ready = 0;
}

wh_dtype_t *wh_dtype_get_derived(MPI_Datatype h)
{
    if (!tab_ready)
        return NULL;
    wh_dtype_t *t = wh_tab_get(&dtype_tab, h);
    if (!t || __atomic_load_n(&t->urefs, __ATOMIC_RELAXED) <= 0)
        return NULL;
    return t;
}

const char *wh_dtype_predef_name(MPI_Datatype h)
{
    wh_dtype_t *t = wh_dtype_get(h);
    return t && t->predefined ? t->name : "";
}

int wh_dtype_check_comm(MPI_Datatype h, wh_dtype_t **out)
{
    wh_dtype_t *t = wh_dtype_get(h);
    if (__builtin_expect(t && t->committed && t->obj.handle != MPI_LB && t->obj.handle != MPI_UB, 1)) {
        *out = t;
        return MPI_SUCCESS;
    }
    if (h == MPI_DATATYPE_NULL)
        return wh_error(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
    if (!t) {
        if (WH_HTYPE(h) == WH_H_DTYPE && WH_HKIND(h) == WH_HK_INDIRECT)
            return wh_error(MPI_ERR_TYPE, "datatype 0x%x was freed or never created", (unsigned)h);
        return wh_error(MPI_ERR_TYPE, "invalid datatype handle 0x%x", (unsigned)h);
    }
    if (!t->committed)
        return wh_error(MPI_ERR_TYPE, "datatype 0x%x%s%s is not committed (call MPI_Type_commit)", (unsigned)h,
                        t->name[0] ? " " : "", t->name);
    return wh_error(MPI_ERR_TYPE, "%s is a bound marker, not a datatype for communication", t->name);
}

int wh_dtype_bytes_checked(const wh_dtype_t *t, MPI_Count count, size_t *bytes)
{
    size_t b;
    if (count < 0)
        return wh_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    if (__builtin_mul_overflow((size_t)count, t->size, &b) || b > (size_t)INT64_MAX)
        return wh_error(MPI_ERR_COUNT, "count %lld of a %zu-byte datatype exceeds the addressable size",
                        (long long)count, t->size);
    *bytes = b;
    return MPI_SUCCESS;
}

/* ---------- derived objects ---------- */

wh_dtype_t *wh_dtype_alloc(void)
{
    tab_ready_once();
    wh_dtype_impl_t *im = calloc(1, sizeof *im);
    if (!im)
        return NULL;
    wh_dtype_t *t = wh_tab_alloc(&dtype_tab);
    if (!t) {
        free(im);
        return NULL;
    }
    t->impl = im;
    t->urefs = 1;
    return t;
}

void wh_dtype_addref(wh_dtype_t *t)
{
    if (t && !t->predefined)
        __atomic_add_fetch(&t->obj.refs, 1, __ATOMIC_RELAXED);
}

static void impl_free(wh_dtype_impl_t *im)
{
    if (!im)
        return;
    wh_lay_unref(im->root.sub);
    wh_dtype_contents_t *c = &im->contents;
    if (im->has_contents)
        for (int i = 0; i < c->nd; i++)
            wh_dtype_release(wh_dtype_get_derived_any(c->types[i]));
    free(c->ints);
    free(c->aints);
    free(c->counts);
    free(c->types);
    wh_dtype_release(im->base);
    if (im->part_types)
        for (size_t i = 0; i < im->nparts; i++)
            wh_dtype_release(im->part_types[i]);
    free(im->part_types);
    free(im->part_bl);
    free(im);
}

void wh_dtype_release(wh_dtype_t *t)
{
    if (!t || t->predefined)
        return;
    if (__atomic_sub_fetch(&t->obj.refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    wh_dtype_impl_t *im = t->impl;
    t->impl = NULL;
    if (tab_ready)
        wh_tab_free(&dtype_tab, t);
    impl_free(im);
}

void wh_dtype_user_free(wh_dtype_t *t)
{
    if (!t || t->predefined)
        return;
    __atomic_sub_fetch(&t->urefs, 1, __ATOMIC_ACQ_REL);
    wh_dtype_release(t);
}

void wh_dtype_user_addref(wh_dtype_t *t)
{
    if (!t || t->predefined)
        return;
    __atomic_add_fetch(&t->urefs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&t->obj.refs, 1, __ATOMIC_RELAXED);
}

/* any live object, even one whose user handle was freed (contents hold refs) */
wh_dtype_t *wh_dtype_get_derived_any(MPI_Datatype h)
{
    if (WH_HKIND(h) != WH_HK_INDIRECT || !tab_ready)
        return NULL;
    return wh_tab_get(&dtype_tab, h);
}

static void *dupmem(const void *p, size_t n)
{
    if (!n)
        return NULL;
    void *q = malloc(n);
    if (q)
        memcpy(q, p, n);
    return q;
}

int wh_dtype_set_contents(wh_dtype_t *t, int combiner, int large, int ni, const int *ints, int na,
                          const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
                          const MPI_Datatype *types)
{
    wh_dtype_impl_t *im = t->impl;
    wh_dtype_contents_t *c = &im->contents;
    c->combiner = combiner;
    c->large = large;
    c->ni = ni;
    c->na = na;
    c->nc = nc;
    c->nd = nd;
    c->ints = dupmem(ints, (size_t)ni * sizeof *ints);
    c->aints = dupmem(aints, (size_t)na * sizeof *aints);
    c->counts = dupmem(counts, (size_t)nc * sizeof *counts);
    c->types = dupmem(types, (size_t)nd * sizeof *types);
    if ((ni && !c->ints) || (na && !c->aints) || (nc && !c->counts) || (nd && !c->types)) {
        free(c->ints);
        free(c->aints);
        free(c->counts);
        free(c->types);
        memset(c, 0, sizeof *c);
        return wh_error(MPI_ERR_NO_MEM, "out of memory recording datatype contents");
    }
    for (int i = 0; i < nd; i++)
        wh_dtype_addref(wh_dtype_get_derived_any(types[i]));
    im->has_contents = 1;
    t->combiner = combiner;
    return MPI_SUCCESS;
}

const wh_dtype_contents_t *wh_dtype_contents(const wh_dtype_t *t)
{
    const wh_dtype_impl_t *im = t->impl;
    return t->predefined || !im->has_contents ? NULL : &im->contents;
}
