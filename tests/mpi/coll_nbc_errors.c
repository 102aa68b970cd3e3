/* Argument errors of the nonblocking and persistent collectives
 * (MPI_ERRORS_RETURN): they are checked as in the blocking forms, fail
 * before any communication (every check here fails on all ranks, so no rank
 * waits), leave the request argument alone, and do not use up a tag: the
 * collectives that follow still match.  Then the request rules of persistent
 * collectives: MPI_Start of an active one fails, a freed inactive one is
 * gone, and wait/test on an inactive one return at once. */
#include "p2p_check.h"

static int R, N;

static int has(int code, const char *s)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return strstr(msg, s) != NULL;
}

static void arguments(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int a[8] = {0}, b[8] = {0}, counts[64], displs[64];
    for (int i = 0; i < 64; i++)
        counts[i] = 1, displs[i] = i;
    const MPI_Request untouched = (MPI_Request)0x12345;
    MPI_Request q = untouched;
    MPI_Info bad_info = (MPI_Info)0x1c001234;

    p2p_setstep("root, count, type, op");
    MPI_FAILS(MPI_ERR_ROOT, MPI_Ibcast(a, 1, MPI_INT, N, w, &q));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast_init(a, 1, MPI_INT, -1, w, MPI_INFO_NULL, &q));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Iallreduce(a, b, -1, MPI_INT, MPI_SUM, w, &q));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Igather(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, w, &q));
    MPI_FAILS(MPI_ERR_OP, MPI_Ireduce(a, b, 1, MPI_INT, MPI_OP_NULL, 0, w, &q));
    MPI_FAILS(MPI_ERR_OP, MPI_Scan_init(a, b, 1, MPI_DOUBLE, MPI_BAND, w, MPI_INFO_NULL, &q));
    MPI_FAILS(MPI_ERR_COMM, MPI_Ibarrier(MPI_COMM_NULL, &q));
    MPI_FAILS(MPI_ERR_COMM, MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &q));
    CHECK(q == untouched, "a failed call changed the request argument to 0x%x", (unsigned)q);

    p2p_setstep("buffers");
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Iallreduce(a, a, 1, MPI_INT, MPI_SUM, w, &q));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Ialltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w, &q));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Iallgatherv(a, 1, MPI_INT, b, (int[64]){[0] = -1}, displs, MPI_INT, w, &q));
    MPI_FAILS(MPI_ERR_ARG, MPI_Ialltoallv(a, NULL, displs, MPI_INT, b, counts, displs, MPI_INT, w, &q));
    CHECK(q == untouched, "a failed call changed the request argument");

    p2p_setstep("request and info arguments");
    int rc = MPI_Ibarrier(w, NULL);
    MPI_FAILS(MPI_ERR_ARG, rc);
    CHECK(has(rc, "request"), "the error does not name the request argument");
    MPI_FAILS(MPI_ERR_ARG, MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, NULL));
    MPI_FAILS(MPI_ERR_INFO, MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_SUM, w, bad_info, &q));
    CHECK(q == untouched, "a failed call changed the request argument");

    /* the failed calls took no tag: these still match across ranks */
    p2p_setstep("after the errors");
    for (int i = 0; i < 8; i++)
        a[i] = R + i;
    MPI_OK(MPI_Iallreduce(a, b, 8, MPI_INT, MPI_SUM, w, &q));
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == N * (N - 1) / 2 + N * i, "b[%d] = %d", i, b[i]);
}

static void persistent_requests(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int x = R, y = -1, flag = 0;
    MPI_Request q, qs[2];
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "wharf_unused_hint", "1"));

    p2p_setstep("inactive persistent collective");
    MPI_OK(MPI_Allreduce_init(&x, &y, 1, MPI_INT, MPI_MAX, w, info, &q));
    MPI_OK(MPI_Info_free(&info));
    MPI_Status st;
    MPI_OK(MPI_Wait(&q, &st)); /* inactive: returns at once, empty status */
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "inactive wait: status not empty");
    MPI_OK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && q != MPI_REQUEST_NULL && y == -1, "inactive test");

    p2p_setstep("start twice");
    MPI_OK(MPI_Start(&q));
    int rc = MPI_Start(&q);
    MPI_FAILS(MPI_ERR_REQUEST, rc);
    MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(y == N - 1, "allreduce max = %d", y);

    p2p_setstep("startall with a persistent point-to-point request");
    int to = (R + 1) % N, from = (R + N - 1) % N, got = -1;
    MPI_OK(MPI_Recv_init(&got, 1, MPI_INT, from, 3, w, &qs[0]));
    MPI_OK(MPI_Send_init(&x, 1, MPI_INT, to, 3, w, &qs[1]));
    for (int rep = 0; rep < 3; rep++) {
        x = R * 10 + rep;
        MPI_Request all[3] = {qs[0], qs[1], q};
        MPI_OK(MPI_Startall(3, all));
        MPI_OK(MPI_Waitall(3, all, MPI_STATUSES_IGNORE));
        CHECK(all[0] == qs[0] && all[2] == q, "persistent requests released by Waitall");
        CHECK(got == from * 10 + rep, "point-to-point got %d", got);
        CHECK(y == (N - 1) * 10 + rep, "allreduce max %d", y);
    }
    MPI_OK(MPI_Request_free(&qs[0]));
    MPI_OK(MPI_Request_free(&qs[1]));

    p2p_setstep("free");
    MPI_OK(MPI_Request_free(&q));
    CHECK(q == MPI_REQUEST_NULL, "freed request not MPI_REQUEST_NULL");
    MPI_Request stale = q;
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&stale));

    /* an active persistent collective freed: finishes in the background */
    p2p_setstep("free while active");
    MPI_OK(MPI_Bcast_init(&x, 1, MPI_INT, 0, w, MPI_INFO_NULL, &q));
    MPI_OK(MPI_Start(&q));
    MPI_OK(MPI_Request_free(&q));
    MPI_OK(MPI_Barrier(w));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    arguments();
    persistent_requests();
    MPI_Finalize();
    return 0;
}
