/* Datatype engine interface.  Predefined types are resolved from their
 * MPICH-compatible handle values; derived types live in a handle table.
 *
 * Data movement works on the "packed stream" of (buf, count, type): the bytes
 * of the type map in order.  Channels pack/unpack any byte range of that stream
 * so large non-contiguous messages are pipelined without a full temporary copy.
 *
 * Engine: every type has a layout (src/dtype/dtype_impl.h): a tree of
 * "entries" (displacement, packed length, sub-layout) where a leaf is one
 * contiguous block and inner nodes are either regular repetitions (count
 * copies at a byte stride) or lists of entries with prefix sums of their packed
 * lengths.  Any byte range of the stream is located by division (repetitions)
 * and binary search (lists), so a pipelined transfer never rescans from the
 * start; adjacent blocks are merged when types are built. */
#ifndef WH_DTYPE_DTYPE_H
#define WH_DTYPE_DTYPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "core/handle.h"
#include "mem/mem.h"

/* basic element kinds for reductions (what MPI_Op functions switch on) */
typedef enum {
    WH_BT_NONE = 0,  /* not a single basic type (struct of mixed types) */
    WH_BT_CHAR, WH_BT_SCHAR, WH_BT_UCHAR, WH_BT_BYTE, WH_BT_WCHAR,
    WH_BT_SHORT, WH_BT_USHORT, WH_BT_INT, WH_BT_UINT, WH_BT_LONG, WH_BT_ULONG,
    WH_BT_LLONG, WH_BT_ULLONG, WH_BT_FLOAT, WH_BT_DOUBLE, WH_BT_LDOUBLE,
    WH_BT_INT8, WH_BT_INT16, WH_BT_INT32, WH_BT_INT64,
    WH_BT_UINT8, WH_BT_UINT16, WH_BT_UINT32, WH_BT_UINT64,
    WH_BT_BOOL, WH_BT_CFLOAT, WH_BT_CDOUBLE, WH_BT_CLDOUBLE,
    WH_BT_AINT, WH_BT_OFFSET, WH_BT_COUNT, WH_BT_PACKED, WH_BT_FLOAT16,
    /* pair types for MINLOC/MAXLOC (C struct {value; int index;} layouts) */
    WH_BT_FLOAT_INT, WH_BT_DOUBLE_INT, WH_BT_LONG_INT, WH_BT_2INT, WH_BT_SHORT_INT,
    WH_BT_LDOUBLE_INT,
    /* Fortran pairs MPI_2REAL {float,float} and MPI_2DOUBLE_PRECISION {double,double}
       (MPI_2INTEGER is WH_BT_2INT) */
    WH_BT_2FLOAT, WH_BT_2DOUBLE,
    WH_BT_COUNT_
} wh_basic_t;

typedef struct wh_dtype {
    wh_obj_t obj;              /* refs: user handle references + internal ones */
    size_t size;               /* bytes of data in one element */
    MPI_Aint lb, extent;       /* with MPI_LB/UB markers and resizing */
    MPI_Aint true_lb, true_extent;
    int contig;                /* one element is one contiguous block at buf+true_lb of size
                                  `size`, and size == extent (so count elements are contiguous);
                                  also set for zero-size types (nothing to move) */
    int committed;
    int predefined;            /* builtin or pair type: cannot be freed */
    wh_basic_t basic;          /* if every element is basic type `basic` (count_of_basic
                                  = size / basic size), else WH_BT_NONE */
    size_t basic_size;         /* packed bytes of one basic element (pairs: the sum of
                                  both members, e.g. 12 for MPI_DOUBLE_INT) */
    char name[MPI_MAX_OBJECT_NAME];
    struct wh_attr *attrs;     /* attribute list (core attr code; always updated in place:
                                  delete callbacks may change it) */
    void *impl;                /* engine-private representation (dtype_impl.h) */
    /* ---- added by the datatype engine ---- */
    int dense;                 /* one element's data is one contiguous block at buf+true_lb
                                  in stream order (size == true_extent); a type with
                                  size == true_extent but blocks out of memory order is not */
    int urefs;                 /* user-visible handle references (0: handle is freed) */
    size_t align;              /* alignment used to pad struct extents (C rules) */
    uint64_t nelem;            /* basic elements per element (MPI_Get_elements) */
    uint8_t sticky_lb, sticky_ub; /* bounds set by MPI_LB/MPI_UB or resizing */
    int combiner;              /* MPI_COMBINER_* */
} wh_dtype_t;

/* Predefined objects: builtin handles 0x4c00SSII index the 256-entry table by
 * their low byte II; the five direct pair types 0x8c00000N the small table. */
