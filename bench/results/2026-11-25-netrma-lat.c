/* per-iteration 8 B one-sided latency (lock once, op + flush), median and quartiles */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me; MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *op = argc > 1 ? argv[1] : "put";
    int n = argc > 2 ? atoi(argv[2]) : 1000, wu = 50;
    int64_t *mem; MPI_Win win;
    MPI_Alloc_mem(4096, MPI_INFO_NULL, &mem); memset(mem, 0, 4096);
    MPI_Win_create(mem, 4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    double *dt = malloc(sizeof(double) * (size_t)n);
    int64_t buf[4] = {1, 0, 0, 0};
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int i = -wu; i < n; i++) {
            double t = MPI_Wtime();
            if (!strcmp(op, "put")) MPI_Put(buf, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            else if (!strcmp(op, "get")) MPI_Get(buf + 1, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, win);
            else if (!strcmp(op, "acc")) MPI_Accumulate(buf, 2, MPI_INT, 1, 0, 2, MPI_INT, MPI_SUM, win);
            else MPI_Fetch_and_op(buf, buf + 1, MPI_INT64_T, 1, 0, MPI_SUM, win);
            MPI_Win_flush(1, win);
            if (i >= 0) dt[i] = (MPI_Wtime() - t) * 1e6;
        }
        MPI_Win_unlock(1, win);
        qsort(dt, (size_t)n, sizeof *dt, cmp);
        printf("%s p25 %.2f median %.2f p75 %.2f\n", op, dt[n / 4], dt[n / 2], dt[3 * n / 4]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win); MPI_Free_mem(mem);
    MPI_Finalize();
    return 0;
}
