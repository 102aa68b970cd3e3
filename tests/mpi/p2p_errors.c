/* Argument checks and error reporting of the point-to-point and request
 * calls, with MPI_ERRORS_RETURN: each bad argument gives its error class;
 * truncation (eager and rendezvous) gives MPI_ERR_TRUNCATE with correct
 * status fields, and MPI_ERR_IN_STATUS with per-status errors from
 * MPI_Waitall; buffered sends without enough buffer give MPI_ERR_BUFFER;
 * errors go to the handler of the communicator used.  Two ranks. */
#include <limits.h>

#include "p2p_check.h"

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static void clear_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    *code = MPI_SUCCESS; /* a handler that "clears" the error */
}

static void bad_arguments(void)
{
    p2p_setstep("bad arguments");
    int x[4] = {0};
    MPI_Request r;
    MPI_Status st;
    int peer = 1 - p2p_rank;
    MPI_FAILS(MPI_ERR_COMM, MPI_Send(x, 1, MPI_INT, peer, 0, MPI_COMM_NULL));
    MPI_FAILS(MPI_ERR_COMM, MPI_Irecv(x, 1, MPI_INT, peer, 0, MPI_COMM_NULL, &r));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Send(x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Recv_c(x, -3, MPI_INT, peer, 0, MPI_COMM_WORLD, &st));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Send(x, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD));
    MPI_Datatype unc;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Isend(x, 1, unc, peer, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Type_free(&unc));
    MPI_FAILS(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, p2p_size, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_RANK, MPI_Recv(x, 1, MPI_INT, p2p_size + 3, 0, MPI_COMM_WORLD, &st));
    MPI_FAILS(MPI_ERR_TAG, MPI_Send(x, 1, MPI_INT, peer, -5, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TAG, MPI_Ssend(x, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TAG, MPI_Irecv(x, 1, MPI_INT, peer, -2, MPI_COMM_WORLD, &r));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Send(NULL, 2, MPI_INT, peer, 0, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Recv(NULL, 2, MPI_INT, peer, 0, MPI_COMM_WORLD, &st));
    MPI_FAILS(MPI_ERR_TAG, MPI_Probe(peer, -9, MPI_COMM_WORLD, &st));
    MPI_FAILS(MPI_ERR_RANK, MPI_Iprobe(p2p_size, 0, MPI_COMM_WORLD, &x[0], &st));

    /* tag upper bound: MPI_TAG_UB is valid */
    int *ub, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
    MPI_OK(MPI_Sendrecv(x, 1, MPI_INT, p2p_rank, *ub, x + 1, 1, MPI_INT, p2p_rank, *ub, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_TAG == *ub, "tag %d", st.MPI_TAG);

    /* requests */
    r = (MPI_Request)0x7c0012ab; /* never a valid handle */
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Wait(&r, &st));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Test(&r, &flag, &st));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Cancel(&r));
    MPI_Request arr[3] = {MPI_REQUEST_NULL, r, MPI_REQUEST_NULL};
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Waitall(3, arr, MPI_STATUSES_IGNORE));
    r = MPI_REQUEST_NULL;
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Request_free(&r));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&r));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Waitall(-1, arr, MPI_STATUSES_IGNORE));
    /* Start of an active persistent request, and of a non-persistent one */
    MPI_OK(MPI_Recv_init(x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Start(&r));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&r));
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Request_free(&r));
    MPI_OK(MPI_Irecv(x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Start(&r));
    MPI_OK(MPI_Wait(&r, &st));
    /* message handles */
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Mrecv(x, 1, MPI_INT, &msg, &st));
    /* a request handle is not a message handle */
    MPI_OK(MPI_Irecv(x, 1, MPI_INT, p2p_rank, 12345, MPI_COMM_WORLD, &r));
    msg = (MPI_Message)r;
    MPI_FAILS(MPI_ERR_REQUEST, MPI_Mrecv(x, 1, MPI_INT, &msg, &st));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));

    /* errors are dispatched to the communicator's handler */
    MPI_Comm dup;
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    handler_calls = 0;
    int rc = MPI_Send(x, 1, MPI_INT, 99999, 0, dup);
    CHECK(handler_calls == 1 && handler_comm == dup, "handler called %d times", handler_calls);
    int cls = -1;
    MPI_Error_class(handler_code, &cls);
    CHECK(cls == MPI_ERR_RANK && rc == handler_code, "handler got class %d, call returned %d", cls, rc);
    MPI_OK(MPI_Errhandler_free(&eh));
    /* a handler that clears the code does not make the bad call go ahead */
    MPI_OK(MPI_Comm_create_errhandler(clear_errors, &eh));
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    handler_calls = 0;
    rc = MPI_Send(x, 1, MPI_INT, -12, 0, dup);
    CHECK(handler_calls == 1 && rc != MPI_SUCCESS, "clearing handler: %d calls, rc %d", handler_calls, rc);
    rc = MPI_Recv(NULL, -1, MPI_INT, 0, 0, dup, &st);
    CHECK(handler_calls == 2 && rc != MPI_SUCCESS, "clearing handler: %d calls, rc %d", handler_calls, rc);
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_free(&dup));
}

