/* wh_latency: blocking ping-pong latency between ranks 0 and 1.
 * Rank 0 MPI_Send + MPI_Recv, rank 1 MPI_Recv + MPI_Send; reported value is
 * half the round trip in microseconds (OSU osu_latency).  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_latency",
    .what = "point-to-point latency, blocking MPI_Send/MPI_Recv ping-pong (one-way, us)",
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
                    MPI_Send(sb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD);
                    MPI_Recv(rb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &st);
                } else {
                    MPI_Recv(rb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD, &st);
                    MPI_Send(sb.p, n, MPI_BYTE, peer, WB_TAG_DATA, MPI_COMM_WORLD);
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
