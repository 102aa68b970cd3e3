/* Probes: MPI_Probe/Iprobe report the next matching message without
 * receiving it (size from the status), MPI_Mprobe/Improbe remove it from
 * matching so that only MPI_Mrecv/Imrecv on the message handle gets it,
 * for eager and larger-than-eager messages; MPI_PROC_NULL probes give
 * MPI_MESSAGE_NO_PROC.  Two ranks. */
#include "p2p_check.h"

#define LARGE (1u << 20)
#define HUGE (3u << 20)

static void recv_probed(const MPI_Status *pst, int tag, size_t n, unsigned seed)
{
    CHECK(pst->MPI_SOURCE == 0 && pst->MPI_TAG == tag, "probe status %d/%d, expected 0/%d", pst->MPI_SOURCE,
          pst->MPI_TAG, tag);
    MPI_Count c = p2p_count(pst, MPI_BYTE);
    CHECK(c == (MPI_Count)n, "probed count %lld, expected %zu", (long long)c, n);
    char *b = malloc((size_t)c + 1);
    MPI_Status st;
    MPI_OK(MPI_Recv(b, (int)c, MPI_BYTE, pst->MPI_SOURCE, pst->MPI_TAG, MPI_COMM_WORLD, &st));
    CHECK(p2p_count(&st, MPI_BYTE) == c, "received count");
    CHECK(p2p_verify(b, n, seed) == (size_t)-1, "data of probed message");
    free(b);
}

static void proc_null(void)
{
    p2p_setstep("PROC_NULL probes");
    MPI_Status st;
    int flag = 0;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && p2p_count(&st, MPI_BYTE) == 0, "Probe");
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "Iprobe");
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "Mprobe message 0x%x", (unsigned)m);
    int x = 42;
    st.MPI_SOURCE = 17;
    MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && x == 42, "Mrecv of NO_PROC");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && p2p_count(&st, MPI_INT) == 0,
          "Mrecv status");
    flag = 0;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "Improbe");
    MPI_Request r;
    MPI_OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &r));
    CHECK(m == MPI_MESSAGE_NULL, "Imrecv did not reset the message");
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && p2p_count(&st, MPI_INT) == 0, "Imrecv status");
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size >= 2, "needs 2 ranks");
    proc_null();
    char *sbuf = malloc(HUGE), *rbuf = malloc(HUGE);
    CHECK(sbuf && rbuf, "out of memory");
    MPI_Status st;
    int flag;
    if (p2p_rank == 0) {
        /* plain probes */
        p2p_fill(sbuf, 100, 1);
        MPI_OK(MPI_Send(sbuf, 100, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
        p2p_fill(sbuf, LARGE, 2);
        MPI_OK(MPI_Send(sbuf, LARGE, MPI_BYTE, 1, 2, MPI_COMM_WORLD));
        /* matched probes: two messages with the same tag */
        p2p_fill(sbuf, 50, 3);
        MPI_OK(MPI_Send(sbuf, 50, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        p2p_fill(sbuf, 60, 4);
        MPI_OK(MPI_Send(sbuf, 60, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        p2p_fill(sbuf, HUGE, 5);
        MPI_OK(MPI_Send(sbuf, HUGE, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
        p2p_fill(sbuf, LARGE, 6);
        MPI_OK(MPI_Send(sbuf, LARGE, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
    } else if (p2p_rank == 1) {
        p2p_setstep("Iprobe with nothing pending");
        MPI_OK(MPI_Iprobe(0, 77, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "Iprobe found a message that was never sent");

        p2p_setstep("Probe");
        MPI_OK(MPI_Probe(0, 1, MPI_COMM_WORLD, &st));
        MPI_Status again;
        MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &again)); /* still the same one */
        CHECK(again.MPI_TAG == 1 && p2p_count(&again, MPI_BYTE) == 100, "second probe saw tag %d", again.MPI_TAG);
        recv_probed(&st, 1, 100, 1);

        p2p_setstep("Iprobe of a large message");
        do
            MPI_OK(MPI_Iprobe(0, 2, MPI_COMM_WORLD, &flag, &st));
        while (!flag);
        recv_probed(&st, 2, LARGE, 2);

        p2p_setstep("Mprobe");
        MPI_Message m1, m2;
        MPI_OK(MPI_Mprobe(0, 3, MPI_COMM_WORLD, &m1, &st));
        CHECK(m1 != MPI_MESSAGE_NULL && m1 != MPI_MESSAGE_NO_PROC, "Mprobe message");
        CHECK(p2p_count(&st, MPI_BYTE) == 50, "Mprobe count %lld", (long long)p2p_count(&st, MPI_BYTE));
        /* the matched message is gone from matching: the next probe sees the second one */
        MPI_OK(MPI_Probe(0, 3, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_BYTE) == 60, "probe after Mprobe saw %lld bytes", (long long)p2p_count(&st, MPI_BYTE));
        do
            MPI_OK(MPI_Improbe(0, 3, MPI_COMM_WORLD, &flag, &m2, &st));
        while (!flag);
        CHECK(m2 != m1 && p2p_count(&st, MPI_BYTE) == 60, "Improbe");
        /* receive them out of order */
        MPI_OK(MPI_Mrecv(rbuf, 100, MPI_BYTE, &m2, &st));
        CHECK(m2 == MPI_MESSAGE_NULL && st.MPI_TAG == 3 && p2p_count(&st, MPI_BYTE) == 60, "Mrecv m2");
        CHECK(p2p_verify(rbuf, 60, 4) == (size_t)-1, "Mrecv m2 data");
        MPI_OK(MPI_Mrecv_c(rbuf, 100, MPI_BYTE, &m1, &st));
        CHECK(m1 == MPI_MESSAGE_NULL && st.MPI_SOURCE == 0 && p2p_count(&st, MPI_BYTE) == 50, "Mrecv m1");
        CHECK(p2p_verify(rbuf, 50, 3) == (size_t)-1, "Mrecv m1 data");
        MPI_OK(MPI_Iprobe(0, 3, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "a received message can still be probed");

        p2p_setstep("Improbe + Imrecv of a large message");
        MPI_Message m3;
        do
            MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &flag, &m3, &st));
        while (!flag);
        CHECK(p2p_count(&st, MPI_BYTE) == HUGE, "Improbe count %lld", (long long)p2p_count(&st, MPI_BYTE));
        MPI_Request r;
        memset(rbuf, 0, HUGE);
        MPI_OK(MPI_Imrecv(rbuf, HUGE, MPI_BYTE, &m3, &r));
        CHECK(m3 == MPI_MESSAGE_NULL, "Imrecv did not reset the message");
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(st.MPI_TAG == 4 && p2p_count(&st, MPI_BYTE) == HUGE, "Imrecv status");
        CHECK(p2p_verify(rbuf, HUGE, 5) == (size_t)-1, "Imrecv data");

        p2p_setstep("Mprobe of a large message, received as MPI_INT");
        MPI_Message m4;
        MPI_OK(MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &m4, &st));
        CHECK(st.MPI_TAG == 5 && p2p_count(&st, MPI_INT) == LARGE / 4, "Mprobe int count");
        MPI_OK(MPI_Mrecv(rbuf, LARGE / 4, MPI_INT, &m4, &st));
        CHECK(p2p_verify(rbuf, LARGE, 6) == (size_t)-1, "Mrecv data");
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
