/* Helpers shared by libmpifort's generated entry points (build/gen/fortran/wharf_fort.c, from
 * tools/gen/genfortran.py) and the hand-written ones (fort_special.c, fort_attr.c).
 *
 * libmpifort is a separate library on top of libmpi's public C API: it includes only <mpi.h>.
 * Handles need no conversion (wharf's C handles are MPICH's integers, MPI_Fint-sized), nor do
 * statuses (MPI_Status is MPI_STATUS_SIZE integers, MPICH's layout).  What needs work:
 *   - the sentinels, which Fortran passes as the addresses of variables in MPICH's common
 *     blocks (mpif.h declares the same blocks, so programs compiled with MPICH's mpif.h work);
 *   - LOGICAL (gfortran: .TRUE. is 1, .FALSE. is 0) and C's nonzero truth;
 *   - CHARACTER arguments: no NUL, blank padded, length passed as a hidden size_t;
 *   - 1-based indices (MPI_Waitany, MPI_Waitsome, ...). */
#ifndef WHARF_FORT_H
#define WHARF_FORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WHF_PUBLIC __attribute__((visibility("default")))
#define WHF_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* MPICH's common blocks (see mpif.h). Default visibility and accessed through the GOT, so when
 * a program's own copy of a block interposes, these names resolve to the program's copy. */
struct whf_priv1 { MPI_Fint bottom, in_place, status_ignore[WHF_STATUS_INTS]; };
struct whf_priv2 { MPI_Fint statuses_ignore[WHF_STATUS_INTS], errcodes_ignore[1]; };
struct whf_privc { char argvs_null[1], argv_null[1]; };
extern struct whf_priv1 mpipriv1_ WHF_PUBLIC;
extern struct whf_priv2 mpipriv2_ WHF_PUBLIC;
extern struct whf_privc mpiprivc_ WHF_PUBLIC;
extern MPI_Fint mpifcmb5_ WHF_PUBLIC; /* MPI_UNWEIGHTED */
extern MPI_Fint mpifcmb9_ WHF_PUBLIC; /* MPI_WEIGHTS_EMPTY */
/* the objects MPICH's mpi_f08 module binds its sentinels to (fort_mpich08.c) */
extern MPI_Fint MPIR_F08_MPI_BOTTOM WHF_PUBLIC;
extern MPI_Fint MPIR_F08_MPI_IN_PLACE WHF_PUBLIC;
extern MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[] WHF_PUBLIC;
extern MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[] WHF_PUBLIC;
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_errcodes_ignore WHF_PUBLIC;
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_unweighted WHF_PUBLIC;
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_weights_empty WHF_PUBLIC;

static inline void *whf_buf(const void *p)
{
    if (p == (const void *)&mpipriv1_.bottom || p == (const void *)&MPIR_F08_MPI_BOTTOM)
        return MPI_BOTTOM;
    if (p == (const void *)&mpipriv1_.in_place || p == (const void *)&MPIR_F08_MPI_IN_PLACE)
        return MPI_IN_PLACE;
    return (void *)p;
}
#define WHF_BUF(p) whf_buf(p)
#define WHF_STATUS(s) \
    ((const void *)(s) == (const void *)mpipriv1_.status_ignore ||                    \
     (const void *)(s) == (const void *)MPIR_F08_MPI_STATUS_IGNORE_OBJ                 \
         ? MPI_STATUS_IGNORE : (MPI_Status *)(s))
#define WHF_STATUSES(s) \
    ((const void *)(s) == (const void *)mpipriv2_.statuses_ignore ||                  \
     (const void *)(s) == (const void *)MPIR_F08_MPI_STATUSES_IGNORE_OBJ               \
         ? MPI_STATUSES_IGNORE : (MPI_Status *)(s))
#define WHF_ERRCODES(e) \
    ((const void *)(e) == (const void *)mpipriv2_.errcodes_ignore ||                  \
     (const void *)(e) == (const void *)&__mpi_f08_link_constants_MOD_mpi_errcodes_ignore \
         ? MPI_ERRCODES_IGNORE : (int *)(e))
static inline int *whf_weights(MPI_Fint *w)
{
    if (w == &mpifcmb5_ || w == &__mpi_f08_link_constants_MOD_mpi_unweighted)
        return MPI_UNWEIGHTED;
    if (w == &mpifcmb9_ || w == &__mpi_f08_link_constants_MOD_mpi_weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return w;
}
#define WHF_WEIGHTS(w) whf_weights(w)

/* LOGICAL <-> C truth (gfortran's representation; MPICH configures the same values). */
#define WHF_TRUE 1
#define WHF_FALSE 0
#define WHF_L2C(v) ((v) != WHF_FALSE)
#define WHF_C2L(v) ((v) ? WHF_TRUE : WHF_FALSE)

/* A Fortran CHARACTER*(len) input as a NUL-terminated copy without the trailing blanks
 * (malloc'ed; NULL when out of memory). */
char *whf_str_f2c(const char *s, size_t len) __attribute__((visibility("hidden")));
/* The same with leading blanks removed too (MPI_INFO_* keys and values, MPI-4.1 10.1). */
char *whf_str_f2c_trim(const char *s, size_t len) __attribute__((visibility("hidden")));
/* MPI-1's INTEGER address arrays as MPI_Aint (malloc'ed, at least one element; NULL when out
 * of memory). */
MPI_Aint *whf_fint_to_aint(const MPI_Fint *a, MPI_Fint n) __attribute__((visibility("hidden")));
/* A scratch buffer for a C string output: room for any MPI string (MPI_MAX_* + 1) and len. */
char *whf_str_out_alloc(size_t len) __attribute__((visibility("hidden")));
/* Copy C string c into the Fortran CHARACTER*(len) f, truncated or blank padded. */
void whf_str_c2f(const char *c, char *f, size_t len) __attribute__((visibility("hidden")));

/* The other three manglings of a Fortran entry point defined as lo_ (gfortran's); UP is the
 * upper-case name as a string (an identifier could be one of mpi.h's macros). */
#define WHF_ALIAS(lo, sym) __asm__(sym) __attribute__((alias(#lo "_"), visibility("default")))
#define WHF_MANGLINGS(lo, UP) \
    extern __typeof__(lo##_) lo##__ WHF_ALIAS(lo, #lo "__"); \
    extern __typeof__(lo##_) lo##_l WHF_ALIAS(lo, #lo); \
    extern __typeof__(lo##_) lo##_U WHF_ALIAS(lo, UP);
/* All eight names (MPI and PMPI, four manglings each) for a hand-written entry point. */
#define WHF_ALL_NAMES(lo, UP) \
    WHF_MANGLINGS(lo, UP) \
    extern __typeof__(lo##_) p##lo##_ WHF_ALIAS(lo, "p" #lo "_"); \
    extern __typeof__(lo##_) p##lo##__ WHF_ALIAS(lo, "p" #lo "__"); \
    extern __typeof__(lo##_) p##lo##_l WHF_ALIAS(lo, "p" #lo); \
    extern __typeof__(lo##_) p##lo##_U WHF_ALIAS(lo, "P" UP);

#endif
