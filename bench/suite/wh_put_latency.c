/* wh_put_latency: latency of MPI_Put (OSU osu_put_latency).
 * Rank 0 is the origin, rank 1 the target of a window on the two of them
 * (MPI_Win_create on MPI_Alloc_mem memory, or MPI_Win_allocate with -w).
 * -s fence: each iteration one MPI_Put, then MPI_Win_fence on both ranks;
 * -s lock:  MPI_Win_lock once per size, then each iteration MPI_Put + MPI_Win_flush.
 * If the library cannot create a window or complete one probe epoch, the
 * benchmark prints "# SKIPPED: one-sided communication not available: ..."
 * and exits 0.  The loop is wb_rma_main() in common.h.  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_put_latency",
    .what = "one-sided MPI_Put latency, rank 0 to rank 1, per put + synchronization (us)",
    .columns = "Latency(us)",
    .min_size = 1, .max_size = 4 << 20, .iters = 10000, .warmup = 100, .window = 0, .elem = 1,
    .flags = WB_NEED2 | WB_PAIR | WB_RMA,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    return wb_rma_main(WB_PUT, WB_LAT);
}
