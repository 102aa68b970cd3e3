/* Error codes, classes and their strings; raising errors through handlers.
 *
 * Value space (all values are non-negative ints):
 *   0 .. WH_NCLASS-1            predefined classes (MPI_SUCCESS .. MPI_ERR_ERRHANDLER)
 *   (seq << 7) | class          codes made by wh_error(): seq in [1, 2^23), so every code is
 *                               >= 128 (never a class value) and <= MPI_ERR_LASTCODE; the
 *                               message lives in a ring slot (seq % WH_ERR_RING) that still
 *                               holds seq, otherwise the code degrades to its class text
 *   MPI_ERR_LASTCODE + n        classes and codes added with MPI_Add_error_class/code (n >= 1)
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "core/job.h"

#define WH_NCLASS (MPI_ERR_ERRHANDLER + 1)
#define WH_ERR_RING 256
#define WH_ERR_SEQ_BITS 23
#define WH_ERR_DYN_BASE MPI_ERR_LASTCODE

static const struct {
    const char *name, *text;
} cls_tab[WH_NCLASS] = {
    [MPI_SUCCESS] = {"MPI_SUCCESS", "No error"},
    [MPI_ERR_BUFFER] = {"MPI_ERR_BUFFER", "Invalid buffer pointer"},
    [MPI_ERR_COUNT] = {"MPI_ERR_COUNT", "Invalid count argument"},
    [MPI_ERR_TYPE] = {"MPI_ERR_TYPE", "Invalid datatype argument"},
    [MPI_ERR_TAG] = {"MPI_ERR_TAG", "Invalid tag argument"},
    [MPI_ERR_COMM] = {"MPI_ERR_COMM", "Invalid communicator"},
    [MPI_ERR_RANK] = {"MPI_ERR_RANK", "Invalid rank"},
    [MPI_ERR_ROOT] = {"MPI_ERR_ROOT", "Invalid root"},
    [MPI_ERR_GROUP] = {"MPI_ERR_GROUP", "Invalid group"},
    [MPI_ERR_OP] = {"MPI_ERR_OP", "Invalid reduction operation"},
    [MPI_ERR_TOPOLOGY] = {"MPI_ERR_TOPOLOGY", "Invalid topology"},
    [MPI_ERR_DIMS] = {"MPI_ERR_DIMS", "Invalid dimension argument"},
    [MPI_ERR_ARG] = {"MPI_ERR_ARG", "Invalid argument"},
    [MPI_ERR_UNKNOWN] = {"MPI_ERR_UNKNOWN", "Unknown error"},
    [MPI_ERR_TRUNCATE] = {"MPI_ERR_TRUNCATE", "Message truncated on receive"},
    [MPI_ERR_OTHER] = {"MPI_ERR_OTHER", "Known error not in this list"},
    [MPI_ERR_INTERN] = {"MPI_ERR_INTERN", "Internal MPI (implementation) error"},
    [MPI_ERR_IN_STATUS] = {"MPI_ERR_IN_STATUS", "Error code is in status"},
    [MPI_ERR_PENDING] = {"MPI_ERR_PENDING", "Pending request"},
    [MPI_ERR_REQUEST] = {"MPI_ERR_REQUEST", "Invalid request (handle)"},
    [MPI_ERR_ACCESS] = {"MPI_ERR_ACCESS", "Permission denied"},
    [MPI_ERR_AMODE] = {"MPI_ERR_AMODE", "Error related to the access mode passed to MPI_File_open"},
    [MPI_ERR_BAD_FILE] = {"MPI_ERR_BAD_FILE", "Invalid file name (for example, path name too long)"},
    [MPI_ERR_CONVERSION] = {"MPI_ERR_CONVERSION", "Error in a user-supplied data conversion function"},
    [MPI_ERR_DUP_DATAREP] = {"MPI_ERR_DUP_DATAREP", "Data representation identifier already registered"},
    [MPI_ERR_FILE_EXISTS] = {"MPI_ERR_FILE_EXISTS", "File exists"},
    [MPI_ERR_FILE_IN_USE] = {"MPI_ERR_FILE_IN_USE", "File is currently open by some process"},
    [MPI_ERR_FILE] = {"MPI_ERR_FILE", "Invalid file handle"},
    [MPI_ERR_INFO] = {"MPI_ERR_INFO", "Invalid info object"},
    [MPI_ERR_INFO_KEY] = {"MPI_ERR_INFO_KEY", "Info key is empty or longer than MPI_MAX_INFO_KEY"},
    [MPI_ERR_INFO_VALUE] = {"MPI_ERR_INFO_VALUE", "Info value is empty or longer than MPI_MAX_INFO_VAL"},
    [MPI_ERR_INFO_NOKEY] = {"MPI_ERR_INFO_NOKEY", "Info key is not defined in the info object"},
    [MPI_ERR_IO] = {"MPI_ERR_IO", "Other I/O error"},
    [MPI_ERR_NAME] = {"MPI_ERR_NAME", "Service name not published"},
    [MPI_ERR_NO_MEM] = {"MPI_ERR_NO_MEM", "Out of memory"},
    [MPI_ERR_NOT_SAME] = {"MPI_ERR_NOT_SAME",
                          "Collective argument not identical on all processes, or collective calls in a "
                          "different order"},
    [MPI_ERR_NO_SPACE] = {"MPI_ERR_NO_SPACE", "Not enough space"},
    [MPI_ERR_NO_SUCH_FILE] = {"MPI_ERR_NO_SUCH_FILE", "File does not exist"},
    [MPI_ERR_PORT] = {"MPI_ERR_PORT", "Invalid port name"},
    [MPI_ERR_QUOTA] = {"MPI_ERR_QUOTA", "Quota exceeded"},
    [MPI_ERR_READ_ONLY] = {"MPI_ERR_READ_ONLY", "Read-only file or file system"},
    [MPI_ERR_SERVICE] = {"MPI_ERR_SERVICE", "Invalid service name"},
    [MPI_ERR_SPAWN] = {"MPI_ERR_SPAWN", "Error spawning processes"},
    [MPI_ERR_UNSUPPORTED_DATAREP] = {"MPI_ERR_UNSUPPORTED_DATAREP", "Unsupported data representation"},
    [MPI_ERR_UNSUPPORTED_OPERATION] = {"MPI_ERR_UNSUPPORTED_OPERATION", "Unsupported operation"},
    [MPI_ERR_WIN] = {"MPI_ERR_WIN", "Invalid window"},
    [MPI_ERR_BASE] = {"MPI_ERR_BASE", "Invalid base address"},
    [MPI_ERR_LOCKTYPE] = {"MPI_ERR_LOCKTYPE", "Invalid lock type"},
    [MPI_ERR_KEYVAL] = {"MPI_ERR_KEYVAL", "Invalid attribute key"},
    [MPI_ERR_RMA_CONFLICT] = {"MPI_ERR_RMA_CONFLICT", "Conflicting accesses to a window"},
    [MPI_ERR_RMA_SYNC] = {"MPI_ERR_RMA_SYNC", "Wrong synchronization of RMA calls"},
    [MPI_ERR_SIZE] = {"MPI_ERR_SIZE", "Invalid size argument"},
    [MPI_ERR_DISP] = {"MPI_ERR_DISP", "Invalid displacement argument"},
    [MPI_ERR_ASSERT] = {"MPI_ERR_ASSERT", "Invalid assertion argument"},
    [MPI_ERR_RMA_RANGE] = {"MPI_ERR_RMA_RANGE", "Target memory is not part of the window"},
    [MPI_ERR_RMA_ATTACH] = {"MPI_ERR_RMA_ATTACH", "Memory cannot be attached to the window"},
    [MPI_ERR_RMA_SHARED] = {"MPI_ERR_RMA_SHARED", "Memory cannot be shared"},
    [MPI_ERR_RMA_FLAVOR] = {"MPI_ERR_RMA_FLAVOR", "Window has the wrong flavor for this operation"},
    [MPI_T_ERR_MEMORY] = {"MPI_T_ERR_MEMORY", "Out of memory in the tool interface"},
    [MPI_T_ERR_NOT_INITIALIZED] = {"MPI_T_ERR_NOT_INITIALIZED", "Tool interface not initialized"},
    [MPI_T_ERR_CANNOT_INIT] = {"MPI_T_ERR_CANNOT_INIT", "Tool interface cannot be initialized now"},
    [MPI_T_ERR_INVALID_INDEX] = {"MPI_T_ERR_INVALID_INDEX", "Tool index is invalid or was deleted"},
    [MPI_T_ERR_INVALID_ITEM] = {"MPI_T_ERR_INVALID_ITEM", "Tool item index out of range"},
    [MPI_T_ERR_INVALID_HANDLE] = {"MPI_T_ERR_INVALID_HANDLE", "Invalid tool handle"},
    [MPI_T_ERR_OUT_OF_HANDLES] = {"MPI_T_ERR_OUT_OF_HANDLES", "No more tool handles available"},
    [MPI_T_ERR_OUT_OF_SESSIONS] = {"MPI_T_ERR_OUT_OF_SESSIONS", "No more tool sessions available"},
    [MPI_T_ERR_INVALID_SESSION] = {"MPI_T_ERR_INVALID_SESSION", "Invalid tool session"},
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = {"MPI_T_ERR_CVAR_SET_NOT_NOW", "Control variable cannot be set now"},
    [MPI_T_ERR_CVAR_SET_NEVER] = {"MPI_T_ERR_CVAR_SET_NEVER", "Control variable cannot be set"},
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = {"MPI_T_ERR_PVAR_NO_STARTSTOP",
                                     "Performance variable cannot be started or stopped"},
    [MPI_T_ERR_PVAR_NO_WRITE] = {"MPI_T_ERR_PVAR_NO_WRITE", "Performance variable cannot be written or reset"},
    [MPI_T_ERR_PVAR_NO_ATOMIC] = {"MPI_T_ERR_PVAR_NO_ATOMIC",
                                  "Performance variable cannot be read and written atomically"},
    [MPI_T_ERR_INVALID_NAME] = {"MPI_T_ERR_INVALID_NAME", "No tool variable or category of that name"},
    [MPI_T_ERR_INVALID] = {"MPI_T_ERR_INVALID", "Invalid use of the tool interface"},
    [MPI_ERR_SESSION] = {"MPI_ERR_SESSION", "Invalid session"},
    [MPI_ERR_PROC_ABORTED] = {"MPI_ERR_PROC_ABORTED", "A peer process has aborted"},
    [MPI_ERR_VALUE_TOO_LARGE] = {"MPI_ERR_VALUE_TOO_LARGE", "Value too large to store"},
    [MPI_T_ERR_NOT_SUPPORTED] = {"MPI_T_ERR_NOT_SUPPORTED", "Requested tool functionality not supported"},
    [MPI_T_ERR_NOT_ACCESSIBLE] = {"MPI_T_ERR_NOT_ACCESSIBLE", "Requested tool functionality not accessible"},
    [MPI_ERR_ERRHANDLER] = {"MPI_ERR_ERRHANDLER", "Invalid error handler"},
};

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;

/* ring of recent messages */
static struct {
    unsigned seq;
    char msg[MPI_MAX_ERROR_STRING];
} ring[WH_ERR_RING];
static unsigned next_seq;

