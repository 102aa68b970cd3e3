/* Reduction operation objects, the op/type rules of the standard, and
 * wh_op_apply: dispatch to the per-(op, kind) loops of kernels.c over
 * contiguous or non-contiguous buffers, or call the user's function. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/err.h"
#include "op/kern.h"

wh_tab_t wh_op_tab;

#define WH_OP_BUILTIN(i) [i] = {.obj = {.handle = WH_HMAKE(WH_HK_BUILTIN, WH_H_OP, i), .refs = 1}, .builtin = i, .commute = 1}
static wh_op_t builtin_ops[WH_OPI_COUNT] = {
    WH_OP_BUILTIN(WH_OPI_MAX),    WH_OP_BUILTIN(WH_OPI_MIN),    WH_OP_BUILTIN(WH_OPI_SUM),
    WH_OP_BUILTIN(WH_OPI_PROD),   WH_OP_BUILTIN(WH_OPI_LAND),   WH_OP_BUILTIN(WH_OPI_BAND),
    WH_OP_BUILTIN(WH_OPI_LOR),    WH_OP_BUILTIN(WH_OPI_BOR),    WH_OP_BUILTIN(WH_OPI_LXOR),
    WH_OP_BUILTIN(WH_OPI_BXOR),   WH_OP_BUILTIN(WH_OPI_MINLOC), WH_OP_BUILTIN(WH_OPI_MAXLOC),
    WH_OP_BUILTIN(WH_OPI_REPLACE), WH_OP_BUILTIN(WH_OPI_NO_OP),
};

static const char *const op_names[WH_OPI_COUNT] = {
    [WH_OPI_MAX] = "MPI_MAX",       [WH_OPI_MIN] = "MPI_MIN",         [WH_OPI_SUM] = "MPI_SUM",
    [WH_OPI_PROD] = "MPI_PROD",     [WH_OPI_LAND] = "MPI_LAND",       [WH_OPI_BAND] = "MPI_BAND",
    [WH_OPI_LOR] = "MPI_LOR",       [WH_OPI_BOR] = "MPI_BOR",         [WH_OPI_LXOR] = "MPI_LXOR",
    [WH_OPI_BXOR] = "MPI_BXOR",     [WH_OPI_MINLOC] = "MPI_MINLOC",   [WH_OPI_MAXLOC] = "MPI_MAXLOC",
    [WH_OPI_REPLACE] = "MPI_REPLACE", [WH_OPI_NO_OP] = "MPI_NO_OP",
};

int wh_op_init(void)
{
    if (wh_op_tab.htype != WH_H_OP)
        wh_tab_init(&wh_op_tab, WH_H_OP, sizeof(wh_op_t));
    return MPI_SUCCESS;
}

void wh_op_finalize(void)
{
    if (wh_op_tab.htype == WH_H_OP)
        wh_tab_destroy(&wh_op_tab);
}

wh_op_t *wh_op_get(MPI_Op h)
{
    if (WH_HKIND(h) == WH_HK_BUILTIN) {
        uint32_t i = WH_HINDEX(h);
        if (WH_HTYPE(h) != WH_H_OP || i < WH_OPI_MAX || i >= WH_OPI_COUNT)
            return NULL;
        return &builtin_ops[i];
    }
    return wh_tab_get(&wh_op_tab, h);
}

const char *wh_op_name(const wh_op_t *op)
{
    return op->builtin > 0 ? op_names[op->builtin] : "user-defined op";
}

wh_op_t *wh_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute)
{
    wh_op_init();
    wh_op_t *op = wh_tab_alloc(&wh_op_tab);
    if (!op)
        return NULL;
    op->builtin = -1;
    op->commute = commute != 0;
    op->fn = fn;
    op->fn_c = fn_c;
    return op;
}

void wh_op_addref(wh_op_t *op)
{
    if (op->builtin < 0)
        op->obj.refs++;
}

void wh_op_release(wh_op_t *op)
{
    if (op->builtin < 0 && --op->obj.refs == 0)
        wh_tab_free(&wh_op_tab, op);
}

/* ---------- which kind and group a datatype is ---------- */
typedef struct {
    int kind, group;
} wh_tclass_t;

