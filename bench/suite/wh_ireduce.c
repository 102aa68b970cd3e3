/* wh_ireduce: MPI_Ireduce overlapped with computation (OSU osu_ireduce).  Root 0; sizes in bytes (count = size / sizeof(float)).
 * Per size (nbc.h): pure = start + MPI_Wait; overall = start, computation as
 * long as the slowest rank's pure time (MPI_Test about every 10 us), MPI_Wait.
 * Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over ranks (us, us, us, %). */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_ireduce",
    .what = "MPI_Ireduce (MPI_FLOAT, MPI_SUM, root 0) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 4, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = sizeof(float),
    .flags = 0,
};

static struct wb_mem sbuf, rbuf;

static void prepare(size_t s, long it)
{
    wb_rfill((float *)sbuf.p, s / sizeof(float), wb.rank, it);
}

static void start(size_t s, MPI_Request *req)
{
    WB_CHECK(MPI_Ireduce(sbuf.p, rbuf.p, (int)(s / sizeof(float)), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, req));
}

static void check(size_t s, long it)
{
    char what[128];
    if (wb.rank != 0)
        return;
    snprintf(what, sizeof what, "MPI_Ireduce size %zu iteration %ld", s, it);
    wb_rcheck((const float *)rbuf.p, s / sizeof(float), wb.nranks, it, what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc(wb.o.max_size);
    static const struct wb_nbc c = {prepare, start, check};
    return wb_nbc_run(&c);
}
