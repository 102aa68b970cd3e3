/* wh_acc_latency: latency of MPI_Accumulate, MPI_INT + MPI_SUM (OSU osu_acc_latency).
 * Rank 0 is the origin, rank 1 the target of a window on the two of them
 * (MPI_Win_create on MPI_Alloc_mem memory, or MPI_Win_allocate with -w).
 * -s fence: each iteration one MPI_Accumulate, then MPI_Win_fence on both ranks;
 * -s lock:  MPI_Win_lock once per size, then each iteration MPI_Accumulate + MPI_Win_flush.
 * Sizes are in bytes (count = size / sizeof(int)); sizes below 4 are skipped.
 * If the library cannot create a window or complete one probe epoch, the
 * benchmark prints "# SKIPPED: one-sided communication not available: ..."
 * and exits 0.  The loop is wb_rma_main() in common.h.  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_acc_latency",
    .what = "one-sided MPI_Accumulate (MPI_INT, MPI_SUM) latency, rank 0 to rank 1, per op + synchronization (us)",
    .columns = "Latency(us)",
    .min_size = 4, .max_size = 4 << 20, .iters = 10000, .warmup = 100, .window = 0, .elem = 4,
    .flags = WB_NEED2 | WB_PAIR | WB_RMA,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    return wb_rma_main(WB_ACC, WB_LAT);
}
