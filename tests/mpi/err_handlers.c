/* Error handlers: user handlers (called with the communicator and the code,
 * then the call returns), inheritance by duplicates, get/set/free reference
 * rules, MPI_Comm_call_errhandler, errors not tied to a communicator, the
 * MPI-1 names, and user-defined error classes, codes and strings. */
#include "p2p_check.h"

static int calls;
static MPI_Comm seen_comm;
static int seen_code;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    seen_comm = *comm;
    seen_code = *code;
}

static void wrong_target(MPI_Win *win, int *code, ...)
{
    (void)win;
    (void)code;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int P = p2p_size, x = 0, cls;
    MPI_Errhandler eh, got;

    p2p_setstep("user handler on a duplicate");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(d, eh));
    int rc = MPI_Send(&x, 1, MPI_INT, P + 1, 0, d);
    CHECK(calls == 1, "handler called %d times", calls);
    CHECK(seen_comm == d, "handler got comm 0x%x, expected 0x%x", (unsigned)seen_comm, (unsigned)d);
    CHECK(rc == seen_code && rc != MPI_SUCCESS, "returned %d, handler saw %d", rc, seen_code);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK, "class %d", cls);

    p2p_setstep("handler survives Errhandler_free while attached; dup inherits it");
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not reset the handle");
    MPI_Comm d2;
    MPI_OK(MPI_Comm_dup(d, &d2));
    rc = MPI_Send(&x, 1, MPI_INT, 0, -3, d2);
    CHECK(calls == 2 && seen_comm == d2, "inherited handler: calls %d comm 0x%x", calls, (unsigned)seen_comm);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TAG, "class %d", cls);

    p2p_setstep("get_errhandler returns a handle to free");
    MPI_OK(MPI_Comm_get_errhandler(d2, &got));
    CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRORS_RETURN, "got 0x%x",
          (unsigned)got);
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&d2)); /* the handle from get still holds the handler */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER));
    CHECK(calls == 3 && seen_comm == MPI_COMM_SELF && seen_code == MPI_ERR_OTHER, "call_errhandler on SELF");
    MPI_OK(MPI_Errhandler_free(&got));

    p2p_setstep("errors without a communicator go to MPI_COMM_SELF's handler");
    int gsize;
    rc = MPI_Group_size(MPI_GROUP_NULL, &gsize);
    CHECK(calls == 4 && seen_comm == MPI_COMM_SELF, "group error: calls %d comm 0x%x", calls, (unsigned)seen_comm);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_GROUP, "class %d", cls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

    p2p_setstep("predefined handlers");
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD is 0x%x", (unsigned)got);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_Comm dp, dpp;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dp)); /* never given a handler */
    MPI_OK(MPI_Comm_split(dp, 0, 0, &dpp));
    MPI_Win win;
    int wbuf = 0, ckey;
    MPI_OK(MPI_Win_create(&wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == MPI_ERRORS_RETURN, "after set: 0x%x", (unsigned)got);
    MPI_OK(MPI_Errhandler_free(&got));

    p2p_setstep("communicators and windows never given a handler follow MPI_COMM_WORLD's (as MPICH)");
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split(dp, 0, 0, NULL));
    MPI_FAILS(MPI_ERR_RANK, MPI_Send(&x, 1, MPI_INT, P + 1, 0, dpp));
    MPI_OK(MPI_Comm_get_errhandler(dp, &got)); /* what it was given at creation, as MPICH */
    CHECK(got == MPI_ERRORS_ARE_FATAL, "handler of a dup made under ERRORS_ARE_FATAL: 0x%x", (unsigned)got);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_FAILS(MPI_ERR_KEYVAL, MPI_Win_set_attr(win, ckey, &wbuf)); /* nor a window */
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "handler of a window: 0x%x", (unsigned)got);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free_keyval(&ckey));
    MPI_OK(MPI_Comm_free(&dpp));
    MPI_OK(MPI_Comm_free(&dp));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER)); /* ERRORS_RETURN: returns */
    MPI_FAILS(MPI_ERR_ERRHANDLER, MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL));
    MPI_Errhandler weh;
    MPI_OK(MPI_Win_create_errhandler(wrong_target, &weh));
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh));
    MPI_OK(MPI_Errhandler_free(&weh));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN));

    p2p_setstep("MPI-1 names");
    MPI_Errhandler old;
    MPI_OK(MPI_Errhandler_create(handler, &old));
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, old));
    MPI_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
    CHECK(got == old, "Errhandler_get 0x%x", (unsigned)got);
    MPI_Recv(&x, 1, MPI_INT, -9, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(calls == 5 && seen_comm == MPI_COMM_WORLD, "MPI-1 handler: calls %d", calls);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Errhandler_free(&old));
    MPI_OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    p2p_setstep("user error classes, codes and strings");
    int ucls, ucode, ucode2, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Add_error_class(&ucls));
    MPI_OK(MPI_Add_error_code(ucls, &ucode));
    MPI_OK(MPI_Add_error_code(MPI_ERR_IO, &ucode2));
    CHECK(ucls > MPI_ERR_LASTCODE && ucode != ucls && ucode2 != ucode, "values %d %d %d", ucls, ucode, ucode2);
    MPI_OK(MPI_Error_class(ucode, &cls));
    CHECK(cls == ucls, "class of user code %d", cls);
    MPI_OK(MPI_Error_class(ucode2, &cls));
    CHECK(cls == MPI_ERR_IO, "class of user code in MPI_ERR_IO: %d", cls);
    MPI_OK(MPI_Error_string(ucode, s, &len));
    CHECK(len == 0 && s[0] == 0, "string before Add_error_string: '%s'", s);
    MPI_OK(MPI_Add_error_string(ucode, "the flux capacitor overheated"));
    MPI_OK(MPI_Error_string(ucode, s, &len));
    CHECK(!strcmp(s, "the flux capacitor overheated") && len == 29, "user string '%s'", s);
    MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_RANK, "no"));
    MPI_FAILS(MPI_ERR_ARG, MPI_Add_error_code(ucode, &ucode2));
    int *last, flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= ucode2 && *last >= ucode, "MPI_LASTUSEDCODE %d", *last);
    /* a user code through a user handler */
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, ucode));
    CHECK(calls == 6 && seen_code == ucode, "user code through the handler: %d", seen_code);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_class(ucls)); /* still has a code */
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_code(ucode)); /* still has a string (MPI-4.1) */
    MPI_OK(MPI_Remove_error_string(ucode));
    MPI_OK(MPI_Remove_error_code(ucode));
    MPI_OK(MPI_Remove_error_class(ucls));
    MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(ucode, &cls));

    p2p_setstep("MPICH 4.0's MPIX_Delete_error_* remove as MPI_Remove_error_*");
    MPI_OK(MPI_Add_error_class(&ucls));
    MPI_OK(MPI_Add_error_code(ucls, &ucode));
    MPI_OK(MPI_Add_error_string(ucode, "mpix code"));
    MPI_FAILS(MPI_ERR_ARG, MPIX_Delete_error_code(ucode)); /* still has a string */
    MPI_OK(MPIX_Delete_error_string(ucode));
    MPI_OK(MPIX_Delete_error_code(ucode));
    MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(ucode, &cls));
    MPI_OK(MPIX_Delete_error_class(ucls));
    MPI_FAILS(MPI_ERR_ARG, MPI_Error_class(ucls, &cls));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
