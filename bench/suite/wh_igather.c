/* wh_igather: MPI_Igather overlapped with computation (OSU osu_igather).  The size is the block each rank contributes.
 * Per size (nbc.h): pure = start + MPI_Wait; overall = start, computation as
 * long as the slowest rank's pure time (MPI_Test about every 10 us), MPI_Wait.
 * Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over ranks (us, us, us, %). */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_igather",
    .what = "MPI_Igather (root 0, size = bytes per rank) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 1, .max_size = 1 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = 0,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    wb_fill(sbuf.p, s, wb_seed(wb.rank, it, 0, s));
}

static void start(size_t s, MPI_Request *req)
{
    WB_CHECK(MPI_Igather(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD, req));
}

static void check(size_t s, long it)
{
    char what[128];
    if (wb.rank != 0)
        return;
    for (int r = 0; r < wb.nranks; r++) {
        snprintf(what, sizeof what, "MPI_Igather size %zu iteration %ld block of rank %d", s, it, r);
        wb_check(rbuf.p + (size_t)r * s, s, wb_seed(r, it, 0, s), what);
    }
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc((size_t)wb.nranks * wb.o.max_size);
    static const struct wb_nbc c = {prepare, start, check};
    return wb_nbc_run(&c);
}
