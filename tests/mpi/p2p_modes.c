/* Every send mode, blocking and nonblocking, small and large:
 * Send/Isend, Ssend/Issend (must not complete before the receive is matched),
 * Rsend/Irsend (receive pre-posted), Bsend/Ibsend/Bsend_init with an attached
 * buffer (the send completes locally; the receiver posts much later),
 * MPI_BUFFER_AUTOMATIC, Buffer_detach returning the buffer, and the
 * per-communicator buffer of MPI-4.1.  Two ranks (extra ranks idle). */
#include <unistd.h>

#include "p2p_check.h"

static const size_t sizes[] = {0, 1, 100, 8192, 8193, 100000, 3000001};
#define NS (sizeof sizes / sizeof sizes[0])
#define BIG 3000001

static void recv_check(unsigned char *buf, size_t n, int src, int tag, unsigned seed)
{
    MPI_Status st;
    memset(buf, 0, n + 1);
    MPI_OK(MPI_Recv(buf, (int)n + 1, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(p2p_count(&st, MPI_BYTE) == (MPI_Count)n, "count %lld, expected %zu", (long long)p2p_count(&st, MPI_BYTE),
          n);
    size_t bad = p2p_verify(buf, n, seed);
    CHECK(bad == (size_t)-1, "byte %zu of %zu wrong", bad, n);
}

/* Standard, synchronous and ready modes, blocking then nonblocking. */
static void plain_modes(unsigned char *sbuf, unsigned char *rbuf)
{
    for (size_t i = 0; i < NS; i++) {
        size_t n = sizes[i];
        for (int mode = 0; mode < 6; mode++) {
            p2p_setstep("mode %d size %zu", mode, n);
            int tag = 10 + mode;
            unsigned seed = (unsigned)(mode * 31 + i);
            int ready = mode == 2 || mode == 5;
            if (p2p_rank == 1) {
                MPI_Request r;
                MPI_Status st;
                memset(rbuf, 0, n + 1);
                MPI_OK(MPI_Irecv(rbuf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
                if (ready) /* tell the sender the receive is posted */
                    MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD));
                MPI_OK(MPI_Wait(&r, &st));
                CHECK(p2p_count(&st, MPI_BYTE) == (MPI_Count)n, "count");
                CHECK(p2p_verify(rbuf, n, seed) == (size_t)-1, "data");
            } else if (p2p_rank == 0) {
                p2p_fill(sbuf, n, seed);
                if (ready)
                    MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MPI_Request r = MPI_REQUEST_NULL;
                switch (mode) {
                case 0: MPI_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD)); break;
                case 1: MPI_OK(MPI_Ssend(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD)); break;
                case 2: MPI_OK(MPI_Rsend(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD)); break;
                case 3: MPI_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r)); break;
                case 4: MPI_OK(MPI_Issend(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r)); break;
                case 5: MPI_OK(MPI_Irsend(sbuf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r)); break;
                }
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                CHECK(r == MPI_REQUEST_NULL, "request not freed");
            }
        }
    }
}

/* A synchronous send must not complete before the receiver has matched it. */
static void ssend_is_synchronous(unsigned char *sbuf, unsigned char *rbuf)
{
    for (int large = 0; large < 2; large++) {
        size_t n = large ? 200000 : 16;
        p2p_setstep("Issend waits for the match (%zu bytes)", n);
        if (p2p_rank == 0) {
            MPI_Request r;
            int flag = 1;
            p2p_fill(sbuf, n, 5);
            MPI_OK(MPI_Issend(sbuf, (int)n, MPI_BYTE, 1, 20, MPI_COMM_WORLD, &r));
            for (int k = 0; k < 200; k++) {
                MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                CHECK(!flag, "Issend completed although the receive was not posted");
                usleep(100);
            }
            MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 21, MPI_COMM_WORLD)); /* now receive it */
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            /* the same for blocking Ssend happens implicitly in plain_modes */
        } else if (p2p_rank == 1) {
            MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            recv_check(rbuf, n, 0, 20, 5);
        }
    }
}

