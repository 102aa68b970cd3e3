/* Helpers for the collective benchmarks added after the first eight: reduction
 * checks at an offset, v-collective counts, and the nonblocking-collective
 * overlap driver (the OSU osu_i* method, as wh_iallreduce).  Included after
 * common.h. */
#ifndef WB_NBC_H
#define WB_NBC_H

/* wb_rcheck for elements [offset, offset + count) of the reduced vector. */
static inline void wb_rcheck_off(const float *p, size_t count, size_t offset, int nranks, long it,
                                 const char *what)
{
    size_t bad = 0, first = 0;
    double want_first = 0;
    wb.checks++;
    for (size_t k = 0; k < count; k++) {
        double want = 0;
        for (int r = 0; r < nranks; r++)
            want += (double)wb_rval(offset + k, r, it);
        if ((double)p[k] != want && !bad++) {
            first = k;
            want_first = want;
        }
    }
    if (bad)
        wb_report("%s: %zu of %zu elements wrong, first [%zu] = %g, expected %g", what, bad, count,
                  first, (double)p[first], want_first);
}

/* Equal counts and packed displacements, as OSU's v-collective benchmarks
 * (set per size, inside the timed call as OSU does: nranks stores). */
static inline void wb_vcounts_set(int *counts, int *displs, size_t s)
{
    for (int r = 0; r < wb.nranks; r++) {
        counts[r] = (int)s;
        displs[r] = (int)(s * (size_t)r);
    }
}

static inline void wb_vcounts(int **counts, int **displs, size_t s)
{
    *counts = malloc(sizeof(int) * (size_t)wb.nranks);
    *displs = malloc(sizeof(int) * (size_t)wb.nranks);
    if (!*counts || !*displs)
        wb_die("out of memory");
    wb_vcounts_set(*counts, *displs, s);
}

/* A nonblocking collective benchmark supplies these (size in bytes). */
struct wb_nbc {
    void (*prepare)(size_t size, long it);          /* with -c: fill send data */
    void (*start)(size_t size, MPI_Request *req);   /* start the collective */
    void (*check)(size_t size, long it);            /* with -c: check results */
};

static volatile double wb_nbc_sink;

/* Compute for about `us` microseconds, testing req about every 10 us; seconds spent. */
static inline double wb_nbc_compute(double us, MPI_Request *req)
{
    double t0 = MPI_Wtime(), end = t0 + us * 1e-6, next = t0, now = t0, x = wb_nbc_sink;
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
    wb_nbc_sink = x;
    return now - t0;
}

static inline double wb_nbc_avg(double v)
{
    double sum = 0;
    MPI_Reduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum / wb.nranks;
}

/* Per size: `pure` = start + MPI_Wait; `overall` = start, computation as long as
 * the slowest rank's pure time (polling with MPI_Test), MPI_Wait.  Overlap % =
 * 100 * (1 - (overall - compute) / pure), clipped to 0..100.  Rows: SIZE
 * OVERALL COMPUTE PURE OVERLAP, averages over ranks. */
static inline int wb_nbc_run(const struct wb_nbc *c)
{
    if (wb.b->flags & WB_NOSIZE)
        wb.o.min_size = wb.o.max_size = 0; /* one row, size 0 */
    WB_FOR_SIZES(s) {
        if (s < wb.b->elem)
            continue;
        int it = wb_iters(s), wu = wb_warmup(s);
        MPI_Request req;
        double pure = 0, overall = 0, cpu = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < it + wu; i++) {
            if (wb.o.validate && c->prepare)
                c->prepare(s, i);
            double t0 = MPI_Wtime();
            c->start(s, &req);
            WB_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            if (i >= wu)
                pure += MPI_Wtime() - t0;
            if (wb.o.validate && c->check)
                c->check(s, i);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        pure = pure * 1e6 / it;
        double target = 0;
        MPI_Allreduce(&pure, &target, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < it + wu; i++) {
            if (wb.o.validate && c->prepare)
                c->prepare(s, it + wu + i);
            double t0 = MPI_Wtime();
            c->start(s, &req);
            double busy = wb_nbc_compute(target, &req);
            WB_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            double t1 = MPI_Wtime();
            if (i >= wu) {
                overall += t1 - t0;
                cpu += busy;
            }
            if (wb.o.validate && c->check)
                c->check(s, it + wu + i);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        overall = overall * 1e6 / it;
        cpu = cpu * 1e6 / it;
        double ov = pure > 0 ? 100.0 * (1.0 - (overall - cpu) / pure) : 0;
        ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
        double a_overall = wb_nbc_avg(overall), a_cpu = wb_nbc_avg(cpu), a_pure = wb_nbc_avg(pure),
               a_ov = wb_nbc_avg(ov);
        if (wb.rank == 0) {
            wb_columns();
            printf("%-12zu %15.2f  %15.2f  %15.2f  %15.2f\n", s, a_overall, a_cpu, a_pure, a_ov);
            fflush(stdout);
        }
    }
    return wb_finish_all();
}

#endif /* WB_NBC_H */
