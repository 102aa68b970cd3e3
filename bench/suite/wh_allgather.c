/* wh_allgather: MPI_Allgather latency (OSU osu_allgather).  The size is the
 * block each rank contributes; every rank receives nranks blocks.  Each
 * iteration times one call per rank, then all ranks meet in a barrier; rows
 * report the average per call over ranks (-f: also min and max). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_allgather",
    .what = "MPI_Allgather latency (size = bytes per rank), average per call over ranks (us)",
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
    MPI_Allgather(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    for (int r = 0; r < wb.nranks; r++) {
        snprintf(what, sizeof what, "MPI_Allgather size %zu iteration %ld block of rank %d", s, it, r);
        wb_check(rbuf.p + (size_t)r * s, s, wb_seed(r, it, 0, s), what);
    }
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
