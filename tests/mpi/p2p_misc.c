/* Cancel (posted receives are cancelled; an unmatched send is cancelled;
 * more send cancellation in p2p_cancel.c), MPI_PROC_NULL in every call, self-sends (a small
 * MPI_Send to oneself before the receive is posted; large nonblocking ones),
 * MPI_Sendrecv/MPI_Sendrecv_replace (contiguous, large, and a strided
 * derived type), MPI_Isendrecv/Isendrecv_replace.  Two or more ranks. */
#include "p2p_check.h"

static int left, right;

static void cancel_tests(void)
{
    int peer = p2p_rank ^ 1;
    int x = 0, flag = -1;
    MPI_Request r;
    MPI_Status st;
    if (peer >= p2p_size)
        return;

    p2p_setstep("cancel a posted receive");
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && r == MPI_REQUEST_NULL && x == 0, "receive not cancelled (flag %d)", flag);

    p2p_setstep("cancel a persistent receive, then reuse it");
    MPI_OK(MPI_Recv_init(&x, 1, MPI_INT, peer, 79, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && r != MPI_REQUEST_NULL, "persistent receive not cancelled");
    MPI_OK(MPI_Start(&r));
    /* handshake: the peer sends tag 79 only after our receive was cancelled */
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, peer, 80, NULL, 0, MPI_INT, peer, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int y = 5000 + p2p_rank;
    MPI_OK(MPI_Send(&y, 1, MPI_INT, peer, 79, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 && x == 5000 + peer && st.MPI_TAG == 79, "restarted receive got %d (cancelled %d)", x, flag);
    MPI_OK(MPI_Request_free(&r));

    p2p_setstep("cancel a send");
    y = 7000 + p2p_rank;
    MPI_OK(MPI_Isend(&y, 1, MPI_INT, peer, 78, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    if (!flag) { /* not cancelled: it must be delivered */
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, peer, 78, MPI_COMM_WORLD, &st));
        CHECK(x == 7000 + peer, "uncancelled send delivered %d", x);
    }
    /* the peer posts no receive for tag 78: the message is withdrawn */
    CHECK(flag == 1, "unmatched send not cancelled");

    p2p_setstep("cancel a completed receive");
    MPI_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0 && st.MPI_SOURCE == MPI_PROC_NULL, "completed receive reported cancelled");
}

static void check_procnull(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && p2p_count(st, MPI_INT) == 0,
          "%s: status %d/%d/%lld", what, st->MPI_SOURCE, st->MPI_TAG, (long long)p2p_count(st, MPI_INT));
}

static void procnull_tests(void)
{
    p2p_setstep("MPI_PROC_NULL");
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request r[6];
    MPI_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    check_procnull(&st, "Recv");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv from PROC_NULL modified the buffer");
    MPI_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Irsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[2]));
    MPI_OK(MPI_Ibsend(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[3])); /* no buffer needed */
    MPI_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[4]));
    MPI_OK(MPI_Irecv_c(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[5]));
    MPI_Status sts[6];
    MPI_OK(MPI_Waitall(6, r, sts));
    check_procnull(&sts[4], "Irecv");
    check_procnull(&sts[5], "Irecv_c");
    MPI_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_procnull(&st, "Sendrecv");
    MPI_OK(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_procnull(&st, "Sendrecv_replace");
    CHECK(buf[0] == 1 && buf[3] == 4, "buffer modified");
    MPI_OK(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]));
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Startall(2, r));
        MPI_OK(MPI_Waitall(2, r, sts));
        check_procnull(&sts[0], "persistent receive");
    }
    MPI_OK(MPI_Request_free(&r[0]));
    MPI_OK(MPI_Request_free(&r[1]));
}

