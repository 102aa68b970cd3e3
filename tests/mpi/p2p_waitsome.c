/* Multiple completion over mixed request arrays (active receives,
 * MPI_REQUEST_NULL entries, an inactive persistent request):
 * Testany/Waitany give the index of the completed request and MPI_UNDEFINED
 * when nothing is active; Waitsome/Testsome report exactly the completed
 * ones; Testall completes nothing unless everything is complete;
 * MPI_Request_get_status_{any,some,all} report without freeing.
 * Rank 0 releases messages one step at a time so the expected completion is
 * known.  Two ranks (extra ranks idle). */
#include "p2p_check.h"

#define N 10
static const int tags[N] = {5, -1, 3, -2, 7, -1, 1, 9, -1, 4}; /* -1 null, -2 inactive persistent */
static int bufs[N];

static void step_send(int tag) /* rank 0: send one message, wait for the ack */
{
    int v = 1000 + tag;
    MPI_OK(MPI_Send(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void ack(void)
{
    MPI_OK(MPI_Send(NULL, 0, MPI_INT, 0, 200, MPI_COMM_WORLD));
}

static void check_done(int idx, const MPI_Status *st, int tag)
{
    CHECK(idx >= 0 && idx < N && tags[idx] == tag, "index %d, expected the slot of tag %d", idx, tag);
    CHECK(st->MPI_TAG == tag && st->MPI_SOURCE == 0 && p2p_count(st, MPI_INT) == 1, "status %d/%d", st->MPI_SOURCE,
          st->MPI_TAG);
    CHECK(bufs[idx] == 1000 + tag, "data %d", bufs[idx]);
}

static void receiver(void)
{
    MPI_Request rq[N], pers;
    MPI_Status st, sts[N];
    int idx, flag, out, ind[N];
    MPI_OK(MPI_Recv_init(&bufs[3], 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &pers));
    for (int i = 0; i < N; i++) {
        if (tags[i] == -1)
            rq[i] = MPI_REQUEST_NULL;
        else if (tags[i] == -2)
            rq[i] = pers;
        else
            MPI_OK(MPI_Irecv(&bufs[i], 1, MPI_INT, 0, tags[i], MPI_COMM_WORLD, &rq[i]));
    }
    p2p_setstep("Testany before anything was sent");
    MPI_OK(MPI_Testany(N, rq, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "flag %d index %d", flag, idx);
    MPI_OK(MPI_Testsome(N, rq, &out, ind, sts));
    CHECK(out == 0, "Testsome outcount %d", out);
    MPI_OK(MPI_Request_get_status_any(N, rq, &idx, &flag, &st));
    CHECK(!flag, "get_status_any flag");
    MPI_OK(MPI_Send(NULL, 0, MPI_INT, 0, 201, MPI_COMM_WORLD)); /* go */

    p2p_setstep("Waitany");
    MPI_OK(MPI_Waitany(N, rq, &idx, &st));
    check_done(idx, &st, 7);
    CHECK(rq[idx] == MPI_REQUEST_NULL, "Waitany did not free");
    ack();
    p2p_setstep("Testany");
    do
        MPI_OK(MPI_Testany(N, rq, &idx, &flag, &st));
    while (!flag);
    check_done(idx, &st, 1);
    ack();

    p2p_setstep("Waitsome");
    int seen5 = 0, seen9 = 0;
    while (seen5 + seen9 < 2) {
        MPI_OK(MPI_Waitsome(N, rq, &out, ind, sts));
        CHECK(out >= 1 && out <= 2, "Waitsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            check_done(ind[k], &sts[k], tags[ind[k]]);
            CHECK(tags[ind[k]] == 5 || tags[ind[k]] == 9, "Waitsome reported tag %d", tags[ind[k]]);
            CHECK(rq[ind[k]] == MPI_REQUEST_NULL, "not freed");
            seen5 += tags[ind[k]] == 5;
            seen9 += tags[ind[k]] == 9;
        }
    }
    CHECK(seen5 == 1 && seen9 == 1, "Waitsome reported 5 x%d, 9 x%d", seen5, seen9);
    ack();

    p2p_setstep("Request_get_status_some / Testsome");
    /* wait until both tag 3 and 4 are complete without freeing them */
    do
        MPI_OK(MPI_Request_get_status_some(N, rq, &out, ind, sts));
    while (out < 2);
    CHECK(out == 2 && rq[ind[0]] != MPI_REQUEST_NULL, "get_status_some out %d", out);
    MPI_OK(MPI_Testsome(N, rq, &out, ind, sts));
    CHECK(out == 2 && ind[0] == 2 && ind[1] == 9, "Testsome %d: %d %d", out, ind[0], ind[1]);
    check_done(ind[0], &sts[0], 3);
    check_done(ind[1], &sts[1], 4);
    ack();

    p2p_setstep("nothing active");
    MPI_OK(MPI_Waitsome(N, rq, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Waitsome outcount %d", out);
    MPI_OK(MPI_Testsome(N, rq, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Testsome outcount %d", out);
    MPI_OK(MPI_Waitany(N, rq, &idx, &st));
    CHECK(idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "Waitany %d", idx);
    MPI_OK(MPI_Testany(N, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany %d/%d", flag, idx);
    MPI_OK(MPI_Testall(N, rq, &flag, sts));
    CHECK(flag && sts[3].MPI_TAG == MPI_ANY_TAG && sts[0].MPI_SOURCE == MPI_ANY_SOURCE, "Testall");
    MPI_OK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Waitany(0, NULL, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany of 0 requests");
    MPI_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    CHECK(rq[3] == pers, "inactive persistent request changed");

    p2p_setstep("Testall with some incomplete");
    MPI_Request two[2];
    int a = 0, b = 0;
    MPI_OK(MPI_Irecv(&a, 1, MPI_INT, 0, 60, MPI_COMM_WORLD, &two[0]));
    MPI_OK(MPI_Irecv(&b, 1, MPI_INT, 0, 61, MPI_COMM_WORLD, &two[1]));
    ack();
    /* wait until the first is complete, without completing it */
    do
        MPI_OK(MPI_Request_get_status(two[0], &flag, &st));
    while (!flag);
    MPI_OK(MPI_Testall(2, two, &flag, sts));
    CHECK(!flag && two[0] != MPI_REQUEST_NULL && two[1] != MPI_REQUEST_NULL, "Testall completed a part");
    MPI_OK(MPI_Request_get_status_all(2, two, &flag, sts));
    CHECK(!flag, "get_status_all");
    ack();
    do
        MPI_OK(MPI_Testall(2, two, &flag, sts));
    while (!flag);
    CHECK(two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL && a == 1060 && b == 1061, "Testall");
    CHECK(sts[0].MPI_TAG == 60 && sts[1].MPI_TAG == 61, "Testall statuses %d %d", sts[0].MPI_TAG, sts[1].MPI_TAG);
    MPI_OK(MPI_Request_free(&pers));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size >= 2, "needs 2 ranks");
    if (p2p_rank == 1) {
        receiver();
    } else if (p2p_rank == 0) {
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        step_send(7);
        step_send(1);
        int v5 = 1005, v9 = 1009, v3 = 1003, v4 = 1004;
        MPI_OK(MPI_Send(&v9, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&v5, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&v4, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(&v3, 1, MPI_INT, 1, 3, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Recv(NULL, 0, MPI_INT, 1, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        step_send(60);
        int v61 = 1061;
        MPI_OK(MPI_Send(&v61, 1, MPI_INT, 1, 61, MPI_COMM_WORLD));
    }
    MPI_Finalize();
    return 0;
}
