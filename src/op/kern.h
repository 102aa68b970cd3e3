/* Private to src/op: the element kinds predefined ops compute on, the type
 * groups of the MPI standard (MPI-4.1 section 6.9.2), and the table of
 * reduction loops, one per (op, kind). */
#ifndef WH_OP_KERN_H
#define WH_OP_KERN_H
#include <stddef.h>
#include "op/op.h"

/* C representation of one element */
enum wh_opk_kind {
    WH_K_NONE = 0,
    WH_K_I8, WH_K_U8, WH_K_I16, WH_K_U16, WH_K_I32, WH_K_U32, WH_K_I64, WH_K_U64,
    WH_K_F32, WH_K_F64, WH_K_F80,   /* float, double, long double */
    WH_K_F128,                      /* IEEE quad (Fortran REAL*16) */
    WH_K_F16,                       /* IEEE half (_Float16, MPIX_C_FLOAT16) */
    WH_K_C32, WH_K_C64, WH_K_C80,   /* float/double/long double _Complex */
    WH_K_C128,                      /* COMPLEX*32: two IEEE quads */
    /* value-index pairs (MINLOC/MAXLOC) */
    WH_K_FLOAT_INT, WH_K_DOUBLE_INT, WH_K_LONG_INT, WH_K_2INT, WH_K_SHORT_INT, WH_K_LDOUBLE_INT,
    WH_K_2FLOAT, WH_K_2DOUBLE,
    WH_K_COUNT
};

/* type groups (bit mask) */
enum wh_opk_group {
    WH_G_CINT = 1 << 0,    /* C integer */
    WH_G_FINT = 1 << 1,    /* Fortran integer */
    WH_G_FLOAT = 1 << 2,   /* floating point */
    WH_G_LOGICAL = 1 << 3, /* logical */
    WH_G_COMPLEX = 1 << 4, /* complex */
    WH_G_BYTE = 1 << 5,    /* byte */
    WH_G_MULTI = 1 << 6,   /* multi-language types (MPI_AINT, MPI_OFFSET, MPI_COUNT) */
    WH_G_PAIR = 1 << 7,    /* MINLOC/MAXLOC pair types */
};

/* in[0..n) op inout[0..n) -> inout; both suitably aligned for the kind */
typedef void wh_opk_fn(const void *in, void *inout, size_t n);

/* out[0..n) = in[0..n) op b[0..n) in one pass (no buffer overlaps another) */
typedef void wh_opk3_fn(const void *in, const void *b, void *out, size_t n);

extern wh_opk_fn *const wh_opk_table[WH_OPI_COUNT][WH_K_COUNT];
extern wh_opk3_fn *const wh_opk3_table[WH_OPI_COUNT][WH_K_COUNT];
extern const unsigned char wh_opk_size[WH_K_COUNT];
extern const unsigned char wh_opk_align[WH_K_COUNT];
/* data bytes of one element: == size except for pairs, whose padding is not
 * data (MPI_Type_size(MPI_DOUBLE_INT) is 12, its extent 16) */
extern const unsigned char wh_opk_dsize[WH_K_COUNT];
/* groups each predefined op is defined on */
extern const int wh_opk_groups[WH_OPI_COUNT];
#endif
