#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int prov, mt = argc > 1 && atoi(argv[1]);
    if (mt) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov); else MPI_Init(&argc, &argv);
    int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    int cnt = argc > 2 ? atoi(argv[2]) : 524288;
    int *buf = malloc(2 * (size_t)cnt * sizeof(int) * n);
    memset(buf, 1, 2 * (size_t)cnt * sizeof(int) * n);
    MPI_Request q[256];
    for (int rep = 0; rep < 2; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int it = 0; it < 10; it++) {
        for (int p = 0; p < n; p++) {
            MPI_Isend(buf + (size_t)2 * p * cnt, cnt, MPI_INT, p, 1, MPI_COMM_WORLD, &q[2 * p]);
            MPI_Irecv(buf + (size_t)(2 * p + 1) * cnt, cnt, MPI_INT, p, 1, MPI_COMM_WORLD, &q[2 * p + 1]);
        }
        MPI_Waitall(2 * n, q, MPI_STATUSES_IGNORE);
    }
    t = MPI_Wtime() - t;
    if (!r) printf("mt %d cnt %d: %.2f ms per iteration\n", mt, cnt, t / 10 * 1e3);
    }
    MPI_Finalize();
}
