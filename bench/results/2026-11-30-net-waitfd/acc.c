/* 1000 fenced epochs of 8-int MPI_Accumulate to every rank; rank 0 prints the time per epoch.
 * docs/PERFORMANCE.md (2026-11-30, "the completion queue's wait fd back"):
 *   build/bin/mpicc -O2 -o acc acc.c
 *   python3 tests/scenarios/wharfns.py run isolated -n 4 --wharfrun build/bin/wharfrun -- ./acc */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    int buf[64] = {0}, src[64];
    for (int i = 0; i < 64; i++) src[i] = i;
    MPI_Win w; MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    double t0 = MPI_Wtime();
    for (int it = 0; it < 1000; it++) {
        MPI_Win_fence(0, w);
        for (int p = 0; p < n; p++) MPI_Accumulate(src, 8, MPI_INT, p, 0, 8, MPI_INT, MPI_SUM, w);
        MPI_Win_fence(0, w);
    }
    double t = MPI_Wtime() - t0;
    if (r == 0) printf("%.1f us per epoch\n", t / 1000 * 1e6);
    MPI_Win_free(&w); MPI_Finalize(); return 0;
}
