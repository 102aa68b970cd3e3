/* One error idiom.  Internal functions return MPI error codes (MPI_SUCCESS = 0).
 * wh_error() makes a code of a class that carries a formatted message, which
 * MPI_Error_string returns; wh_raise() hands a code to the error handler of the
 * object the user called on (fatal handlers print function, problem, rank, and
 * take the job down).
 *
 *   if (count < 0)
 *       return wh_raise_comm(c, __func__, wh_error(MPI_ERR_COUNT, "negative count %d", count));
 */
#ifndef WH_CORE_ERR_H
#define WH_CORE_ERR_H
#include <mpi.h>

struct wh_comm;
struct wh_win;

/* New error code of class cls whose string is the message (kept in a ring of
 * recent messages; older codes degrade to their class string). */
int wh_error(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int wh_error_class(int code);       /* class of any code; MPI_ERR_UNKNOWN if not ours */
const char *wh_error_text(int code, char *buf, size_t len);

/* Invoke the handler attached to comm (NULL = the default handler used before
 * any object exists: MPI_COMM_WORLD's).  Returns code for the caller to return
 * (for ERRORS_RETURN and user handlers that return). */
int wh_raise_comm(struct wh_comm *c, const char *fname, int code);
/* Print "wharf: rank R: FNAME: message [CLASS]" and abort the job. */
_Noreturn void wh_fatal(const char *fname, int code);

#define WH_CHECK(expr)                                                                            \
    do {                                                                                          \
        int wh_rc_ = (expr);                                                                      \
        if (__builtin_expect(wh_rc_ != MPI_SUCCESS, 0))                                           \
            return wh_rc_;                                                                        \
    } while (0)

/* Error classes and codes added at run time (MPI_Add_error_class/code/string,
 * MPI_Remove_error_*; src/mpi/errhandler.c).  Their values lie above
 * MPI_ERR_LASTCODE; the library's own codes lie below it and above every class. */
int wh_err_valid(int code);              /* a class or code MPI_Error_class accepts */
int wh_err_is_class(int v);              /* predefined or user-added class */
const char *wh_err_class_name(int cls);  /* "MPI_ERR_RANK"; NULL for user classes */
int wh_err_add_class(int *cls);
int wh_err_add_code(int cls, int *code);
int wh_err_add_string(int code, const char *s);
enum { WH_ERR_RM_CLASS, WH_ERR_RM_CODE, WH_ERR_RM_STRING };
int wh_err_remove(int v, int what);
extern int wh_err_lastusedcode;          /* value of the MPI_LASTUSEDCODE attribute */

/* Used by generated stubs for functions wharf does not implement yet. */
int wh_err_unimplemented(const char *fname);
#endif