/* classes and codes added at run time: value WH_ERR_DYN_BASE + 1 + index.
 * Removed entries are reused (most recently removed first, through a stack
 * of free indices checked lazily: an index that was trimmed off the end or
 * taken again is skipped when popped), and ndyn shrinks past dead entries at
 * the end, so MPI_LASTUSEDCODE (WH_ERR_DYN_BASE + ndyn) stays the largest
 * live value and every add/remove is amortized O(1). */
typedef struct {
    int live;
    int is_class;
    int cls;      /* class of a code; the value itself for a class */
    int ncodes;   /* class: live codes attached */
    char *str;
} dyn_t;
static dyn_t *dyn;
static int ndyn, dyncap;
static int *dyn_free, nfree, freecap;
int wh_err_lastusedcode = MPI_ERR_LASTCODE;

static int builtin_class(int v) { return v >= 0 && v < WH_NCLASS && cls_tab[v].name != NULL; }

/* the dynamic entry of v, or NULL (caller holds err_lock) */
static dyn_t *dyn_of(int v)
{
    if (v <= WH_ERR_DYN_BASE)
        return NULL;
    long i = (long)v - WH_ERR_DYN_BASE - 1;
    return i < ndyn && dyn[i].live ? &dyn[i] : NULL;
}

static int lib_code(int v) { return v >= (1 << 7) && v <= MPI_ERR_LASTCODE && builtin_class(v & 0x7f); }

