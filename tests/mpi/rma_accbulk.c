/* Accumulates of integer elements by both mechanisms on one node-region
 * window at once: large ones (at least WHARF_RMA_ACC_BULK bytes: one plain
 * pass holding the lock word exclusively) and small ones (fetch-and-op and
 * single-element accumulates: CPU atomics holding it shared), from every
 * rank into rank 0's memory.  No update may be lost: rank 0 checks every
 * element's exact total.  The bulk path exists because MPICH's
 * rma/large_acc_flush_local (hundreds of 2 MiB MPI_CHAR accumulates) took an
 * atomic instruction per byte and did not finish in its time limit. */
#include "p2p_check.h"

enum { N = 2048, ITER = 200 };

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    int *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < N; i++)
        mem[i] = 0;
    int *ones = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    signed char cbuf[3000];
    for (int i = 0; i < 3000; i++)
        cbuf[i] = (signed char)1;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    p2p_setstep("mixed accumulates");
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < ITER; it++) {
        int one = 1, got;
        MPI_OK(MPI_Accumulate(ones, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT, 0, it % N, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, (me * 7 + it) % N, 1, MPI_INT, MPI_SUM, win));
        if (it % 16 == 0)
            MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        int *want = calloc(N, sizeof(int));
        for (int r = 0; r < n; r++)
            for (int it = 0; it < ITER; it++) {
                want[it % N]++;
                want[(r * 7 + it) % N]++;
            }
        for (int i = 0; i < N; i++)
            CHECK(mem[i] == ITER * n + want[i], "element %d = %d, want %d (an update was lost)", i, mem[i],
                  ITER * n + want[i]);
        free(want);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* bytes (the MPICH case): large MPI_CHAR sums wrap per element, never carry into a neighbour */
    p2p_setstep("byte sums");
    MPI_OK(MPI_Win_fence(0, win));
    if (me == 0)
        for (int i = 0; i < N; i++)
            mem[i] = 0;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < 300; it++)
        MPI_OK(MPI_Accumulate(cbuf, it % 2 ? 3000 : 5, MPI_SIGNED_CHAR, 0, 0, it % 2 ? 3000 : 5, MPI_SIGNED_CHAR,
                              MPI_SUM, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        const signed char *b = (const signed char *)mem;
        for (int i = 0; i < 3000; i++) {
            int total = n * (i < 5 ? 300 : 150);
            signed char w = (signed char)(unsigned char)(total & 0xff);
            CHECK(b[i] == w, "byte %d = %d, want %d", i, b[i], w);
        }
    }
    MPI_OK(MPI_Win_free(&win));
    free(ones);
    MPI_Finalize();
    if (me == 0)
        printf("rma_accbulk: OK on %d ranks\n", n);
    return 0;
}
