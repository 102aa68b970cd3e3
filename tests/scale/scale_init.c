/* Scale check (tests/scale/check_scale.py): many ranks on few cores.  Reports
 * the slowest rank's MPI_Init time and checks an all-to-all of small and
 * slot-sized messages (every pair talks, so every ring and every pool is used). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double t0 = now();
    MPI_Init(&argc, &argv);
    double d = now() - t0, worst = 0;
    int r, n, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Reduce(&d, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    /* every pair: 8 bytes inline and 1000 bytes through a pool slot */
    enum { BIG = 250 };
    int *sb = malloc(sizeof(int) * (size_t)n * BIG), *rb = malloc(sizeof(int) * (size_t)n * BIG);
    if (!sb || !rb)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int k = 1; k <= BIG; k += BIG - 1) {
        for (int p = 0; p < n; p++)
            for (int i = 0; i < k; i++)
                sb[p * k + i] = r * 100000 + p * 300 + i;
        memset(rb, 0xff, sizeof(int) * (size_t)n * (size_t)k);
        MPI_Alltoall(sb, k, MPI_INT, rb, k, MPI_INT, MPI_COMM_WORLD);
        for (int p = 0; p < n; p++)
            for (int i = 0; i < k; i++)
                if (rb[p * k + i] != p * 100000 + r * 300 + i)
                    bad++;
    }
    int allbad = 0;
    MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0)
        printf("scale: %d ranks, slowest MPI_Init %.3f s, %d wrong values\n", n, worst, allbad);
    free(sb);
    free(rb);
    MPI_Finalize();
    return allbad ? 1 : 0;
}
