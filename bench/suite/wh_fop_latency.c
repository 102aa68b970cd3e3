/* wh_fop_latency: latency of MPI_Fetch_and_op, MPI_INT64_T + MPI_SUM (OSU osu_fop_latency).
 * Rank 0 is the origin, rank 1 the target of a window on the two of them
 * (MPI_Win_create on MPI_Alloc_mem memory, or MPI_Win_allocate with -w).
 * -s fence: each iteration one MPI_Fetch_and_op, then MPI_Win_fence on both ranks;
 * -s lock:  MPI_Win_lock once, then each iteration MPI_Fetch_and_op + MPI_Win_flush.
 * One size only: 8 bytes (other sizes of -m are skipped).  With -c the target
 * checks that it holds the number of operations.  If the library cannot
 * create a window or complete one probe epoch, the benchmark prints
 * "# SKIPPED: one-sided communication not available: ..." and exits 0.  The
 * loop is wb_rma_main() in rma.h.  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_fop_latency",
    .what = "one-sided MPI_Fetch_and_op (MPI_INT64_T, MPI_SUM) latency, rank 0 to rank 1, per op + synchronization (us)",
    .columns = "Latency(us)",
    .min_size = 8, .max_size = 8, .iters = 10000, .warmup = 100, .window = 0, .elem = 8,
    .flags = WB_NEED2 | WB_PAIR | WB_RMA,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    return wb_rma_main(WB_FOP, WB_LAT);
}
