/* Large contiguous puts and gets to and from node-region windows are copied
 * with streaming stores (src/rma/ops.c, WHARF_RMA_STREAM_MIN): every byte
 * must arrive, whatever the alignment of origin and target (heads and tails
 * shorter than a cache line; bodies cut into WHARF_RMA_STREAM_WAYS parts with
 * a remainder), next to bytes that must stay untouched.  Each
 * rank puts into and gets from its right neighbour (itself on one rank). */
#include <string.h>

#include "p2p_check.h"

enum { BIG = (2 << 20) + 77, WIN = BIG + 4096 };

static unsigned char pat(int rank, int shift, size_t i)
{
    return (unsigned char)(i * 131 + (size_t)rank * 17 + (size_t)shift * 7 + 1);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *mem, *src = malloc(BIG + 64), *dst = malloc(BIG + 64);
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    /* origin offset, target offset, length (0: BIG - k * 1000); the short ones
     * take the streaming path only with WHARF_RMA_STREAM_MIN=1, with a line
     * count that leaves a remainder for every WHARF_RMA_STREAM_WAYS */
    static const int shifts[][3] = {{0, 0, 0},   {3, 0, 0},     {0, 5, 0},   {13, 61, 0}, {64, 1, 0},
                                    {1, 2, 1},   {0, 0, 63},    {7, 9, 64},  {0, 63, 65}, {5, 3, 200},
                                    {60, 4, 4109}, {2, 17, 64 * 17 + 5}};
    for (unsigned k = 0; k < sizeof shifts / sizeof shifts[0]; k++) {
        int so = shifts[k][0], to = shifts[k][1];
        size_t len = shifts[k][2] ? (size_t)shifts[k][2] : BIG - (size_t)k * 1000;
        p2p_setstep("put: origin offset %d, target offset %d", so, to);
        memset(mem, 0xee, WIN);
        for (size_t i = 0; i < len; i++)
            src[so + i] = pat(me, (int)k, i);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        MPI_OK(MPI_Put(src + so, (int)len, MPI_BYTE, right, to, (int)len, MPI_BYTE, win));
        MPI_OK(MPI_Win_unlock(right, win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
        for (size_t i = 0; i < WIN; i++) {
            unsigned char want = i >= (size_t)to && i < to + len ? pat(left, (int)k, i - (size_t)to) : 0xee;
            CHECK(mem[i] == want, "window byte %zu = 0x%02x, want 0x%02x", i, mem[i], want);
            if (mem[i] != want)
                break;
        }
        MPI_OK(MPI_Win_unlock(me, win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        p2p_setstep("get: origin offset %d, target offset %d", so, to);
        memset(dst, 0xdd, BIG + 64);
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        MPI_OK(MPI_Get(dst + so, (int)len, MPI_BYTE, right, to, (int)len, MPI_BYTE, win));
        MPI_OK(MPI_Win_unlock(right, win));
        for (size_t i = 0; i < BIG + 64; i++) {
            unsigned char want = i >= (size_t)so && i < so + len ? pat(me, (int)k, i - (size_t)so) : 0xdd;
            CHECK(dst[i] == want, "result byte %zu = 0x%02x, want 0x%02x", i, dst[i], want);
            if (dst[i] != want)
                break;
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Win_free(&win));
    free(src);
    free(dst);
    MPI_Finalize();
    if (me == 0)
        printf("rma_stream: OK on %d ranks\n", n);
    return 0;
}
