#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &n);
    int peer = r == 0 ? 2 : 0, it = argc > 1 ? atoi(argv[1]) : 2000;
    char b[8] = {0};
    static double t[100000];
    if (r == 0 || r == 2) {
        for (int i = 0; i < it; i++) {
            double t0 = MPI_Wtime();
            if (r == 0) { MPI_Send(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD); MPI_Recv(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            else { MPI_Recv(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); MPI_Send(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD); }
            t[i] = (MPI_Wtime() - t0) * 1e6;
        }
        if (r == 0) {
            int h[6] = {0}; double sum = 0;
            for (int i = 0; i < it; i++) { sum += t[i]; h[t[i] < 20 ? 0 : t[i] < 50 ? 1 : t[i] < 100 ? 2 : t[i] < 300 ? 3 : t[i] < 1000 ? 4 : 5]++; }
            printf("avg rtt %.1f us; <20:%d <50:%d <100:%d <300:%d <1000:%d more:%d\n", sum / it, h[0], h[1], h[2], h[3], h[4], h[5]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
