/* MPI error-handler and error-code entry points.  MPI_Error_class and
 * MPI_Error_string work before MPI_Init and after MPI_Finalize. */
#include <stdio.h>
#include <string.h>

#include "io/io.h"
#include "mpi/api.h"

static int chk_comm(const char *fname, MPI_Comm h, wh_comm_t **c)
{
    if ((*c = wh_comm_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_COMM_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm is MPI_COMM_NULL"));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm 0x%x is not a valid communicator (freed or never "
                                                             "created)", (unsigned)h));
}

static int chk_errh(wh_comm_t *c, const char *fname, MPI_Errhandler h, wh_errh_t **e)
{
    if ((*e = wh_errh_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_ERRHANDLER_NULL)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler is MPI_ERRHANDLER_NULL"));
    return wh_raise_comm(c, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x is not a valid error handler (freed "
                                                                "or never created)", (unsigned)h));
}

#define CHK_PTR(c, fname, p, name)                                                                \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return wh_raise_comm((c), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));      \
    } while (0)

static const char *target_name(int t)
{
    return t == WH_H_COMM ? "communicators" : t == WH_H_WIN ? "windows" : t == WH_H_FILE ? "files" : "sessions";
}

static int create_errh(const char *fname, int target, MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    CHK_PTR(NULL, fname, fn, "the error handler function");
    CHK_PTR(NULL, fname, errhandler, "errhandler");
    wh_errh_t *e = wh_errh_new(WH_ERRH_USER, target, fn);
    if (!e)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory creating an error handler"));
    *errhandler = e->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- communicators ---------- */

static int body_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create_errh("MPI_Comm_create_errhandler", WH_H_COMM, comm_errhandler_fn, errhandler);
}

static int comm_set_errh(const char *fname, MPI_Comm comm, MPI_Errhandler errhandler)
{
    wh_comm_t *c;
    wh_errh_t *e;
    int rc;
    if ((rc = chk_comm(fname, comm, &c)) || (rc = chk_errh(c, fname, errhandler, &e)))
        return rc;
    if (e->kind == WH_ERRH_USER && e->target != WH_H_COMM)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ARG, "errhandler 0x%x was created for %s, not communicators",
                                                (unsigned)errhandler, target_name(e->target)));
    wh_comm_set_errh(c, errhandler);
    return MPI_SUCCESS;
}

static int comm_get_errh(const char *fname, MPI_Comm comm, MPI_Errhandler *errhandler)
{
    wh_comm_t *c;
    int rc = chk_comm(fname, comm, &c);
    if (rc)
        return rc;
    CHK_PTR(c, fname, errhandler, "errhandler");
    wh_errh_t *e = wh_errh_get(c->errh);
    if (e && e->kind == WH_ERRH_USER)
        e->obj.refs++; /* the user frees the handle returned */
    *errhandler = c->errh;
    return MPI_SUCCESS;
}

static int body_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return comm_set_errh("MPI_Comm_set_errhandler", comm, errhandler);
}

static int body_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return comm_get_errh("MPI_Comm_get_errhandler", comm, errhandler);
}

static int body_Errhandler_free(MPI_Errhandler *errhandler)
{
    /* callable before MPI_Init and after MPI_Finalize (MPI-4) */
    CHK_PTR(NULL, "MPI_Errhandler_free", errhandler, "errhandler");
    wh_errh_t *e;
    int rc = chk_errh(NULL, "MPI_Errhandler_free", *errhandler, &e);
    if (rc)
        return rc;
    wh_errh_release(e); /* predefined handlers: nothing to release */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

static int body_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    wh_comm_t *c;
    int rc = chk_comm("MPI_Comm_call_errhandler", comm, &c);
    if (rc)
        return rc;
    if (errorcode == MPI_SUCCESS)
        return MPI_SUCCESS;
    /* fatal handlers do not return; ERRORS_RETURN and user handlers that
     * return leave the call successful */
    wh_raise_comm(c, "MPI_Comm_call_errhandler", errorcode);
    return MPI_SUCCESS;
}

/* MPI-1 names, removed in MPI-3.0 and still exported by MPICH */
static int body_Errhandler_create(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create_errh("MPI_Errhandler_create", WH_H_COMM, comm_errhandler_fn, errhandler);
}

static int body_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return comm_set_errh("MPI_Errhandler_set", comm, errhandler);
}

static int body_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return comm_get_errh("MPI_Errhandler_get", comm, errhandler);
}

/* ---------- windows and files ----------
 * Window handlers can be created now (MPI_Win is an int, so the function type
 * is the communicator one); attaching them comes with the window code.  For
 * files the handler of MPI_FILE_NULL is the default of MPI_File_open and of
 * errors without a file (MPI_ERRORS_RETURN unless changed). */

static int body_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create_errh("MPI_Win_create_errhandler", WH_H_WIN, win_errhandler_fn, errhandler);
}

static int body_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    return create_errh("MPI_File_create_errhandler", WH_H_FILE, (MPI_Comm_errhandler_function *)(void (*)(void))file_errhandler_fn,
                       errhandler);
}

/* the handler slot of a file, or MPI_FILE_NULL's (the default for opens) */
static MPI_Errhandler *file_errh_slot(const char *fname, MPI_File file, wh_file_t **fp, int *rc)
{
    *rc = MPI_SUCCESS;
    *fp = NULL;
    if (file == MPI_FILE_NULL)
        return wh_file_default_errh();
    if (!(*fp = wh_file_get(file))) {
        *rc = wh_raise_file(NULL, fname, wh_error(MPI_ERR_FILE, "file %p is not an open file", (void *)file));
        return NULL;
    }
    return &(*fp)->errh;
}

