/* Unit tests of src/op: every (predefined op, predefined type) pair is either
 * applied and compared with a reference computed here, or must be refused
 * with MPI_ERR_OP naming both (the pairs accepted are MPICH's: the standard's
 * plus MPI_CHAR/MPI_CHARACTER as integers and logical ops on Fortran and
 * multi-language integers and floating point); plus derived types (contiguous, strided,
 * misaligned, pairs inside vectors), user ops, MPI_REPLACE / MPI_NO_OP and
 * handle lookups. */
#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/err.h"
#include "dtype/dtype.h"
#include "op/op.h"

#define N 37 /* odd, not a multiple of any vector width */

/* C representation of a type, for the reference */
enum rep {
    R_I8, R_U8, R_I16, R_U16, R_I32, R_U32, R_I64, R_U64,
    R_F, R_D, R_LD, R_Q, R_CF, R_CD, R_CLD, R_CQ,
    R_FI, R_DI, R_LI, R_2I, R_SI, R_LDI, R_2F, R_2D, R_NONE
};
/* type groups of MPI-4.1 section 6.9.2, as this test understands them */
enum { G_CINT = 1, G_FINT = 2, G_FLOAT = 4, G_LOG = 8, G_CPLX = 16, G_BYTE = 32, G_MULTI = 64, G_PAIR = 128 };

typedef struct {
    MPI_Datatype h;
    const char *name;
    enum rep rep;
    int group;
} tcase_t;

