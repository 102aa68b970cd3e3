/* MPI_Init time: every rank measures its own MPI_Init (CLOCK_MONOTONIC, as
 * MPI_Wtime is not defined before it); rank 0 prints the slowest.  Plain MPI.
 *   mpicc -O2 -o inittime bench/inittime.c && wharfrun -n 64 ./inittime */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double t0 = now();
    MPI_Init(&argc, &argv);
    double d = now() - t0, mx = 0;
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Reduce(&d, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (r == 0)
        printf("ranks %d init_max_ms %.1f\n", n, mx * 1e3);
    MPI_Finalize();
    return 0;
}
