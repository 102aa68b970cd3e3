/* wh_latency_nb: nonblocking ping-pong latency between ranks 0 and 1.
 * Same exchange as wh_latency with every blocking call replaced by its
 * nonblocking form + MPI_Wait (MPI_Isend+MPI_Wait, MPI_Irecv+MPI_Wait), so the
 * difference to wh_latency is the cost of the request path.  Reported value is
 * half the round trip in microseconds (OSU osu_latency).  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_latency_nb",
    .what = "point-to-point latency, MPI_Isend/MPI_Irecv + MPI_Wait ping-pong (one-way, us)",
    .columns = "Latency(us)",
    .min_size = 0, .max_size = 4 << 20, .iters = 10000, .warmup = 100, .elem = 0,
    .flags = WB_NEED2 | WB_PAIR,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    wb_require_pair();
    if (wb.rank < 2) {
        int me = wb.rank, peer = 1 - me;
        struct wb_mem sb = wb_alloc(wb.o.max_size), rb = wb_alloc(wb.o.max_size);
        char what[128];
        MPI_Status st;
        MPI_Request req;
        WB_FOR_SIZES(s) {
            int it = wb_iters(s), wu = wb_warmup(s), n = (int)s;
            wb_pair_sync();
            double t0 = MPI_Wtime();
            for (int i = 0; i < it + wu; i++) {
                if (i == wu)
                    t0 = MPI_Wtime();
                if (wb.o.validate)
                    wb_fill(sb.p, s, wb_seed(me, i, 0, s));
                if (me == 0) {
                    MPI_Isend(sb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    MPI_Irecv(rb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, &st);
                } else {
                    MPI_Irecv(rb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, &st);
                    MPI_Isend(sb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                }
                if (wb.o.validate) {
                    snprintf(what, sizeof what, "size %zu iteration %d from rank %d", s, i, peer);
                    wb_check_count(&st, s, what);
                    wb_check(rb.p, s, wb_seed(peer, i, 0, s), what);
                }
            }
            double t = MPI_Wtime() - t0;
            if (me == 0)
                wb_row(s, t * 1e6 / (2.0 * it));
        }
        wb_free(&sb);
        wb_free(&rb);
    }
    return wb_finish_pair();
}
