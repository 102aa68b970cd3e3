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

    CHECK(MPI_Type_create_f90_integer(2, &t) == MPI_SUCCESS && t == MPI_INTEGER1, "f90_integer(2)");
    CHECK(MPI_Type_create_f90_integer(9, &t) == MPI_SUCCESS && t == MPI_INTEGER4, "f90_integer(9)");
    CHECK(MPI_Type_create_f90_integer(10, &t) == MPI_SUCCESS && t == MPI_INTEGER8, "f90_integer(10)");
    CHECK(MPI_Type_create_f90_integer(40, &t) != MPI_SUCCESS, "f90_integer(40) refused");
    CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t) == MPI_SUCCESS && t == MPI_REAL4, "f90_real(6)");
    CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t) == MPI_SUCCESS && t == MPI_REAL8,
          "f90_real(r=300)");
    CHECK(MPI_Type_create_f90_real(30, 100, &t) == MPI_SUCCESS && t == MPI_REAL16, "f90_real(30)");
    CHECK(MPI_Type_create_f90_real(17, 100, &t) != MPI_SUCCESS, "REAL(KIND=10) refused");
    CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t) != MPI_SUCCESS,
          "both MPI_UNDEFINED refused");
    CHECK(MPI_Type_create_f90_complex(15, 0, &t) == MPI_SUCCESS && t == MPI_COMPLEX16, "f90_complex(15)");
    MPI_Type_size(t, &size);
    CHECK(size == 16, "MPI_COMPLEX16 size %d", size);
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
