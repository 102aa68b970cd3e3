/* MPI sessions (MPI-4.1 chapter 11.3): MPI_Session_init/finalize, process
 * sets, groups from process sets, session info and session error handlers.
 *
 * A session holds one reference on the process's MPI runtime
 * (wh_runtime_acquire, src/mpi/init.c): the first of MPI_Init and
 * MPI_Session_init brings the runtime up, the last of MPI_Finalize and
 * MPI_Session_finalize tears it down, so sessions work without MPI_Init,
 * and a session open across MPI_Finalize keeps working after it.
 *
 * Process sets (the same three Open MPI offers):
 *   mpi://WORLD    every process of the job
 *   mpi://SELF     this process
 *   mpix://SHARED  the processes of this node (the node group of
 *                  MPI_COMM_TYPE_SHARED splits: co-resident by the locality layer)
 * Communicators come from their groups with MPI_Comm_create_from_group
 * (src/mpi/comm_inter.c), which agrees on a new context id among the
 * group's members only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi/api.h"
#include "mpi/init.h"

typedef struct wh_session {
    wh_obj_t obj;
    MPI_Errhandler errh;
    MPI_Info info;     /* the info given to MPI_Session_init (a copy), or MPI_INFO_NULL */
    int thread_level;  /* provided */
} wh_session_t;

static wh_tab_t session_tab;

enum { PSET_WORLD, PSET_SELF, PSET_SHARED, NPSETS };
static const char *const pset_names[NPSETS] = {"mpi://WORLD", "mpi://SELF", "mpix://SHARED"};

static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                          "MPI_THREAD_MULTIPLE"};

static wh_session_t *session_get(MPI_Session h)
{
    return session_tab.objsize ? wh_tab_get(&session_tab, h) : NULL;
}

/* Invoke the error handler of s (NULL: the default handler). */
static int raise_on(wh_session_t *s, MPI_Errhandler errh, const char *fname, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    wh_errh_t *e = wh_errh_get(errh);
    int kind = e ? e->kind : WH_ERRH_FATAL;
    if (!s && kind != WH_ERRH_RETURN)
        return wh_raise_comm(NULL, fname, code);
    switch (kind) {
    case WH_ERRH_RETURN:
        return code;
    case WH_ERRH_USER: {
        MPI_Session h = s->obj.handle;
        int rc = code;
        e->obj.refs++; /* the handler may free itself or the session */
        s->obj.refs++;
        ((MPI_Session_errhandler_function *)(void (*)(void))e->comm_fn)(&h, &rc);
        if (--s->obj.refs == 0)
            wh_tab_free(&session_tab, s);
        wh_errh_release(e);
        return rc;
    }
    default:
        wh_fatal(fname, code);
    }
}

static int raise_s(wh_session_t *s, const char *fname, int code)
{
    return raise_on(s, s ? s->errh : MPI_ERRORS_ARE_FATAL, fname, code);
}

static int chk_session(const char *fname, MPI_Session h, wh_session_t **s)
{
    if ((*s = session_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_SESSION_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_SESSION, "session is MPI_SESSION_NULL"));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_SESSION, "session 0x%x is not a valid session (finalized or "
                                                                "never created)", (unsigned)h));
}

#define CHK_PTR(s, fname, p, name)                                                                \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return raise_s((s), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));            \
    } while (0)

/* an error handler a session may carry: predefined, or made by MPI_Session_create_errhandler */
static int chk_errh(wh_session_t *s, const char *fname, MPI_Errhandler h)
{
    wh_errh_t *e = wh_errh_get(h);
    if (!e)
        return raise_s(s, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x is not a valid error handler",
                                          (unsigned)h));
    if (e->kind == WH_ERRH_USER && e->target != WH_H_SESSION)
        return raise_s(s, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x was not created by "
                                          "MPI_Session_create_errhandler", (unsigned)h));
    return MPI_SUCCESS;
}

static void set_errh(wh_session_t *s, MPI_Errhandler h)
{
    wh_errh_t *e = wh_errh_get(h);
    if (e && e->kind == WH_ERRH_USER)
        e->obj.refs++;
    wh_errh_t *old = wh_errh_get(s->errh);
    if (old)
        wh_errh_release(old);
    s->errh = h;
}

/* the world ranks of a process set, or -1 if there is none of that name */
static int pset_lookup(const char *name)
{
    for (int i = 0; i < NPSETS; i++)
        if (!strcasecmp(name, pset_names[i]))
            return i;
    return -1;
}

static int pset_size(int p)
{
    return p == PSET_WORLD ? wh_job.size : p == PSET_SELF ? 1 : wh_job.local_size;
}

