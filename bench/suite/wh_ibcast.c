/* wh_ibcast: MPI_Ibcast overlapped with computation (OSU osu_ibcast).  Root 0; sizes in bytes.
 * Per size (nbc.h): pure = start + MPI_Wait; overall = start, computation as
 * long as the slowest rank's pure time (MPI_Test about every 10 us), MPI_Wait.
 * Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over ranks (us, us, us, %). */
#include "common.h"
#include "nbc.h"

static const struct wb_bench bench = {
    .name = "wh_ibcast",
    .what = "MPI_Ibcast (root 0) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 1, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = 1,
    .flags = 0,
};

static struct wb_mem buf;

static void prepare(size_t s, long it)
{
    if (wb.rank == 0)
        wb_fill(buf.p, s, wb_seed(0, it, 0, s));
}

static void start(size_t s, MPI_Request *req)
{
    WB_CHECK(MPI_Ibcast(buf.p, (int)s, MPI_BYTE, 0, MPI_COMM_WORLD, req));
}

static void check(size_t s, long it)
{
    char what[128];
    if (wb.rank == 0)
        return;
    snprintf(what, sizeof what, "MPI_Ibcast size %zu iteration %ld", s, it);
    wb_check(buf.p, s, wb_seed(0, it, 0, s), what);
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    buf = wb_alloc(wb.o.max_size);
    static const struct wb_nbc c = {prepare, start, check};
    return wb_nbc_run(&c);
}
