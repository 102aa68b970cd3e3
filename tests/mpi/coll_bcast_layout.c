/* MPI_Bcast where the root and the others describe the same bytes with
 * different layouts (root: contiguous ints; others: a strided vector), at
 * sizes below and above every shared-memory switch point: every rank must
 * take the same algorithm (a layout-dependent choice hung here once). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const int counts[] = {1, 10, 3000, 40000, 300000};
    for (int k = 0; k < 5; k++) {
        int n = counts[k];
        MPI_Datatype vec;
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        int *buf = malloc(sizeof(int) * 2 * (size_t)n);
        for (int i = 0; i < 2 * n; i++)
            buf[i] = rank == 0 ? i * 3 + k : -1;
        MPI_Bcast(buf, rank == 0 ? n : 1, rank == 0 ? MPI_INT : vec, 0, MPI_COMM_WORLD);
        if (rank)
            for (int i = 0; i < 2 * n; i++) {
                int want = i % 2 ? -1 : (i / 2) * 3 + k;
                if (buf[i] != want && errs++ < 5)
                    printf("rank %d: count %d: [%d] = %d, expected %d\n", rank, n, i, buf[i], want);
            }
        /* and the other way round: a strided root, contiguous receivers */
        for (int i = 0; i < 2 * n; i++)
            buf[i] = rank == 0 ? (i % 2 ? -5 : i + k) : -1;
        MPI_Bcast(buf, rank == 0 ? 1 : n, rank == 0 ? vec : MPI_INT, 0, MPI_COMM_WORLD);
        if (rank)
            for (int i = 0; i < n; i++)
                if (buf[i] != 2 * i + k && errs++ < 5)
                    printf("rank %d: count %d reversed: [%d] = %d, expected %d\n", rank, n, i, buf[i], 2 * i + k);
        MPI_Type_free(&vec);
        free(buf);
    }
    int tot = 0;
    MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(tot ? "bcast_layout: %d errors\n" : "bcast_layout: ok (%d ranks)\n", tot ? tot : size);
    MPI_Finalize();
    return tot != 0;
}