#define WH_KSIGNED(T) (sizeof(T) == 1 ? WH_K_I8 : sizeof(T) == 2 ? WH_K_I16 : sizeof(T) == 4 ? WH_K_I32 : WH_K_I64)
#define WH_KUNSIGNED(T) (sizeof(T) == 1 ? WH_K_U8 : sizeof(T) == 2 ? WH_K_U16 : sizeof(T) == 4 ? WH_K_U32 : WH_K_U64)
#define WH_C(k, g) ((wh_tclass_t){(k), (g)})

/* Predefined types by handle: the groups of MPI-4.1 section 6.9.2, widened
 * as MPICH widens them (so programs that run on MPICH run here): MPI_CHAR
 * counts as a C integer, MPI_CHARACTER as a Fortran integer, and the logical
 * ops also take Fortran integers, MPI_AINT/MPI_OFFSET/MPI_COUNT and floating
 * point (wh_opk_groups).  MPICH refuses the rest, and so does wharf. */
static int class_of_handle(int h, wh_tclass_t *out)
{
    switch (h) {
    /* C integer */
    case MPI_CHAR: *out = WH_C(CHAR_MIN < 0 ? WH_K_I8 : WH_K_U8, WH_G_CINT); return 1;
    case MPI_SIGNED_CHAR: *out = WH_C(WH_K_I8, WH_G_CINT); return 1;
    case MPI_UNSIGNED_CHAR: *out = WH_C(WH_K_U8, WH_G_CINT); return 1;
    case MPI_SHORT: *out = WH_C(WH_KSIGNED(short), WH_G_CINT); return 1;
    case MPI_UNSIGNED_SHORT: *out = WH_C(WH_KUNSIGNED(short), WH_G_CINT); return 1;
    case MPI_INT: *out = WH_C(WH_KSIGNED(int), WH_G_CINT); return 1;
    case MPI_UNSIGNED: *out = WH_C(WH_KUNSIGNED(int), WH_G_CINT); return 1;
    case MPI_LONG: *out = WH_C(WH_KSIGNED(long), WH_G_CINT); return 1;
    case MPI_UNSIGNED_LONG: *out = WH_C(WH_KUNSIGNED(long), WH_G_CINT); return 1;
    case MPI_LONG_LONG_INT: *out = WH_C(WH_KSIGNED(long long), WH_G_CINT); return 1;
    case MPI_UNSIGNED_LONG_LONG: *out = WH_C(WH_KUNSIGNED(long long), WH_G_CINT); return 1;
    case MPI_INT8_T: *out = WH_C(WH_K_I8, WH_G_CINT); return 1;
    case MPI_INT16_T: *out = WH_C(WH_K_I16, WH_G_CINT); return 1;
    case MPI_INT32_T: *out = WH_C(WH_K_I32, WH_G_CINT); return 1;
    case MPI_INT64_T: *out = WH_C(WH_K_I64, WH_G_CINT); return 1;
    case MPI_UINT8_T: *out = WH_C(WH_K_U8, WH_G_CINT); return 1;
    case MPI_UINT16_T: *out = WH_C(WH_K_U16, WH_G_CINT); return 1;
    case MPI_UINT32_T: *out = WH_C(WH_K_U32, WH_G_CINT); return 1;
    case MPI_UINT64_T: *out = WH_C(WH_K_U64, WH_G_CINT); return 1;
    /* Fortran integer */
    case MPI_INTEGER: *out = WH_C(WH_K_I32, WH_G_FINT); return 1;
    case MPI_CHARACTER: *out = WH_C(CHAR_MIN < 0 ? WH_K_I8 : WH_K_U8, WH_G_FINT); return 1;
    case MPI_INTEGER1: *out = WH_C(WH_K_I8, WH_G_FINT); return 1;
    case MPI_INTEGER2: *out = WH_C(WH_K_I16, WH_G_FINT); return 1;
    case MPI_INTEGER4: *out = WH_C(WH_K_I32, WH_G_FINT); return 1;
    case MPI_INTEGER8: *out = WH_C(WH_K_I64, WH_G_FINT); return 1;
    /* floating point */
    case MPI_FLOAT: *out = WH_C(WH_K_F32, WH_G_FLOAT); return 1;
    case MPI_DOUBLE: *out = WH_C(WH_K_F64, WH_G_FLOAT); return 1;
    case MPI_LONG_DOUBLE: *out = WH_C(WH_K_F80, WH_G_FLOAT); return 1;
    case MPI_REAL: *out = WH_C(WH_K_F32, WH_G_FLOAT); return 1;
    case MPI_DOUBLE_PRECISION: *out = WH_C(WH_K_F64, WH_G_FLOAT); return 1;
    case MPI_REAL4: *out = WH_C(WH_K_F32, WH_G_FLOAT); return 1;
    case MPI_REAL8: *out = WH_C(WH_K_F64, WH_G_FLOAT); return 1;
    case MPIX_C_FLOAT16: *out = WH_C(WH_K_F16, WH_G_FLOAT); return 1;
#ifdef __SIZEOF_FLOAT128__
    case MPI_REAL16: *out = WH_C(WH_K_F128, WH_G_FLOAT); return 1;
#endif
    /* logical */
    case MPI_LOGICAL: *out = WH_C(WH_K_I32, WH_G_LOGICAL); return 1;
    case MPI_C_BOOL: *out = WH_C(WH_K_U8, WH_G_LOGICAL); return 1;
    case MPI_CXX_BOOL: *out = WH_C(WH_K_U8, WH_G_LOGICAL); return 1;
    /* complex */
    case MPI_C_FLOAT_COMPLEX: *out = WH_C(WH_K_C32, WH_G_COMPLEX); return 1;
    case MPI_C_DOUBLE_COMPLEX: *out = WH_C(WH_K_C64, WH_G_COMPLEX); return 1;
    case MPI_C_LONG_DOUBLE_COMPLEX: *out = WH_C(WH_K_C80, WH_G_COMPLEX); return 1;
    case MPI_CXX_FLOAT_COMPLEX: *out = WH_C(WH_K_C32, WH_G_COMPLEX); return 1;
    case MPI_CXX_DOUBLE_COMPLEX: *out = WH_C(WH_K_C64, WH_G_COMPLEX); return 1;
    case MPI_CXX_LONG_DOUBLE_COMPLEX: *out = WH_C(WH_K_C80, WH_G_COMPLEX); return 1;
    case MPI_COMPLEX: *out = WH_C(WH_K_C32, WH_G_COMPLEX); return 1;
    case MPI_DOUBLE_COMPLEX: *out = WH_C(WH_K_C64, WH_G_COMPLEX); return 1;
    case MPI_COMPLEX8: *out = WH_C(WH_K_C32, WH_G_COMPLEX); return 1;
    case MPI_COMPLEX16: *out = WH_C(WH_K_C64, WH_G_COMPLEX); return 1;
#ifdef __SIZEOF_FLOAT128__
    case MPI_COMPLEX32: *out = WH_C(WH_K_C128, WH_G_COMPLEX); return 1;
#endif
    /* byte */
    case MPI_BYTE: *out = WH_C(WH_K_U8, WH_G_BYTE); return 1;
    /* multi-language types */
    case MPI_AINT: *out = WH_C(WH_KSIGNED(MPI_Aint), WH_G_MULTI); return 1;
    case MPI_OFFSET: *out = WH_C(WH_KSIGNED(MPI_Offset), WH_G_MULTI); return 1;
    case MPI_COUNT: *out = WH_C(WH_KSIGNED(MPI_Count), WH_G_MULTI); return 1;
    /* value-index pairs */
    case MPI_FLOAT_INT: *out = WH_C(WH_K_FLOAT_INT, WH_G_PAIR); return 1;
    case MPI_DOUBLE_INT: *out = WH_C(WH_K_DOUBLE_INT, WH_G_PAIR); return 1;
    case MPI_LONG_INT: *out = WH_C(WH_K_LONG_INT, WH_G_PAIR); return 1;
    case MPI_SHORT_INT: *out = WH_C(WH_K_SHORT_INT, WH_G_PAIR); return 1;
    case MPI_LONG_DOUBLE_INT: *out = WH_C(WH_K_LDOUBLE_INT, WH_G_PAIR); return 1;
    case MPI_2INT: *out = WH_C(WH_K_2INT, WH_G_PAIR); return 1;
    case MPI_2INTEGER: *out = WH_C(WH_K_2INT, WH_G_PAIR); return 1;
    case MPI_2REAL: *out = WH_C(WH_K_2FLOAT, WH_G_PAIR); return 1;
    case MPI_2DOUBLE_PRECISION: *out = WH_C(WH_K_2DOUBLE, WH_G_PAIR); return 1;
    /* no reduction is defined on these */
    case MPI_WCHAR:
    case MPI_PACKED:
    case MPI_LB:
    case MPI_UB: *out = WH_C(WH_K_NONE, 0); return 1;
    default: return 0;
    }
}

