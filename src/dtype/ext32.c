/* The external32 data representation (MPI-4.1 section 14.5.2): every basic
 * element at the size the standard's table fixes, big-endian, IEEE formats.
 * Where that size differs from the native one the value is converted, as
 * MPICH does: MPI_LONG/MPI_UNSIGNED_LONG are 4 bytes (8 natively on LP64;
 * values are truncated when packed and sign-/zero-extended when unpacked),
 * MPI_WCHAR 2 bytes (4 natively), and MPI_LONG_DOUBLE (also the long double
 * complex types and MPI_REAL16) is IEEE binary128 (x87 extended natively on
 * x86; converted exactly, rounded to nearest when unpacking).
 *
 * Conversion works on the native packed stream of (count, type): the stream
 * is walked like MPI_Get_elements walks it, one basic element at a time. */
#include "dtype/dtype_impl.h"
#include "core/err.h"

#include <float.h>
#include <string.h>
#include <wchar.h>

enum { X_SWAP, X_SINT, X_UINT, X_LDBL };

/* one member of a basic element: native bytes, external32 bytes, conversion */
typedef struct {
    unsigned char nat, ext, conv;
} x32_t;

#define M(nat, ext, conv) ((x32_t){(unsigned char)(nat), (unsigned char)(ext), (unsigned char)(conv)})

/* members of basic element b (pairs and complex numbers have two); 0 if b
 * is not a basic kind */
static int members(wh_basic_t b, x32_t m[2])
{
    switch (b) {
    case WH_BT_CHAR: case WH_BT_SCHAR: case WH_BT_UCHAR: case WH_BT_BYTE: case WH_BT_PACKED:
    case WH_BT_INT8: case WH_BT_UINT8:
        m[0] = M(1, 1, X_SWAP);
        return 1;
    case WH_BT_BOOL:
        m[0] = M(sizeof(_Bool), 1, X_UINT);
        return 1;
    case WH_BT_WCHAR:
        m[0] = M(sizeof(wchar_t), 2, X_UINT);
        return 1;
    case WH_BT_SHORT: case WH_BT_USHORT: case WH_BT_INT16: case WH_BT_UINT16: case WH_BT_FLOAT16:
        m[0] = M(2, 2, X_SWAP);
        return 1;
    case WH_BT_INT: case WH_BT_UINT: case WH_BT_INT32: case WH_BT_UINT32: case WH_BT_FLOAT:
        m[0] = M(4, 4, X_SWAP);
        return 1;
    case WH_BT_LONG:
        m[0] = M(sizeof(long), 4, X_SINT);
        return 1;
    case WH_BT_ULONG:
        m[0] = M(sizeof(long), 4, X_UINT);
        return 1;
    case WH_BT_LLONG: case WH_BT_ULLONG: case WH_BT_INT64: case WH_BT_UINT64: case WH_BT_DOUBLE:
    case WH_BT_AINT: case WH_BT_OFFSET: case WH_BT_COUNT:
        m[0] = M(8, 8, X_SWAP);
        return 1;
    case WH_BT_LDOUBLE:
        m[0] = M(sizeof(long double), 16, X_LDBL);
        return 1;
    case WH_BT_CFLOAT:
        m[0] = m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_CDOUBLE:
        m[0] = m[1] = M(8, 8, X_SWAP);
        return 2;
    case WH_BT_CLDOUBLE:
        m[0] = m[1] = M(sizeof(long double), 16, X_LDBL);
        return 2;
    case WH_BT_FLOAT_INT: case WH_BT_2INT: case WH_BT_2FLOAT:
        m[0] = m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_DOUBLE_INT:
        m[0] = M(8, 8, X_SWAP), m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_LONG_INT:
        m[0] = M(sizeof(long), 4, X_SINT), m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_SHORT_INT:
        m[0] = M(2, 2, X_SWAP), m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_LDOUBLE_INT:
        m[0] = M(sizeof(long double), 16, X_LDBL), m[1] = M(4, 4, X_SWAP);
        return 2;
    case WH_BT_2DOUBLE:
        m[0] = m[1] = M(8, 8, X_SWAP);
        return 2;
    default:
        return 0;
    }
}

