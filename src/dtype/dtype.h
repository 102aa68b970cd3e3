/* Datatype engine interface.  Predefined types are resolved from their
 * MPICH-compatible handle values; derived types live in a handle table.
 *
 * Data movement works on the "packed stream" of (buf, count, type): the bytes
 * of the type map in order.  Channels pack/unpack any byte range of that stream
 * so large non-contiguous messages are pipelined without a full temporary copy. */
#ifndef WH_DTYPE_DTYPE_H
#define WH_DTYPE_DTYPE_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include "core/handle.h"

/* basic element kinds for reductions (what MPI_Op functions switch on) */
typedef enum {
    WH_BT_NONE = 0,  /* not a single basic type (struct of mixed types) */
    WH_BT_CHAR, WH_BT_SCHAR, WH_BT_UCHAR, WH_BT_BYTE, WH_BT_WCHAR,
    WH_BT_SHORT, WH_BT_USHORT, WH_BT_INT, WH_BT_UINT, WH_BT_LONG, WH_BT_ULONG,
    WH_BT_LLONG, WH_BT_ULLONG, WH_BT_FLOAT, WH_BT_DOUBLE, WH_BT_LDOUBLE,
    WH_BT_INT8, WH_BT_INT16, WH_BT_INT32, WH_BT_INT64,
    WH_BT_UINT8, WH_BT_UINT16, WH_BT_UINT32, WH_BT_UINT64,
    WH_BT_BOOL, WH_BT_CFLOAT, WH_BT_CDOUBLE, WH_BT_CLDOUBLE,
    WH_BT_AINT, WH_BT_OFFSET, WH_BT_COUNT, WH_BT_PACKED,
    /* pair types for MINLOC/MAXLOC */
    WH_BT_FLOAT_INT, WH_BT_DOUBLE_INT, WH_BT_LONG_INT, WH_BT_2INT, WH_BT_SHORT_INT,
    WH_BT_LDOUBLE_INT,
    WH_BT_COUNT_
} wh_basic_t;

typedef struct wh_dtype {
    wh_obj_t obj;
    size_t size;               /* bytes of data in one element */
    MPI_Aint lb, extent;       /* with MPI_LB/UB markers and resizing */
    MPI_Aint true_lb, true_extent;
    int contig;                /* one element is one contiguous block at buf+true_lb of size
                                  `size`, and size == extent (so count elements are contiguous) */
    int committed;
    int predefined;            /* builtin or pair type: cannot be freed */
    wh_basic_t basic;          /* if every element is basic type `basic` (count_of_basic
                                  = size / basic size), else WH_BT_NONE */
    size_t basic_size;
    char name[MPI_MAX_OBJECT_NAME];
    void *attrs;               /* attribute list (core attr code) */
    void *impl;                /* engine-private representation (dataloop/segments) */
} wh_dtype_t;

/* Resolve any handle (predefined or derived); NULL if invalid/freed.
 * Fast for predefined types. */
wh_dtype_t *wh_dtype_get(MPI_Datatype h);
int wh_dtype_init(void);      /* builds the predefined table; called by MPI_Init */
void wh_dtype_finalize(void);

/* Bytes in the packed stream of count elements. */
static inline size_t wh_dtype_bytes(const wh_dtype_t *t, size_t count) { return t->size * count; }

/* True when (buf,count,type) occupies one contiguous byte range starting at
 * buf + true_lb; then *start is that address. */
static inline int wh_dtype_is_contig(const wh_dtype_t *t, size_t count, const void *buf, const char **start)
{
    if (!t->contig && count > 1)
        return 0;
    if (!t->contig && count == 1 && !(t->size == (size_t)t->true_extent))
        return 0;
    *start = (const char *)buf + t->true_lb;
    return 1;
}

/* Copy bytes [offset, offset+len) of the packed stream of (buf,count,type)
 * into out (pack) or from in (unpack).  len may be any size; offsets need
 * not align with element boundaries.  Return MPI_SUCCESS. */
int wh_dtype_pack(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len);
int wh_dtype_unpack(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len);

/* Describe bytes [offset, offset+len) of the stream as up to maxiov iovecs
 * (addresses into buf).  Returns the number of iovecs filled and sets *covered
 * to the number of stream bytes they describe (may be < len if maxiov was
 * too small).  Used for single-copy (CMA) and network gather/scatter. */
int wh_dtype_iov(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, size_t len,
                 struct iovec *iov, int maxiov, size_t *covered);

/* Copy (sbuf,scount,stype) into (rbuf,rcount,rtype), as a local send/recv would
 * (used by the self channel and collectives).  Truncation → MPI_ERR_TRUNCATE. */
int wh_dtype_copy(const void *sbuf, size_t scount, const wh_dtype_t *st, void *rbuf, size_t rcount,
                  const wh_dtype_t *rt);

/* Reference counting for derived types held by pending operations. */
void wh_dtype_addref(wh_dtype_t *t);
void wh_dtype_release(wh_dtype_t *t);
#endif
