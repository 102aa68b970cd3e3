/* MPI window entry points: creation (create, allocate, allocate_shared,
 * create_dynamic; int and _c), free, attach/detach, shared_query, group,
 * attributes, names, info and error handlers.  The work is in src/rma. */
#include <stdio.h>
#include <string.h>

#include "mpi/api.h"
#include "rma/rma.h"

/* ---------- argument helpers (shared with rma.c through wh_win_arg) ---------- */

int wh_win_arg(const char *fname, MPI_Win h, wh_win_t **w)
{
    if ((*w = wh_win_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_WIN_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_WIN, "win is MPI_WIN_NULL"));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_WIN, "win 0x%x is not a valid window (freed or never created)",
                                               (unsigned)h));
}

#define CHK_PTR_C(c, fname, p, name)                                                              \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return wh_raise_comm((c), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));      \
    } while (0)
#define CHK_PTR_W(w, fname, p, name)                                                              \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return wh_raise_win((w), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));       \
    } while (0)

static int comm_arg(const char *fname, MPI_Comm h, wh_comm_t **c)
{
    if ((*c = wh_comm_get(h))) {
        if ((*c)->is_inter)
            return wh_raise_comm(*c, fname, wh_error(MPI_ERR_COMM, "windows need an intracommunicator"));
        return MPI_SUCCESS;
    }
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm 0x%x is not a valid communicator", (unsigned)h));
}

static int make(const char *fname, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    wh_comm_t *c;
    int rc = comm_arg(fname, comm, &c);
    if (rc)
        return rc;
    CHK_PTR_C(c, fname, win, "win");
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        CHK_PTR_C(c, fname, baseptr, "baseptr");
    if (size < 0)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_SIZE, "negative window size %ld", (long)size));
    if (disp_unit <= 0)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_DISP, "disp_unit %ld is not positive", (long)disp_unit));
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !base)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ARG, "base is NULL for a window of %ld bytes", (long)size));
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    wh_win_t *w;
    void *b = NULL;
    rc = wh_win_make(c, flavor, base, size, disp_unit, info, &b, &w);
    if (rc)
        return wh_raise_comm(c, fname, rc);
    if (baseptr && flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC)
        *(void **)baseptr = b;
    *win = w->obj.handle;
    return MPI_SUCCESS;
}

static int body_Win_create(const char *fname, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                           MPI_Comm comm, MPI_Win *win)
{
    return make(fname, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

static int body_Win_allocate(const char *fname, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return make(fname, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

static int body_Win_allocate_shared(const char *fname, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                                    void *baseptr, MPI_Win *win)
{
    return make(fname, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

static int body_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return make("MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win);
}

static int body_Win_free(MPI_Win *win)
{
    static const char fname[] = "MPI_Win_free";
    CHK_PTR_C(NULL, fname, win, "win");
    wh_win_t *w;
    int rc = wh_win_arg(fname, *win, &w);
    if (rc)
        return rc;
    if ((rc = wh_win_free(w)))
        return wh_raise_win(w, fname, rc);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

static int body_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_attach", win, &w);
    if (rc)
        return rc;
    rc = wh_win_attach(w, base, size);
    return rc ? wh_raise_win(w, "MPI_Win_attach", rc) : MPI_SUCCESS;
}

static int body_Win_detach(MPI_Win win, const void *base)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_detach", win, &w);
    if (rc)
        return rc;
    rc = wh_win_detach(w, base);
    return rc ? wh_raise_win(w, "MPI_Win_detach", rc) : MPI_SUCCESS;
}

static int shared_query(const char *fname, MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    wh_win_t *w;
    int rc = wh_win_arg(fname, win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, fname, size, "size");
    CHK_PTR_W(w, fname, disp_unit, "disp_unit");
    CHK_PTR_W(w, fname, baseptr, "baseptr");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size_c))
        return wh_raise_win(w, fname, wh_error(MPI_ERR_RANK, "rank %d is not in the window's group of %d", rank,
                                               w->size_c));
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_RMA_FLAVOR, "a dynamic window has no memory to query"));
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->own_mem != 2) {
        /* MPI-4.1: windows of other flavors report the memory this process
         * can load and store: its own; size 0 and NULL for the others.
         * MPI_PROC_NULL names the lowest rank with memory (mpi4py's
         * test_win testSharedQuery): ours only if that rank is us. */
        if (rank == MPI_PROC_NULL)
            for (rank = 0; rank < w->size_c - 1 && !w->peers[rank].size; rank++)
                ;
        const wh_win_peer_t *p = &w->peers[rank];
        *size = rank == w->rank ? (MPI_Aint)p->size : 0;
        *disp_unit = (MPI_Aint)p->disp_unit;
        *(void **)baseptr = rank == w->rank && p->size ? (void *)(uintptr_t)p->base : NULL;
        return MPI_SUCCESS;
    }
    if (rank == MPI_PROC_NULL) /* the first rank with memory */
        for (rank = 0; rank < w->size_c - 1 && !w->peers[rank].size; rank++)
            ;
    const wh_win_peer_t *p = &w->peers[rank];
    if (!p->ptr && p->size)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_RMA_FLAVOR, "rank %d's window memory is not mapped here",
                                               rank));
    *size = (MPI_Aint)p->size;
    *disp_unit = (MPI_Aint)p->disp_unit;
    *(void **)baseptr = p->size ? p->ptr : NULL; /* no memory: NULL, as MPICH */
    return MPI_SUCCESS;
}