#define TC(h, rep, g) {h, #h, rep, g}
static const tcase_t types[] = {
    TC(MPI_SIGNED_CHAR, R_I8, G_CINT), TC(MPI_UNSIGNED_CHAR, R_U8, G_CINT),
    TC(MPI_SHORT, R_I16, G_CINT), TC(MPI_UNSIGNED_SHORT, R_U16, G_CINT),
    TC(MPI_INT, R_I32, G_CINT), TC(MPI_UNSIGNED, R_U32, G_CINT),
    TC(MPI_LONG, R_I64, G_CINT), TC(MPI_UNSIGNED_LONG, R_U64, G_CINT),
    TC(MPI_LONG_LONG, R_I64, G_CINT), TC(MPI_UNSIGNED_LONG_LONG, R_U64, G_CINT),
    TC(MPI_INT8_T, R_I8, G_CINT), TC(MPI_INT16_T, R_I16, G_CINT),
    TC(MPI_INT32_T, R_I32, G_CINT), TC(MPI_INT64_T, R_I64, G_CINT),
    TC(MPI_UINT8_T, R_U8, G_CINT), TC(MPI_UINT16_T, R_U16, G_CINT),
    TC(MPI_UINT32_T, R_U32, G_CINT), TC(MPI_UINT64_T, R_U64, G_CINT),
    TC(MPI_INTEGER, R_I32, G_FINT), TC(MPI_INTEGER1, R_I8, G_FINT),
    TC(MPI_INTEGER2, R_I16, G_FINT), TC(MPI_INTEGER4, R_I32, G_FINT),
    TC(MPI_INTEGER8, R_I64, G_FINT),
    TC(MPI_FLOAT, R_F, G_FLOAT), TC(MPI_DOUBLE, R_D, G_FLOAT), TC(MPI_LONG_DOUBLE, R_LD, G_FLOAT),
    TC(MPI_REAL, R_F, G_FLOAT), TC(MPI_DOUBLE_PRECISION, R_D, G_FLOAT), TC(MPI_REAL4, R_F, G_FLOAT),
    TC(MPI_REAL8, R_D, G_FLOAT), TC(MPI_REAL16, R_Q, G_FLOAT),
    TC(MPI_LOGICAL, R_I32, G_LOG), TC(MPI_C_BOOL, R_U8, G_LOG), TC(MPI_CXX_BOOL, R_U8, G_LOG),
    TC(MPI_C_COMPLEX, R_CF, G_CPLX), TC(MPI_C_DOUBLE_COMPLEX, R_CD, G_CPLX),
    TC(MPI_C_LONG_DOUBLE_COMPLEX, R_CLD, G_CPLX), TC(MPI_CXX_FLOAT_COMPLEX, R_CF, G_CPLX),
    TC(MPI_CXX_DOUBLE_COMPLEX, R_CD, G_CPLX), TC(MPI_CXX_LONG_DOUBLE_COMPLEX, R_CLD, G_CPLX),
    TC(MPI_COMPLEX, R_CF, G_CPLX), TC(MPI_DOUBLE_COMPLEX, R_CD, G_CPLX), TC(MPI_COMPLEX8, R_CF, G_CPLX),
    TC(MPI_COMPLEX16, R_CD, G_CPLX), TC(MPI_COMPLEX32, R_CQ, G_CPLX),
    TC(MPI_BYTE, R_U8, G_BYTE),
    TC(MPI_AINT, R_I64, G_MULTI), TC(MPI_OFFSET, R_I64, G_MULTI), TC(MPI_COUNT, R_I64, G_MULTI),
    TC(MPI_FLOAT_INT, R_FI, G_PAIR), TC(MPI_DOUBLE_INT, R_DI, G_PAIR), TC(MPI_LONG_INT, R_LI, G_PAIR),
    TC(MPI_SHORT_INT, R_SI, G_PAIR), TC(MPI_LONG_DOUBLE_INT, R_LDI, G_PAIR), TC(MPI_2INT, R_2I, G_PAIR),
    TC(MPI_2INTEGER, R_2I, G_PAIR), TC(MPI_2REAL, R_2F, G_PAIR), TC(MPI_2DOUBLE_PRECISION, R_2D, G_PAIR),
    TC(MPI_CHAR, CHAR_MIN < 0 ? R_I8 : R_U8, G_CINT), TC(MPI_CHARACTER, CHAR_MIN < 0 ? R_I8 : R_U8, G_FINT),
    TC(MPI_WCHAR, R_NONE, 0), TC(MPI_PACKED, R_NONE, 0),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static const struct {
    MPI_Op h;
    const char *name;
    int groups;
} ops[] = {
    {MPI_MAX, "MPI_MAX", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_MIN, "MPI_MIN", G_CINT | G_FINT | G_FLOAT | G_MULTI},
    {MPI_SUM, "MPI_SUM", G_CINT | G_FINT | G_FLOAT | G_CPLX | G_MULTI},
    {MPI_PROD, "MPI_PROD", G_CINT | G_FINT | G_FLOAT | G_CPLX | G_MULTI},
    {MPI_LAND, "MPI_LAND", G_CINT | G_FINT | G_FLOAT | G_LOG | G_MULTI},
    {MPI_LOR, "MPI_LOR", G_CINT | G_FINT | G_FLOAT | G_LOG | G_MULTI},
    {MPI_LXOR, "MPI_LXOR", G_CINT | G_FINT | G_FLOAT | G_LOG | G_MULTI},
    {MPI_BAND, "MPI_BAND", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BOR, "MPI_BOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_BXOR, "MPI_BXOR", G_CINT | G_FINT | G_BYTE | G_MULTI},
    {MPI_MINLOC, "MPI_MINLOC", G_PAIR},
    {MPI_MAXLOC, "MPI_MAXLOC", G_PAIR},
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* ---------- inputs and references ---------- */

/* small values with repeats, zeros and negatives (signed) */
static long ival(int i, int which, int is_signed, int logical)
{
    long v = (long)((i * 7 + which * 13) % 23);
    if (logical)
        return (i + which) % 3 == 0 ? 0 : v + 1;
    if (is_signed)
        v -= 11;
    return v;
}

#define INT_REF(R, T, W, SIGNED)                                                                  \
    static void ref_##R(MPI_Op op, T *a, T *b, int lg)                                            \
    {                                                                                             \
        for (int i = 0; i < N; i++) {                                                             \
            a[i] = (T)ival(i, 0, SIGNED, lg);                                                     \
            b[i] = (T)ival(i, 1, SIGNED, lg);                                                     \
        }                                                                                         \
        for (int i = 0; i < N; i++) {                                                             \
            W x = (W)a[i], y = (W)b[i];                                                           \
            T r = b[i];                                                                           \
            if (op == MPI_MAX) r = (T)(x > y ? x : y);                                            \
            else if (op == MPI_MIN) r = (T)(x < y ? x : y);                                       \
            else if (op == MPI_SUM) r = (T)(x + y);                                               \
            else if (op == MPI_PROD) r = (T)(x * y);                                              \
            else if (op == MPI_LAND) r = (T)(x && y);                                             \
            else if (op == MPI_LOR) r = (T)(x || y);                                              \
            else if (op == MPI_LXOR) r = (T)(!x != !y);                                           \
            else if (op == MPI_BAND) r = (T)(x & y);                                              \
            else if (op == MPI_BOR) r = (T)(x | y);                                               \
            else if (op == MPI_BXOR) r = (T)(x ^ y);                                              \
            a[N + i] = r; /* expected result stored after the input */                            \
        }                                                                                         \
    }
INT_REF(i8, int8_t, int64_t, 1)
INT_REF(u8, uint8_t, uint64_t, 0)
INT_REF(i16, int16_t, int64_t, 1)
INT_REF(u16, uint16_t, uint64_t, 0)
INT_REF(i32, int32_t, int64_t, 1)
INT_REF(u32, uint32_t, uint64_t, 0)
INT_REF(i64, int64_t, int64_t, 1)
INT_REF(u64, uint64_t, uint64_t, 0)

#define FLT_REF(R, T)                                                                             \
    static void ref_##R(MPI_Op op, T *a, T *b, int lg)                                            \
    {                                                                                             \
        (void)lg;                                                                                 \
        for (int i = 0; i < N; i++) {                                                             \
            a[i] = (T)ival(i, 0, 1, 0) * (T)0.75;                                                 \
            b[i] = (T)ival(i, 1, 1, 0) * (T)1.25;                                                 \
        }                                                                                         \
        for (int i = 0; i < N; i++) {                                                             \
            T x = a[i], y = b[i], r = y;                                                          \
            if (op == MPI_MAX) r = x > y ? x : y;                                                 \
            else if (op == MPI_MIN) r = x < y ? x : y;                                            \
            else if (op == MPI_SUM) r = x + y;                                                    \
            else if (op == MPI_PROD) r = x * y;                                                   \
            else if (op == MPI_LAND) r = (T)(x != 0 && y != 0);                                   \
            else if (op == MPI_LOR) r = (T)(x != 0 || y != 0);                                    \
            else if (op == MPI_LXOR) r = (T)((x != 0) != (y != 0));                               \
            a[N + i] = r;                                                                         \
        }                                                                                         \
    }
FLT_REF(f, float)
FLT_REF(d, double)
FLT_REF(ld, long double)
FLT_REF(q, __float128)

#define CPLX_REF(R, T, BT)                                                                        \
    static void ref_##R(MPI_Op op, T *a, T *b, int lg)                                            \
    {                                                                                             \
        (void)lg;                                                                                 \
        for (int i = 0; i < N; i++) {                                                             \
            a[i] = (BT)ival(i, 0, 1, 0) + (BT)ival(i, 2, 1, 0) * (T)I;                            \
            b[i] = (BT)ival(i, 1, 1, 0) * (BT)0.5 + (BT)ival(i, 3, 1, 0) * (T)I;                  \
        }                                                                                         \
        for (int i = 0; i < N; i++)                                                               \
            a[N + i] = op == MPI_SUM ? a[i] + b[i] : a[i] * b[i];                                 \
    }
CPLX_REF(cf, float _Complex, float)
CPLX_REF(cd, double _Complex, double)
CPLX_REF(cld, long double _Complex, long double)

typedef struct {
    __float128 re, im;
} cq_t;
static void ref_cq(MPI_Op op, cq_t *a, cq_t *b, int lg)
{
    (void)lg;
    for (int i = 0; i < N; i++) {
        a[i].re = ival(i, 0, 1, 0);
        a[i].im = ival(i, 2, 1, 0);
        b[i].re = ival(i, 1, 1, 0) * 0.5;
        b[i].im = ival(i, 3, 1, 0);
    }
    for (int i = 0; i < N; i++) {
        cq_t r;
        if (op == MPI_SUM) {
            r.re = a[i].re + b[i].re;
            r.im = a[i].im + b[i].im;
        } else {
            r.re = a[i].re * b[i].re - a[i].im * b[i].im;
            r.im = a[i].re * b[i].im + a[i].im * b[i].re;
        }
        a[N + i] = r;
    }
}

#define PAIR_REF(R, V, K)                                                                         \
    typedef struct {                                                                              \
        V v;                                                                                      \
        K k;                                                                                      \
    } R##_t;                                                                                      \
    static void ref_##R(MPI_Op op, R##_t *a, R##_t *b, int lg)                                    \
    {                                                                                             \
        (void)lg;                                                                                 \
        memset(a, 0, sizeof(R##_t) * 2 * N);                                                      \
        memset(b, 0, sizeof(R##_t) * N);                                                          \
        for (int i = 0; i < N; i++) { /* few distinct values: many ties */                       \
            a[i].v = (V)(i % 4);                                                                  \
            a[i].k = (K)((i * 5) % 11);                                                           \
            b[i].v = (V)((i / 2) % 4);                                                            \
            b[i].k = (K)((i * 3) % 7);                                                            \
        }                                                                                         \
        for (int i = 0; i < N; i++) {                                                             \
            R##_t x = a[i], y = b[i], r;                                                          \
            int take_x = op == MPI_MINLOC ? x.v < y.v : x.v > y.v;                                \
            if (take_x) r = x;                                                                    \
            else if (x.v == y.v) {                                                                \
                r.v = x.v;                                                                        \
                r.k = x.k < y.k ? x.k : y.k;                                                      \
            } else r = y;                                                                         \
            a[N + i].v = r.v;                                                                     \
            a[N + i].k = r.k;                                                                     \
        }                                                                                         \
    }
PAIR_REF(fi, float, int)
PAIR_REF(di, double, int)
PAIR_REF(li, long, int)
PAIR_REF(ii, int, int)
PAIR_REF(si, short, int)
PAIR_REF(ldi, long double, int)
PAIR_REF(ff, float, float)
PAIR_REF(dd, double, double)

/* Fill a (2N elements: input, then expected) and b (N: inout) for rep;
 * returns the element size. */
static size_t make_case(enum rep rep, MPI_Op op, void *a, void *b, int logical)
{
    switch (rep) {
    case R_I8: ref_i8(op, a, b, logical); return 1;
    case R_U8: ref_u8(op, a, b, logical); return 1;
    case R_I16: ref_i16(op, a, b, logical); return 2;
    case R_U16: ref_u16(op, a, b, logical); return 2;
    case R_I32: ref_i32(op, a, b, logical); return 4;
    case R_U32: ref_u32(op, a, b, logical); return 4;
    case R_I64: ref_i64(op, a, b, logical); return 8;
    case R_U64: ref_u64(op, a, b, logical); return 8;
    case R_F: ref_f(op, a, b, 0); return sizeof(float);
    case R_D: ref_d(op, a, b, 0); return sizeof(double);
    case R_LD: ref_ld(op, a, b, 0); return sizeof(long double);
    case R_Q: ref_q(op, a, b, 0); return sizeof(__float128);
    case R_CF: ref_cf(op, a, b, 0); return sizeof(float _Complex);
    case R_CD: ref_cd(op, a, b, 0); return sizeof(double _Complex);
    case R_CLD: ref_cld(op, a, b, 0); return sizeof(long double _Complex);
    case R_CQ: ref_cq(op, a, b, 0); return sizeof(cq_t);
    case R_FI: ref_fi(op, a, b, 0); return sizeof(fi_t);
    case R_DI: ref_di(op, a, b, 0); return sizeof(di_t);
    case R_LI: ref_li(op, a, b, 0); return sizeof(li_t);
    case R_2I: ref_ii(op, a, b, 0); return sizeof(ii_t);
    case R_SI: ref_si(op, a, b, 0); return sizeof(si_t);
    case R_LDI: ref_ldi(op, a, b, 0); return sizeof(ldi_t);
    case R_2F: ref_ff(op, a, b, 0); return sizeof(ff_t);
    case R_2D: ref_dd(op, a, b, 0); return sizeof(dd_t);
    default: return 0;
    }
}

/* Compare element values (not padding bytes) */
static int same(enum rep rep, const void *x, const void *y, size_t es)
{
    const char *p = x, *q = y;
    for (int i = 0; i < N; i++, p += es, q += es) {
        switch (rep) {
        case R_LD: if (*(const long double *)p != *(const long double *)q) return 0; break;
        case R_CLD: if (*(const long double _Complex *)p != *(const long double _Complex *)q) return 0; break;
        case R_DI: if (((const di_t *)p)->v != ((const di_t *)q)->v || ((const di_t *)p)->k != ((const di_t *)q)->k) return 0; break;
        case R_LI: if (((const li_t *)p)->v != ((const li_t *)q)->v || ((const li_t *)p)->k != ((const li_t *)q)->k) return 0; break;
        case R_SI: if (((const si_t *)p)->v != ((const si_t *)q)->v || ((const si_t *)p)->k != ((const si_t *)q)->k) return 0; break;
        case R_LDI: if (((const ldi_t *)p)->v != ((const ldi_t *)q)->v || ((const ldi_t *)p)->k != ((const ldi_t *)q)->k) return 0; break;
        default: if (memcmp(p, q, es)) return 0; break;
        }
    }
    return 1;
}

static int has_text(int code, const char *s)
{
    char buf[MPI_MAX_ERROR_STRING];
    wh_error_text(code, buf, sizeof buf);
    return strstr(buf, s) != NULL;
}

/* ---------- every (op, type) pair ---------- */
static void test_matrix(void)
{
    _Alignas(64) char a[2 * N * 32], b[N * 32], b0[N * 32], out[N * 32];
    int applied = 0, refused = 0;
    for (int o = 0; o < NOPS; o++) {
        wh_op_t *op = wh_op_get(ops[o].h);
        CHECK(op != NULL && op->builtin > 0 && op->commute);
        for (int t = 0; t < NTYPES; t++) {
            wh_dtype_t *dt = wh_dtype_get(types[t].h);
            CHECK(dt != NULL);
            if (!op || !dt)
                continue;
            int allowed = (ops[o].groups & types[t].group) != 0;
            int rc = wh_op_check(op, dt);
            if (!allowed) {
                int ok = wh_error_class(rc) == MPI_ERR_OP && has_text(rc, ops[o].name) && has_text(rc, types[t].name);
                if (!ok)
                    fprintf(stderr, "  %s on %s: expected MPI_ERR_OP naming both, got class %d\n", ops[o].name,
                            types[t].name, wh_error_class(rc));
                CHECK(ok);
                CHECK(wh_error_class(wh_op_apply(op, a, b, N, types[t].h, dt)) == MPI_ERR_OP);
                CHECK(wh_error_class(wh_op_apply3(op, a, b, out, N, types[t].h, dt)) == MPI_ERR_OP);
                refused++;
                continue;
            }
            if (rc != MPI_SUCCESS)
                fprintf(stderr, "  %s on %s: refused but the standard allows it\n", ops[o].name, types[t].name);
            CHECK(rc == MPI_SUCCESS);
            size_t es = make_case(types[t].rep, ops[o].h, a, b, types[t].group == G_LOG);
            CHECK(es == (size_t)dt->extent);
            /* three operands first: out = a op b, b untouched */
            memcpy(b0, b, N * es);
            memset(out, 0x5c, sizeof out);
            CHECK(wh_op_apply3(op, a, b, out, N, types[t].h, dt) == MPI_SUCCESS);
            int ok3 = same(types[t].rep, out, a + N * es, es) && !memcmp(b, b0, N * es);
            if (!ok3)
                fprintf(stderr, "  %s on %s: wrong three-operand result\n", ops[o].name, types[t].name);
            CHECK(ok3);
            CHECK(wh_op_apply(op, a, b, N, types[t].h, dt) == MPI_SUCCESS);
            int ok = same(types[t].rep, b, a + N * es, es);
            if (!ok)
                fprintf(stderr, "  %s on %s: wrong result\n", ops[o].name, types[t].name);
            CHECK(ok);
            applied++;
        }
    }
    /* sanity: the matrix is not trivially empty */
    CHECK(applied > 200 && refused > 300);
    printf("op matrix: %d pairs applied, %d refused\n", applied, refused);
}

/* ---------- derived types ---------- */
static wh_dtype_t *commit(wh_dtype_t *t)
{
    if (t)
        t->committed = 1;
    return t;
}

static void test_derived(void)
{
    wh_op_t *sum = wh_op_get(MPI_SUM), *minloc = wh_op_get(MPI_MINLOC), *land = wh_op_get(MPI_LAND);
    /* contiguous(3, MPI_INT), count 5 */
    wh_dtype_t *c3 = NULL;
    CHECK(wh_dtype_create_contig(3, wh_dtype_get(MPI_INT), &c3) == MPI_SUCCESS);
    commit(c3);
    int ia[15], ib[15];
    for (int i = 0; i < 15; i++)
        ia[i] = i, ib[i] = 100 * i;
    CHECK(wh_op_check(sum, c3) == MPI_SUCCESS);
    CHECK(wh_op_apply(sum, ia, ib, 5, c3->obj.handle, c3) == MPI_SUCCESS);
    int ok = 1;
    for (int i = 0; i < 15; i++)
        ok &= ib[i] == 101 * i;
    CHECK(ok);
    CHECK(wh_op_check(land, c3) == MPI_SUCCESS); /* C integer elements admit logical ops */

    /* vector: 4 blocks of 2 doubles, stride 3: holes must stay untouched */
    wh_dtype_t *vec = NULL;
    CHECK(wh_dtype_create_hvector(4, 2, 3 * (MPI_Aint)sizeof(double), wh_dtype_get(MPI_DOUBLE), &vec) == MPI_SUCCESS);
    commit(vec);
    double da[24], db[24];
    for (int i = 0; i < 24; i++)
        da[i] = i + 0.5, db[i] = -1000.0 - i;
    /* count 2: extent of one vector is (3*3+2) doubles = 11 */
    CHECK(wh_op_apply(sum, da, db, 2, vec->obj.handle, vec) == MPI_SUCCESS);
    ok = 1;
    for (int i = 0; i < 22; i++) {
        int in_block = (i % 11) % 3 < 2 && (i % 11) < 11;
        double want = in_block ? da[i] + (-1000.0 - i) : -1000.0 - i;
        ok &= db[i] == want;
    }
    CHECK(ok);
    CHECK(wh_error_class(wh_op_check(minloc, vec)) == MPI_ERR_OP);

    /* misaligned doubles: struct { char; double at offset 1 } resized to 9 */
    wh_dtype_t *mis = NULL, *dbl = wh_dtype_get(MPI_DOUBLE);
    MPI_Count bl = 1;
    MPI_Aint disp = 1;
    CHECK(wh_dtype_create_blocks(1, &bl, &disp, NULL, &dbl, &mis) == MPI_SUCCESS);
    wh_dtype_t *mis9 = NULL;
    CHECK(mis && wh_dtype_create_resized(mis, 0, 9, &mis9) == MPI_SUCCESS);
    commit(mis9);
    CHECK(mis9 && mis9->basic == WH_BT_DOUBLE);
    unsigned char ma[9 * 7], mb[9 * 7];
    memset(ma, 0x5a, sizeof ma);
    memset(mb, 0x5a, sizeof mb);
    for (int i = 0; i < 7; i++) {
        double x = i * 1.5, y = 10.0 * i;
        memcpy(ma + 9 * i + 1, &x, 8);
        memcpy(mb + 9 * i + 1, &y, 8);
    }
    CHECK(wh_op_apply(sum, ma, mb, 7, mis9->obj.handle, mis9) == MPI_SUCCESS);
    ok = 1;
    for (int i = 0; i < 7; i++) {
        double r;
        memcpy(&r, mb + 9 * i + 1, 8);
        ok &= r == i * 1.5 + 10.0 * i && mb[9 * i] == 0x5a;
    }
    CHECK(ok);

    /* pairs inside a vector: MINLOC on every other MPI_DOUBLE_INT */
    wh_dtype_t *pv = NULL;
    CHECK(wh_dtype_create_hvector(3, 1, 2 * (MPI_Aint)sizeof(di_t), wh_dtype_get(MPI_DOUBLE_INT), &pv) ==
          MPI_SUCCESS);
    commit(pv);
    CHECK(pv && wh_op_check(minloc, pv) == MPI_SUCCESS);
    di_t pa[6], pb[6];
    memset(pa, 0, sizeof pa);
    memset(pb, 0, sizeof pb);
    for (int i = 0; i < 6; i++) {
        pa[i].v = (i % 3), pa[i].k = 10 + i;
        pb[i].v = 1, pb[i].k = 20 + i;
    }
    CHECK(wh_op_apply(minloc, pa, pb, 1, pv->obj.handle, pv) == MPI_SUCCESS);
    /* elements 0, 2, 4: a = {0,10}, {2,12}, {1,14}; b = {1,20}, {1,22}, {1,24} */
    CHECK(pb[0].v == 0 && pb[0].k == 10);
    CHECK(pb[2].v == 1 && pb[2].k == 22);
    CHECK(pb[4].v == 1 && pb[4].k == 14); /* tie: smaller index */
    CHECK(pb[1].k == 21 && pb[3].k == 23 && pb[5].k == 25); /* holes untouched */

    /* a struct of mixed types has no single basic type */
    wh_dtype_t *mixed = NULL, *tys[2] = {wh_dtype_get(MPI_INT), wh_dtype_get(MPI_DOUBLE)};
    MPI_Count bls[2] = {1, 1};
    MPI_Aint ds[2] = {0, 8};
    CHECK(wh_dtype_create_blocks(2, bls, ds, NULL, tys, &mixed) == MPI_SUCCESS);
    commit(mixed);
    int rc = wh_op_check(sum, mixed);
    CHECK(wh_error_class(rc) == MPI_ERR_OP && has_text(rc, "MPI_SUM"));
    /* a dup of MPI_LOGICAL is judged by its basic type */
    wh_dtype_t *dupi = NULL;
    CHECK(wh_dtype_create_dup(wh_dtype_get(MPI_INT), &dupi) == MPI_SUCCESS);
    CHECK(dupi && wh_op_check(sum, dupi) == MPI_SUCCESS);
    wh_dtype_release(c3);
    wh_dtype_release(vec);
    wh_dtype_release(mis);
    wh_dtype_release(mis9);
    wh_dtype_release(pv);
    wh_dtype_release(mixed);
    wh_dtype_release(dupi);
}

/* ---------- user ops ---------- */
static int user_calls, user_len_total;
static MPI_Datatype user_type_seen;

/* 2x2 matrix product: inout = in * inout (non-commutative) */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    user_calls++;
    user_len_total += *len;
    user_type_seen = *dt;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void matmul_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int l = (int)*len;
    matmul(in, inout, &l, dt);
}

static void test_user(void)
{
    wh_op_init();
    wh_op_t *op = wh_op_create(matmul, NULL, 0);
    CHECK(op && op->builtin < 0 && !op->commute);
    CHECK(op && wh_op_get(op->obj.handle) == op);
    CHECK(op && !strcmp(wh_op_name(op), "user-defined op"));
    wh_dtype_t *m = NULL;
    CHECK(wh_dtype_create_contig(4, wh_dtype_get(MPI_INT), &m) == MPI_SUCCESS);
    commit(m);
    CHECK(wh_op_check(op, m) == MPI_SUCCESS && wh_op_check_reduce(op, m) == MPI_SUCCESS);
    int a[8] = {1, 1, 0, 1, 2, 0, 0, 2}, b[8] = {1, 0, 1, 1, 1, 2, 3, 4};
    CHECK(wh_op_apply(op, a, b, 2, m->obj.handle, m) == MPI_SUCCESS);
    /* [1 1;0 1]*[1 0;1 1] = [2 1;1 1]; [2 0;0 2]*[1 2;3 4] = [2 4;6 8] */
    int want[8] = {2, 1, 1, 1, 2, 4, 6, 8};
    CHECK(!memcmp(b, want, sizeof want));
    CHECK(user_calls == 1 && user_len_total == 2 && user_type_seen == m->obj.handle);
    /* large-count variant */
    wh_op_t *opc = wh_op_create(NULL, matmul_c, 1);
    CHECK(opc && opc->commute);
    CHECK(opc && wh_op_apply(opc, a, b, 1, m->obj.handle, m) == MPI_SUCCESS && user_calls == 2);
    /* references: freed at the last release; the handle then is invalid */
    int h = op->obj.handle;
    wh_op_addref(op);
    wh_op_release(op);
    CHECK(wh_op_get(h) == op);
    wh_op_release(op);
    CHECK(wh_op_get(h) == NULL);
    wh_op_release(opc);
    wh_dtype_release(m);
}

static void test_misc(void)
{
    CHECK(wh_op_get(MPI_OP_NULL) == NULL);
    CHECK(wh_op_get((MPI_Op)0x5800000f) == NULL);
    CHECK(wh_op_get((MPI_Op)0x58000000) == NULL);
    CHECK(wh_op_get(MPI_COMM_WORLD) == NULL);
    CHECK(wh_op_get(MPI_NO_OP) && !strcmp(wh_op_name(wh_op_get(MPI_NO_OP)), "MPI_NO_OP"));
    wh_op_t *rep = wh_op_get(MPI_REPLACE), *noop = wh_op_get(MPI_NO_OP);
    wh_dtype_t *dt = wh_dtype_get(MPI_DOUBLE_INT), *chr = wh_dtype_get(MPI_CHAR);
    CHECK(wh_op_check(rep, chr) == MPI_SUCCESS && wh_op_check(noop, dt) == MPI_SUCCESS);
    int rc = wh_op_check_reduce(rep, dt);
    CHECK(wh_error_class(rc) == MPI_ERR_OP && has_text(rc, "MPI_REPLACE"));
    CHECK(wh_error_class(wh_op_check_reduce(noop, dt)) == MPI_ERR_OP);
    int x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
    wh_dtype_t *it = wh_dtype_get(MPI_INT);
    CHECK(wh_op_apply(noop, x, y, 5, MPI_INT, it) == MPI_SUCCESS && y[4] == 0);
    CHECK(wh_op_apply(rep, x, y, 5, MPI_INT, it) == MPI_SUCCESS && y[0] == 1 && y[4] == 5);
    /* count 0 never touches the buffers */
    CHECK(wh_op_apply(wh_op_get(MPI_SUM), NULL, NULL, 0, MPI_INT, it) == MPI_SUCCESS);
    /* signed overflow wraps (no UB): INT32_MAX + 1 */
    int32_t big[1] = {INT32_MAX}, one[1] = {1};
    CHECK(wh_op_apply(wh_op_get(MPI_SUM), big, one, 1, MPI_INT, it) == MPI_SUCCESS && one[0] == INT32_MIN);
    /* message of a refused pair */
    rc = wh_op_check(wh_op_get(MPI_MAXLOC), it);
    CHECK(has_text(rc, "MPI_MAXLOC is not defined for datatype MPI_INT") && has_text(rc, "pair"));
}

int main(void)
{
    CHECK(wh_dtype_init() == MPI_SUCCESS);
    CHECK(wh_op_init() == MPI_SUCCESS);
    test_matrix();
    test_derived();
    test_user();
    test_misc();
    wh_op_finalize();
    return DONE();
}