/* external32 bytes of one basic element of kind b (0 if unknown) */
static size_t basic_ext(wh_basic_t b)
{
    x32_t m[2];
    int n = members(b, m);
    return n == 0 ? 0 : n == 1 ? m[0].ext : (size_t)m[0].ext + m[1].ext;
}

static const wh_dtype_impl_t *im_of(const wh_dtype_t *t)
{
    return t->impl;
}

/* external32 bytes of one element of t */
static size_t elem_ext(const wh_dtype_t *t)
{
    if (t->size == 0)
        return 0;
    if (t->basic != WH_BT_NONE && t->basic_size)
        return t->size / t->basic_size * basic_ext(t->basic);
    const wh_dtype_impl_t *im = im_of(t);
    if (im->base)
        return t->size / im->base->size * elem_ext(im->base);
    size_t n = 0;
    for (size_t i = 0; i < im->nparts; i++)
        n += (size_t)im->part_bl[i] * elem_ext(im->part_types[i]);
    return n;
}

int wh_dtype_ext32_bytes(const wh_dtype_t *t, MPI_Count count, size_t *bytes)
{
    size_t b;
    if (count < 0)
        return wh_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    size_t e = elem_ext(t);
    if (__builtin_mul_overflow((size_t)count, e, &b) || b > (size_t)INT64_MAX)
        return wh_error(MPI_ERR_COUNT, "count %lld of a datatype of %zu external32 bytes exceeds the addressable size",
                        (long long)count, e);
    *bytes = b;
    return MPI_SUCCESS;
}

/* ---------- one value ---------- */

static int host_big_endian(void)
{
    return __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;
}

/* big-endian k bytes <-> host integer of up to 8 bytes */
static uint64_t load_be(const unsigned char *p, size_t k)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v = v << 8 | p[i];
    return v;
}

static void store_be(unsigned char *p, size_t k, uint64_t v)
{
    for (size_t i = k; i-- > 0; v >>= 8)
        p[i] = (unsigned char)v;
}

static uint64_t load_host(const unsigned char *p, size_t k, int sign)
{
    switch (k) {
    case 1: { uint8_t x; memcpy(&x, p, 1); return sign ? (uint64_t)(int64_t)(int8_t)x : x; }
    case 2: { uint16_t x; memcpy(&x, p, 2); return sign ? (uint64_t)(int64_t)(int16_t)x : x; }
    case 4: { uint32_t x; memcpy(&x, p, 4); return sign ? (uint64_t)(int64_t)(int32_t)x : x; }
    default: { uint64_t x; memcpy(&x, p, 8); return x; }
    }
}

static void store_host(unsigned char *p, size_t k, uint64_t v)
{
    switch (k) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); return; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); return; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); return; }
    default: memcpy(p, &v, 8); return;
    }
}

static void copy_swapped(unsigned char *dst, const unsigned char *src, size_t k)
{
    if (host_big_endian()) {
        memcpy(dst, src, k);
        return;
    }
    for (size_t i = 0; i < k; i++)
        dst[i] = src[k - 1 - i];
}

#if LDBL_MANT_DIG == 64
/* x87 extended (64-bit significand with explicit integer bit, 15-bit
 * exponent, little-endian in a 16-byte slot) <-> IEEE binary128 (same
 * exponent bias, 112-bit fraction), big-endian. */
static void ldbl_to_ext(unsigned char *out, const unsigned char *nat)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, nat, 8);
    memcpy(&se, nat + 8, 2);
    uint64_t frac63 = mant & 0x7fffffffffffffffull; /* below the integer bit */
    uint64_t hi = (uint64_t)se << 48 | frac63 >> 15;
    uint64_t lo = frac63 << 49;
    store_be(out, 8, hi);
    store_be(out + 8, 8, lo);
}

