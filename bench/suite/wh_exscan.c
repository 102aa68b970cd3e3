/* wh_exscan: MPI_Exscan latency, MPI_FLOAT + MPI_SUM (OSU osu_exscan).  Sizes are in bytes
 * (count = size / sizeof(float)).  Each iteration times one call per rank, then
 * all ranks meet in a barrier; rows report the average per call over ranks. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_exscan",
    .what = "MPI_Exscan latency (MPI_FLOAT, MPI_SUM), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 4, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = sizeof(float),
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    wb_rfill((float *)sbuf.p, s / sizeof(float), wb.rank, it);
}

static void call(size_t s)
{
    MPI_Exscan(sbuf.p, rbuf.p, (int)(s / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    int upto = wb.rank; /* ranks 0 .. upto-1 contribute */
    if (upto == 0)
        return; /* rank 0's exscan result is undefined */
    snprintf(what, sizeof what, "MPI_Exscan size %zu iteration %ld", s, it);
    wb_rcheck((const float *)rbuf.p, s / sizeof(float), upto, it, what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc(wb.o.max_size);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
