/* wh_reduce_scatter: MPI_Reduce_scatter_block latency, MPI_FLOAT + MPI_SUM
 * (OSU osu_reduce_scatter).  The size is the block each rank receives (count =
 * size / sizeof(float)); every rank contributes nranks blocks.  Each iteration
 * times one call per rank, then all ranks meet in a barrier. */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_reduce_scatter",
    .what = "MPI_Reduce_scatter_block latency (MPI_FLOAT, MPI_SUM, size = bytes per rank's block), "
            "average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 4, .max_size = 1 << 20, .iters = 1000, .warmup = 100, .elem = sizeof(float),
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    wb_rfill((float *)sbuf.p, s / sizeof(float) * (size_t)wb.nranks, wb.rank, it);
}

static void call(size_t s)
{
    MPI_Reduce_scatter_block(sbuf.p, rbuf.p, (int)(s / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    size_t count = s / sizeof(float);
    snprintf(what, sizeof what, "MPI_Reduce_scatter_block size %zu iteration %ld", s, it);
    wb_rcheck_off((const float *)rbuf.p, count, count * (size_t)wb.rank, wb.nranks, it, what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    rbuf = wb_alloc(wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
