/* wh_bcast: MPI_Bcast latency from root 0 over MPI_COMM_WORLD (OSU osu_bcast).
 * Each iteration times one call per rank, then all ranks meet in a barrier;
 * rows report the average per call over ranks (-f: also min and max). */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_bcast",
    .what = "MPI_Bcast latency (root 0), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 1, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = WB_COLL,
};

static struct wb_mem buf;

static void prepare(size_t s, long it)
{
    if (wb.rank == 0)
        wb_fill(buf.p, s, wb_seed(0, it, 0, s));
}

static void call(size_t s)
{
    MPI_Bcast(buf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    if (wb.rank == 0)
        return;
    snprintf(what, sizeof what, "MPI_Bcast size %zu iteration %ld", s, it);
    wb_check(buf.p, s, wb_seed(0, it, 0, s), what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    buf = wb_alloc(wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
