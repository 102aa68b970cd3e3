/* The C side of the Fortran support, from C: MPI_Type_create_f90_integer/real/complex (the
 * sized types, MPI_UNDEFINED arguments, refusals), MPI_Status_c2f08/f082c/f082f/f2f08 round
 * trips and their refusals of the IGNORE sentinels, MPI_Type_match_size. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAILED line %d: ", __LINE__);                                         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    int size;

    /* MPI_COMBINER_F90_* types (src/mpi/f90types.c, checked in detail by
     * tests/mpi/corners41.c): the sizes of gfortran's kinds */
    static const struct { int which, p, r, bytes; } f90[] = {
        {0, MPI_UNDEFINED, 2, 1}, {0, MPI_UNDEFINED, 9, 4}, {0, MPI_UNDEFINED, 10, 8},
        {1, 6, MPI_UNDEFINED, 4}, {1, MPI_UNDEFINED, 300, 8}, {1, 30, 100, 16},
        {2, 15, 0, 16},
    };
    for (unsigned i = 0; i < sizeof f90 / sizeof f90[0]; i++) {
        int rc = f90[i].which == 0   ? MPI_Type_create_f90_integer(f90[i].r, &t)
                 : f90[i].which == 1 ? MPI_Type_create_f90_real(f90[i].p, f90[i].r, &t)
                                     : MPI_Type_create_f90_complex(f90[i].p, f90[i].r, &t);
        CHECK(rc == MPI_SUCCESS, "f90 type %u", i);
        MPI_Type_size(t, &size);
        CHECK(size == f90[i].bytes, "f90 type %u: size %d, expected %d", i, size, f90[i].bytes);
    }
    CHECK(MPI_Type_create_f90_integer(40, &t) != MPI_SUCCESS, "f90_integer(40) refused");
    CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t) != MPI_SUCCESS,
          "both MPI_UNDEFINED refused");
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t) == MPI_SUCCESS && t == MPI_INTEGER8,
          "match_size");

    MPI_Status c = {0}, c2 = {0};
    MPI_F08_status f08;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    c.MPI_SOURCE = 3;
    c.MPI_TAG = 44;
    c.MPI_ERROR = MPI_ERR_TRUNCATE;
    MPI_Status_set_elements(&c, MPI_INT, 12345);
    CHECK(MPI_Status_c2f08(&c, &f08) == MPI_SUCCESS && f08.MPI_TAG == 44 && f08.MPI_SOURCE == 3,
          "c2f08");
    CHECK(MPI_Status_f082f(&f08, f) == MPI_SUCCESS && f[MPI_F_TAG] == 44 &&
              f[MPI_F_ERROR] == MPI_ERR_TRUNCATE, "f082f");
    CHECK(MPI_Status_f2f08(f, &f08) == MPI_SUCCESS && MPI_Status_f082c(&f08, &c2) == MPI_SUCCESS,
          "f2f08, f082c");
    int count = 0;
    MPI_Get_count(&c2, MPI_INT, &count);
    CHECK(count == 12345 && c2.MPI_SOURCE == 3 && c2.MPI_ERROR == MPI_ERR_TRUNCATE,
          "round trip keeps count %d and fields", count);
    CHECK(MPI_Status_c2f08(MPI_STATUS_IGNORE, &f08) != MPI_SUCCESS, "c2f08(MPI_STATUS_IGNORE) refused");
    CHECK(MPI_Status_f082c(&f08, MPI_STATUS_IGNORE) != MPI_SUCCESS, "f082c(.., MPI_STATUS_IGNORE) refused");
    /* no libmpifort in this program: the Fortran sentinels are not set */
    CHECK(MPI_F_STATUS_IGNORE == NULL, "MPI_F_STATUS_IGNORE without libmpifort");

    MPI_Finalize();
    if (failures)
        return 1;
    printf("c_interop: ok\n");
    return 0;
}