/* Derived types: the basic type all their elements share. */
static wh_tclass_t class_of_basic(wh_basic_t b)
{
    switch (b) {
    case WH_BT_CHAR: return WH_C(CHAR_MIN < 0 ? WH_K_I8 : WH_K_U8, WH_G_CINT);
    case WH_BT_SCHAR: return WH_C(WH_K_I8, WH_G_CINT);
    case WH_BT_UCHAR: return WH_C(WH_K_U8, WH_G_CINT);
    case WH_BT_SHORT: return WH_C(WH_KSIGNED(short), WH_G_CINT);
    case WH_BT_USHORT: return WH_C(WH_KUNSIGNED(short), WH_G_CINT);
    case WH_BT_INT: return WH_C(WH_KSIGNED(int), WH_G_CINT);
    case WH_BT_UINT: return WH_C(WH_KUNSIGNED(int), WH_G_CINT);
    case WH_BT_LONG: return WH_C(WH_KSIGNED(long), WH_G_CINT);
    case WH_BT_ULONG: return WH_C(WH_KUNSIGNED(long), WH_G_CINT);
    case WH_BT_LLONG: return WH_C(WH_KSIGNED(long long), WH_G_CINT);
    case WH_BT_ULLONG: return WH_C(WH_KUNSIGNED(long long), WH_G_CINT);
    case WH_BT_INT8: return WH_C(WH_K_I8, WH_G_CINT);
    case WH_BT_INT16: return WH_C(WH_K_I16, WH_G_CINT);
    case WH_BT_INT32: return WH_C(WH_K_I32, WH_G_CINT);
    case WH_BT_INT64: return WH_C(WH_K_I64, WH_G_CINT);
    case WH_BT_UINT8: return WH_C(WH_K_U8, WH_G_CINT);
    case WH_BT_UINT16: return WH_C(WH_K_U16, WH_G_CINT);
    case WH_BT_UINT32: return WH_C(WH_K_U32, WH_G_CINT);
    case WH_BT_UINT64: return WH_C(WH_K_U64, WH_G_CINT);
    case WH_BT_FLOAT: return WH_C(WH_K_F32, WH_G_FLOAT);
    case WH_BT_DOUBLE: return WH_C(WH_K_F64, WH_G_FLOAT);
    case WH_BT_LDOUBLE: return WH_C(WH_K_F80, WH_G_FLOAT);
    case WH_BT_FLOAT16: return WH_C(WH_K_F16, WH_G_FLOAT);
    case WH_BT_BOOL: return WH_C(WH_K_U8, WH_G_LOGICAL);
    case WH_BT_CFLOAT: return WH_C(WH_K_C32, WH_G_COMPLEX);
    case WH_BT_CDOUBLE: return WH_C(WH_K_C64, WH_G_COMPLEX);
    case WH_BT_CLDOUBLE: return WH_C(WH_K_C80, WH_G_COMPLEX);
    case WH_BT_BYTE: return WH_C(WH_K_U8, WH_G_BYTE);
    case WH_BT_AINT:
    case WH_BT_OFFSET:
    case WH_BT_COUNT: return WH_C(WH_K_I64, WH_G_MULTI);
    case WH_BT_FLOAT_INT: return WH_C(WH_K_FLOAT_INT, WH_G_PAIR);
    case WH_BT_DOUBLE_INT: return WH_C(WH_K_DOUBLE_INT, WH_G_PAIR);
    case WH_BT_LONG_INT: return WH_C(WH_K_LONG_INT, WH_G_PAIR);
    case WH_BT_2INT: return WH_C(WH_K_2INT, WH_G_PAIR);
    case WH_BT_SHORT_INT: return WH_C(WH_K_SHORT_INT, WH_G_PAIR);
    case WH_BT_LDOUBLE_INT: return WH_C(WH_K_LDOUBLE_INT, WH_G_PAIR);
    case WH_BT_2FLOAT: return WH_C(WH_K_2FLOAT, WH_G_PAIR);
    case WH_BT_2DOUBLE: return WH_C(WH_K_2DOUBLE, WH_G_PAIR);
    default: return WH_C(WH_K_NONE, 0);
    }
}