static int chk_pset(wh_session_t *s, const char *fname, const char *name, int *p)
{
    CHK_PTR(s, fname, name, "pset_name");
    if ((*p = pset_lookup(name)) < 0)
        return raise_s(s, fname, wh_error(MPI_ERR_ARG, "no process set is named \"%s\" (wharf has mpi://WORLD, "
                                          "mpi://SELF and mpix://SHARED)", name));
    return MPI_SUCCESS;
}

/* ---------- init / finalize ---------- */

static int parse_level(const char *v)
{
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(v, level_names[i]))
            return MPI_THREAD_SINGLE + i;
    return -1;
}

static int body_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    /* callable before MPI_Init and after MPI_Finalize (MPI-4.1 11.3.1) */
    static const char fname[] = "MPI_Session_init";
    wh_errh_t *e = wh_errh_get(errhandler);
    MPI_Errhandler eh = e ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (!e)
        return raise_on(NULL, eh, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x is not a valid error handler",
                                                   (unsigned)errhandler));
    if (e->kind == WH_ERRH_USER && e->target != WH_H_SESSION)
        return raise_on(NULL, MPI_ERRORS_ARE_FATAL, fname,
                        wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x was not created by MPI_Session_create_errhandler",
                                 (unsigned)errhandler));
    if (!session)
        return raise_on(NULL, eh, fname, wh_error(MPI_ERR_ARG, "session is NULL"));
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return raise_on(NULL, eh, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    int required = MPI_THREAD_SINGLE;
    const char *lv = wh_info_lookup(info, "thread_level");
    if (lv) {
        if ((required = parse_level(lv)) < 0)
            return raise_on(NULL, eh, fname, wh_error(MPI_ERR_INFO_VALUE, "info key thread_level: \"%s\" is not one of "
                                                      "MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED, _MULTIPLE", lv));
    }
    if (!session_tab.objsize)
        wh_tab_init(&session_tab, WH_H_SESSION, sizeof(wh_session_t));
    wh_session_t *s = wh_tab_alloc(&session_tab);
    if (!s)
        return raise_on(NULL, eh, fname, wh_error(MPI_ERR_NO_MEM, "out of memory creating a session"));
    s->errh = MPI_ERRORS_ARE_FATAL;
    set_errh(s, eh);
    s->info = MPI_INFO_NULL;
    int rc = MPI_SUCCESS;
    if (info != MPI_INFO_NULL)
        rc = PMPI_Info_dup(info, &s->info);
    if (rc == MPI_SUCCESS)
        rc = wh_runtime_acquire(required, &s->thread_level);
    if (rc != MPI_SUCCESS) {
        if (s->info != MPI_INFO_NULL)
            PMPI_Info_free(&s->info);
        set_errh(s, MPI_ERRORS_ARE_FATAL);
        wh_tab_free(&session_tab, s);
        return raise_on(NULL, eh, fname, rc);
    }
    *session = s->obj.handle;
    return MPI_SUCCESS;
}

static int body_Session_finalize(MPI_Session *session)
{
    static const char fname[] = "MPI_Session_finalize";
    WH_CHECK_INIT(fname);
    if (!session)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "session is NULL"));
    wh_session_t *s;
    int rc = chk_session(fname, *session, &s);
    if (rc)
        return rc;
    wh_bsend_session_end(*session);
    if (s->info != MPI_INFO_NULL)
        PMPI_Info_free(&s->info);
    set_errh(s, MPI_ERRORS_ARE_FATAL);
    if (--s->obj.refs == 0)
        wh_tab_free(&session_tab, s);
    *session = MPI_SESSION_NULL;
    return wh_runtime_release();
}

int wh_session_raise(int h, const char *fname, int code)
{
    wh_session_t *s = session_get((MPI_Session)h);
    return s ? raise_s(s, fname, code) : wh_raise_comm(NULL, fname, code);
}

int wh_session_check(const char *fname, MPI_Session h)
{
    wh_session_t *s;
    return chk_session(fname, h, &s);
}

/* ---------- process sets ---------- */

