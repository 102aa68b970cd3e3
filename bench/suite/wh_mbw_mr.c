/* wh_mbw_mr: multi-pair bandwidth and message rate (OSU osu_mbw_mr).
 * With N ranks there are P = N/2 pairs: rank i (i < P) streams windows of
 * MPI_Isend to rank i+P, which answers each window with a 0-byte ack (as in
 * wh_bw).  All pairs run at once.  Reported: aggregate MB/s (1e6 bytes/s) and
 * messages/s over all pairs, computed from the slowest sender's time.  With an
 * odd N the last rank only joins the barriers. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_mbw_mr",
    .what = "multi-pair bandwidth and message rate, first half of the ranks streams to the second half",
    .columns = "MB/s|Messages/s",
    .min_size = 1, .max_size = 4 << 20, .iters = 100, .warmup = 10, .window = 64, .elem = 0,
    .flags = WB_NEED2 | WB_WINDOW,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    wb_require_pair();
    int me = wb.rank, pairs = wb.nranks / 2, W = wb.o.window;
    int sender = me < pairs, receiver = me >= pairs && me < 2 * pairs;
    int peer = sender ? me + pairs : receiver ? me - pairs : -1;
    if (me == 0) {
        printf("# pairs: %d (rank i sends to rank i+%d)", pairs, pairs);
        if (wb.nranks % 2)
            printf(", rank %d idle (odd number of ranks)", wb.nranks - 1);
        printf("\n");
        fflush(stdout);
    }
    struct wb_mem buf = {NULL, NULL, 0};
    MPI_Request *reqs = NULL;
    MPI_Status *sts = NULL;
    if (peer >= 0) {
        buf = wb_alloc(wb_slot_bytes(W));
        reqs = malloc(sizeof(MPI_Request) * (size_t)W);
        sts = malloc(sizeof(MPI_Status) * (size_t)W);
        if (!reqs || !sts)
            wb_die("out of memory");
    }
    char what[160];
    WB_FOR_SIZES(s) {
        int it = wb_iters(s), wu = wb_warmup(s), n = (int)s;
        int ns = wb_slots(s, W), used = ns < W ? ns : W;
        size_t stride = wb_stride(s);
        double t = 0, tmax = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer >= 0) {
            double t0 = MPI_Wtime();
            for (int i = 0; i < it + wu; i++) {
                if (i == wu)
                    t0 = MPI_Wtime();
                if (sender) {
                    if (wb.o.validate)
                        for (int k = 0; k < used; k++)
                            wb_fill(buf.p + (size_t)k * stride, s, wb_seed(me, i, k, s));
                    for (int j = 0; j < W; j++)
                        MPI_Isend(buf.p + (size_t)(j % ns) * stride, n, MPI_BYTE, peer, WB_TAG_DATA,
                                  MPI_COMM_WORLD, &reqs[j]);
                    MPI_Waitall(W, reqs, sts); /* not MPI_STATUSES_IGNORE: gcc 12 false warning with MPICH */
                    MPI_Recv(NULL, 0, MPI_BYTE, peer, WB_TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    for (int j = 0; j < W; j++)
                        MPI_Irecv(buf.p + (size_t)(j % ns) * stride, n, MPI_BYTE, peer, WB_TAG_DATA,
                                  MPI_COMM_WORLD, &reqs[j]);
                    MPI_Waitall(W, reqs, sts);
                    if (wb.o.validate) {
                        for (int j = 0; j < W; j++) {
                            snprintf(what, sizeof what, "size %zu iteration %d message %d from rank %d", s, i, j, peer);
                            wb_check_count(&sts[j], s, what);
                        }
                        for (int k = 0; k < used; k++) {
                            snprintf(what, sizeof what, "size %zu iteration %d slot %d from rank %d", s, i, k, peer);
                            wb_check(buf.p + (size_t)k * stride, s, wb_seed(peer, i, k, s), what);
                        }
                    }
                    MPI_Send(NULL, 0, MPI_BYTE, peer, WB_TAG_ACK, MPI_COMM_WORLD);
                }
            }
            if (sender)
                t = MPI_Wtime() - t0;
        }
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (me == 0) {
            double msgs = (double)pairs * W * it;
            wb_row2(s, msgs * (double)s / 1e6 / tmax, msgs / tmax);
        }
    }
    free(reqs);
    free(sts);
    wb_free(&buf);
    return wb_finish_all();
}
