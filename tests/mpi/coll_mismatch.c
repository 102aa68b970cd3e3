/* Collectives called with different counts on different ranks (erroneous:
 * type signatures must match) return an error on the ranks that receive the
 * wrong amount, never hang, and leave the communicator usable.
 * Nonblocking forms (schedules) on every channel; the blocking forms of the
 * shared-memory collectives only where they run (not WHARF_CHANNEL=net: the
 * point-to-point algorithms do not check yet).  Rank 0 (root) passes `a`
 * elements, the others `b`. */
#include "p2p_check.h"

static int R, N;

static int class_of(int rc)
{
    int cl = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cl);
    return cl;
}

/* rc of a rank that must see the mismatch: an error of class OTHER or TRUNCATE */
static void must_fail(int rc, const char *what)
{
    int cl = class_of(rc);
    CHECK(cl == MPI_ERR_OTHER || cl == MPI_ERR_TRUNCATE, "%s: class %d, expected MPI_ERR_OTHER or MPI_ERR_TRUNCATE",
          what, cl);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "bytes") != NULL, "%s: the message does not say what differs: %s", what, msg);
}

static int wait_rc(int rc, MPI_Request *q)
{
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(q, MPI_STATUS_IGNORE);
}

/* the communicator still works: a correct allreduce and bcast */
static void still_usable(const char *after)
{
    p2p_setstep("usable after %s", after);
    int v = R + 1, sum = 0, x = R == 0 ? 42 : -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == N * (N + 1) / 2, "allreduce gave %d, expected %d", sum, N * (N + 1) / 2);
    MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(x == 42, "bcast gave %d", x);
}

static void run(int nonblocking, int a, int b)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int cnt = R == 0 ? a : b, buf[64], out[64 * 16], rc;
    MPI_Request q;
    for (int i = 0; i < 64; i++)
        buf[i] = R * 100 + i;
    const char *form = nonblocking ? "nonblocking" : "blocking";

    p2p_setstep("%s bcast %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Ibcast(buf, cnt, MPI_INT, 0, w, &q), &q) : MPI_Bcast(buf, cnt, MPI_INT, 0, w);
    if (R != 0)
        must_fail(rc, "bcast");
    still_usable("bcast");

    p2p_setstep("%s allreduce %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iallreduce(buf, out, cnt, MPI_INT, MPI_SUM, w, &q), &q)
                     : MPI_Allreduce(buf, out, cnt, MPI_INT, MPI_SUM, w);
    if (nonblocking ? R != 0 : 1) /* every rank combines in shared memory; the schedule's rank 0 may not see it */
        must_fail(rc, "allreduce");
    still_usable("allreduce");

    p2p_setstep("%s scatter %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iscatter(out, cnt, MPI_INT, buf, b, MPI_INT, 0, w, &q), &q)
                     : MPI_Scatter(out, cnt, MPI_INT, buf, b, MPI_INT, 0, w);
    if (R != 0)
        must_fail(rc, "scatter");
    still_usable("scatter");

    p2p_setstep("%s allgather %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Iallgather(buf, cnt, MPI_INT, out, b, MPI_INT, w, &q), &q)
                     : MPI_Allgather(buf, cnt, MPI_INT, out, b, MPI_INT, w);
    must_fail(rc, "allgather"); /* rank 0: its own block; the others: rank 0's */
    still_usable("allgather");

    p2p_setstep("%s alltoall %d/%d", form, a, b);
    rc = nonblocking ? wait_rc(MPI_Ialltoall(out, cnt, MPI_INT, out + 64 * 8, b, MPI_INT, w, &q), &q)
                     : MPI_Alltoall(out, cnt, MPI_INT, out + 64 * 8, b, MPI_INT, w);
    must_fail(rc, "alltoall");
    still_usable("alltoall");
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *ch = getenv("WHARF_CHANNEL");
    int shm = !(ch && strcmp(ch, "net") == 0);
    /* root/first rank longer, then shorter, than the others */
    run(1, 1, 8);
    run(1, 8, 1);
    if (shm) {
        run(0, 1, 8);
        run(0, 8, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (R == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
