/* wh_ibarrier: MPI_Ibarrier overlapped with computation (OSU osu_ibarrier).  There is no message size: one row, size 0.
 * Per size (nbc.h): pure = start + MPI_Wait; overall = start, computation as
 * long as the slowest rank's pure time (MPI_Test about every 10 us), MPI_Wait.
 * Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over ranks (us, us, us, %). */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_ibarrier",
    .what = "MPI_Ibarrier (no data) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 0, .max_size = 0, .iters = 1000, .warmup = 100, .elem = 0,
    .flags = WB_NOSIZE,
};

static void start(size_t s, MPI_Request *req)
{
    (void)s;
    WB_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, req));
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    static const struct wb_nbc c = {NULL, start, NULL};
    return wb_nbc_run(&c);
}
