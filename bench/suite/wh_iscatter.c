/* wh_iscatter: MPI_Iscatter overlapped with computation (OSU osu_iscatter).  Root 0; the size is the block each rank receives.
 * Per size (nbc.h): pure = start + MPI_Wait; overall = start, computation as
 * long as the slowest rank's pure time (MPI_Test about every 10 us), MPI_Wait.
 * Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over ranks (us, us, us, %). */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_iscatter",
    .what = "MPI_Iscatter (root 0, size = bytes per rank) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 1, .max_size = 1 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = 0,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    if (wb.rank == 0)
        for (int d = 0; d < wb.nranks; d++)
            wb_fill(sbuf.p + (size_t)d * s, s, wb_seed(0, it, d, s));
}

static void start(size_t s, MPI_Request *req)
{
    WB_CHECK(MPI_Iscatter(sbuf.p, (int)s, MPI_BYTE, rbuf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD, req));
}

static void check(size_t s, long it)
{
    char what[128];
    snprintf(what, sizeof what, "MPI_Iscatter size %zu iteration %ld", s, it);
    wb_check(rbuf.p, s, wb_seed(0, it, wb.rank, s), what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.rank == 0 ? (size_t)wb.nranks * wb.o.max_size : 0);
    rbuf = wb_alloc(wb.o.max_size);
    static const struct wb_nbc c = {prepare, start, check};
    return wb_nbc_run(&c);
}