/* Buffered sends complete without any receive being posted. */
static void buffered(unsigned char *sbuf, unsigned char *rbuf)
{
    p2p_setstep("buffered sends");
    int bufsize = 0;
    for (size_t i = 0; i < NS; i++)
        bufsize += (int)sizes[i] * 3 + 3 * MPI_BSEND_OVERHEAD;
    char *attach = malloc((size_t)bufsize);
    CHECK(attach, "out of memory");
    MPI_OK(MPI_Buffer_attach(attach, bufsize));
    if (p2p_rank == 0) {
        /* every message of every size three times (Bsend, Ibsend, Bsend_init),
           all pending at once: exactly fills the buffer at worst */
        for (size_t i = 0; i < NS; i++) {
            size_t n = sizes[i];
            p2p_setstep("Bsend %zu", n);
            p2p_fill(sbuf, n, (unsigned)(i + 100));
            MPI_OK(MPI_Bsend(sbuf, (int)n, MPI_BYTE, 1, 30, MPI_COMM_WORLD));
            memset(sbuf, 0, n); /* the data was copied */
            p2p_fill(sbuf, n, (unsigned)(i + 200));
            MPI_Request r;
            MPI_OK(MPI_Ibsend(sbuf, (int)n, MPI_BYTE, 1, 31, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            memset(sbuf, 0, n);
            p2p_fill(sbuf, n, (unsigned)(i + 300));
            MPI_OK(MPI_Bsend_init(sbuf, (int)n, MPI_BYTE, 1, 32, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Start(&r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            CHECK(r != MPI_REQUEST_NULL, "persistent request freed by MPI_Wait");
            MPI_OK(MPI_Request_free(&r));
            memset(sbuf, 0, n);
        }
        MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, 1, 33, MPI_COMM_WORLD)); /* "all buffered" */
    } else if (p2p_rank == 1) {
        MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (size_t i = 0; i < NS; i++) {
            p2p_setstep("receive buffered %zu", sizes[i]);
            recv_check(rbuf, sizes[i], 0, 30, (unsigned)(i + 100));
            recv_check(rbuf, sizes[i], 0, 31, (unsigned)(i + 200));
            recv_check(rbuf, sizes[i], 0, 32, (unsigned)(i + 300));
        }
    }
    p2p_setstep("Buffer_detach");
    void *back = NULL;
    int backsize = -1;
    MPI_OK(MPI_Buffer_detach(&back, &backsize));
    CHECK(back == attach && backsize == bufsize, "detach returned %p/%d, expected %p/%d", back, backsize,
          (void *)attach, bufsize);
    MPI_OK(MPI_Buffer_detach(&back, &backsize)); /* nothing attached: NULL, 0 */
    CHECK(back == NULL && backsize == 0, "second detach returned %p/%d", back, backsize);
    free(attach);

    /* automatic buffering and a communicator buffer */
    p2p_setstep("MPI_BUFFER_AUTOMATIC");
    MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    char cbuf[64 + MPI_BSEND_OVERHEAD];
    MPI_OK(MPI_Comm_attach_buffer(dup, cbuf, (int)sizeof cbuf));
    if (p2p_rank == 0) {
        p2p_fill(sbuf, BIG, 77);
        MPI_OK(MPI_Bsend(sbuf, BIG, MPI_BYTE, 1, 40, MPI_COMM_WORLD));
        memset(sbuf, 0, BIG);
        p2p_fill(sbuf, 64, 78);
        MPI_OK(MPI_Bsend(sbuf, 64, MPI_BYTE, 1, 41, dup)); /* fits the comm buffer exactly */
        MPI_OK(MPI_Comm_flush_buffer(dup));
        MPI_OK(MPI_Buffer_flush());
    } else if (p2p_rank == 1) {
        usleep(20000);
        recv_check(rbuf, BIG, 0, 40, 77);
        MPI_Status st;
        MPI_OK(MPI_Recv(rbuf, 64, MPI_BYTE, 0, 41, dup, &st));
        CHECK(p2p_verify(rbuf, 64, 78) == (size_t)-1, "comm-buffer data");
    }
    MPI_OK(MPI_Comm_detach_buffer(dup, &back, &backsize));
    CHECK(back == (void *)cbuf && backsize == (int)sizeof cbuf, "comm detach returned %p/%d", back, backsize);
    MPI_OK(MPI_Buffer_detach(&back, &backsize));
    CHECK(back == MPI_BUFFER_AUTOMATIC, "detach of automatic buffer returned %p", back);
    MPI_OK(MPI_Comm_free(&dup));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size >= 2, "needs 2 ranks");
    unsigned char *sbuf = malloc(BIG + 16), *rbuf = malloc(BIG + 16);
    CHECK(sbuf && rbuf, "out of memory");
    plain_modes(sbuf, rbuf);
    ssend_is_synchronous(sbuf, rbuf);
    buffered(sbuf, rbuf);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