static wh_tclass_t classify(const wh_dtype_t *t)
{
    wh_tclass_t c;
    if (t->predefined && class_of_handle(t->obj.handle, &c))
        return c;
    c = class_of_basic(t->basic);
    /* the type must be a whole number of elements of the kind */
    if (c.kind != WH_K_NONE && t->size % wh_opk_dsize[c.kind] != 0)
        c = WH_C(WH_K_NONE, 0);
    return c;
}

int wh_op_int_bytes(const wh_dtype_t *t, int *sgn)
{
    wh_tclass_t c = classify(t);
    if (c.kind < WH_K_I8 || c.kind > WH_K_U64 || (size_t)t->size != wh_opk_size[c.kind])
        return 0;
    *sgn = c.kind == WH_K_I8 || c.kind == WH_K_I16 || c.kind == WH_K_I32 || c.kind == WH_K_I64;
    return wh_opk_size[c.kind];
}

static int op_error(const wh_op_t *op, const wh_dtype_t *t, const char *why)
{
    const char *tn = t->name[0] ? t->name : "(unnamed derived datatype)";
    return wh_error(MPI_ERR_OP, "%s is not defined for datatype %s%s", wh_op_name(op), tn, why);
}

int wh_op_check(const wh_op_t *op, const wh_dtype_t *t)
{
    if (op->builtin < 0 || op->builtin == WH_OPI_REPLACE || op->builtin == WH_OPI_NO_OP)
        return MPI_SUCCESS;
    wh_tclass_t c = classify(t);
    if (c.kind != WH_K_NONE && (wh_opk_groups[op->builtin] & c.group) && wh_opk_table[op->builtin][c.kind])
        return MPI_SUCCESS;
    if (c.kind == WH_K_NONE && !t->predefined)
        return op_error(op, t, " (predefined ops need a type whose elements are all of one allowed basic type)");
    if (op->builtin == WH_OPI_MINLOC || op->builtin == WH_OPI_MAXLOC)
        return op_error(op, t, " (it needs a value-index pair type such as MPI_DOUBLE_INT or MPI_2INT)");
    return op_error(op, t, "");
}

