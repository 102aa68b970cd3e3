/* wh_allgatherv: MPI_Allgatherv latency, equal counts (OSU osu_allgatherv).
 * The size is the block each rank contributes.  Each iteration times one call
 * per rank, then all ranks meet in a barrier. */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_allgatherv",
    .what = "MPI_Allgatherv latency (size = bytes per rank), average per call over ranks (us)",
    .columns = "Avg Latency(us)",
    .min_size = 1, .max_size = 1 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = WB_COLL,
};

static struct wb_mem sbuf, rbuf;
static int *counts, *displs;

static void prepare(size_t s, long it)
{
    wb_fill(sbuf.p, s, wb_seed(wb.rank, it, 0, s));
}

static void call(size_t s)
{
    wb_vcounts_set(counts, displs, s);
    MPI_Allgatherv(sbuf.p, (int)s, MPI_BYTE, rbuf.p, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
}

static void check(size_t s, long it)
{
    char what[128];
    for (int r = 0; r < wb.nranks; r++) {
        snprintf(what, sizeof what, "MPI_Allgatherv size %zu iteration %ld block of rank %d", s, it, r);
        wb_check(rbuf.p + (size_t)r * s, s, wb_seed(r, it, 0, s), what);
    }
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    wb_vcounts(&counts, &displs, 0);
    static const struct wb_coll c = {prepare, call, check};
    return wb_coll_run(&c);
}