static void truncation(void)
{
    static char big[200000], small[1000];
    MPI_Status st, sts[2];
    for (int large = 0; large < 2; large++) {
        int n = large ? (int)sizeof big : 100;
        int cap = large ? (int)sizeof small : 50;
        p2p_setstep("truncation, %d bytes into %d", n, cap);
        if (p2p_rank == 0) {
            p2p_fill(big, (size_t)n, 1);
            MPI_OK(MPI_Send(big, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD));    /* Recv */
            MPI_OK(MPI_Send(big, n, MPI_BYTE, 1, 6, MPI_COMM_WORLD));    /* Irecv + Wait */
            MPI_OK(MPI_Send(big, n, MPI_BYTE, 1, 7, MPI_COMM_WORLD));    /* Waitall */
            MPI_OK(MPI_Send(big, 10, MPI_BYTE, 1, 8, MPI_COMM_WORLD));   /* Waitall, fits */
            MPI_OK(MPI_Send(big, n, MPI_BYTE, 1, 9, MPI_COMM_WORLD));    /* Waitany */
            MPI_OK(MPI_Send(big, 4, MPI_BYTE, 1, 10, MPI_COMM_WORLD));   /* still working? */
        } else if (p2p_rank == 1) {
            st.MPI_ERROR = 12345;
            MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Recv(small, cap, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 5, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
            CHECK(p2p_count(&st, MPI_BYTE) <= cap, "count %lld", (long long)p2p_count(&st, MPI_BYTE));
            CHECK(st.MPI_ERROR == 12345, "MPI_Recv modified MPI_ERROR");

            MPI_Request r;
            MPI_OK(MPI_Irecv(small, cap, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
            MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Wait(&r, &st));
            CHECK(r == MPI_REQUEST_NULL, "failed request not freed");
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 6, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);

            MPI_Request rs[3];
            static char ok[16];
            MPI_OK(MPI_Irecv(small, cap, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &rs[0]));
            rs[1] = MPI_REQUEST_NULL;
            MPI_OK(MPI_Irecv(ok, 16, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &rs[2]));
            MPI_Status s3[3];
            MPI_FAILS(MPI_ERR_IN_STATUS, MPI_Waitall(3, rs, s3));
            int c0 = -1;
            MPI_Error_class(s3[0].MPI_ERROR, &c0);
            CHECK(c0 == MPI_ERR_TRUNCATE, "status[0].MPI_ERROR class %d", c0);
            CHECK(s3[1].MPI_ERROR == MPI_SUCCESS && s3[1].MPI_SOURCE == MPI_ANY_SOURCE &&
                      s3[1].MPI_TAG == MPI_ANY_TAG,
                  "null request status %d/%d/%d", s3[1].MPI_SOURCE, s3[1].MPI_TAG, s3[1].MPI_ERROR);
            CHECK(s3[2].MPI_ERROR == MPI_SUCCESS && s3[2].MPI_TAG == 8 && p2p_count(&s3[2], MPI_BYTE) == 10,
                  "status[2]");
            CHECK(p2p_verify(ok, 10, 1) == (size_t)-1, "data of the good receive");
            CHECK(rs[0] == MPI_REQUEST_NULL && rs[2] == MPI_REQUEST_NULL, "Waitall left requests");

            int idx = -1;
            rs[0] = MPI_REQUEST_NULL;
            MPI_OK(MPI_Irecv(small, cap, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &rs[1]));
            MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Waitany(2, rs, &idx, &sts[0]));
            CHECK(idx == 1 && rs[1] == MPI_REQUEST_NULL, "Waitany index %d", idx);

            MPI_OK(MPI_Recv(ok, 16, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st));
            CHECK(p2p_count(&st, MPI_BYTE) == 4, "after truncation");
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* a shorter message that ends inside a basic element of the receive
     * type (3 chars into ints): the signatures differ, MPI_ERR_TRUNCATE as
     * MPICH; one that ends on an element boundary is fine */
    p2p_setstep("message ending inside an element");
    if (p2p_rank == 0) {
        MPI_OK(MPI_Send(big, 3, MPI_CHAR, 1, 11, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(big, 8, MPI_CHAR, 1, 12, MPI_COMM_WORLD));
    } else if (p2p_rank == 1) {
        MPI_Datatype idx;
        MPI_OK(MPI_Type_indexed(3, (int[]){1, 2, 1}, (int[]){4, 8, 16}, MPI_INT, &idx));
        MPI_OK(MPI_Type_commit(&idx));
        int ibuf[32];
        MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Recv(ibuf, 1, idx, 0, 11, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Recv(ibuf, 1, idx, 0, 12, MPI_COMM_WORLD, &st));
        int elems = -1;
        MPI_OK(MPI_Get_elements(&st, MPI_INT, &elems));
        CHECK(elems == 2, "8 bytes into ints: %d elements", elems);
        MPI_OK(MPI_Type_free(&idx));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void bsend_errors(void)
{
    p2p_setstep("bsend errors");
    static char data[1000], attach[500 + MPI_BSEND_OVERHEAD];
    int peer = 1 - p2p_rank;
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, 10, MPI_BYTE, peer, 3, MPI_COMM_WORLD)); /* none attached */
    MPI_OK(MPI_Buffer_attach(attach, (int)sizeof attach));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Buffer_attach(data, (int)sizeof data));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(data, 1000, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
    MPI_Request r;
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Ibsend(data, 600, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Bsend(data, 500, MPI_BYTE, peer, 3, MPI_COMM_WORLD)); /* exactly fits */
    MPI_OK(MPI_Bsend(data, 0, MPI_BYTE, MPI_PROC_NULL, 3, MPI_COMM_WORLD));
    MPI_OK(MPI_Recv(data, 1000, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    void *p;
    int sz;
    MPI_OK(MPI_Buffer_detach(&p, &sz));
    CHECK(p == (void *)attach && sz == (int)sizeof attach, "detach");
}

static void status_functions(void)
{
    p2p_setstep("status functions");
    MPI_Status st;
    int flag = -1, v = 0;
    MPI_Count c;
    MPI_OK(MPI_Status_set_elements(&st, MPI_INT, 7));
    MPI_OK(MPI_Status_set_cancelled(&st, 1));
    MPI_OK(MPI_Get_count_c(&st, MPI_INT, &c));
    CHECK(c == 7, "count %lld", (long long)c);
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "cancelled flag");
    MPI_OK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)3 << 32));
    MPI_OK(MPI_Get_elements_x(&st, MPI_DOUBLE, &c));
    CHECK(c == (MPI_Count)3 << 32, "large count %lld", (long long)c);
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1, "set_elements cleared the cancelled flag");
    MPI_OK(MPI_Status_set_cancelled(&st, 0));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0, "cancelled flag not cleared");
    MPI_OK(MPI_Status_set_source(&st, 3));
    MPI_OK(MPI_Status_set_tag(&st, 44));
    MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    MPI_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 3 && st.MPI_SOURCE == 3, "source");
    MPI_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 44, "tag");
    MPI_OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error");
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_Status back;
    MPI_OK(MPI_Status_c2f(&st, f));
    MPI_OK(MPI_Status_f2c(f, &back));
    CHECK(!memcmp(&st, &back, sizeof st), "f2c(c2f(status)) differs");
    MPI_FAILS(MPI_ERR_COUNT, MPI_Status_set_elements(&st, MPI_INT, -1));
    /* derived type: elements are basic elements, not whole types */
    MPI_Datatype t3;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t3));
    MPI_OK(MPI_Type_commit(&t3));
    MPI_OK(MPI_Status_set_elements(&st, t3, 4));
    MPI_OK(MPI_Get_elements_x(&st, t3, &c));
    CHECK(c == 4, "elements of 3-int type: %lld", (long long)c);
    MPI_OK(MPI_Get_count_c(&st, MPI_INT, &c));
    CHECK(c == 4, "4 elements are %lld ints", (long long)c);
    int ic = 0;
    MPI_OK(MPI_Get_count(&st, t3, &ic));
    CHECK(ic == MPI_UNDEFINED, "count of a partial type %d", ic);
    MPI_OK(MPI_Type_free(&t3));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size == 2, "needs exactly 2 ranks");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    bad_arguments();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    truncation();
    bsend_errors();
    status_functions();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
