/* Private representation of the datatype engine (src/dtype only).
 *
 * A layout describes where the bytes of one element of a type live, in stream
 * order, relative to the element's origin (buf + i * extent):
 *
 *   entry  = (disp, len, sub)      len packed bytes at disp; sub == NULL means
 *                                  one contiguous block [disp, disp+len)
 *   VEC    = count copies of `child` at i * stride   (stride may be <= 0)
 *   LIST   = n entries in stream order, pre[i] = stream offset of entry i
 *
 * Layout nodes are immutable and reference counted: a derived type shares the
 * nodes of the types it was built from. */
#ifndef WH_DTYPE_IMPL_H
#define WH_DTYPE_IMPL_H
#include "dtype/dtype.h"

typedef struct wh_lay wh_lay_t;

typedef struct wh_ent {
    MPI_Aint disp;
    size_t len;
    wh_lay_t *sub;
} wh_ent_t;

enum wh_lay_kind { WH_LAY_VEC = 1, WH_LAY_LIST = 2 };

struct wh_lay {
    int refs;
    int kind;
    size_t nblocks;      /* contiguous blocks in one instance (saturating) */
    /* WH_LAY_VEC */
    size_t count;
    MPI_Aint stride;
    wh_ent_t child;
    /* WH_LAY_LIST */
    size_t n;
    wh_ent_t *ents;
    size_t *pre;         /* n + 1 prefix sums */
};

typedef struct wh_dtype_impl {
    wh_ent_t root;               /* one element */
    wh_dtype_contents_t contents;
    int has_contents;
    wh_dtype_t *base;            /* the type repeated by this one (every type except
                                    struct is a sequence of copies of one type), or NULL */
    wh_dtype_t *resized_from;    /* ref held for MPI_COMBINER_RESIZED/DUP and base */
    /* struct: for MPI_Get_elements / byte-swapping */
    size_t nparts;
    MPI_Count *part_bl;
    wh_dtype_t **part_types;
} wh_dtype_impl_t;

static inline const wh_ent_t *wh_dtype_root(const wh_dtype_t *t)
{
    return &((const wh_dtype_impl_t *)t->impl)->root;
}

/* layout.c */
void wh_lay_ref(wh_lay_t *l);
void wh_lay_unref(wh_lay_t *l);
/* count copies of e at stride (takes its own references); 0 or MPI_ERR_NO_MEM */
int wh_lay_rep(wh_ent_t *out, size_t count, MPI_Aint stride, const wh_ent_t *e);
/* A list of n placed entries (references are moved into the result). */
int wh_lay_list(wh_ent_t *out, wh_ent_t *ents, size_t n);
size_t wh_ent_nblocks(const wh_ent_t *e);
/* data bounds of an entry (the type must have passed the constructor checks) */
void wh_ent_bounds(const wh_ent_t *e, MPI_Aint *lo, MPI_Aint *hi);

/* engine.c: pack/unpack of host memory only (no memory-kind query) */
int wh_dtype_pack_host(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len);
int wh_dtype_unpack_host(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len);
/* devmem.c: the same when buf or the stream lies in device memory (kinds
 * kb, ko/ki from wh_mem_query, at least one not host) */
int wh_dtype_pack_dev(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len, int kb,
                      int ko);
int wh_dtype_unpack_dev(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len, int kb,
                        int ki);

/* predef.c: allocate a derived type object (refs = urefs = 1) */
wh_dtype_t *wh_dtype_alloc(void);

#endif