static int body_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char fname[] = "MPI_Session_get_num_psets";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc)
        return rc;
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return raise_s(s, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    CHK_PTR(s, fname, npset_names, "npset_names");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

static int body_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name)
{
    static const char fname[] = "MPI_Session_get_nth_pset";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc)
        return rc;
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return raise_s(s, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    CHK_PTR(s, fname, pset_len, "pset_len");
    if (n < 0 || n >= NPSETS)
        return raise_s(s, fname, wh_error(MPI_ERR_ARG, "n = %d: the session has process sets 0..%d", n, NPSETS - 1));
    if (*pset_len < 0)
        return raise_s(s, fname, wh_error(MPI_ERR_ARG, "*pset_len is negative (%d)", *pset_len));
    const char *name = pset_names[n];
    int need = (int)strlen(name) + 1;
    if (*pset_len > 0) { /* 0: only ask for the length (with the terminating NUL) */
        CHK_PTR(s, fname, pset_name, "pset_name");
        snprintf(pset_name, (size_t)*pset_len, "%s", name);
    }
    *pset_len = need;
    return MPI_SUCCESS;
}

static int body_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fname[] = "MPI_Session_get_pset_info";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int p, rc = chk_session(fname, session, &s);
    if (rc || (rc = chk_pset(s, fname, pset_name, &p)))
        return rc;
    CHK_PTR(s, fname, info, "info");
    char v[32];
    snprintf(v, sizeof v, "%d", pset_size(p));
    MPI_Info inf;
    if ((rc = wh_info_new(&inf)) != MPI_SUCCESS || (rc = wh_info_put(inf, "mpi_size", v)) != MPI_SUCCESS)
        return raise_s(s, fname, rc);
    *info = inf;
    return MPI_SUCCESS;
}

static int body_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char fname[] = "MPI_Group_from_session_pset";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int p, rc = chk_session(fname, session, &s);
    if (rc || (rc = chk_pset(s, fname, pset_name, &p)))
        return rc;
    CHK_PTR(s, fname, newgroup, "newgroup");
    int n = pset_size(p);
    int *w = malloc((size_t)n * sizeof(int));
    if (!w)
        return raise_s(s, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    for (int i = 0; i < n; i++)
        w[i] = p == PSET_WORLD ? i : p == PSET_SELF ? wh_job.rank : wh_job.local_ranks[i];
    wh_group_t *g = wh_group_new(n, w);
    free(w);
    if (!g)
        return raise_s(s, fname, wh_error(MPI_ERR_NO_MEM, "out of memory creating a group"));
    if (g->size)
        g->session = session;
    *newgroup = g->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- info ---------- */

static int body_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fname[] = "MPI_Session_get_info";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc)
        return rc;
    CHK_PTR(s, fname, info_used, "info_used");
    MPI_Info inf;
    rc = s->info != MPI_INFO_NULL ? PMPI_Info_dup(s->info, &inf) : wh_info_new(&inf);
    /* the thread support the session got, under the key it was asked with */
    if (rc == MPI_SUCCESS && (rc = wh_info_put(inf, "thread_level", level_names[s->thread_level - MPI_THREAD_SINGLE])))
        PMPI_Info_free(&inf);
    if (rc != MPI_SUCCESS)
        return raise_s(s, fname, rc);
    *info_used = inf;
    return MPI_SUCCESS;
}

/* ---------- error handlers ---------- */

static int body_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                          MPI_Errhandler *errhandler)
{
    /* callable before MPI_Init and after MPI_Finalize (MPI-4.1 11.3.1) */
    static const char fname[] = "MPI_Session_create_errhandler";
    if (!session_errhandler_fn || !errhandler)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "%s is NULL",
                                                   errhandler ? "session_errhandler_fn" : "errhandler"));
    wh_errh_t *e = wh_errh_new(WH_ERRH_USER, WH_H_SESSION,
                               (MPI_Comm_errhandler_function *)(void (*)(void))session_errhandler_fn);
    if (!e)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory creating an error handler"));
    *errhandler = e->obj.handle;
    return MPI_SUCCESS;
}

static int body_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fname[] = "MPI_Session_set_errhandler";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc || (rc = chk_errh(s, fname, errhandler)))
        return rc;
    set_errh(s, errhandler);
    return MPI_SUCCESS;
}

static int body_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char fname[] = "MPI_Session_get_errhandler";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc)
        return rc;
    CHK_PTR(s, fname, errhandler, "errhandler");
    wh_errh_t *e = wh_errh_get(s->errh);
    if (e && e->kind == WH_ERRH_USER)
        e->obj.refs++; /* the user frees the handle returned */
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

static int body_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char fname[] = "MPI_Session_call_errhandler";
    WH_CHECK_INIT(fname);
    wh_session_t *s;
    int rc = chk_session(fname, session, &s);
    if (rc)
        return rc;
    if (errorcode == MPI_SUCCESS)
        return MPI_SUCCESS;
    /* fatal handlers do not return; ERRORS_RETURN and user handlers that
     * return leave the call successful */
    raise_s(s, fname, errorcode);
    return MPI_SUCCESS;
}

#include "entry/session.h"
