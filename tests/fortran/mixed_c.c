/* C half of the mixed-language test (f90_mixed.f90): Fortran handles and statuses seen from C. */
#include <mpi.h>
#include <stdio.h>

/* Called from Fortran with MPI_STATUS_IGNORE, a received status and MPI_COMM_WORLD as an
 * INTEGER; returns the number of failed checks. */
int wharf_mixed_check(MPI_Fint *ignore, MPI_Fint *fstatus, MPI_Fint *fcomm)
{
    int bad = 0;
    MPI_Status c;
    MPI_F08_status f08;
    MPI_Fint back[MPI_F_STATUS_SIZE];
    if (ignore != MPI_F_STATUS_IGNORE) {
        fprintf(stderr, "MPI_F_STATUS_IGNORE %p is not Fortran's MPI_STATUS_IGNORE %p\n",
                (void *)MPI_F_STATUS_IGNORE, (void *)ignore);
        bad++;
    }
    if (MPI_Comm_f2c(*fcomm) != MPI_COMM_WORLD) {
        fprintf(stderr, "MPI_Comm_f2c(MPI_COMM_WORLD from Fortran) is not MPI_COMM_WORLD\n");
        bad++;
    }
    if (MPI_Status_f2c(fstatus, &c) != MPI_SUCCESS || c.MPI_SOURCE != fstatus[MPI_F_SOURCE] ||
        c.MPI_TAG != 77) {
        fprintf(stderr, "MPI_Status_f2c: tag %d\n", c.MPI_TAG);
        bad++;
    }
    if (MPI_Status_f2f08(fstatus, &f08) != MPI_SUCCESS || f08.MPI_TAG != 77 ||
        MPI_Status_f082f(&f08, back) != MPI_SUCCESS || back[MPI_F_TAG] != 77 ||
        back[MPI_F_SOURCE] != fstatus[MPI_F_SOURCE]) {
        fprintf(stderr, "MPI_Status_f2f08/f082f round trip\n");
        bad++;
    }
    int count = -1;
    if (MPI_Get_count(&c, MPI_INTEGER, &count) != MPI_SUCCESS || count != 3) {
        fprintf(stderr, "MPI_Get_count on the converted status: %d\n", count);
        bad++;
    }
    return bad;
}