#define WH_DTYPE_NDIRECT 5
extern wh_dtype_t wh_dtype_builtin[256];
extern wh_dtype_t wh_dtype_direct[WH_DTYPE_NDIRECT];
wh_dtype_t *wh_dtype_get_derived(MPI_Datatype h);

/* Resolve any handle (predefined or derived); NULL if invalid/freed.
 * Predefined types: one table load and one compare. */
static inline wh_dtype_t *wh_dtype_get(MPI_Datatype h)
{
    uint32_t u = (uint32_t)h;
    switch (u >> 26) {
    case (WH_HK_BUILTIN << 4) | WH_H_DTYPE: {
        wh_dtype_t *t = &wh_dtype_builtin[u & 0xffu];
        return t->obj.handle == h ? t : NULL;
    }
    case (WH_HK_DIRECT << 4) | WH_H_DTYPE:
        return WH_HINDEX(h) < WH_DTYPE_NDIRECT ? &wh_dtype_direct[WH_HINDEX(h)] : NULL;
    case (WH_HK_INDIRECT << 4) | WH_H_DTYPE:
        return wh_dtype_get_derived(h);
    default:
        return NULL;
    }
}

int wh_dtype_init(void);      /* builds the predefined table; called by MPI_Init */
void wh_dtype_finalize(void);

/* Resolve a datatype for communication: MPI_SUCCESS, or an MPI_ERR_TYPE code
 * naming the problem (MPI_DATATYPE_NULL, invalid or freed handle, derived type
 * not committed, MPI_LB/MPI_UB markers). */
int wh_dtype_check_comm(MPI_Datatype h, wh_dtype_t **out);

/* MPI layer (src/mpi/datatype.c): resolve a datatype argument of fname, or
 * raise MPI_ERR_TYPE on the default error handler naming argname. */
int wh_dtype_arg(const char *fname, MPI_Datatype h, const char *argname, wh_dtype_t **out);

/* Bytes in the packed stream of count elements. */
static inline size_t wh_dtype_bytes(const wh_dtype_t *t, size_t count) { return t->size * count; }

/* Bytes of count elements with overflow check: MPI_SUCCESS or an MPI_ERR_COUNT
 * code when count * size does not fit in MPI_Count. */
int wh_dtype_bytes_checked(const wh_dtype_t *t, MPI_Count count, size_t *bytes);

/* True when (buf,count,type) occupies one contiguous byte range starting at
 * buf + true_lb, in stream order; then *start is that address. */
static inline int wh_dtype_is_contig(const wh_dtype_t *t, size_t count, const void *buf, const char **start)
{
    if (!t->contig && count > 1)
        return 0;
    if (!t->contig && count == 1 && !t->dense)
        return 0;
    *start = (const char *)((uintptr_t)buf + (uintptr_t)t->true_lb);
    return 1;
}

/* Copy bytes [offset, offset+len) of the packed stream of (buf,count,type)
 * into out (pack) or from in (unpack).  len may be any size; offsets need
 * not align with element boundaries.  Return MPI_SUCCESS (MPI_ERR_INTERN
 * if the range lies outside the stream). */
int wh_dtype_pack(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len);
int wh_dtype_unpack(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len);

/* Describe bytes [offset, offset+len) of the stream as up to maxiov iovecs
 * (addresses into buf).  Returns the number of iovecs filled and sets *covered
 * to the number of stream bytes they describe (may be < len if maxiov was
 * too small).  Used for single-copy (CMA) and network gather/scatter. */
int wh_dtype_iov(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, size_t len,
                 struct iovec *iov, int maxiov, size_t *covered);

/* Number of contiguous blocks of the stream of (count, type) after merging
 * adjacent ones (an upper bound for huge types); used to size iovec arrays. */
size_t wh_dtype_nblocks(const wh_dtype_t *t, size_t count);

/* Copy (sbuf,scount,stype) into (rbuf,rcount,rtype), as a local send/recv would
 * (used by the self channel and collectives).  Truncation → MPI_ERR_TRUNCATE
 * (the first rcount elements' worth of bytes are still copied).  Non-contiguous
 * on both sides is copied block to block without an intermediate buffer.
 * Equal sizes, both sides contiguous and no device memory provider: one
 * memcpy inline (the usual case in collectives, without the engine's calls). */
int wh_dtype_copy_any(const void *sbuf, size_t scount, const wh_dtype_t *st, void *rbuf, size_t rcount,
                      const wh_dtype_t *rt);