int wh_op_check_reduce(const wh_op_t *op, const wh_dtype_t *t)
{
    if (op->builtin == WH_OPI_REPLACE || op->builtin == WH_OPI_NO_OP)
        return wh_error(MPI_ERR_OP, "%s may only be used in one-sided accumulate operations, not in reductions",
                        wh_op_name(op));
    return wh_op_check(op, t);
}

/* ---------- applying ---------- */
#define WH_BOUNCE 4096

/* n elements; falls back to aligned bounce buffers for misaligned data
 * (e.g. a struct type that places doubles at odd offsets). */
static void run(wh_opk_fn *fn, int kind, const char *a, char *b, size_t n)
{
    size_t ks = wh_opk_size[kind], al = wh_opk_align[kind];
    if ((((uintptr_t)a | (uintptr_t)b) & (al - 1)) == 0) {
        fn(a, b, n);
        return;
    }
    _Alignas(64) char ba[WH_BOUNCE], bb[WH_BOUNCE];
    size_t per = WH_BOUNCE / ks;
    while (n > 0) {
        size_t m = n < per ? n : per;
        memcpy(ba, a, m * ks);
        memcpy(bb, b, m * ks);
        fn(ba, bb, m);
        memcpy(b, bb, m * ks);
        a += m * ks;
        b += m * ks;
        n -= m;
    }
}

