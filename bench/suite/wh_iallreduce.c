/* wh_iallreduce: MPI_Iallreduce overlap with computation (OSU osu_iallreduce),
 * MPI_FLOAT + MPI_SUM.  Sizes are in bytes (count = size / sizeof(float)).
 *
 * Per size, two timed loops (each iteration ends in an MPI_Barrier):
 *   pure     MPI_Iallreduce + MPI_Wait
 *   overall  MPI_Iallreduce, then computation lasting the pure time (a
 *            floating-point loop that calls MPI_Test on the request about
 *            every 10 us, as an application that polls would), then MPI_Wait
 * Compute is the time spent in the computation.  Overlap is the share of the
 * communication hidden behind it, 100 * (1 - (overall - compute) / pure),
 * clipped to 0..100.  Rows: SIZE OVERALL COMPUTE PURE OVERLAP, averages over
 * ranks (us, us, us, %).  -c checks every result. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_iallreduce",
    .what = "MPI_Iallreduce (MPI_FLOAT, MPI_SUM) overlapped with computation, average over ranks",
    .columns = "Overall(us)|Compute(us)|Pure Comm(us)|Overlap(%)",
    .min_size = 4, .max_size = 4 << 20, .iters = 1000, .warmup = 100, .elem = sizeof(float),
};

static struct wb_mem sbuf, rbuf;
static volatile double sink;

static void prepare(size_t s, long it)
{
    if (wb.o.validate)
        wb_rfill((float *)sbuf.p, s / sizeof(float), wb.rank, it);
}

static void check(size_t s, long it)
{
    if (!wb.o.validate)
        return;
    char what[128];
    snprintf(what, sizeof what, "MPI_Iallreduce size %zu iteration %ld", s, it);
    wb_rcheck((const float *)rbuf.p, s / sizeof(float), wb.nranks, it, what);
}

static void start(size_t s, MPI_Request *req)
{
    WB_CHECK(MPI_Iallreduce(sbuf.p, rbuf.p, (int)(s / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, req));
}

/* Compute for about `us` microseconds, testing req now and then; returns the
 * time spent (s). */
static double compute(double us, MPI_Request *req)
{
    double t0 = MPI_Wtime(), end = t0 + us * 1e-6, next = t0, now = t0, x = sink;
    int done = 0;
    while (now < end) {
        for (int k = 0; k < 200; k++)
            x = x * 0.999999 + 1e-9;
        now = MPI_Wtime();
        if (!done && now >= next) {
            WB_CHECK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
            next = now + 10e-6;
        }
    }
    sink = x;
    return now - t0;
}

/* Average over ranks, on rank 0. */
static double avg(double v)
{
    double sum = 0;
    MPI_Reduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum / wb.nranks;
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    sbuf = wb_alloc(wb.o.max_size);
    rbuf = wb_alloc(wb.o.max_size);
    WB_FOR_SIZES(s) {
        if (s < bench.elem)
            continue;
        int it = wb_iters(s), wu = wb_warmup(s);
        MPI_Request req;
        double pure = 0, overall = 0, cpu = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < it + wu; i++) {
            prepare(s, i);
            double t0 = MPI_Wtime();
            start(s, &req);
            WB_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            if (i >= wu)
                pure += MPI_Wtime() - t0;
            check(s, i);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        pure = pure * 1e6 / it;
        /* every rank computes as long as the slowest needed for the pure call */
        double target = 0;
        MPI_Allreduce(&pure, &target, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < it + wu; i++) {
            prepare(s, it + wu + i);
            double t0 = MPI_Wtime();
            start(s, &req);
            double c = compute(target, &req);
            WB_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            double t1 = MPI_Wtime();
            if (i >= wu) {
                overall += t1 - t0;
                cpu += c;
            }
            check(s, it + wu + i);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        overall = overall * 1e6 / it;
        cpu = cpu * 1e6 / it;
        double ov = pure > 0 ? 100.0 * (1.0 - (overall - cpu) / pure) : 0;
        ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
        double a_overall = avg(overall), a_cpu = avg(cpu), a_pure = avg(pure), a_ov = avg(ov);
        if (wb.rank == 0) {
            wb_columns();
            printf("%-12zu %15.2f  %15.2f  %15.2f  %15.2f\n", s, a_overall, a_cpu, a_pure, a_ov);
            fflush(stdout);
        }
    }
    return wb_finish_all();
}
