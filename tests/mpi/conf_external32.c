/* external32: the size of every predefined type as the MPI standard's table
 * fixes it (MPI_LONG and MPI_UNSIGNED_LONG 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE
 * 16 as IEEE binary128, ...), big-endian byte order checked byte by byte,
 * and MPI_Pack_external/MPI_Unpack_external round trips of every predefined
 * type and of derived types. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "p2p_check.h"

static const char *E32 = "external32";

#define S(t, n) {t, #t, n}
static const struct {
    MPI_Datatype t;
    const char *name;
    int size;
} sizes[] = {
    S(MPI_PACKED, 1), S(MPI_BYTE, 1), S(MPI_CHAR, 1), S(MPI_UNSIGNED_CHAR, 1), S(MPI_SIGNED_CHAR, 1),
    S(MPI_WCHAR, 2), S(MPI_SHORT, 2), S(MPI_UNSIGNED_SHORT, 2), S(MPI_INT, 4), S(MPI_LONG, 4), S(MPI_UNSIGNED, 4),
    S(MPI_UNSIGNED_LONG, 4), S(MPI_LONG_LONG_INT, 8), S(MPI_UNSIGNED_LONG_LONG, 8), S(MPI_FLOAT, 4),
    S(MPI_DOUBLE, 8), S(MPI_LONG_DOUBLE, 16), S(MPI_C_BOOL, 1), S(MPI_INT8_T, 1), S(MPI_INT16_T, 2),
    S(MPI_INT32_T, 4), S(MPI_INT64_T, 8), S(MPI_UINT8_T, 1), S(MPI_UINT16_T, 2), S(MPI_UINT32_T, 4),
    S(MPI_UINT64_T, 8), S(MPI_AINT, 8), S(MPI_COUNT, 8), S(MPI_OFFSET, 8), S(MPI_C_COMPLEX, 8),
    S(MPI_C_DOUBLE_COMPLEX, 16), S(MPI_C_LONG_DOUBLE_COMPLEX, 32), S(MPI_CHARACTER, 1), S(MPI_LOGICAL, 4),
    S(MPI_INTEGER, 4), S(MPI_REAL, 4), S(MPI_DOUBLE_PRECISION, 8), S(MPI_COMPLEX, 8), S(MPI_DOUBLE_COMPLEX, 16),
    S(MPI_INTEGER1, 1), S(MPI_INTEGER2, 2), S(MPI_INTEGER4, 4), S(MPI_INTEGER8, 8), S(MPI_REAL4, 4),
    S(MPI_REAL8, 8), S(MPI_REAL16, 16), S(MPI_COMPLEX8, 8), S(MPI_COMPLEX16, 16), S(MPI_COMPLEX32, 32),
    S(MPI_CXX_BOOL, 1), S(MPI_CXX_FLOAT_COMPLEX, 8), S(MPI_CXX_DOUBLE_COMPLEX, 16),
    S(MPI_CXX_LONG_DOUBLE_COMPLEX, 32),
    /* the pair types are structs of the above */
    S(MPI_FLOAT_INT, 8), S(MPI_DOUBLE_INT, 12), S(MPI_LONG_INT, 8), S(MPI_SHORT_INT, 6),
    S(MPI_LONG_DOUBLE_INT, 20), S(MPI_2INT, 8), S(MPI_2INTEGER, 8), S(MPI_2REAL, 8), S(MPI_2DOUBLE_PRECISION, 16),
};

/* pack count elements, compare with the expected big-endian bytes */
static void bytes_are(const char *what, const void *in, int count, MPI_Datatype t, const unsigned char *want, int n)
{
    unsigned char out[256];
    MPI_Aint pos = 0, sz = -1;
    memset(out, 0xee, sizeof out);
    MPI_OK(MPI_Pack_external_size(E32, count, t, &sz));
    CHECK(sz == n, "%s: external32 size %ld, expected %d", what, (long)sz, n);
    MPI_OK(MPI_Pack_external(E32, in, count, t, out, sizeof out, &pos));
    CHECK(pos == n, "%s: position %ld after packing, expected %d", what, (long)pos, n);
    for (int i = 0; i < n; i++)
        CHECK(out[i] == want[i], "%s: byte %d is %02x, expected %02x", what, i, out[i], want[i]);
    CHECK(out[n] == 0xee, "%s: wrote past its %d bytes", what, n);
}

