/* Sessions created and destroyed again and again in one process (MPI-4.1
 * 11.3: "multiple sessions can be created and destroyed during the lifetime
 * of an MPI process"): three rounds of MPI_Session_init, a communicator
 * from mpi://WORLD, collectives and point-to-point traffic on it, and
 * MPI_Session_finalize with no other session open; then the world model
 * (MPI_Init after the last session was finalized) and MPI_Finalize.  A
 * session's error handler and info are fresh each round. */
#include "p2p_check.h"

static int eh_calls;

static void session_eh(MPI_Session *s, int *code, ...)
{
    (void)s, (void)code;
    eh_calls++;
}

static void round_trip(MPI_Session s, int round, const char *tag, int *rank_out, int *size_out)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int rank, size;
    MPI_OK(MPI_Comm_rank(c, &rank));
    MPI_OK(MPI_Comm_size(c, &size));
    p2p_rank = rank, p2p_size = size;
    int sum = 0, one = rank + round;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2 + size * round, "round %d: allreduce gave %d", round, sum);
    /* a ring of messages, eager and rendezvous sizes */
    enum { BIG = 300000 };
    static int out[BIG], in[BIG];
    for (int i = 0; i < BIG; i++)
        out[i] = rank * 7 + i + round;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int n = 1; n <= BIG; n *= 50) {
        MPI_OK(MPI_Sendrecv(out, n, MPI_INT, right, round, in, n, MPI_INT, left, round, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(in[i] == left * 7 + i + round, "round %d, %d ints: element %d is %d", round, n, i, in[i]);
    }
    MPI_OK(MPI_Barrier(c));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&g));
    *rank_out = rank, *size_out = size;
}

int main(void)
{
    (void)p2p_init;
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_SERIALIZED", "MPI_THREAD_FUNNELED"};
    int rank = 0, size = 0;
    for (int round = 0; round < 3; round++) {
        MPI_Errhandler eh;
        MPI_Info info;
        MPI_Session s = MPI_SESSION_NULL;
        MPI_OK(MPI_Session_create_errhandler(session_eh, &eh));
        MPI_OK(MPI_Info_create(&info));
        MPI_OK(MPI_Info_set(info, "thread_level", levels[round]));
        MPI_OK(MPI_Session_init(info, eh, &s));
        CHECK(s != MPI_SESSION_NULL, "round %d: no session", round);
        int flag;
        MPI_OK(MPI_Initialized(&flag));
        CHECK(!flag, "round %d: MPI_Initialized true without MPI_Init", round);
        char tag[64];
        snprintf(tag, sizeof tag, "org.wharf.test.reinit.%d", round);
        round_trip(s, round, tag, &rank, &size);
        /* the session's error handler still fires in later rounds */
        int before = eh_calls;
        MPI_Group g = MPI_GROUP_NULL;
        int rc = MPI_Group_from_session_pset(s, "mpi://NO-SUCH-SET", &g);
        CHECK(rc != MPI_SUCCESS && eh_calls == before + 1, "round %d: rc %d, handler calls %d", round, rc,
              eh_calls - before);
        MPI_OK(MPI_Info_free(&info));
        MPI_OK(MPI_Session_finalize(&s));
        CHECK(s == MPI_SESSION_NULL, "round %d: handle not reset by MPI_Session_finalize", round);
        MPI_OK(MPI_Errhandler_free(&eh));
        MPI_OK(MPI_Finalized(&flag));
        CHECK(!flag, "round %d: MPI_Finalized true without MPI_Init", round);
    }
    /* the world model after sessions came and went */
    MPI_OK(MPI_Init(NULL, NULL));
    int wr, ws, sum = 0;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &ws));
    CHECK(wr == rank && ws == size, "world rank %d of %d, session rank %d of %d", wr, ws, rank, size);
    MPI_OK(MPI_Allreduce(&wr, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == ws * (ws - 1) / 2, "world allreduce gave %d", sum);
    MPI_OK(MPI_Finalize());
    if (wr == 0)
        printf("sess_reinit: %d ranks, 3 sessions one after the other, then MPI_Init: ok\n", ws);
    return 0;
}