static inline int wh_dtype_copy(const void *sbuf, size_t scount, const wh_dtype_t *st, void *rbuf, size_t rcount,
                                const wh_dtype_t *rt)
{
    const char *s, *r;
    size_t n = st->size * scount;
    if (__builtin_expect(!wh_mem_nonhost, 1) && n == rt->size * rcount && wh_dtype_is_contig(st, scount, sbuf, &s) &&
        wh_dtype_is_contig(rt, rcount, rbuf, &r)) {
        if (n && s != r)
            memcpy((char *)r, s, n);
        return MPI_SUCCESS;
    }
    return wh_dtype_copy_any(sbuf, scount, st, rbuf, rcount, rt);
}

/* Reference counting for derived types held by pending operations
 * (no-ops for predefined types). */
void wh_dtype_addref(wh_dtype_t *t);
void wh_dtype_release(wh_dtype_t *t);

/* ---- constructors (used by src/mpi/datatype.c; also usable internally).
 * Displacements and strides are in bytes.  On success *out is a new
 * uncommitted derived type with urefs = refs = 1 and no contents recorded
 * (see wh_dtype_set_contents).  Errors: MPI_ERR_ARG/MPI_ERR_COUNT codes for
 * values whose byte arithmetic overflows, MPI_ERR_NO_MEM. */
int wh_dtype_create_contig(MPI_Count count, wh_dtype_t *old, wh_dtype_t **out);
int wh_dtype_create_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride, wh_dtype_t *old,
                            wh_dtype_t **out);
/* hindexed (types == NULL: every block is `old`) or struct (types[i]) */
int wh_dtype_create_blocks(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *displs,
                           wh_dtype_t *old, wh_dtype_t *const *types, wh_dtype_t **out);
int wh_dtype_create_resized(wh_dtype_t *old, MPI_Aint lb, MPI_Aint extent, wh_dtype_t **out);
/* order is MPI_ORDER_C or MPI_ORDER_FORTRAN; arguments already validated */
int wh_dtype_create_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                             const MPI_Count *starts, int order, wh_dtype_t *old, wh_dtype_t **out);
int wh_dtype_create_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                           const int *dargs, const int *psizes, int order, wh_dtype_t *old,
                           wh_dtype_t **out);
int wh_dtype_create_dup(wh_dtype_t *old, wh_dtype_t **out);

/* Record the constructor arguments for MPI_Type_get_envelope/get_contents
 * (copies the arrays, takes a reference on every derived type in types).
 * large != 0: the type was made by a _c constructor (counts in `counts`). */
int wh_dtype_set_contents(wh_dtype_t *t, int combiner, int large, int ni, const int *ints, int na,
                          const MPI_Aint *aints, int nc, const MPI_Count *counts, int nd,
                          const MPI_Datatype *types);
typedef struct wh_dtype_contents {
    int combiner, large;
    int ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
} wh_dtype_contents_t;
/* NULL for predefined types. */
const wh_dtype_contents_t *wh_dtype_contents(const wh_dtype_t *t);

/* Drop one user handle reference (MPI_Type_free).  The object lives on while
 * pending operations or other types hold internal references. */
void wh_dtype_user_free(wh_dtype_t *t);
/* Hand out one more user handle reference (MPI_Type_get_contents). */
void wh_dtype_user_addref(wh_dtype_t *t);
/* Any live derived object, even one whose user handle was freed (a type
 * recorded in another type's contents); NULL for predefined/invalid. */
wh_dtype_t *wh_dtype_get_derived_any(MPI_Datatype h);

/* Basic elements in the first `bytes` bytes of the stream of type t (any
 * number of elements): >= 0, or -1 if bytes does not end on a basic element
 * boundary. */
int64_t wh_dtype_elements(const wh_dtype_t *t, uint64_t bytes);
/* Inverse: stream bytes of the first nelem basic elements, or -1 if count
 * overflows.  Used by MPI_Status_set_elements. */
int64_t wh_dtype_elements_bytes(const wh_dtype_t *t, uint64_t nelem);

/* external32 (src/dtype/ext32.c): bytes of count elements of t in that
 * representation (MPI_ERR_COUNT code on overflow), and conversion of a whole
 * packed stream of (count, t) between native and external32 (the buffers
 * hold count * t->size and wh_dtype_ext32_bytes bytes; they must not overlap). */
int wh_dtype_ext32_bytes(const wh_dtype_t *t, MPI_Count count, size_t *bytes);
void wh_dtype_to_ext32(const wh_dtype_t *t, size_t count, const void *native, void *ext);
void wh_dtype_from_ext32(const wh_dtype_t *t, size_t count, const void *ext, void *native);

/* Name of a predefined type ("MPI_INT"), or "" for derived types. */
const char *wh_dtype_predef_name(MPI_Datatype h);
#endif