#define WH_OP_IOV 32

/* One piece of `len` data bytes at a and b, a whole number of elements.
 * Pair elements inside derived types are data without their padding, so
 * they go one at a time through an aligned element. */
static int run_piece(wh_opk_fn *fn, int kind, const char *a, char *b, size_t len)
{
    size_t ds = wh_opk_dsize[kind];
    if (len % ds)
        return wh_error(MPI_ERR_INTERN, "datatype segment of %zu bytes is not a whole number of %zu-byte elements",
                        len, ds);
    if (ds == wh_opk_size[kind]) {
        run(fn, kind, a, b, len / ds);
        return MPI_SUCCESS;
    }
    _Alignas(64) char ea[64], eb[64];
    for (size_t k = 0; k < len; k += ds) {
        memcpy(ea, a + k, ds);
        memcpy(eb, b + k, ds);
        fn(ea, eb, 1);
        memcpy(b + k, eb, ds);
    }
    return MPI_SUCCESS;
}

/* Walk the packed stream of both buffers (same type, so same stream) in
 * windows of iovecs and apply the loop to each common piece. */
static int apply_noncontig(wh_opk_fn *fn, int kind, const void *in, void *inout, size_t count, const wh_dtype_t *t)
{
    size_t total = count * t->size, off = 0;
    struct iovec va[WH_OP_IOV], vb[WH_OP_IOV];
    while (off < total) {
        size_t ca = 0, cb = 0;
        int na = wh_dtype_iov(in, count, t, off, total - off, va, WH_OP_IOV, &ca);
        int nb = wh_dtype_iov(inout, count, t, off, ca, vb, WH_OP_IOV, &cb);
        if (na <= 0 || nb <= 0 || cb == 0)
            return wh_error(MPI_ERR_INTERN, "datatype engine returned no iovecs at offset %zu of %zu", off, total);
        size_t done = 0, ua = 0, ub = 0;
        int i = 0, j = 0;
        while (done < cb && i < na && j < nb) {
            size_t ra = va[i].iov_len - ua, rb = vb[j].iov_len - ub;
            size_t piece = ra < rb ? ra : rb;
            if (piece > cb - done)
                piece = cb - done;
            int rc = run_piece(fn, kind, (const char *)va[i].iov_base + ua, (char *)vb[j].iov_base + ub, piece);
            if (rc != MPI_SUCCESS)
                return rc;
            done += piece;
            ua += piece;
            ub += piece;
            if (ua == va[i].iov_len) {
                i++;
                ua = 0;
            }
            if (ub == vb[j].iov_len) {
                j++;
                ub = 0;
            }
        }
        off += done;
        if (done == 0)
            return wh_error(MPI_ERR_INTERN, "no progress applying op at offset %zu", off);
    }
    return MPI_SUCCESS;
}

