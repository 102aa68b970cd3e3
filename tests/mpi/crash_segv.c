/* Rank 1 dies of SIGSEGV after MPI_Init (used by tests/arch/crash.sh): the
 * launcher must report the signal, not a plain exit status. */
#include <mpi.h>
#include <signal.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (r == 1)
        raise(SIGSEGV);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
