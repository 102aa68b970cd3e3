/* Sessions without MPI_Init (MPI-4.1 11.3): info objects and session error
 * handlers before any initialization, MPI_Session_init/finalize, the process
 * sets mpi://WORLD, mpi://SELF and mpix://SHARED (names, sizes, groups),
 * MPI_Session_get_info, communicators from process-set groups with
 * MPI_Comm_create_from_group (distinct context ids per string tag, disjoint
 * groups creating concurrently), session error handlers (create, set, get,
 * call, invoked by a failing call), MPI_Session_c2f/f2c, two sessions open
 * at once. */
#include "p2p_check.h"

static int eh_calls, eh_code;
static MPI_Session eh_session;

static void session_eh(MPI_Session *s, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_session = *s;
}

static void comm_eh(MPI_Comm *c, int *code, ...) { (void)c, (void)code; }

static int errclass(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(void)
{
    (void)p2p_init;
    int flag;
    /* before anything: info objects, session error handlers, the predicates */
    MPI_Info info;
    char val[64];
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_OK(MPI_Info_set(info, "wharf_test_key", "seven"));
    int len = sizeof val;
    MPI_OK(MPI_Info_get_string(info, "wharf_test_key", &len, val, &flag));
    CHECK(flag && !strcmp(val, "seven"), "info before init: flag %d value %s", flag, val);
    MPI_Errhandler seh;
    MPI_OK(MPI_Session_create_errhandler(session_eh, &seh));
    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized says %d before MPI_Init", flag);

    MPI_Session s;
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    CHECK(s != MPI_SESSION_NULL, "session is null");
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Initialized(&flag));
    CHECK(!flag, "MPI_Initialized says %d with only a session", flag);

    /* info used: the provided thread level and the user's keys */
    MPI_Info used;
    MPI_OK(MPI_Session_get_info(s, &used));
    len = sizeof val;
    MPI_OK(MPI_Info_get_string(used, "thread_level", &len, val, &flag));
    CHECK(flag && (!strcmp(val, "MPI_THREAD_SERIALIZED") || !strcmp(val, "MPI_THREAD_MULTIPLE")),
          "thread_level %s", flag ? val : "(missing)");
    len = sizeof val;
    MPI_OK(MPI_Info_get_string(used, "wharf_test_key", &len, val, &flag));
    CHECK(flag && !strcmp(val, "seven"), "user key lost: flag %d", flag);
    MPI_OK(MPI_Info_free(&used));

    /* process sets */
    int np;
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np));
    CHECK(np == 3, "%d process sets", np);
    int seen_world = 0, seen_self = 0, seen_shared = 0;
    for (int i = 0; i < np; i++) {
        char name[64];
        int plen = 0;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &plen, NULL));
        CHECK(plen > 1 && plen < (int)sizeof name, "pset %d length %d", i, plen);
        int want = plen;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &plen, name));
        CHECK((int)strlen(name) + 1 == want, "pset %d: name %s, length %d", i, name, want);
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
        seen_shared += !strcmp(name, "mpix://SHARED");
    }
    CHECK(seen_world == 1 && seen_self == 1 && seen_shared == 1, "pset names %d %d %d", seen_world, seen_self,
          seen_shared);
    int plen = 8;
    char small[8];
    MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &plen, small));
    CHECK(strlen(small) == 7, "truncated name %s", small);
    plen = 0;
    CHECK(errclass(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 3, &plen, NULL)) == MPI_ERR_ARG, "n = 3 accepted");

    MPI_Group wg, sg, hg;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    int size, rank;
    MPI_OK(MPI_Group_size(wg, &size));
    MPI_OK(MPI_Group_rank(wg, &rank));
    p2p_rank = rank, p2p_size = size;
    MPI_Info pi;
    const char *names[3] = {"mpi://WORLD", "mpi://SELF", "mpix://SHARED"};
    int psize[3];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Session_get_pset_info(s, names[i], &pi));
        len = sizeof val;
        MPI_OK(MPI_Info_get_string(pi, "mpi_size", &len, val, &flag));
        CHECK(flag, "%s: no mpi_size", names[i]);
        psize[i] = atoi(val);
        MPI_OK(MPI_Info_free(&pi));
    }
    CHECK(psize[0] == size && psize[1] == 1 && psize[2] >= 1 && psize[2] <= size, "pset sizes %d %d %d (world %d)",
          psize[0], psize[1], psize[2], size);
    CHECK(errclass(MPI_Group_from_session_pset(s, "mpi://NOPE", &sg)) == MPI_ERR_ARG, "unknown pset accepted");
    CHECK(errclass(MPI_Session_get_pset_info(s, "mpi://NOPE", &pi)) == MPI_ERR_ARG, "unknown pset info");

    /* communicators from the WORLD group: two string tags, two contexts */
    MPI_Comm c1, c2;
    MPI_OK(MPI_Comm_create_from_group(wg, "org.wharf.test.a", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c1));
    MPI_OK(MPI_Comm_create_from_group(wg, "org.wharf.test.b", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c2));
    int r1, s1, cmp;
    MPI_OK(MPI_Comm_rank(c1, &r1));
    MPI_OK(MPI_Comm_size(c1, &s1));
    CHECK(r1 == rank && s1 == size, "comm rank %d size %d, group %d %d", r1, s1, rank, size);
    MPI_OK(MPI_Comm_compare(c1, c2, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare %d", cmp);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c1));
    CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);
    if (size > 1) { /* a message on c2 must not match a receive on c1 */
        if (rank == 0) {
            int a = 222, b = 111;
            MPI_OK(MPI_Send(&a, 1, MPI_INT, 1, 7, c2));
            MPI_OK(MPI_Send(&b, 1, MPI_INT, 1, 7, c1));
        } else if (rank == 1) {
            int x = 0, y = 0;
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 7, c1, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Recv(&y, 1, MPI_INT, 0, 7, c2, MPI_STATUS_IGNORE));
            CHECK(x == 111 && y == 222, "c1 got %d, c2 got %d", x, y);
        }
    }

    /* disjoint groups create at the same time, with the same string tag */
    int half = rank % 2, members[64], nm = 0;
    for (int i = half; i < size && nm < 64; i += 2)
        members[nm++] = i;
    MPI_OK(MPI_Group_incl(wg, nm, members, &hg));
    MPI_Comm ch;
    MPI_OK(MPI_Comm_create_from_group(hg, "org.wharf.test.half", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ch));
    int hs, hr;
    MPI_OK(MPI_Comm_size(ch, &hs));
    MPI_OK(MPI_Comm_rank(ch, &hr));
    CHECK(hs == nm && hr == rank / 2, "half comm size %d rank %d (want %d %d)", hs, hr, nm, rank / 2);
    sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ch));
    int want = 0;
    for (int i = 0; i < nm; i++)
        want += members[i];
    CHECK(sum == want, "half allreduce %d want %d", sum, want);

    /* SELF and SHARED */
    MPI_Comm cs, csh;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &sg));
    MPI_OK(MPI_Comm_create_from_group(sg, "org.wharf.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &cs));
    MPI_OK(MPI_Comm_size(cs, &hs));
    CHECK(hs == 1, "self comm size %d", hs);
    MPI_Group shg;
    MPI_OK(MPI_Group_from_session_pset(s, "mpix://SHARED", &shg));
    MPI_OK(MPI_Comm_create_from_group(shg, "org.wharf.test.shared", MPI_INFO_NULL, MPI_ERRORS_RETURN, &csh));
    MPI_OK(MPI_Comm_size(csh, &hs));
    CHECK(hs == psize[2], "shared comm size %d, pset %d", hs, psize[2]);
    int one = 1;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, csh));
    CHECK(sum == psize[2], "shared allreduce %d", sum);

    /* session error handlers */
    MPI_Errhandler got;
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN, "errhandler 0x%x, set MPI_ERRORS_RETURN", (unsigned)got);
    MPI_Errhandler ceh;
    MPI_OK(MPI_Comm_create_errhandler(comm_eh, &ceh));
    CHECK(errclass(MPI_Session_set_errhandler(s, ceh)) == MPI_ERR_ERRHANDLER, "comm errhandler accepted");
    MPI_OK(MPI_Errhandler_free(&ceh));
    MPI_OK(MPI_Session_set_errhandler(s, seh));
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == seh, "errhandler 0x%x, set 0x%x", (unsigned)got, (unsigned)seh);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(eh_calls == 1 && eh_code == MPI_ERR_OTHER && eh_session == s, "call_errhandler: %d calls, code %d",
          eh_calls, eh_code);
    int rc = MPI_Group_from_session_pset(s, "no such set", &sg);
    CHECK(eh_calls == 2 && errclass(eh_code) == MPI_ERR_ARG && errclass(rc) == MPI_ERR_ARG,
          "failing call: %d calls, class %d, rc class %d", eh_calls, errclass(eh_code), errclass(rc));
    MPI_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&seh)); /* the session no longer holds it */

    /* Fortran handles */
    MPI_Fint fs = MPI_Session_c2f(s);
    CHECK(MPI_Session_f2c(fs) == s, "c2f/f2c round trip");

    /* a second session at the same time; finalizing it keeps the first usable */
    MPI_Session s2;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s2 != s, "two sessions share a handle");
    MPI_OK(MPI_Session_get_info(s2, &used));
    len = sizeof val;
    MPI_OK(MPI_Info_get_string(used, "thread_level", &len, val, &flag));
    /* it asked for nothing, but the process already runs at MPI_THREAD_MULTIPLE (the first
     * session asked for it): the provided level is the process's, as MPICH reports */
    CHECK(flag && !strcmp(val, "MPI_THREAD_MULTIPLE"), "second session thread_level %s", flag ? val : "(missing)");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "finalize left the handle");
    MPI_OK(MPI_Barrier(c1));

    MPI_OK(MPI_Comm_free(&c1));
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Comm_free(&ch));
    MPI_OK(MPI_Comm_free(&cs));
    MPI_OK(MPI_Comm_free(&csh));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&hg));
    MPI_OK(MPI_Group_free(&sg));
    MPI_OK(MPI_Group_free(&shg));
    MPI_OK(MPI_Session_finalize(&s));
    MPI_OK(MPI_Finalized(&flag));
    CHECK(!flag, "MPI_Finalized says %d without MPI_Init", flag);
    /* info objects still work after the runtime is gone */
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_free(&info));
    if (rank == 0)
        printf("sess_basic: %d ranks, shared pset %d: ok\n", size, psize[2]);
    return 0;
}
