#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, n = 500, v[8], w[8] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm c;
    double t;
    for (int rep = 0; rep < 2; rep++) {
    MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime();
    for (int i = 0; i < n; i++) MPI_Allgather(&r, 2, MPI_INT, v, 2, MPI_INT, MPI_COMM_WORLD);
    if (!r) printf("allgather %.1f us\n", (MPI_Wtime() - t) / n * 1e6);
    MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime();
    for (int i = 0; i < n; i++) MPI_Allreduce(&r, w, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!r) printf("allreduce %.1f us\n", (MPI_Wtime() - t) / n * 1e6);
    MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime();
    for (int i = 0; i < n; i++) { MPI_Comm_split(MPI_COMM_WORLD, 1, r, &c); MPI_Comm_free(&c); }
    if (!r) printf("split+free %.1f us\n", (MPI_Wtime() - t) / n * 1e6);
    MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime();
    for (int i = 0; i < n; i++) { MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, r, &c); }
    if (!r) printf("split undef %.1f us\n", (MPI_Wtime() - t) / n * 1e6);
    MPI_Barrier(MPI_COMM_WORLD); t = MPI_Wtime();
    for (int i = 0; i < n; i++) { MPI_Comm_dup(MPI_COMM_WORLD, &c); MPI_Comm_free(&c); }
    if (!r) printf("dup+free %.1f us\n", (MPI_Wtime() - t) / n * 1e6);
    }
    MPI_Finalize();
}
