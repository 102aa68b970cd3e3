/* MPICH's mpi_f08 ABI, the part that is not a procedure of the standard: the sentinel objects
 * MPICH's module binds to (MPIR_F08_MPI_BOTTOM & co., the mpi_f08_link_constants module
 * variables), the handle comparison operators of its mpi_f08_types module, its predefined
 * callbacks (mpi_f08_callbacks) and MPI_SIZEOF procedures.  The procedures themselves
 * (mpi_send_f08ts_ & co.) are generated (build/gen/fortran/mpi_f08_mpich.f90). */
#include "fort.h"

/* Sentinels: a program built with MPICH's mpi_f08 module passes these addresses; fort.h's
 * whf_buf, WHF_STATUS, ... recognize them (through the GOT, so the program's copies win). */
#define WHF_OBJ __attribute__((aligned(16)))
MPI_Fint MPIR_F08_MPI_BOTTOM WHF_OBJ;
MPI_Fint MPIR_F08_MPI_IN_PLACE WHF_OBJ;
MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[WHF_STATUS_INTS] WHF_OBJ;
MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[WHF_STATUS_INTS] WHF_OBJ;
MPI_Fint __mpi_f08_link_constants_MOD_mpi_errcodes_ignore WHF_OBJ;
MPI_Fint __mpi_f08_link_constants_MOD_mpi_unweighted WHF_OBJ;
MPI_Fint __mpi_f08_link_constants_MOD_mpi_weights_empty WHF_OBJ;
char __mpi_f08_link_constants_MOD_mpi_argv_null WHF_OBJ;
char __mpi_f08_link_constants_MOD_mpi_argvs_null WHF_OBJ;

/* ==, /= of every handle type, also against a plain INTEGER handle (elemental LOGICAL
 * functions: arguments by reference). */
#define WHF_CMP(t)                                                                             \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_eq(const MPI_Fint *a, const MPI_Fint *b)  \
    { return WHF_C2L(*a == *b); }                                                              \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_neq(const MPI_Fint *a, const MPI_Fint *b) \
    { return WHF_C2L(*a != *b); }                                                              \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_f08_eq_f(const MPI_Fint *a, const MPI_Fint *b) \
    { return WHF_C2L(*a == *b); }                                                              \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_f08_neq_f(const MPI_Fint *a, const MPI_Fint *b) \
    { return WHF_C2L(*a != *b); }                                                              \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_f_eq_f08(const MPI_Fint *a, const MPI_Fint *b) \
    { return WHF_C2L(*a == *b); }                                                              \
    WHF_PUBLIC MPI_Fint __mpi_f08_types_MOD_mpi_##t##_f_neq_f08(const MPI_Fint *a, const MPI_Fint *b) \
    { return WHF_C2L(*a != *b); }
WHF_CMP(comm)
WHF_CMP(datatype)
WHF_CMP(errhandler)
WHF_CMP(file)
WHF_CMP(group)
WHF_CMP(info)
WHF_CMP(message)
WHF_CMP(op)
WHF_CMP(request)
WHF_CMP(session)
WHF_CMP(win)

/* MPI_SIZEOF of MPICH's mpi_f08 (X, SIZE, IERROR optional): the size of one element. */
#define WHF_F08_SIZEOF(suffix, bytes)                                                          \
    WHF_PUBLIC void __mpi_f08_types_MOD_mpi_sizeof_##suffix(void *x, MPI_Fint *size, MPI_Fint *ierr) \
    {                                                                                          \
        (void)x;                                                                               \
        *size = (bytes);                                                                       \
        if (ierr)                                                                              \
            *ierr = MPI_SUCCESS;                                                               \
    }
WHF_F08_SIZEOF(character, 1)
WHF_F08_SIZEOF(logical, 4)
WHF_F08_SIZEOF(xint8, 1)
WHF_F08_SIZEOF(xint16, 2)
WHF_F08_SIZEOF(xint32, 4)
WHF_F08_SIZEOF(xint64, 8)
WHF_F08_SIZEOF(xreal32, 4)
WHF_F08_SIZEOF(xreal64, 8)
WHF_F08_SIZEOF(xreal128, 16)
WHF_F08_SIZEOF(xcomplex32, 8)
WHF_F08_SIZEOF(xcomplex64, 16)
WHF_F08_SIZEOF(xcomplex128, 32)
