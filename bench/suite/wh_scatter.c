/* wh_scatter: MPI_Scatter latency from root 0 (OSU osu_scatter).  The size is
 * the block each rank receives; the root sends nranks blocks.  Each iteration
 * times one call per rank, then all ranks meet in a barrier; rows report the
 * average per call over ranks (-f: also min and max). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_scatter",
    .what = "MPI_Scatter latency (root 0, size = bytes per rank), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 1, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    if (wb.rank != 0)
        return;
    for (int d = 0; d < wb.nranks; d++)
        wb_fill(sbuf.p + (size_t)d * s, s, wb_seed(0, it, d, s));
}

static void call(size_t s)
{
    MPI_Scatter(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    snprintf(what, sizeof what, "MPI_Scatter size %zu iteration %ld", s, it);
    wb_check(rbuf.p, s, wb_seed(0, it, wb.rank, s), what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.rank == 0 ? (size_t)wb.nranks * wb.o.max_size : 0);
    rbuf = wb_alloc(wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
