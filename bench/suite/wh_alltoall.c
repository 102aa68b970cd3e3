/* wh_alltoall: MPI_Alltoall latency (OSU osu_alltoall).  The size is the
 * block each rank sends to each other rank.  Each iteration times one call per
 * rank, then all ranks meet in a barrier; rows report the average per call
 * over ranks (-f: also min and max). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_alltoall",
    .what = "MPI_Alltoall latency (size = bytes per rank pair), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 1, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    for (int d = 0; d < wb.nranks; d++)
        wb_fill(sbuf.p + (size_t)d * s, s, wb_seed(wb.rank, it, d, s));
}

static void call(size_t s)
{
    MPI_Alltoall(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    for (int r = 0; r < wb.nranks; r++) {
        snprintf(what, sizeof what, "MPI_Alltoall size %zu iteration %ld block from rank %d", s, it, r);
        wb_check(rbuf.p + (size_t)r * s, s, wb_seed(r, it, wb.rank, s), what);
    }
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    rbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