static int body_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint du = 0;
    int rc = shared_query("MPI_Win_shared_query", win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (rc == MPI_SUCCESS)
        *disp_unit = (int)du;
    return rc;
}

static int body_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    return shared_query("MPI_Win_shared_query_c", win, rank, size, disp_unit, baseptr);
}

static int body_Win_get_group(MPI_Win win, MPI_Group *group)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_get_group", win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, "MPI_Win_get_group", group, "group");
    wh_group_t *g = wh_comm_group(w->comm);
    if (!g)
        return wh_raise_win(w, "MPI_Win_get_group", wh_error(MPI_ERR_NO_MEM, "out of memory"));
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- attributes ---------- */

static int kv_arg(wh_win_t *w, const char *fname, int keyval, wh_keyval_t **kv)
{
    if ((*kv = wh_keyval_get(keyval)) && (*kv)->kind == WH_H_WIN)
        return MPI_SUCCESS;
    if (keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
        keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_KEYVAL, "keyval 0x%x is predefined: it cannot be set or "
                                                               "deleted", (unsigned)keyval));
    return wh_raise_win(w, fname, wh_error(MPI_ERR_KEYVAL, "keyval 0x%x is not a valid window keyval",
                                           (unsigned)keyval));
}

static int body_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char fname[] = "MPI_Win_set_attr";
    int lang = wh_attr_lang_take();
    wh_win_t *w;
    wh_keyval_t *kv;
    int rc;
    if ((rc = wh_win_arg(fname, win, &w)) || (rc = kv_arg(w, fname, win_keyval, &kv)))
        return rc;
    wh_attr_t *a = w->attrs;
    rc = wh_attr_set(&a, win, kv, attribute_val, lang);
    w->attrs = a;
    return rc ? wh_raise_win(w, fname, rc) : MPI_SUCCESS;
}

static int body_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char fname[] = "MPI_Win_get_attr";
    int lang = wh_attr_lang_take();
    wh_win_t *w;
    wh_keyval_t *kv;
    int rc;
    if ((rc = wh_win_arg(fname, win, &w)))
        return rc;
    CHK_PTR_W(w, fname, attribute_val, "attribute_val");
    CHK_PTR_W(w, fname, flag, "flag");
    void **out = attribute_val;
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        *out = w->base;
        return MPI_SUCCESS;
    case MPI_WIN_SIZE:
        w->attr_size = w->size;
        *out = &w->attr_size;
        return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
        w->attr_disp_unit = (int)w->disp_unit;
        *out = &w->attr_disp_unit;
        return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
        w->attr_flavor = w->flavor;
        *out = &w->attr_flavor;
        return MPI_SUCCESS;
    case MPI_WIN_MODEL:
        w->attr_model = MPI_WIN_UNIFIED;
        *out = &w->attr_model;
        return MPI_SUCCESS;
    default:
        break;
    }
    *flag = 0;
    if ((rc = kv_arg(w, fname, win_keyval, &kv)))
        return rc;
    *flag = wh_attr_get(w->attrs, kv, out, lang);
    return MPI_SUCCESS;
}