int wh_error(int cls, const char *fmt, ...)
{
    if (!builtin_class(cls) || cls == MPI_SUCCESS)
        return cls; /* user classes carry no library message */
    pthread_mutex_lock(&err_lock);
    unsigned seq = ++next_seq;
    if (seq >= (1u << WH_ERR_SEQ_BITS)) {
        next_seq = seq = 1;
    }
    unsigned slot = seq % WH_ERR_RING;
    ring[slot].seq = seq;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ring[slot].msg, sizeof ring[slot].msg, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&err_lock);
    return (int)(seq << 7) | cls;
}

int wh_error_class(int code)
{
    if (builtin_class(code))
        return code;
    if (lib_code(code))
        return code & 0x7f;
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(code);
    int cls = d ? d->cls : MPI_ERR_UNKNOWN;
    pthread_mutex_unlock(&err_lock);
    return cls;
}

int wh_err_valid(int code)
{
    if (builtin_class(code) || lib_code(code))
        return 1;
    pthread_mutex_lock(&err_lock);
    int ok = dyn_of(code) != NULL;
    pthread_mutex_unlock(&err_lock);
    return ok;
}

int wh_err_is_class(int v)
{
    if (builtin_class(v))
        return 1;
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(v);
    int ok = d && d->is_class;
    pthread_mutex_unlock(&err_lock);
    return ok;
}

