/* wh_gather: MPI_Gather latency to root 0 (OSU osu_gather).  The size is the
 * block each rank contributes; the root receives nranks blocks.  Each
 * iteration times one call per rank, then all ranks meet in a barrier; rows
 * report the average per call over ranks (-f: also min and max). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_gather",
    .what = "MPI_Gather latency (root 0, size = bytes per rank), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 1, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    wb_fill(sbuf.p, s, wb_seed(wb.rank, it, 0, s));
}

static void call(size_t s)
{
    MPI_Gather(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    if (wb.rank != 0)
        return;
    for (int r = 0; r < wb.nranks; r++) {
        snprintf(what, sizeof what, "MPI_Gather size %zu iteration %ld block of rank %d", s, it, r);
        wb_check(rbuf.p + (size_t)r * s, s, wb_seed(r, it, 0, s), what);
    }
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc(wb.rank == 0 ? (size_t)wb.nranks * wb.o.max_size : 0);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