static int body_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char fname[] = "MPI_Win_delete_attr";
    wh_win_t *w;
    wh_keyval_t *kv;
    int rc;
    if ((rc = wh_win_arg(fname, win, &w)) || (rc = kv_arg(w, fname, win_keyval, &kv)))
        return rc;
    wh_attr_t *a = w->attrs;
    rc = wh_attr_delete(&a, win, kv);
    w->attrs = a;
    return rc ? wh_raise_win(w, fname, rc) : MPI_SUCCESS;
}

/* ---------- names and info ---------- */

static int body_Win_set_name(MPI_Win win, const char *win_name)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_set_name", win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, "MPI_Win_set_name", win_name, "win_name");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}

static int body_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    if (win == MPI_WIN_NULL) { /* MPI-4.1: the null handle has a name too */
        CHK_PTR_W(NULL, "MPI_Win_get_name", win_name, "win_name");
        CHK_PTR_W(NULL, "MPI_Win_get_name", resultlen, "resultlen");
        *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        return MPI_SUCCESS;
    }
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_get_name", win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, "MPI_Win_get_name", win_name, "win_name");
    CHK_PTR_W(w, "MPI_Win_get_name", resultlen, "resultlen");
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

static int body_Win_set_info(MPI_Win win, MPI_Info info)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_set_info", win, &w);
    if (rc)
        return rc;
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_win(w, "MPI_Win_set_info", wh_error(MPI_ERR_INFO, "info 0x%x is not valid", (unsigned)info));
    rc = wh_win_set_hints(w, info);
    return rc ? wh_raise_win(w, "MPI_Win_set_info", rc) : MPI_SUCCESS;
}

static int body_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_get_info", win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, "MPI_Win_get_info", info_used, "info_used");
    rc = PMPI_Info_dup(w->info, info_used);
    return rc ? wh_raise_win(w, "MPI_Win_get_info", rc) : MPI_SUCCESS;
}

/* ---------- error handlers ---------- */

static int body_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char fname[] = "MPI_Win_set_errhandler";
    wh_win_t *w;
    int rc = wh_win_arg(fname, win, &w);
    if (rc)
        return rc;
    wh_errh_t *e = wh_errh_get(errhandler);
    if (!e)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x is not a valid error handler",
                                               (unsigned)errhandler));
    if (e->kind == WH_ERRH_USER && e->target != WH_H_WIN)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_ARG, "errhandler 0x%x was not created for windows",
                                               (unsigned)errhandler));
    if (e->kind == WH_ERRH_USER)
        e->obj.refs++;
    wh_errh_release(wh_errh_get(w->errh));
    w->errh = errhandler;
    w->errh_default = 0;
    return MPI_SUCCESS;
}

static int body_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char fname[] = "MPI_Win_get_errhandler";
    wh_win_t *w;
    int rc = wh_win_arg(fname, win, &w);
    if (rc)
        return rc;
    CHK_PTR_W(w, fname, errhandler, "errhandler");
    wh_errh_t *e = wh_errh_get(w->errh);
    if (e && e->kind == WH_ERRH_USER)
        e->obj.refs++;
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

static int body_Win_call_errhandler(MPI_Win win, int errorcode)
{
    wh_win_t *w;
    int rc = wh_win_arg("MPI_Win_call_errhandler", win, &w);
    if (rc)
        return rc;
    if (errorcode != MPI_SUCCESS)
        wh_raise_win(w, "MPI_Win_call_errhandler", errorcode);
    return MPI_SUCCESS;
}

#include "entry/win.h"
