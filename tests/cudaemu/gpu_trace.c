/* The workload tracer on device buffers (3 ranks): rank 0 plays a blocking
 * ping-pong with rank 1 (MPI_Send/MPI_Recv) and receives windows of
 * nonblocking messages from rank 2 (MPI_Isend/MPI_Irecv), all of 64 KiB.
 * With a tuning file whose switch points differ by class, rank 0 must call
 * peer 1 latency-sensitive and peer 2 bandwidth-sensitive and move the same
 * size by different schemes (checked on WHARF_REPORT=gpu by the test).  The
 * data is checked every time: the receive buffers are device memory. */
#include "gpu_common.h"

enum { N = 65536, PINGS = 40, WINDOWS = 5, WIN = 16 };

static void fill(unsigned char *h, int seed)
{
    for (size_t i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 7u + (unsigned)seed * 13u + (i >> 9));
}

static void check(void *dev, int seed, const char *what)
{
    unsigned char *want = malloc(N), *got = dev_get(dev, N);
    fill(want, seed);
    size_t bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += got[i] != want[i];
    if (bad)
        fprintf(stderr, "rank %d: %s (seed %d): %zu of %d bytes wrong\n", rank, what, seed, bad, N);
    CHECK(bad == 0);
    free(want);
    free(got);
}

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    if (nprocs < 3) {
        if (rank == 0)
            fprintf(stderr, "gpu_trace needs 3 ranks\n");
        return gpu_finish("gpu trace") || 1;
    }
    unsigned char *h = malloc(N);
    if (rank <= 1) { /* blocking ping-pong 0 <-> 1 */
        void *s = dev_from(NULL, N), *r = dev_from(NULL, N);
        int peer = 1 - rank;
        for (int i = 0; i < PINGS; i++) {
            if (rank == 0) {
                fill(h, i);
                dev_put(s, h, N);
                MPI_Send(s, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(r, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(r, 1000 + i, "pong");
            } else {
                MPI_Recv(r, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(r, i, "ping");
                fill(h, 1000 + i);
                dev_put(s, h, N);
                MPI_Send(s, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        dev_free(s);
        dev_free(r);
    }
    if (rank == 0 || rank == 2) { /* windows of nonblocking messages 2 -> 0, a blocking ack per window */
        void *b[WIN];
        for (int k = 0; k < WIN; k++)
            b[k] = dev_from(NULL, N);
        for (int w = 0; w < WINDOWS; w++) {
            MPI_Request q[WIN];
            for (int k = 0; k < WIN; k++) {
                if (rank == 2) {
                    fill(h, 5000 + w * WIN + k);
                    dev_put(b[k], h, N);
                    MPI_Isend(b[k], N, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &q[k]);
                } else {
                    MPI_Irecv(b[k], N, MPI_BYTE, 2, 2, MPI_COMM_WORLD, &q[k]);
                }
            }
            MPI_Waitall(WIN, q, MPI_STATUSES_IGNORE);
            if (rank == 0)
                for (int k = 0; k < WIN; k++)
                    check(b[k], 5000 + w * WIN + k, "window");
            int ack = w;
            if (rank == 0)
                MPI_Send(&ack, 1, MPI_INT, 2, 3, MPI_COMM_WORLD); /* host memory: not traced */
            else
                MPI_Recv(&ack, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int k = 0; k < WIN; k++)
            dev_free(b[k]);
    }
    free(h);
    return gpu_finish("gpu trace");
}
