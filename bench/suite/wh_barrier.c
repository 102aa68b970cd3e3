/* wh_barrier: MPI_Barrier latency over MPI_COMM_WORLD (OSU osu_barrier).
 * Each rank times ITERS back-to-back barriers after WARMUP untimed ones; the
 * row reports the average per call over ranks (with -f also min and max).
 * There is no message size: the single row has size 0.  -c is accepted (there
 * is no data to check). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_barrier",
    .what = "MPI_Barrier latency, average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 0, .max_size = 0, .iters = 1000, .warmup = 100, .elem = 0,
    .flags = WB_COLL | WB_NOSIZE,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    int it = wb.o.iters, wu = wb.o.warmup;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < wu; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < it; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    wb_coll_report(0, t * 1e6 / it);
    return wb_finish_all();
}