const char *wh_err_class_name(int cls) { return builtin_class(cls) ? cls_tab[cls].name : NULL; }

const char *wh_error_text(int code, char *buf, size_t len)
{
    if (!len)
        return buf;
    if (builtin_class(code)) {
        snprintf(buf, len, "%s", cls_tab[code].text);
        return buf;
    }
    if (lib_code(code)) {
        unsigned seq = (unsigned)code >> 7;
        pthread_mutex_lock(&err_lock);
        if (ring[seq % WH_ERR_RING].seq == seq)
            snprintf(buf, len, "%s", ring[seq % WH_ERR_RING].msg);
        else
            snprintf(buf, len, "%s", cls_tab[code & 0x7f].text);
        pthread_mutex_unlock(&err_lock);
        return buf;
    }
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(code);
    if (d)
        snprintf(buf, len, "%s", d->str ? d->str : "");
    else
        snprintf(buf, len, "Unknown error code %d", code);
    pthread_mutex_unlock(&err_lock);
    return buf;
}

/* ---------- run-time classes and codes ---------- */

static void set_lastused(void)
{
    wh_err_lastusedcode = WH_ERR_DYN_BASE + ndyn;
}

/* a free index below ndyn, or -1 */
static int pop_free(void)
{
    while (nfree > 0) {
        int i = dyn_free[--nfree];
        if (i < ndyn && !dyn[i].live)
            return i;
    }
    return -1;
}

