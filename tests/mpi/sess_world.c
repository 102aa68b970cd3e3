/* Sessions next to the world model: a session opened before MPI_Init, a
 * communicator from its WORLD group used beside MPI_COMM_WORLD, MPI_Finalize
 * with the session still open (the session's communicator keeps working,
 * MPI_Finalized is true, another session can start), and, once the last
 * session is finalized, MPI_Session_init failing cleanly. */
#include "p2p_check.h"

int main(void)
{
    (void)p2p_init;
    MPI_Session s, s2;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Init(NULL, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int flag, rank, size;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag, "MPI_Initialized false after MPI_Init");
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    p2p_rank = rank, p2p_size = size;
    MPI_Group g, wg;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int cmp;
    MPI_OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "WORLD pset group vs MPI_COMM_WORLD group: %d", cmp);
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(g, "org.wharf.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare with MPI_COMM_WORLD: %d", cmp);
    /* the node pset is the MPI_COMM_TYPE_SHARED group */
    MPI_Comm node;
    MPI_Group ng, shg;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_group(node, &ng));
    MPI_OK(MPI_Group_from_session_pset(s, "mpix://SHARED", &shg));
    MPI_OK(MPI_Group_compare(ng, shg, &cmp));
    CHECK(cmp == MPI_IDENT, "mpix://SHARED vs MPI_COMM_TYPE_SHARED: %d", cmp);
    MPI_OK(MPI_Group_free(&ng));
    MPI_OK(MPI_Group_free(&shg));
    MPI_OK(MPI_Comm_free(&node));
    MPI_OK(MPI_Group_free(&wg));
    /* an invalid session raises on the default handler (MPI_COMM_SELF's) */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Session bad = MPI_SESSION_NULL;
    int np, cl = -1;
    MPI_Error_class(MPI_Session_get_num_psets(bad, MPI_INFO_NULL, &np), &cl);
    CHECK(cl == MPI_ERR_SESSION, "MPI_SESSION_NULL: class %d", cl);
    MPI_Error_class(MPI_Session_finalize(&bad), &cl);
    CHECK(cl == MPI_ERR_SESSION, "finalize MPI_SESSION_NULL: class %d", cl);
    MPI_OK(MPI_Finalize());

    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag, "MPI_Finalized false after MPI_Finalize");
    /* the session's communicator still works */
    int v = rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size + 1) / 2, "allreduce after MPI_Finalize: %d", sum);
    /* a new session after MPI_Finalize */
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Group g2;
    MPI_OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &g2));
    MPI_Comm c2;
    MPI_OK(MPI_Comm_create_from_group(g2, "org.wharf.test.after", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c2));
    int token = rank == 0 ? 4242 : 0;
    MPI_OK(MPI_Bcast(&token, 1, MPI_INT, 0, c2));
    CHECK(token == 4242, "bcast after MPI_Finalize: %d", token);
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Group_free(&g2));
    MPI_OK(MPI_Session_finalize(&s2));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Session_finalize(&s));
    /* the runtime is gone now: a new session is refused, not a crash */
    MPI_Session s3 = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OTHER && s3 == MPI_SESSION_NULL, "session after teardown: rc %d class %d",
          rc, cls);
    if (rank == 0)
        printf("sess_world: %d ranks: ok\n", size);
    return 0;
}