static void apply_user(const wh_op_t *op, const void *in, void *inout, size_t count, MPI_Datatype th,
                       const wh_dtype_t *t)
{
    MPI_Datatype d = th;
    if (op->fn_c) {
        MPI_Count len = (MPI_Count)count;
        op->fn_c((void *)(uintptr_t)in, inout, &len, &d);
        return;
    }
    const char *a = in;
    char *b = inout;
    while (count > 0) {
        int len = count > (size_t)INT_MAX ? INT_MAX : (int)count;
        op->fn((void *)(uintptr_t)a, b, &len, &d);
        a += (MPI_Aint)len * t->extent;
        b += (MPI_Aint)len * t->extent;
        count -= (size_t)len;
    }
}

int wh_op_apply(const wh_op_t *op, const void *in, void *inout, size_t count, MPI_Datatype th, const wh_dtype_t *t)
{
    if (count == 0 || t->size == 0 || op->builtin == WH_OPI_NO_OP)
        return MPI_SUCCESS;
    if (op->builtin < 0) {
        apply_user(op, in, inout, count, th, t);
        return MPI_SUCCESS;
    }
    if (op->builtin == WH_OPI_REPLACE)
        return wh_dtype_copy(in, count, t, inout, count, t);
    wh_tclass_t c = classify(t);
    wh_opk_fn *fn = c.kind != WH_K_NONE && (wh_opk_groups[op->builtin] & c.group) ? wh_opk_table[op->builtin][c.kind]
                                                                                  : NULL;
    if (!fn)
        return wh_op_check(op, t);
    size_t ks = wh_opk_size[c.kind];
    /* one natural element per extent (every predefined type, pairs included) */
    if (t->extent == (MPI_Aint)ks && t->true_lb == 0 && (t->size == ks || t->size == wh_opk_dsize[c.kind])) {
        run(fn, c.kind, in, inout, count);
        return MPI_SUCCESS;
    }
    const char *a, *b;
    if (wh_opk_dsize[c.kind] == ks && wh_dtype_is_contig(t, count, in, &a) && wh_dtype_is_contig(t, count, inout, &b)) {
        run(fn, c.kind, a, (char *)(uintptr_t)b, count * t->size / ks);
        return MPI_SUCCESS;
    }
    return apply_noncontig(fn, c.kind, in, inout, count, t);
}

int wh_op_apply3(const wh_op_t *op, const void *in, const void *b, void *out, size_t count, MPI_Datatype th,
                 const wh_dtype_t *t)
{
    if (count && t->size && op->builtin >= 0 && op->builtin != WH_OPI_REPLACE && op->builtin != WH_OPI_NO_OP) {
        wh_tclass_t c = classify(t);
        wh_opk3_fn *fn = c.kind != WH_K_NONE && (wh_opk_groups[op->builtin] & c.group)
                             ? wh_opk3_table[op->builtin][c.kind]
                             : NULL;
        size_t ks = fn ? wh_opk_size[c.kind] : 0, al = fn ? wh_opk_align[c.kind] : 1;
        if (fn && t->extent == (MPI_Aint)ks && t->true_lb == 0 &&
            (t->size == ks || t->size == wh_opk_dsize[c.kind]) &&
            (((uintptr_t)in | (uintptr_t)b | (uintptr_t)out) & (al - 1)) == 0) {
            fn(in, b, out, count);
            return MPI_SUCCESS;
        }
    }
    int rc = wh_dtype_copy(b, count, t, out, count, t);
    return rc != MPI_SUCCESS ? rc : wh_op_apply(op, in, out, count, th, t);
}