static void ldbl_from_ext(unsigned char *nat, const unsigned char *in)
{
    uint64_t hi = load_be(in, 8), lo = load_be(in + 8, 8);
    uint16_t se = (uint16_t)(hi >> 48);
    uint32_t exp = se & 0x7fffu;
    uint64_t frac63 = (hi & 0xffffffffffffull) << 15 | lo >> 49;
    uint64_t rest = lo & ((1ull << 49) - 1), half = 1ull << 48;
    if (exp != 0x7fff && (rest > half || (rest == half && (frac63 & 1)))) {
        if (++frac63 >> 63) { /* carried into the integer bit: next binade */
            frac63 = 0;
            exp++;
        }
    } else if (exp == 0x7fff && !frac63 && (hi << 16 | lo)) {
        frac63 = 1ull << 62; /* a NaN whose payload lived in the dropped bits */
    }
    uint64_t mant = (exp ? 1ull << 63 : 0) | frac63;
    se = (uint16_t)((se & 0x8000u) | exp);
    memset(nat, 0, sizeof(long double));
    memcpy(nat, &mant, 8);
    memcpy(nat + 8, &se, 2);
}
#elif LDBL_MANT_DIG == 113
/* long double is binary128 already */
static void ldbl_to_ext(unsigned char *out, const unsigned char *nat) { copy_swapped(out, nat, 16); }
static void ldbl_from_ext(unsigned char *nat, const unsigned char *in) { copy_swapped(nat, in, 16); }
#else
#error "external32: unsupported long double format (need x87 extended or IEEE binary128)"
#endif

static void value_to_ext(unsigned char *out, const unsigned char *nat, x32_t m)
{
    switch (m.conv) {
    case X_SINT:
    case X_UINT:
        store_be(out, m.ext, load_host(nat, m.nat, m.conv == X_SINT));
        return;
    case X_LDBL:
        ldbl_to_ext(out, nat);
        return;
    default:
        copy_swapped(out, nat, m.nat);
    }
}

static void value_from_ext(unsigned char *nat, const unsigned char *in, x32_t m)
{
    switch (m.conv) {
    case X_SINT: {
        uint64_t v = load_be(in, m.ext), sbit = 1ull << (8 * m.ext - 1);
        store_host(nat, m.nat, (v ^ sbit) - sbit); /* sign-extend */
        return;
    }
    case X_UINT:
        store_host(nat, m.nat, load_be(in, m.ext));
        return;
    case X_LDBL:
        ldbl_from_ext(nat, in);
        return;
    default:
        copy_swapped(nat, in, m.nat);
    }
}

/* ---------- walking the stream ---------- */

typedef struct {
    const unsigned char *src;
    unsigned char *dst;
    int to_ext;
} x32_walk_t;

static void walk(x32_walk_t *w, const wh_dtype_t *t, uint64_t n)
{
    if (t->size == 0 || n == 0)
        return;
    if (t->basic != WH_BT_NONE && t->basic_size) {
        x32_t m[2];
        int nm = members(t->basic, m);
        uint64_t cnt = n * (t->size / t->basic_size);
        for (uint64_t i = 0; i < cnt; i++)
            for (int j = 0; j < nm; j++) {
                if (w->to_ext) {
                    value_to_ext(w->dst, w->src, m[j]);
                    w->src += m[j].nat, w->dst += m[j].ext;
                } else {
                    value_from_ext(w->dst, w->src, m[j]);
                    w->src += m[j].ext, w->dst += m[j].nat;
                }
            }
        return;
    }
    const wh_dtype_impl_t *im = im_of(t);
    if (im->base) {
        walk(w, im->base, n * (t->size / im->base->size));
        return;
    }
    for (uint64_t e = 0; e < n; e++)
        for (size_t i = 0; i < im->nparts; i++)
            walk(w, im->part_types[i], (uint64_t)im->part_bl[i]);
}

void wh_dtype_to_ext32(const wh_dtype_t *t, size_t count, const void *native, void *ext)
{
    x32_walk_t w = {native, ext, 1};
    walk(&w, t, count);
}

void wh_dtype_from_ext32(const wh_dtype_t *t, size_t count, const void *ext, void *native)
{
    x32_walk_t w = {ext, native, 0};
    walk(&w, t, count);
}
