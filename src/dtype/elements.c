/* Basic-element views of the packed stream: MPI_Get_elements counting, its
 * inverse for MPI_Status_set_elements, and per-element byte swapping for the
 * external32 representation.
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

/* ---------- byte swapping ---------- */

static void swap_bytes(unsigned char *p, size_t k)
{
    for (size_t i = 0, j = k - 1; i < j; i++, j--) {
        unsigned char c = p[i];
        p[i] = p[j];
        p[j] = c;
    }
}

static void swap_run(unsigned char *p, size_t k, size_t n)
{
    if (k <= 1)
        return;
    for (size_t i = 0; i < n; i++, p += k)
        swap_bytes(p, k);
}

/* member sizes of one basic element: complex numbers and pairs swap per member */
static void members(const wh_dtype_t *t, size_t *m1, size_t *m2)
{
    size_t f = pair_first(t->basic);
    switch (t->basic) {
    case WH_BT_CFLOAT: case WH_BT_CDOUBLE: case WH_BT_CLDOUBLE:
        *m1 = *m2 = t->basic_size / 2;
        return;
    case WH_BT_BYTE: case WH_BT_PACKED: case WH_BT_CHAR: case WH_BT_SCHAR: case WH_BT_UCHAR:
        *m1 = 1, *m2 = 0;
        return;
    default:
        if (f) {
            *m1 = f;
            *m2 = t->basic_size - f;
        } else {
            *m1 = t->basic_size;
            *m2 = 0;
        }
    }
}

/* swap n whole elements of t starting at p; returns the bytes consumed */
static size_t swap_type(const wh_dtype_t *t, unsigned char *p, uint64_t n)
{
    size_t total = (size_t)(n * t->size);
    if (t->size == 0 || n == 0)
        return 0;
    if (t->basic != WH_BT_NONE && t->basic_size) {
        size_t m1, m2, cnt = total / t->basic_size;
        members(t, &m1, &m2);
        if (!m2) {
            swap_run(p, m1, cnt);
        } else {
            for (size_t i = 0; i < cnt; i++, p += m1 + m2) {
                swap_bytes(p, m1);
                swap_bytes(p + m1, m2);
            }
        }
        return total;
    }
    const wh_dtype_impl_t *im = im_of(t);
    if (im->base) {
        swap_type(im->base, p, n * (t->size / im->base->size));
        return total;
    }
    for (uint64_t e = 0; e < n; e++)
        for (size_t i = 0; i < im->nparts; i++)
            p += swap_type(im->part_types[i], p, (uint64_t)im->part_bl[i]);
    return total;
}

void wh_dtype_swap_stream(const wh_dtype_t *t, size_t count, void *stream)
{
    swap_type(t, stream, count);
}