static int dyn_add(int is_class, int cls, int *out)
{
    int i = pop_free();
    if (i < 0) {
        if (ndyn >= INT32_MAX - WH_ERR_DYN_BASE - 1)
            return wh_error(MPI_ERR_OTHER, "no more error classes or codes can be added");
        if (ndyn == dyncap) {
            int ncap = dyncap ? 2 * dyncap : 64;
            dyn_t *n = realloc(dyn, (size_t)ncap * sizeof *n);
            if (!n)
                return wh_error(MPI_ERR_NO_MEM, "out of memory adding an error %s", is_class ? "class" : "code");
            dyn = n;
            dyncap = ncap;
        }
        i = ndyn++;
    }
    int v = WH_ERR_DYN_BASE + 1 + i;
    dyn[i] = (dyn_t){.live = 1, .is_class = is_class, .cls = is_class ? v : cls};
    *out = v;
    set_lastused();
    return MPI_SUCCESS;
}

/* retire entry d (its string already freed); caller holds err_lock */
static void dyn_drop(dyn_t *d)
{
    *d = (dyn_t){0};
    int i = (int)(d - dyn);
    if (nfree == freecap) {
        int ncap = freecap ? 2 * freecap : 64;
        int *n = realloc(dyn_free, (size_t)ncap * sizeof *n);
        if (n) {
            dyn_free = n;
            freecap = ncap;
        }
    }
    if (nfree < freecap) /* out of memory: the value is just not reused */
        dyn_free[nfree++] = i;
    while (ndyn > 0 && !dyn[ndyn - 1].live)
        ndyn--;
    set_lastused();
}

int wh_err_add_class(int *cls)
{
    pthread_mutex_lock(&err_lock);
    int rc = dyn_add(1, 0, cls);
    pthread_mutex_unlock(&err_lock);
    return rc;
}

int wh_err_add_code(int cls, int *code)
{
    int rc;
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(cls);
    if (builtin_class(cls) || (d && d->is_class)) {
        rc = dyn_add(0, cls, code);
        if (rc == MPI_SUCCESS && !builtin_class(cls))
            dyn_of(cls)->ncodes++; /* re-resolve: dyn_add may have moved the array */
    } else {
        rc = -1;
    }
    pthread_mutex_unlock(&err_lock);
    if (rc == -1)
        rc = wh_error(MPI_ERR_ARG, "%d is not a valid error class", cls);
    return rc;
}

int wh_err_add_string(int code, const char *s)
{
    if (strlen(s) >= MPI_MAX_ERROR_STRING)
        return wh_error(MPI_ERR_ARG, "error string of %zu characters is longer than MPI_MAX_ERROR_STRING-1 (%d)",
                        strlen(s), MPI_MAX_ERROR_STRING - 1);
    char *copy = strdup(s);
    if (!copy)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(code);
    if (d) {
        free(d->str);
        d->str = copy;
    }
    pthread_mutex_unlock(&err_lock);
    if (!d) {
        free(copy);
        return wh_error(MPI_ERR_ARG, "%d is not an error class or code added with MPI_Add_error_class/code%s", code,
                        code <= MPI_ERR_LASTCODE ? " (predefined values cannot be changed)" : "");
    }
    return MPI_SUCCESS;
}

int wh_err_remove(int v, int what)
{
    static const char *what_name[] = {"class", "code", "string"};
    const char *problem = NULL;
    pthread_mutex_lock(&err_lock);
    dyn_t *d = dyn_of(v);
    if (!d)
        problem = v <= MPI_ERR_LASTCODE ? "is predefined, not added with MPI_Add_error_class/code"
                                        : "is not a live user-added error class or code";
    else if (what == WH_ERR_RM_CLASS && !d->is_class)
        problem = "is an error code, not a class";
    else if (what == WH_ERR_RM_CODE && d->is_class)
        problem = "is an error class, not a code";
    else if (what == WH_ERR_RM_CLASS && d->ncodes)
        problem = "still has error codes attached";
    else if (what != WH_ERR_RM_STRING && d->str) /* MPI-4.1: its string goes first */
        problem = "still has an error string (remove it with MPI_Remove_error_string first)";
    else if (what == WH_ERR_RM_STRING && !d->str)
        problem = "has no error string added with MPI_Add_error_string";
    else if (what == WH_ERR_RM_STRING) {
        free(d->str);
        d->str = NULL;
    } else {
        if (what == WH_ERR_RM_CODE && !builtin_class(d->cls)) {
            dyn_t *c = dyn_of(d->cls);
            if (c)
                c->ncodes--;
        }
        free(d->str);
        dyn_drop(d);
    }
    pthread_mutex_unlock(&err_lock);
    if (problem)
        return wh_error(MPI_ERR_ARG, "cannot remove error %s %d: it %s", what_name[what], v, problem);
    return MPI_SUCCESS;
}

