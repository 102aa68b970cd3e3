/* Basic-element views of the packed stream: MPI_Get_elements counting and
 * its inverse for MPI_Status_set_elements (the external32 conversion walks
 * the stream the same way: ext32.c).
 *
 * Every derived type except struct is a sequence of whole copies of one
 * `base` type, so the stream of any type is walked by recursion over
 * (base, number of copies) and, for structs, over their parts. */
#include "dtype/dtype_impl.h"

#include <string.h>

static const wh_dtype_impl_t *im_of(const wh_dtype_t *t)
{
    return t->impl;
}

/* first member size of a predefined pair type (0 if not a pair) */
static size_t pair_first(wh_basic_t b)
{
    switch (b) {
    case WH_BT_FLOAT_INT: return sizeof(float);
    case WH_BT_DOUBLE_INT: return sizeof(double);
    case WH_BT_LONG_INT: return sizeof(long);
    case WH_BT_SHORT_INT: return sizeof(short);
    case WH_BT_LDOUBLE_INT: return sizeof(long double);
    case WH_BT_2INT: return sizeof(int);
    case WH_BT_2FLOAT: return sizeof(float);
    case WH_BT_2DOUBLE: return sizeof(double);
    default: return 0;
    }
}

static int64_t elems_part(const wh_dtype_t *t, uint64_t rem);

int64_t wh_dtype_elements(const wh_dtype_t *t, uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    if (t->size == 0)
        return -1;
    uint64_t q = bytes / t->size, r = bytes % t->size, n;
    if (__builtin_mul_overflow(q, t->nelem, &n) || n > INT64_MAX)
        return INT64_MAX;
    if (r) {
        int64_t p = elems_part(t, r);
        if (p < 0)
            return -1;
        if (n > (uint64_t)(INT64_MAX - p))
            return INT64_MAX;
        n += (uint64_t)p;
    }
    return (int64_t)n;
}

/* elements in the first rem bytes (0 < rem < size) of one element of t */
static int64_t elems_part(const wh_dtype_t *t, uint64_t rem)
{
    const wh_dtype_impl_t *im = im_of(t);
    if (t->predefined)
        return pair_first(t->basic) == rem ? 1 : -1;
    if (im->base)
        return wh_dtype_elements(im->base, rem);
    int64_t acc = 0;
    for (size_t i = 0; i < im->nparts; i++) {
        const wh_dtype_t *p = im->part_types[i];
        uint64_t psz = (uint64_t)im->part_bl[i] * p->size;
        if (rem < psz) {
            int64_t x = wh_dtype_elements(p, rem);
            return x < 0 ? -1 : acc + x;
        }
        acc += (int64_t)((uint64_t)im->part_bl[i] * p->nelem);
        rem -= psz;
    }
    return rem ? -1 : acc;
}

static int64_t bytes_part(const wh_dtype_t *t, uint64_t nel);

int64_t wh_dtype_elements_bytes(const wh_dtype_t *t, uint64_t nelem)
{
    if (nelem == 0)
        return 0;
    if (t->nelem == 0)
        return -1;
    uint64_t q = nelem / t->nelem, r = nelem % t->nelem, b;
    if (__builtin_mul_overflow(q, (uint64_t)t->size, &b) || b > INT64_MAX)
        return -1;
    if (r) {
        int64_t p = bytes_part(t, r);
        if (p < 0 || b > (uint64_t)(INT64_MAX - p))
            return -1;
        b += (uint64_t)p;
    }
    return (int64_t)b;
}

/* bytes of the first nel (0 < nel < nelem) basic elements of one element */
static int64_t bytes_part(const wh_dtype_t *t, uint64_t nel)
{
    const wh_dtype_impl_t *im = im_of(t);
    if (t->predefined)
        return (int64_t)pair_first(t->basic); /* only pairs have nelem > 1 */
    if (im->base)
        return wh_dtype_elements_bytes(im->base, nel);
    int64_t acc = 0;
    for (size_t i = 0; i < im->nparts; i++) {
        const wh_dtype_t *p = im->part_types[i];
        uint64_t pel = (uint64_t)im->part_bl[i] * p->nelem;
        if (nel < pel) {
            int64_t x = wh_dtype_elements_bytes(p, nel);
            return x < 0 ? -1 : acc + x;
        }
        acc += (int64_t)((uint64_t)im->part_bl[i] * p->size);
        nel -= pel;
    }
    return acc;
}