static void self_tests(void)
{
    p2p_setstep("self: small blocking send before the receive");
    int me = p2p_rank;
    char small[256], got[256];
    MPI_Status st;
    /* a communicator of its own: the wildcard receive below must not catch a
     * neighbour's message of the next step, already on its way in WORLD */
    MPI_Comm wc;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wc));
    p2p_fill(small, sizeof small, 11);
    MPI_OK(MPI_Send(small, (int)sizeof small, MPI_BYTE, me, 1, wc)); /* must not deadlock */
    MPI_OK(MPI_Send(small, 10, MPI_BYTE, me, 2, wc));
    MPI_OK(MPI_Recv(got, 10, MPI_BYTE, me, 2, wc, &st)); /* tag 2 overtakes tag 1 */
    CHECK(p2p_count(&st, MPI_BYTE) == 10, "self tag 2");
    MPI_OK(MPI_Recv(got, (int)sizeof got, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, wc, &st));
    MPI_OK(MPI_Comm_free(&wc));
    CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 1 && p2p_count(&st, MPI_BYTE) == (MPI_Count)sizeof small, "self status");
    CHECK(p2p_verify(got, sizeof got, 11) == (size_t)-1, "self data");

    p2p_setstep("self: large nonblocking");
    size_t n = 4u << 20;
    char *a = malloc(n), *b = malloc(n);
    CHECK(a && b, "out of memory");
    p2p_fill(a, n, 12);
    MPI_Request rq[2];
    MPI_OK(MPI_Isend(a, (int)n, MPI_BYTE, me, 3, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Irecv(b, (int)n, MPI_BYTE, me, 3, MPI_COMM_WORLD, &rq[1]));
    MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(p2p_verify(b, n, 12) == (size_t)-1, "self large data");
    p2p_setstep("self: Issend + Recv, Sendrecv");
    memset(b, 0, n);
    MPI_OK(MPI_Issend(a, 1000, MPI_BYTE, me, 4, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Recv(b, 1000, MPI_BYTE, me, 4, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(p2p_verify(b, 1000, 12) == (size_t)-1, "self ssend data");
    MPI_OK(MPI_Sendrecv(a, (int)n, MPI_BYTE, 0, 5, b, (int)n, MPI_BYTE, 0, 5, MPI_COMM_SELF, &st));
    CHECK(st.MPI_SOURCE == 0 && p2p_count(&st, MPI_BYTE) == (MPI_Count)n, "Sendrecv on COMM_SELF");
    free(a);
    free(b);
}

static void sendrecv_tests(void)
{
    MPI_Status st;
    p2p_setstep("Sendrecv ring with wildcards");
    int out = p2p_rank * 10, in = -1;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 6, &in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                        &st));
    CHECK(in == left * 10 && st.MPI_SOURCE == left && st.MPI_TAG == 6, "got %d from %d", in, st.MPI_SOURCE);

    for (int k = 0; k < 2; k++) {
        size_t n = k ? (3u << 20) + 5 : 333;
        p2p_setstep("Sendrecv_replace %zu bytes", n);
        char *buf = malloc(n);
        p2p_fill(buf, n, (unsigned)(p2p_rank + 40));
        MPI_OK(MPI_Sendrecv_replace(buf, (int)n, MPI_BYTE, right, 7, left, 7, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_BYTE) == (MPI_Count)n && st.MPI_SOURCE == left, "status");
        CHECK(p2p_verify(buf, n, (unsigned)(left + 40)) == (size_t)-1, "replaced data");
        p2p_setstep("Isendrecv_replace %zu bytes", n);
        MPI_Request r;
        MPI_OK(MPI_Isendrecv_replace(buf, (int)n, MPI_BYTE, left, 8, right, 8, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == right && p2p_count(&st, MPI_BYTE) == (MPI_Count)n,
              "Isendrecv_replace status");
        CHECK(p2p_verify(buf, n, (unsigned)(p2p_rank + 40)) == (size_t)-1, "data back home");
        free(buf);
    }

    p2p_setstep("Sendrecv_replace with a strided type");
    enum { NV = 1000 };
    int v[2 * NV];
    for (int i = 0; i < 2 * NV; i++)
        v[i] = i % 2 ? -i : p2p_rank * 100000 + i;
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(NV, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Sendrecv_replace(v, 1, vec, right, 9, left, 9, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 2 * NV; i++)
        CHECK(v[i] == (i % 2 ? -i : left * 100000 + i), "element %d is %d", i, v[i]);
    MPI_OK(MPI_Type_free(&vec));

    p2p_setstep("Isendrecv");
    int a[3] = {p2p_rank, 1, 2}, b[3] = {-1, -1, -1};
    MPI_Request r;
    MPI_OK(MPI_Isendrecv(a, 3, MPI_INT, left, 10, b, 3, MPI_INT, right, 10, MPI_COMM_WORLD, &r));
    int flag = 0;
    do
        MPI_OK(MPI_Test(&r, &flag, &st));
    while (!flag);
    CHECK(b[0] == right && b[2] == 2 && st.MPI_SOURCE == right && st.MPI_TAG == 10, "Isendrecv got %d", b[0]);
    /* freed before completion: completes in the background */
    MPI_OK(MPI_Isendrecv(a, 3, MPI_INT, left, 11, b, 3, MPI_INT, right, 11, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    right = (p2p_rank + 1) % p2p_size;
    left = (p2p_rank + p2p_size - 1) % p2p_size;
    cancel_tests();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    procnull_tests();
    self_tests();
    sendrecv_tests();
    MPI_Finalize();
    return 0;
}