/* ---------- raising ---------- */

_Noreturn void wh_fatal(const char *fname, int code)
{
    char msg[MPI_MAX_ERROR_STRING], line[MPI_MAX_ERROR_STRING + 256], clsbuf[32];
    wh_error_text(code, msg, sizeof msg);
    int cls = wh_error_class(code);
    const char *cname = wh_err_class_name(cls);
    if (!cname) {
        snprintf(clsbuf, sizeof clsbuf, "user error class %d", cls);
        cname = clsbuf;
    }
    int n;
    if (wh_job.size > 0)
        n = snprintf(line, sizeof line, "wharf: rank %d: %s: %s (%s)", wh_job.rank, fname, msg, cname);
    else
        n = snprintf(line, sizeof line, "wharf: %s: %s (%s)", fname, msg, cname);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof line - 1)
        n = (int)sizeof line - 2;
    for (int i = 0; i < n; i++) /* keep it one line whatever the message holds */
        if (line[i] == '\n')
            line[i] = ' ';
    line[n] = '\n';
    fflush(stdout);
    /* one write, so lines of several ranks do not interleave */
    ssize_t w = write(2, line, (size_t)n + 1);
    (void)w;
    line[n] = '\0';
    int status = cls > 0 && cls < 256 ? cls : 1;
    if (wh_job.size <= 0 || wh_job.finalized)
        exit(status); /* no process manager to tell */
    wh_job_abort(status, line);
}

/* The handler that governs errors not tied to a communicator.  MPI-4 raises
 * them on MPI_COMM_SELF; a program that only set a handler on MPI_COMM_WORLD
 * (the MPI-3 convention) gets that one, so both styles work. */
static wh_comm_t *default_comm(void)
{
    wh_comm_t *self = wh_comm_get(MPI_COMM_SELF);
    if (self && self->errh != MPI_ERRORS_ARE_FATAL)
        return self;
    return wh_comm_get(MPI_COMM_WORLD);
}

int wh_raise_comm(struct wh_comm *c, const char *fname, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!c)
        c = default_comm();
    else if (c->errh_default) /* never given a handler: MPI_COMM_WORLD's current one (as MPICH) */
        c = wh_comm_get(MPI_COMM_WORLD);
    wh_errh_t *e = c ? wh_errh_get(c->errh) : NULL;
    int kind = e ? e->kind : WH_ERRH_FATAL;
    switch (kind) {
    case WH_ERRH_RETURN:
        return code;
    case WH_ERRH_USER: {
        MPI_Comm h = c->obj.handle;
        int rc = code;
        /* the handler may free the handler or the communicator: keep both */
        int hold = WH_HKIND(h) == WH_HK_INDIRECT;
        e->obj.refs++;
        if (hold)
            c->obj.refs++;
        e->comm_fn(&h, &rc);
        if (hold)
            wh_comm_release(c);
        wh_errh_release(e);
        return rc;
    }
    default:
        wh_fatal(fname, code);
    }
}

int wh_err_not_initialized(const char *fname)
{
    fflush(stdout);
    fprintf(stderr, "wharf: %s called %s; MPI programs must call MPI functions between MPI_Init and MPI_Finalize\n",
            fname, wh_job.finalized ? "after MPI_Finalize" : "before MPI_Init");
    exit(1);
}

int wh_err_unimplemented(const char *fname)
{
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_OTHER, "%s is not implemented in wharf %s", fname, WHARF_VERSION));
}