/* round trip of 5 values of a C type: pack, unpack, compare values */
#define ROUND(T, ctype, expr)                                                                     \
    do {                                                                                          \
        ctype in_[5], back_[5];                                                                   \
        unsigned char buf_[5 * 64];                                                               \
        memset(in_, 0, sizeof in_);                                                               \
        memset(back_, 0x5a, sizeof back_);                                                        \
        for (int i = 0; i < 5; i++)                                                               \
            in_[i] = (ctype)(expr);                                                               \
        MPI_Aint p_ = 0, q_ = 0, sz_ = 0;                                                         \
        MPI_OK(MPI_Pack_external_size(E32, 5, T, &sz_));                                          \
        MPI_OK(MPI_Pack_external(E32, in_, 5, T, buf_, sizeof buf_, &p_));                        \
        CHECK(p_ == sz_, "%s: packed %ld bytes, size says %ld", #T, (long)p_, (long)sz_);         \
        MPI_OK(MPI_Unpack_external(E32, buf_, p_, &q_, back_, 5, T));                             \
        CHECK(q_ == p_, "%s: unpacked %ld of %ld bytes", #T, (long)q_, (long)p_);                 \
        for (int i = 0; i < 5; i++)                                                               \
            CHECK(in_[i] == back_[i], "%s: value %d changed in the round trip", #T, i);           \
    } while (0)

/* pairs: compare both members */
#define ROUND_PAIR(T, t1, t2, e1, e2)                                                             \
    do {                                                                                          \
        struct {                                                                                  \
            t1 a;                                                                                 \
            t2 b;                                                                                 \
        } in_[4], back_[4];                                                                       \
        unsigned char buf_[4 * 64];                                                               \
        memset(in_, 0, sizeof in_);                                                               \
        memset(back_, 0, sizeof back_);                                                           \
        for (int i = 0; i < 4; i++) {                                                             \
            in_[i].a = (t1)(e1);                                                                  \
            in_[i].b = (t2)(e2);                                                                  \
        }                                                                                         \
        MPI_Aint p_ = 0, q_ = 0;                                                                  \
        MPI_OK(MPI_Pack_external(E32, in_, 4, T, buf_, sizeof buf_, &p_));                        \
        MPI_OK(MPI_Unpack_external(E32, buf_, p_, &q_, back_, 4, T));                             \
        for (int i = 0; i < 4; i++)                                                               \
            CHECK(in_[i].a == back_[i].a && in_[i].b == back_[i].b, "%s: pair %d changed", #T, i); \
    } while (0)

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    p2p_setstep("sizes");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        MPI_Aint sz = -1;
        MPI_Count szc = -1;
        MPI_OK(MPI_Pack_external_size(E32, 2, sizes[i].t, &sz));
        CHECK(sz == 2 * sizes[i].size, "%s: external32 size of 2 is %ld, expected %d", sizes[i].name, (long)sz,
              2 * sizes[i].size);
        MPI_OK(MPI_Pack_external_size_c(E32, 3, sizes[i].t, &szc));
        CHECK(szc == 3 * sizes[i].size, "%s: _c size of 3 is %lld", sizes[i].name, (long long)szc);
    }

    p2p_setstep("byte order");
    {
        int v = 0x01020304;
        bytes_are("MPI_INT", &v, 1, MPI_INT, (const unsigned char[]){1, 2, 3, 4}, 4);
        long l[2] = {-2, 0x12345678};
        bytes_are("MPI_LONG", l, 2, MPI_LONG, (const unsigned char[]){0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78},
                  8);
        unsigned long ul = 0xfedcba98ul;
        bytes_are("MPI_UNSIGNED_LONG", &ul, 1, MPI_UNSIGNED_LONG, (const unsigned char[]){0xfe, 0xdc, 0xba, 0x98}, 4);
        short s = 0x0102;
        bytes_are("MPI_SHORT", &s, 1, MPI_SHORT, (const unsigned char[]){1, 2}, 2);
        long long ll = 0x0102030405060708ll;
        bytes_are("MPI_LONG_LONG_INT", &ll, 1, MPI_LONG_LONG_INT, (const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
        MPI_Aint a = 0x0102030405060708;
        bytes_are("MPI_AINT", &a, 1, MPI_AINT, (const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
        float f = 1.0f;
        bytes_are("MPI_FLOAT", &f, 1, MPI_FLOAT, (const unsigned char[]){0x3f, 0x80, 0, 0}, 4);
        double d = -2.0;
        bytes_are("MPI_DOUBLE", &d, 1, MPI_DOUBLE, (const unsigned char[]){0xc0, 0, 0, 0, 0, 0, 0, 0}, 8);
        long double ld[2] = {1.0L, -2.5L};
        bytes_are("MPI_LONG_DOUBLE", ld, 2, MPI_LONG_DOUBLE,
                  (const unsigned char[]){0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          0xc0, 0x00, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                  32);
        wchar_t w = L'A';
        bytes_are("MPI_WCHAR", &w, 1, MPI_WCHAR, (const unsigned char[]){0, 0x41}, 2);
        bool b = true;
        bytes_are("MPI_C_BOOL", &b, 1, MPI_C_BOOL, (const unsigned char[]){1}, 1);
        double complex z = 1.0 + 2.0 * I;
        bytes_are("MPI_C_DOUBLE_COMPLEX", &z, 1, MPI_C_DOUBLE_COMPLEX,
                  (const unsigned char[]){0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0}, 16);
        struct {
            long v;
            int i;
        } li = {-1, 7};
        bytes_are("MPI_LONG_INT", &li, 1, MPI_LONG_INT, (const unsigned char[]){0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7},
                  8);
        struct {
            short v;
            int i;
        } si = {0x0102, 0x03040506};
        bytes_are("MPI_SHORT_INT", &si, 1, MPI_SHORT_INT, (const unsigned char[]){1, 2, 3, 4, 5, 6}, 6);
        /* unpacking sign-extends MPI_LONG and zero-extends MPI_UNSIGNED_LONG */
        unsigned char neg[4] = {0xff, 0xff, 0xff, 0xfe};
        long lb = 0;
        unsigned long ulb = 0;
        MPI_Aint pos = 0;
        MPI_OK(MPI_Unpack_external(E32, neg, 4, &pos, &lb, 1, MPI_LONG));
        CHECK(lb == -2 && pos == 4, "MPI_LONG unpacked %ld (pos %ld)", lb, (long)pos);
        pos = 0;
        MPI_OK(MPI_Unpack_external(E32, neg, 4, &pos, &ulb, 1, MPI_UNSIGNED_LONG));
        CHECK(ulb == 0xfffffffeul, "MPI_UNSIGNED_LONG unpacked %lx", ulb);
    }

    p2p_setstep("round trips of every predefined type");
    ROUND(MPI_CHAR, char, 'a' + i);
    ROUND(MPI_SIGNED_CHAR, signed char, -3 * i);
    ROUND(MPI_UNSIGNED_CHAR, unsigned char, 250 + i);
    ROUND(MPI_BYTE, unsigned char, 7 * i);
    ROUND(MPI_PACKED, unsigned char, 9 * i);
    ROUND(MPI_WCHAR, wchar_t, L'x' + i);
    ROUND(MPI_SHORT, short, -1000 * i);
    ROUND(MPI_UNSIGNED_SHORT, unsigned short, 60000 + i);
    ROUND(MPI_INT, int, -100000 * i - 7);
    ROUND(MPI_UNSIGNED, unsigned, 4000000000u + i);
    ROUND(MPI_LONG, long, -2147483647L + 1000 * i);
    ROUND(MPI_UNSIGNED_LONG, unsigned long, 4294967295ul - i);
    ROUND(MPI_LONG_LONG_INT, long long, -(1LL << 60) + i);
    ROUND(MPI_UNSIGNED_LONG_LONG, unsigned long long, (1ULL << 63) + i);
    ROUND(MPI_FLOAT, float, 1.5f * i - 3.25f);
    ROUND(MPI_DOUBLE, double, 1e300 * i - 0.1);
    ROUND(MPI_LONG_DOUBLE, long double, 1.0L / 3.0L * i - 1e4000L);
    ROUND(MPI_C_BOOL, bool, i & 1);
    ROUND(MPI_INT8_T, int8_t, -100 + i);
    ROUND(MPI_INT16_T, int16_t, -30000 + i);
    ROUND(MPI_INT32_T, int32_t, -2000000000 + i);
    ROUND(MPI_INT64_T, int64_t, INT64_MIN + i);
    ROUND(MPI_UINT8_T, uint8_t, 200 + i);
    ROUND(MPI_UINT16_T, uint16_t, 65000 + i);
    ROUND(MPI_UINT32_T, uint32_t, 4000000000u + i);
    ROUND(MPI_UINT64_T, uint64_t, UINT64_MAX - i);
    ROUND(MPI_AINT, MPI_Aint, -((MPI_Aint)1 << 50) * i);
    ROUND(MPI_OFFSET, MPI_Offset, ((MPI_Offset)1 << 40) * i + 3);
    ROUND(MPI_COUNT, MPI_Count, -((MPI_Count)1 << 45) + i);
    ROUND(MPI_C_COMPLEX, float complex, 1.5f * i + 2.0f * I);
    ROUND(MPI_C_DOUBLE_COMPLEX, double complex, -0.25 * i + 1e100 * I);
    ROUND(MPI_C_LONG_DOUBLE_COMPLEX, long double complex, 1.0L / 7.0L * i - 3.0L * I);
    ROUND(MPI_CXX_BOOL, bool, !(i & 1));
    ROUND(MPI_CXX_FLOAT_COMPLEX, float complex, 0.5f * i);
    ROUND(MPI_CXX_DOUBLE_COMPLEX, double complex, 0.5 * i * I);
    ROUND(MPI_CXX_LONG_DOUBLE_COMPLEX, long double complex, 1e-4000L * i);
    ROUND(MPI_CHARACTER, char, 'A' + i);
    ROUND(MPI_INTEGER, int, 17 * i);
    ROUND(MPI_LOGICAL, int, i & 1);
    ROUND(MPI_REAL, float, 0.1f * i);
    ROUND(MPI_DOUBLE_PRECISION, double, 0.1 * i);
    ROUND(MPI_COMPLEX, float complex, 0.1f * i * I);
    ROUND(MPI_DOUBLE_COMPLEX, double complex, 0.1 * i + 1);
    ROUND(MPI_INTEGER1, int8_t, -i);
    ROUND(MPI_INTEGER2, int16_t, -300 * i);
    ROUND(MPI_INTEGER4, int32_t, -70000 * i);
    ROUND(MPI_INTEGER8, int64_t, -(1LL << 40) * i);
    ROUND(MPI_REAL4, float, 3.0f * i);
    ROUND(MPI_REAL8, double, 3.0 * i);
    ROUND(MPI_REAL16, long double, 3.0L / (i + 1));
    ROUND(MPI_COMPLEX8, float complex, i * I);
    ROUND(MPI_COMPLEX16, double complex, i - I);
    ROUND(MPI_COMPLEX32, long double complex, 1.0L / (i + 1) + I);
    ROUND_PAIR(MPI_FLOAT_INT, float, int, 0.5f * i, -i);
    ROUND_PAIR(MPI_DOUBLE_INT, double, int, 1e-300 * i, 1000 * i);
    ROUND_PAIR(MPI_LONG_INT, long, int, -1000000 * i, i);
    ROUND_PAIR(MPI_SHORT_INT, short, int, -i, 1 << 20);
    ROUND_PAIR(MPI_LONG_DOUBLE_INT, long double, int, 1.0L / (i + 3), -7 * i);
    ROUND_PAIR(MPI_2INT, int, int, i, -i);
    ROUND_PAIR(MPI_2INTEGER, int, int, 3 * i, -3 * i);
    ROUND_PAIR(MPI_2REAL, float, float, 0.25f * i, -0.5f);
    ROUND_PAIR(MPI_2DOUBLE_PRECISION, double, double, 1e10 * i, -1e-10);

    p2p_setstep("derived types");
    {
        struct rec {
            char c;
            long l;
            double d;
            short s[3];
        } in[3], back[3];
        memset(in, 0, sizeof in);
        memset(back, 0, sizeof back);
        for (int i = 0; i < 3; i++) {
            in[i].c = (char)('p' + i);
            in[i].l = -5L * i - 1;
            in[i].d = 0.5 * i;
            for (int j = 0; j < 3; j++)
                in[i].s[j] = (short)(100 * i + j);
        }
        int bl[4] = {1, 1, 1, 3};
        MPI_Aint disp[4] = {offsetof(struct rec, c), offsetof(struct rec, l), offsetof(struct rec, d),
                            offsetof(struct rec, s)};
        MPI_Datatype ty[4] = {MPI_CHAR, MPI_LONG, MPI_DOUBLE, MPI_SHORT}, st, rt;
        MPI_OK(MPI_Type_create_struct(4, bl, disp, ty, &st));
        MPI_OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &rt));
        MPI_OK(MPI_Type_commit(&rt));
        MPI_Aint sz = 0, pos = 0, q = 0;
        MPI_OK(MPI_Pack_external_size(E32, 3, rt, &sz));
        CHECK(sz == 3 * (1 + 4 + 8 + 6), "struct external32 size %ld, expected %d", (long)sz, 3 * 19);
        unsigned char buf[256];
        MPI_OK(MPI_Pack_external(E32, in, 3, rt, buf, sizeof buf, &pos));
        CHECK(pos == sz, "packed %ld", (long)pos);
        /* second record: 'q', -6 as 4 bytes, 0.5, 100 101 102 */
        const unsigned char want[19] = {'q', 0xff, 0xff, 0xff, 0xfa, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 101, 0,
                                        102};
        for (int i = 0; i < 19; i++)
            CHECK(buf[19 + i] == want[i], "struct byte %d is %02x, expected %02x", i, buf[19 + i], want[i]);
        MPI_OK(MPI_Unpack_external(E32, buf, pos, &q, back, 3, rt));
        CHECK(q == pos, "unpacked %ld", (long)q);
        for (int i = 0; i < 3; i++) {
            CHECK(back[i].c == in[i].c && back[i].l == in[i].l && back[i].d == in[i].d, "record %d changed", i);
            for (int j = 0; j < 3; j++)
                CHECK(back[i].s[j] == in[i].s[j], "record %d short %d changed", i, j);
        }
        /* a vector of MPI_LONG, and a pack split over two calls */
        long lv[8], lb[8];
        for (int i = 0; i < 8; i++) {
            lv[i] = 1000L * i - 3;
            lb[i] = 77;
        }
        MPI_Datatype vt;
        MPI_OK(MPI_Type_vector(2, 2, 4, MPI_LONG, &vt));
        MPI_OK(MPI_Type_commit(&vt));
        MPI_OK(MPI_Pack_external_size(E32, 1, vt, &sz));
        CHECK(sz == 16, "vector size %ld", (long)sz);
        pos = 0;
        MPI_OK(MPI_Pack_external(E32, lv, 1, vt, buf, sizeof buf, &pos));
        MPI_OK(MPI_Pack_external(E32, &lv[1], 1, vt, buf, sizeof buf, &pos));
        CHECK(pos == 32, "two packs end at %ld", (long)pos);
        q = 0;
        MPI_OK(MPI_Unpack_external(E32, buf, pos, &q, lb, 1, vt));
        MPI_OK(MPI_Unpack_external(E32, buf, pos, &q, &lb[1], 1, vt));
        const long wantv[8] = {-3, 997, 1997, 77, -3 + 4000, 4997, 5997, 77};
        for (int i = 0; i < 8; i++)
            CHECK(lb[i] == wantv[i], "vector element %d is %ld, expected %ld", i, lb[i], wantv[i]);
        MPI_OK(MPI_Type_free(&vt));
        MPI_OK(MPI_Type_free(&rt));
        MPI_OK(MPI_Type_free(&st));
    }

    p2p_setstep("errors");
    {
        long l[4] = {1, 2, 3, 4};
        unsigned char buf[64];
        MPI_Aint pos = 0;
        MPI_FAILS(MPI_ERR_ARG, MPI_Pack_external(E32, l, 4, MPI_LONG, buf, 15, &pos));
        MPI_OK(MPI_Pack_external(E32, l, 4, MPI_LONG, buf, 16, &pos));
        pos = 0;
        MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Unpack_external(E32, buf, 15, &pos, l, 4, MPI_LONG));
        MPI_FAILS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_Pack_external("native", l, 1, MPI_LONG, buf, 64, &pos));
    }
    MPI_Finalize();
    return 0;
}