static int body_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fname[] = "MPI_File_set_errhandler";
    wh_file_t *f;
    int rc;
    MPI_Errhandler *slot = file_errh_slot(fname, file, &f, &rc);
    if (!slot)
        return rc;
    wh_errh_t *e = wh_errh_get(errhandler);
    if (!e)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "errhandler 0x%x is not a valid error handler",
                                                (unsigned)errhandler));
    if (e->kind == WH_ERRH_USER && e->target != WH_H_FILE)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "errhandler 0x%x was created for %s, not files",
                                                (unsigned)errhandler, target_name(e->target)));
    if (e->kind == WH_ERRH_USER)
        e->obj.refs++;
    wh_errh_release(wh_errh_get(*slot));
    *slot = errhandler;
    return MPI_SUCCESS;
}

static int body_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fname[] = "MPI_File_get_errhandler";
    wh_file_t *f;
    int rc;
    MPI_Errhandler *slot = file_errh_slot(fname, file, &f, &rc);
    if (!slot)
        return rc;
    if (!errhandler)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "errhandler is NULL"));
    wh_errh_t *e = wh_errh_get(*slot);
    if (e && e->kind == WH_ERRH_USER)
        e->obj.refs++;
    *errhandler = *slot;
    return MPI_SUCCESS;
}

static int body_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char fname[] = "MPI_File_call_errhandler";
    wh_file_t *f = NULL;
    if (fh != MPI_FILE_NULL && !(f = wh_file_get(fh)))
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_FILE, "file %p is not an open file", (void *)fh));
    wh_raise_file(f, fname, errorcode);
    return MPI_SUCCESS; /* MPI-4.1 9.3.4: success unless the handler could not be called */
}

/* ---------- error codes and classes ---------- */

static int bad_code(const char *fname, int errorcode)
{
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "%d is not a valid error code or class", errorcode));
}

static int body_Error_class(int errorcode, int *errorclass)
{
    CHK_PTR(NULL, "MPI_Error_class", errorclass, "errorclass");
    if (!wh_err_valid(errorcode))
        return bad_code("MPI_Error_class", errorcode);
    *errorclass = wh_error_class(errorcode);
    return MPI_SUCCESS;
}

static int body_Error_string(int errorcode, char *string, int *resultlen)
{
    CHK_PTR(NULL, "MPI_Error_string", string, "string");
    CHK_PTR(NULL, "MPI_Error_string", resultlen, "resultlen");
    if (!wh_err_valid(errorcode))
        return bad_code("MPI_Error_string", errorcode);
    wh_error_text(errorcode, string, MPI_MAX_ERROR_STRING);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

static int body_Add_error_class(int *errorclass)
{
    WH_CHECK_INIT("MPI_Add_error_class");
    CHK_PTR(NULL, "MPI_Add_error_class", errorclass, "errorclass");
    int rc = wh_err_add_class(errorclass);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, "MPI_Add_error_class", rc);
}

static int body_Add_error_code(int errorclass, int *errorcode)
{
    WH_CHECK_INIT("MPI_Add_error_code");
    CHK_PTR(NULL, "MPI_Add_error_code", errorcode, "errorcode");
    int rc = wh_err_add_code(errorclass, errorcode);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, "MPI_Add_error_code", rc);
}

static int body_Add_error_string(int errorcode, const char *string)
{
    WH_CHECK_INIT("MPI_Add_error_string");
    CHK_PTR(NULL, "MPI_Add_error_string", string, "string");
    int rc = wh_err_add_string(errorcode, string);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, "MPI_Add_error_string", rc);
}

static int remove_common(const char *fname, int v, int what)
{
    WH_CHECK_INIT(fname); /* MPI-4.1 allows it before MPI_Init; wharf does not yet (as MPI_Add_error_*) */
    int rc = wh_err_remove(v, what);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, fname, rc);
}

static int body_Remove_error_class(int errorclass)
{
    return remove_common("MPI_Remove_error_class", errorclass, WH_ERR_RM_CLASS);
}

static int body_Remove_error_code(int errorcode)
{
    return remove_common("MPI_Remove_error_code", errorcode, WH_ERR_RM_CODE);
}

static int body_Remove_error_string(int errorcode)
{
    return remove_common("MPI_Remove_error_string", errorcode, WH_ERR_RM_STRING);
}

#include "entry/errhandler.h"

/* MPICH 4.0's names of the three functions above (MPICH-ABI programs built
 * against 4.0 call these). */
WH_API int PMPIX_Delete_error_class(int errorclass)
{
    return PMPI_Remove_error_class(errorclass);
}
WH_ALIAS(MPIX_Delete_error_class, PMPIX_Delete_error_class)

WH_API int PMPIX_Delete_error_code(int errorcode)
{
    return PMPI_Remove_error_code(errorcode);
}
WH_ALIAS(MPIX_Delete_error_code, PMPIX_Delete_error_code)

WH_API int PMPIX_Delete_error_string(int errorcode)
{
    return PMPI_Remove_error_string(errorcode);
}
WH_ALIAS(MPIX_Delete_error_string, PMPIX_Delete_error_string)
