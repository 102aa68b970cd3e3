/* wh_put_bw: bandwidth of MPI_Put (OSU osu_put_bw).
 * Rank 0 is the origin, rank 1 the target of a window on the two of them
 * (MPI_Win_create on MPI_Alloc_mem memory, or MPI_Win_allocate with -w).
 * -s fence: each iteration WINDOW MPI_Put to distinct slots, then MPI_Win_fence;
 * -s lock:  MPI_Win_lock once per size, then each iteration WINDOW MPI_Put + MPI_Win_flush.
 * If the library cannot create a window or complete one probe epoch, the
 * benchmark prints "# SKIPPED: one-sided communication not available: ..."
 * and exits 0.  The loop is wb_rma_main() in common.h.  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_put_bw",
    .what = "one-sided MPI_Put bandwidth, window of puts from rank 0 to rank 1 (MB/s)",
    .columns = "Bandwidth(MB/s)",
    .min_size = 1, .max_size = 4 << 20, .iters = 100, .warmup = 10, .window = 64, .elem = 1,
    .flags = WB_NEED2 | WB_PAIR | WB_RMA | WB_WINDOW,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    return wb_rma_main(WB_PUT, WB_BW);
}
