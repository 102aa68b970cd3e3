/* wh_bibw: bidirectional bandwidth between ranks 0 and 1 (OSU osu_bibw).
 * Each iteration both ranks post WINDOW MPI_Irecv, start WINDOW MPI_Isend to
 * each other and MPI_Waitall on all of them.  The reported MB/s counts both
 * directions together (1e6 bytes per second).  Other ranks wait. */
#include "common.h"

static const struct wb_bench bench = {
    .name = "wh_bibw",
    .what = "point-to-point bidirectional bandwidth, windows of MPI_Isend/MPI_Irecv both ways (MB/s, sum)",
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
        size_t bytes = wb_slot_bytes(W);
        struct wb_mem sbuf = wb_alloc(bytes), rbuf = wb_alloc(bytes);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)W);
        MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * (size_t)W);
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
                if (wb.o.validate)
                    for (int k = 0; k < used; k++)
                        wb_fill(sbuf.p + (size_t)k * stride, s, wb_seed(me, i, k, s));
                for (int j = 0; j < W; j++)
                    MPI_Irecv(rbuf.p + (size_t)(j % ns) * stride, n, MPI_BYTE, peer, WB_TAG_DATA,
                              MPI_COMM_WORLD, &reqs[j]);
                for (int j = 0; j < W; j++)
                    MPI_Isend(sbuf.p + (size_t)(j % ns) * stride, n, MPI_BYTE, peer, WB_TAG_DATA,
                              MPI_COMM_WORLD, &reqs[W + j]);
                MPI_Waitall(2 * W, reqs, sts);
                if (wb.o.validate) {
                    for (int j = 0; j < W; j++) {
                        snprintf(what, sizeof what, "size %zu iteration %d message %d from rank %d", s, i, j, peer);
                        wb_check_count(&sts[j], s, what);
                    }
                    for (int k = 0; k < used; k++) {
                        snprintf(what, sizeof what, "size %zu iteration %d slot %d from rank %d", s, i, k, peer);
                        wb_check(rbuf.p + (size_t)k * stride, s, wb_seed(peer, i, k, s), what);
                    }
                }
            }
            double t = MPI_Wtime() - t0;
            if (me == 0)
                wb_row(s, 2.0 * (double)s * W * it / 1e6 / t);
        }
        free(reqs);
        free(sts);
        wb_free(&sbuf);
        wb_free(&rbuf);
    }
    return wb_finish_pair();
}
