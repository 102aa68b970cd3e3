/* A large MPI_Win_allocate window (64 MiB per rank, like bench/suite's
 * wh_put_bw slots) with 4 MiB puts and gets between two ranks under
 * lock/flush, values checked.  Among co-residents the window must land in
 * the node region (puts and gets are load/store: tests/rma checks
 * WHARF_REPORT=channels for shm/load-store and no shm/cma); with the node
 * heap's old 64 MiB budget it fell back to private memory and CMA, one
 * process_vm_writev/readv per operation. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN ((MPI_Aint)64 << 20)
#define MSG (4 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    unsigned char *src = malloc(MSG), *dst = malloc(MSG);
    int peer = (rank + 1) % n;
    for (int slot = 0; slot < 16; slot += 5) {
        for (int i = 0; i < MSG; i++)
            src[i] = (unsigned char)(i * 7 + slot + rank);
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        MPI_Put(src, MSG, MPI_BYTE, peer, (MPI_Aint)slot * MSG, MSG, MPI_BYTE, win);
        MPI_Win_flush(peer, win);
        memset(dst, 0, MSG);
        MPI_Get(dst, MSG, MPI_BYTE, peer, (MPI_Aint)slot * MSG, MSG, MPI_BYTE, win);
        MPI_Win_unlock(peer, win);
        if (memcmp(src, dst, MSG))
            bad++;
    }
    MPI_Win_free(&win);
    free(src);
    free(dst);
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_bigwin: %s\n", all ? "FAILED" : "ok");
    MPI_Finalize();
    return all != 0;
}
