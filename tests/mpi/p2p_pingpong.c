/* Ping-pong between rank pairs (0-1, 2-3, ...) and a ring over all ranks,
 * for message sizes from 0 bytes to 64 MiB (powers of two and odd sizes,
 * across the eager/rendezvous/single-copy switch points), with blocking,
 * nonblocking and large-count calls.  Every byte and status is checked. */
#include "p2p_check.h"

#define MAXSZ (64u << 20)

static size_t sizes[128];
static int nsizes;

static void make_sizes(void)
{
    static const size_t odd[] = {3, 7, 13, 63, 65, 1023, 4095, 4097, 8191, 8193, 12289, 16383, 16385, 32769,
                                 65537, 131071, 1000003, (5u << 20) + 7, (33u << 20) - 1};
    sizes[nsizes++] = 0;
    for (size_t s = 1; s <= MAXSZ; s <<= 1)
        sizes[nsizes++] = s;
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        sizes[nsizes++] = odd[i];
}

static void check_status(const MPI_Status *st, int src, int tag, size_t n)
{
    CHECK(st->MPI_SOURCE == src, "source %d, expected %d", st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "tag %d, expected %d", st->MPI_TAG, tag);
    MPI_Count c = p2p_count(st, MPI_BYTE);
    CHECK(c == (MPI_Count)n, "count %lld, expected %zu", (long long)c, n);
    int cancelled = -1;
    MPI_Test_cancelled(st, &cancelled);
    CHECK(cancelled == 0, "status says cancelled");
}

static void check_data(const unsigned char *buf, size_t n, unsigned seed)
{
    size_t bad = p2p_verify(buf, n, seed);
    CHECK(bad == (size_t)-1, "byte %zu of %zu wrong: got 0x%02x, expected 0x%02x", bad, n, buf[bad],
          p2p_pat(seed, bad));
}

/* variant 0: Send/Recv(ANY_TAG); 1: Isend/Irecv(ANY_SOURCE)/Wait; 2: Send_c/Recv_c with MPI_INT when divisible */
static void pingpong(unsigned char *sbuf, unsigned char *rbuf, size_t n, int variant)
{
    int partner = p2p_rank ^ 1;
    if (partner >= p2p_size)
        return;
    int first = p2p_rank < partner;
    unsigned seed = (unsigned)(n * 7 + (size_t)variant);
    MPI_Status st;
    for (int leg = 0; leg < 2; leg++) {
        int sending = (leg == 0) == first;
        int tag = 100 + leg;
        unsigned s = seed + (unsigned)leg;
        if (sending) {
            p2p_fill(sbuf, n, s);
            if (variant == 0) {
                MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
            } else if (variant == 1) {
                MPI_Request r;
                MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, &st));
                CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
            } else {
                MPI_OK(MPI_Send_c(sbuf, (MPI_Count)(n / 4), MPI_INT, partner, tag, MPI_COMM_WORLD));
            }
        } else {
            memset(rbuf, 0xa5, n + 16);
            if (variant == 0) {
                MPI_OK(MPI_Recv(rbuf, (int)n + 16, MPI_BYTE, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                check_status(&st, partner, tag, n);
            } else if (variant == 1) {
                MPI_Request r;
                MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, &st));
                CHECK(r == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
                check_status(&st, partner, tag, n);
            } else {
                MPI_OK(MPI_Recv_c(rbuf, (MPI_Count)(n / 4), MPI_INT, partner, tag, MPI_COMM_WORLD, &st));
                MPI_Count c = p2p_count(&st, MPI_INT);
                CHECK(c == (MPI_Count)(n / 4), "count %lld ints, expected %zu", (long long)c, n / 4);
            }
            size_t got = variant == 2 ? n / 4 * 4 : n;
            check_data(rbuf, got, s);
            CHECK(rbuf[got] == 0xa5, "byte after the message overwritten");
        }
    }
}

/* Ring: receive from the left, send to the right (Irecv + Send + Wait). */
static void ring(unsigned char *sbuf, unsigned char *rbuf, size_t n)
{
    int right = (p2p_rank + 1) % p2p_size, left = (p2p_rank + p2p_size - 1) % p2p_size;
    MPI_Request r;
    MPI_Status st;
    memset(rbuf, 0x5a, n + 16);
    MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, left, 7, MPI_COMM_WORLD, &r));
    p2p_fill(sbuf, n, (unsigned)(p2p_rank * 1000 + n));
    MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, right, 7, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    check_status(&st, left, 7, n);
    check_data(rbuf, n, (unsigned)(left * 1000 + n));
    CHECK(rbuf[n] == 0x5a, "byte after the message overwritten");
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    make_sizes();
    unsigned char *sbuf = malloc(MAXSZ + 16), *rbuf = malloc(MAXSZ + 16);
    CHECK(sbuf && rbuf, "out of memory");
    for (int i = 0; i < nsizes; i++) {
        size_t n = sizes[i];
        int nvar = n <= (4u << 20) ? 3 : 1;
        for (int v = 0; v < nvar; v++) {
            p2p_setstep("pingpong %zu bytes, variant %d", n, v);
            pingpong(sbuf, rbuf, n, v);
        }
        p2p_setstep("ring %zu bytes", n);
        ring(sbuf, rbuf, n);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
