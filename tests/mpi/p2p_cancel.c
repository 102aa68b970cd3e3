/* Cancelling sends (found by MPICH's pt2pt/scancel and pscancel, which hung):
 * a send whose message no receive has matched yet is withdrawn from the
 * receiver and reported cancelled, for eager and rendezvous sizes, standard,
 * synchronous, buffered (MPI_Ibsend, MPI_Bsend_init) and persistent sends,
 * and to oneself; a message a receive already matched is not cancelled and
 * arrives.  A withdrawn message never reaches a later receive: each case
 * sends a second message with the same tag and the receiver must get that
 * one.  Rank 0 sends, the last rank receives. */
#include "p2p_check.h"

#define BIG (1 << 20) /* rendezvous on every channel */

enum { K_ISEND, K_ISSEND, K_IBSEND, K_SEND_INIT, K_BSEND_INIT, K_NKINDS };
static const char *kname[K_NKINDS] = {"MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Send_init", "MPI_Bsend_init"};

static char *sbuf, *rbuf;

static void start(int kind, int n, int dest, int tag, MPI_Request *r)
{
    switch (kind) {
    case K_ISEND: MPI_OK(MPI_Isend(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, r)); break;
    case K_ISSEND: MPI_OK(MPI_Issend(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, r)); break;
    case K_IBSEND: MPI_OK(MPI_Ibsend(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, r)); break;
    case K_SEND_INIT:
        MPI_OK(MPI_Send_init(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, r));
        MPI_OK(MPI_Start(r));
        break;
    default:
        MPI_OK(MPI_Bsend_init(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, r));
        MPI_OK(MPI_Start(r));
        break;
    }
}

static void fill(char *b, int n, int v)
{
    for (int i = 0; i < n; i++)
        b[i] = (char)(v + i * 7);
}

static void expect(const char *b, int n, int v)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == (char)(v + i * 7), "byte %d is %d, expected %d (message %d)", i, b[i], (char)(v + i * 7), v);
}

/* sender side of one case; matched: the receiver posted its receive first */
static void send_case(int kind, int n, int dest, int tag, int matched)
{
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    fill(sbuf, n, 1);
    if (matched) /* the receiver's receive is posted before this handshake */
        MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, dest, 1, NULL, 0, MPI_INT, dest, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    start(kind, n, dest, tag, &r);
    if (matched) /* the receive completed: the message was matched */
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, dest, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == !matched, "%s of %d bytes (%s): cancelled flag %d", kname[kind], n,
          matched ? "matched" : "unmatched", flag);
    MPI_Request again = MPI_REQUEST_NULL;
    fill(sbuf, n, 2);
    if (kind == K_SEND_INIT || kind == K_BSEND_INIT) /* restart: the request sends again */
        MPI_OK(MPI_Start(&r));
    else
        MPI_OK(MPI_Isend(sbuf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &again));
    if (!matched) /* only now may the receiver post its receives */
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, dest, 3, MPI_COMM_WORLD));
    if (again == MPI_REQUEST_NULL) {
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "%s restarted after a cancel reports cancelled", kname[kind]);
        MPI_OK(MPI_Request_free(&r));
    } else {
        MPI_OK(MPI_Wait(&again, MPI_STATUS_IGNORE));
    }
}

static void recv_case(int kind, int n, int src, int tag, int matched)
{
    MPI_Status st;
    p2p_setstep("receive %s of %d bytes (%s)", kname[kind], n, matched ? "matched" : "unmatched");
    if (matched) {
        MPI_Request r;
        memset(rbuf, 0, (size_t)n);
        MPI_OK(MPI_Irecv(rbuf, n, MPI_CHAR, src, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, src, 1, NULL, 0, MPI_INT, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&r, &st));
        expect(rbuf, n, 1);
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, src, 2, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, src, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    /* the second message: the withdrawn one must not be taken for it */
    memset(rbuf, 0, (size_t)n);
    MPI_OK(MPI_Recv(rbuf, n, MPI_CHAR, src, tag, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    expect(rbuf, n, 2);
    int flag = 0;
    MPI_OK(MPI_Iprobe(src, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a third message with tag %d is pending", tag);
}

/* a send to oneself, unmatched: cancelled; the restart or resend arrives */
static void self_case(int kind, int n)
{
    MPI_Request r;
    MPI_Status st;
    int flag = -1;
    p2p_setstep("self %s of %d bytes", kname[kind], n);
    fill(sbuf, n, 3);
    start(kind, n, p2p_rank, 9, &r);
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "send to self not cancelled");
    MPI_OK(MPI_Iprobe(p2p_rank, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the cancelled message to self is still there");
    if (kind == K_SEND_INIT || kind == K_BSEND_INIT)
        MPI_OK(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int last = p2p_size - 1;
    sbuf = malloc(BIG);
    rbuf = malloc(BIG);
    int bsize = 2 * (BIG + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc((size_t)bsize);
    CHECK(sbuf && rbuf && bbuf, "out of memory");
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));
    const int sizes[] = {1, 1000, BIG};
    int tag = 100;
    for (int kind = 0; kind < K_NKINDS; kind++) {
        for (int s = 0; s < 3; s++) {
            for (int matched = 0; matched < 2; matched++, tag++) {
                p2p_setstep("%s of %d bytes (%s)", kname[kind], sizes[s], matched ? "matched" : "unmatched");
                if (p2p_rank == 0)
                    send_case(kind, sizes[s], last, tag, matched);
                else if (p2p_rank == last)
                    recv_case(kind, sizes[s], 0, tag, matched);
            }
            self_case(kind, sizes[s]);
        }
    }
    void *b;
    int bs;
    MPI_OK(MPI_Buffer_detach(&b, &bs));
    free(bbuf);
    free(sbuf);
    free(rbuf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (p2p_rank == 0)
        printf("p2p_cancel: %d kinds x 3 sizes, matched and unmatched, and to self: ok\n", K_NKINDS);
    return 0;
}
