/* A rank killed (SIGKILL) while the others wait for it inside node
 * shared-memory collectives (tests/arch/rank_kill.py checks that the job
 * ends with an error, quickly, and leaves nothing in the node directory). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static long big[40000];
    for (int it = 0; it < 400; it++) {
        long v = me, s = 0;
        if (it == 300 && me == np - 1) {
            fprintf(stderr, "coll_kill: rank %d kills itself\n", me);
            raise(SIGKILL);
        }
        MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (it % 50 == 0)
            MPI_Allreduce(MPI_IN_PLACE, big, 40000, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    printf("coll_kill: finished, which it must not\n");
    MPI_Finalize();
    return 0;
}
