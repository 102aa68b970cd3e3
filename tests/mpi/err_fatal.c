/* Driven by err_fatal.sh: errors under the default handler end the job.
 *   err_fatal rank     the last rank sends to an invalid rank (MPI_ERRORS_ARE_FATAL)
 *                      while the others wait in MPI_Recv for a message that never comes
 *   err_fatal abort    same with MPI_ERRORS_ABORT set on a duplicate communicator
 *   err_fatal preinit  MPI_Comm_rank before MPI_Init */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "rank";
    int rank = -1, size = 0, x = 0;
    if (!strcmp(mode, "preinit")) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        printf("MPI_Comm_rank before MPI_Init returned\n");
        return 0; /* must not be reached */
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm c = MPI_COMM_WORLD;
    if (!strcmp(mode, "abort")) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_ABORT);
    }
    if (rank == size - 1) {
        MPI_Send(&x, 1, MPI_INT, size + 2, 0, c);
        printf("rank %d: MPI_Send to an invalid rank returned\n", rank);
    } else {
        MPI_Recv(&x, 1, MPI_INT, size - 1, 0, c, MPI_STATUS_IGNORE);
        printf("rank %d: MPI_Recv returned\n", rank);
    }
    MPI_Finalize();
    return 0;
}
