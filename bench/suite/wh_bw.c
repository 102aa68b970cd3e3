/* wh_bw: unidirectional bandwidth from rank 0 to rank 1 (OSU osu_bw).
 * Each iteration rank 0 starts WINDOW MPI_Isend, rank 1 has WINDOW MPI_Irecv
 * posted; after MPI_Waitall rank 1 answers with a 0-byte ack that rank 0
 * receives before the next iteration.  MB/s = 1e6 bytes per second.  Each
 * message of a window has its own buffer slot (see -M).  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_bw",
    .what = "point-to-point bandwidth, window of MPI_Isend from rank 0 to MPI_Irecv on rank 1 (MB/s)",
    .columns = "Bandwidth(MB/s)",
    .min_size = 1, .max_size = 4 << 20, .iters = 100, .warmup = 10, .window = 64, .elem = 0,
    .flags = WB_NEED2 | WB_PAIR | WB_WINDOW,
};

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    wb_require_pair();
    if (wb.rank < 2) {
        int me = wb.rank, peer = 1 - me, W = wb.o.window;
        struct wb_mem buf = wb_alloc(wb_slot_bytes(W));
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)W);
        MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)W);
        if (!reqs || !sts)
            wb_die("out of memory");
        char what[160];
        WB_FOR_SIZES(s) {
            int it = wb_iters(s), wu = wb_warmup(s), n = (int)s;
            int ns = wb_slots(s, W), used = ns < W ? ns : W;
            size_t stride = wb_stride(s);
            wb_pair_sync();
            double t0 = MPI_Wtime();
            for (int i = 0; i < it + wu; i++) {
                if (i == wu)
                    t0 = MPI_Wtime();
                if (me == 0) {
                    if (wb.o.validate)
                        for (int k = 0; k < used; k++)
                            wb_fill(buf.p + (size_t)k * stride, s, wb_seed(0, i, k, s));
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
                            snprintf(what, sizeof what, "size %zu iteration %d message %d", s, i, j);
                            wb_check_count(&sts[j], s, what);
                        }
                        for (int k = 0; k < used; k++) {
                            snprintf(what, sizeof what, "size %zu iteration %d slot %d", s, i, k);
                            wb_check(buf.p + (size_t)k * stride, s, wb_seed(0, i, k, s), what);
                        }
                    }
                    MPI_Send(NULL, 0, MPI_BYTE, peer, WB_TAG_ACK, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - t0;
            if (me == 0)
                wb_row(s, (double)s * W * it / 1e6 / t);
        }
        free(reqs);
        free(sts);
        wb_free(&buf);
    }
    return wb_finish_pair();
}
