/* Conformance corners of request completion and point-to-point argument
 * checks: the multiple-completion calls with count 0 and NULL arrays, and
 * count-0 messages with MPI_DATATYPE_NULL (to MPI_PROC_NULL and to a real
 * peer), which MPICH accepts. */
#include "p2p_check.h"

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    p2p_setstep("count 0 with NULL arrays");
    int flag = -1, idx = -2, outcount = -2;
    MPI_Status st;
    MPI_OK(MPI_Waitall(0, NULL, NULL));
    MPI_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Testall(0, NULL, &flag, NULL));
    CHECK(flag == 1, "Testall(0) flag %d", flag);
    MPI_OK(MPI_Waitany(0, NULL, &idx, NULL));
    CHECK(idx == MPI_UNDEFINED, "Waitany(0) index %d", idx);
    idx = -2;
    flag = -1;
    MPI_OK(MPI_Testany(0, NULL, &idx, &flag, NULL));
    CHECK(idx == MPI_UNDEFINED, "Testany(0) index %d", idx);
    CHECK(flag == 1, "Testany(0) flag %d", flag);
    MPI_OK(MPI_Waitany(0, NULL, &idx, &st));
    MPI_OK(MPI_Waitsome(0, NULL, &outcount, NULL, NULL));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome(0) outcount %d", outcount);
    outcount = -2;
    MPI_OK(MPI_Testsome(0, NULL, &outcount, NULL, NULL));
    CHECK(outcount == MPI_UNDEFINED, "Testsome(0) outcount %d", outcount);
    flag = -1;
    MPI_OK(MPI_Request_get_status_all(0, NULL, &flag, NULL));
    CHECK(flag == 1, "Request_get_status_all(0) flag %d", flag);
    /* non-empty arrays still need their arguments */
    MPI_Request rn = MPI_REQUEST_NULL;
    MPI_FAILS(MPI_ERR_ARG, MPI_Waitall(1, &rn, NULL));
    MPI_FAILS(MPI_ERR_ARG, MPI_Waitall(1, NULL, MPI_STATUSES_IGNORE));
    MPI_FAILS(MPI_ERR_ARG, MPI_Testall(1, &rn, NULL, MPI_STATUSES_IGNORE));

    p2p_setstep("count 0, MPI_DATATYPE_NULL, MPI_PROC_NULL");
    MPI_Request r;
    MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "source %d", st.MPI_SOURCE);
    CHECK(st.MPI_TAG == MPI_ANY_TAG, "tag %d", st.MPI_TAG);
    MPI_OK(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "source %d", st.MPI_SOURCE);
    int cnt = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0, "count %d", cnt);
    MPI_Message msg;
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) message 0x%x", (unsigned)msg);
    MPI_OK(MPI_Mrecv(NULL, 0, MPI_DATATYPE_NULL, &msg, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) source %d", st.MPI_SOURCE);
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0,
                        MPI_COMM_WORLD, &st));
    /* a non-zero count still needs a datatype */
    int x = 0;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Send(&x, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Irecv(&x, 1, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));

    p2p_setstep("count 0, MPI_DATATYPE_NULL, real peer");
    if (p2p_size >= 2 && p2p_rank < 2) {
        int peer = 1 - p2p_rank;
        MPI_Request rr[2];
        MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, peer, 7, MPI_COMM_WORLD, &rr[0]));
        MPI_OK(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, peer, 7, MPI_COMM_WORLD, &rr[1]));
        MPI_Status sts[2];
        MPI_OK(MPI_Waitall(2, rr, sts));
        CHECK(sts[0].MPI_SOURCE == peer, "source %d", sts[0].MPI_SOURCE);
        CHECK(sts[0].MPI_TAG == 7, "tag %d", sts[0].MPI_TAG);
        MPI_OK(MPI_Get_count(&sts[0], MPI_BYTE, &cnt));
        CHECK(cnt == 0, "count %d", cnt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
