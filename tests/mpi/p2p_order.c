/* Matching order: MPI's non-overtaking rule with wildcards.
 *  1. ranks 1..n-1 each send many messages (small and rendezvous-sized,
 *     three tags) to rank 0, which receives with MPI_ANY_SOURCE/MPI_ANY_TAG:
 *     per sender, messages arrive in send order.
 *  2. specific tags received in a different order than sent: per tag, order
 *     is kept; the other tag's messages wait.
 *  3. receives pre-posted (ANY_SOURCE, one tag) before the sends: per sender,
 *     earlier posted receives get earlier messages.
 * Run with 3+ ranks for real wildcard contention. */
#include "p2p_check.h"

#define NMSG 150
#define BIGSZ 40000 /* above every channel's eager limit */
#define HDR 3

static size_t msg_size(int k)
{
    return k % 17 == 5 ? BIGSZ : (size_t)(HDR * sizeof(int) + (size_t)(k % 7) * 13);
}

static void fill_msg(int *buf, int sender, int seq, size_t n)
{
    buf[0] = sender;
    buf[1] = seq;
    buf[2] = (int)n;
    p2p_fill((char *)buf + HDR * sizeof(int), n - HDR * sizeof(int), (unsigned)(sender * 7919 + seq));
}

static void check_msg(const int *buf, const MPI_Status *st, int *expect_seq)
{
    int sender = buf[0], seq = buf[1];
    size_t n = (size_t)buf[2];
    CHECK(sender == st->MPI_SOURCE, "payload from %d but status source %d", sender, st->MPI_SOURCE);
    CHECK(sender > 0 && sender < p2p_size, "bad sender %d", sender);
    CHECK(seq == expect_seq[sender], "from rank %d got message %d, expected %d (overtaken)", sender, seq,
          expect_seq[sender]);
    CHECK(st->MPI_TAG == seq % 3, "tag %d for message %d", st->MPI_TAG, seq);
    CHECK(n == msg_size(seq) && p2p_count(st, MPI_BYTE) == (MPI_Count)n, "size %zu/%lld for message %d", n,
          (long long)p2p_count(st, MPI_BYTE), seq);
    CHECK(p2p_verify((const char *)buf + HDR * sizeof(int), n - HDR * sizeof(int),
                     (unsigned)(sender * 7919 + seq)) == (size_t)-1,
          "payload of message %d from %d", seq, sender);
    expect_seq[sender]++;
}

static void send_all(int *buf, int phase)
{
    if (phase != 1) {
        /* phases 2 and 3 receive tags out of order: a blocking send of a large
           message could wait for a receive that comes only later, so all
           sends are nonblocking, each from its own buffer */
        MPI_Request *rq = malloc(sizeof(MPI_Request) * NMSG);
        char *bufs = malloc((size_t)NMSG * BIGSZ);
        CHECK(rq && bufs, "out of memory");
        for (int k = 0; k < NMSG; k++) {
            size_t n = msg_size(k);
            int *b = (int *)(bufs + (size_t)k * BIGSZ);
            fill_msg(b, p2p_rank, k, n);
            MPI_OK(MPI_Isend(b, (int)n, MPI_BYTE, 0, k % 3, MPI_COMM_WORLD, &rq[k]));
        }
        MPI_OK(MPI_Waitall(NMSG, rq, MPI_STATUSES_IGNORE));
        free(rq);
        free(bufs);
        return;
    }
    for (int k = 0; k < NMSG; k++) {
        size_t n = msg_size(k);
        fill_msg(buf, p2p_rank, k, n);
        /* mix blocking and nonblocking standard sends */
        if (k % 2) {
            MPI_OK(MPI_Send(buf, (int)n, MPI_BYTE, 0, k % 3, MPI_COMM_WORLD));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Isend(buf, (int)n, MPI_BYTE, 0, k % 3, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size >= 2, "needs 2+ ranks");
    int *buf = malloc(BIGSZ);
    int *expect = calloc((size_t)p2p_size, sizeof(int));
    CHECK(buf && expect, "out of memory");
    int nsend = p2p_size - 1;

    /* 1. full wildcards */
    p2p_setstep("ANY_SOURCE/ANY_TAG");
    if (p2p_rank == 0) {
        for (int m = 0; m < nsend * NMSG; m++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(buf, BIGSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check_msg(buf, &st, expect);
        }
    } else {
        send_all(buf, 1);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 2. per tag: receive all tag-2 messages of each sender first, then tag 1, then tag 0 */
    p2p_setstep("tags out of order");
    if (p2p_rank == 0) {
        for (int t = 2; t >= 0; t--) {
            for (int s = 1; s < p2p_size; s++) {
                for (int k = t; k < NMSG; k += 3) {
                    MPI_Status st;
                    MPI_OK(MPI_Recv(buf, BIGSZ, MPI_BYTE, s, t, MPI_COMM_WORLD, &st));
                    CHECK(buf[0] == s && buf[1] == k, "tag %d from %d: got message %d of %d, expected %d", t, s,
                          buf[1], buf[0], k);
                    expect[s] = k;
                    check_msg(buf, &st, expect);
                }
            }
        }
    } else {
        send_all(buf, 2);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 3. pre-posted wildcard receives for tag 1 only, then the sends */
    p2p_setstep("pre-posted ANY_SOURCE receives");
    int per = (NMSG + 1) / 3; /* messages with tag 1 per sender */
    if (p2p_rank == 0) {
        int n = nsend * per;
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)n);
        MPI_Status *sts = malloc(sizeof(MPI_Status) * (size_t)n);
        char *bufs = malloc((size_t)n * BIGSZ);
        CHECK(reqs && sts && bufs, "out of memory");
        for (int i = 0; i < n; i++)
            MPI_OK(MPI_Irecv(bufs + (size_t)i * BIGSZ, BIGSZ, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &reqs[i]));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* receives are posted */
        MPI_OK(MPI_Waitall(n, reqs, sts));
        for (int s = 0; s < p2p_size; s++)
            expect[s] = -1;
        for (int i = 0; i < n; i++) {
            const int *m = (const int *)(bufs + (size_t)i * BIGSZ);
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
            CHECK(m[0] == sts[i].MPI_SOURCE && m[0] > 0, "request %d: payload from %d, status %d", i, m[0],
                  sts[i].MPI_SOURCE);
            CHECK(m[1] % 3 == 1 && m[1] > expect[m[0]], "request %d: message %d from %d after %d (overtaken)", i,
                  m[1], m[0], expect[m[0]]);
            expect[m[0]] = m[1];
        }
        /* the tag 0/2 messages are still unexpected: drain them in order */
        for (int s = 0; s < p2p_size; s++)
            expect[s] = 0;
        for (int m = 0; m < nsend * (NMSG - per); m++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(buf, BIGSZ, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG != 1, "tag 1 message left over");
            while (expect[buf[0]] % 3 == 1)
                expect[buf[0]]++;
            check_msg(buf, &st, expect);
        }
        free(reqs);
        free(sts);
        free(bufs);
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        send_all(buf, 3);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    free(buf);
    free(expect);
    MPI_Finalize();
    return 0;
}
