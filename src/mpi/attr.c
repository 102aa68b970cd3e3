/* MPI attribute caching entry points: keyvals and attributes on
 * communicators and datatypes (windows: keyvals only until windows exist),
 * the deprecated MPI-1 names, and the predefined communicator attributes. */
#include <limits.h>
#include <stdlib.h>

#include "dtype/dtype.h"
#include "mpi/api.h"
#include "pmi/pmi.h"

/* ---------- predefined attributes (values the C binding hands out by address) ---------- */

static int attr_tag_ub = INT_MAX; /* the wire header's tag is an int32 */
static int attr_host = MPI_PROC_NULL;
static int attr_io = MPI_ANY_SOURCE; /* every process can do I/O */
static int attr_wtime_is_global = 0;
static int attr_universe_size, attr_appnum;

static int predefined_comm_keyval(int k)
{
    return k == MPI_TAG_UB || k == MPI_HOST || k == MPI_IO || k == MPI_WTIME_IS_GLOBAL || k == MPI_UNIVERSE_SIZE ||
           k == MPI_LASTUSEDCODE || k == MPI_APPNUM;
}

static int predefined_win_keyval(int k)
{
    return k == MPI_WIN_BASE || k == MPI_WIN_SIZE || k == MPI_WIN_DISP_UNIT || k == MPI_WIN_CREATE_FLAVOR ||
           k == MPI_WIN_MODEL;
}

static int *predefined_value(int k)
{
    switch (k) {
    case MPI_TAG_UB:
        return &attr_tag_ub;
    case MPI_HOST:
        return &attr_host;
    case MPI_IO:
        return &attr_io;
    case MPI_WTIME_IS_GLOBAL:
        return &attr_wtime_is_global;
    case MPI_UNIVERSE_SIZE:
        attr_universe_size = wh_pmi_universe_size(); /* how many processes MPI_Comm_spawn may usefully add */
        return &attr_universe_size;
    case MPI_APPNUM:
        attr_appnum = wh_pmi_appnum();
        return &attr_appnum;
    case MPI_LASTUSEDCODE:
        return &wh_err_lastusedcode;
    default:
        return NULL;
    }
}

void wharf_attr_lang(int lang)
{
    wh_attr_lang = lang;
}

/* ---------- helpers ---------- */

static const char *kind_name(int kind)
{
    return kind == WH_H_COMM ? "communicator" : kind == WH_H_DTYPE ? "datatype" : "window";
}

/* keyval handle -> object of the expected kind; raises MPI_ERR_KEYVAL on c.
 * A keyval already freed by the user still resolves while attributes keep it
 * alive: they can still be read, set and deleted (as in MPICH). */
static int chk_keyval(wh_comm_t *c, const char *fname, int keyval, int kind, wh_keyval_t **out)
{
    wh_keyval_t *kv = wh_tab_get(&wh_keyval_tab, keyval);
    if (!kv) {
        if (keyval == MPI_KEYVAL_INVALID)
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_KEYVAL, "keyval is MPI_KEYVAL_INVALID"));
        if (predefined_comm_keyval(keyval) || predefined_win_keyval(keyval))
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_KEYVAL, "keyval 0x%x is predefined: predefined "
                                                                    "attributes cannot be set, deleted or freed",
                                                                    (unsigned)keyval));
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_KEYVAL, "keyval 0x%x is not a valid keyval (freed or never "
                                                                "created)", (unsigned)keyval));
    }
    if (kv->kind != kind)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_KEYVAL, "keyval 0x%x was created for %s attributes, not %s ones",
                                                (unsigned)keyval, kind_name(kv->kind), kind_name(kind)));
    *out = kv;
    return MPI_SUCCESS;
}

#define CHK_PTR(c, fname, p, name)                                                                \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return wh_raise_comm((c), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));      \
    } while (0)

static int chk_comm(const char *fname, MPI_Comm h, wh_comm_t **c)
{
    if ((*c = wh_comm_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_COMM_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm is MPI_COMM_NULL"));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm 0x%x is not a valid communicator (freed or never "
                                                             "created)", (unsigned)h));
}

static int chk_type(const char *fname, MPI_Datatype h, wh_dtype_t **t)
{
    if ((*t = wh_dtype_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_DATATYPE_NULL)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL"));
    return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_TYPE, "datatype 0x%x is not a valid datatype (freed or never "
                                                             "created)", (unsigned)h));
}

static int create_keyval(const char *fname, int kind, MPI_Comm_copy_attr_function *copy_fn,
                         MPI_Comm_delete_attr_function *delete_fn, int *keyval, void *extra_state)
{
    CHK_PTR(NULL, fname, keyval, "keyval");
    int rc = wh_keyval_create(kind, copy_fn, delete_fn, extra_state, keyval);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, fname, rc);
}

static int free_keyval(const char *fname, int kind, int *keyval)
{
    CHK_PTR(NULL, fname, keyval, "keyval");
    wh_keyval_t *kv = NULL;
    int rc = chk_keyval(NULL, fname, *keyval, kind, &kv);
    if (rc)
        return rc;
    /* attributes still using it keep it alive; freeing it again meanwhile
       (through a copy of the handle, or from a delete callback) is a no-op,
       as in MPICH */
    if (!kv->freed)
        wh_keyval_free(kv);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---------- communicators ---------- */

static int comm_set(const char *fname, MPI_Comm comm, int keyval, void *val)
{
    int lang = wh_attr_lang_take();
    wh_comm_t *c;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_comm(fname, comm, &c)) || (rc = chk_keyval(c, fname, keyval, WH_H_COMM, &kv)))
        return rc;
    if ((rc = wh_attr_set(&c->attrs, c->obj.handle, kv, val, lang)) != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    return MPI_SUCCESS;
}

static int comm_get(const char *fname, MPI_Comm comm, int keyval, void *val, int *flag)
{
    int lang = wh_attr_lang_take();
    wh_comm_t *c;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_comm(fname, comm, &c)))
        return rc;
    CHK_PTR(c, fname, val, "attribute_val");
    CHK_PTR(c, fname, flag, "flag");
    int *pv = predefined_value(keyval);
    if (pv) {
        *(void **)val = pv;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if ((rc = chk_keyval(c, fname, keyval, WH_H_COMM, &kv)))
        return rc;
    *flag = wh_attr_get(c->attrs, kv, (void **)val, lang);
    return MPI_SUCCESS;
}

static int comm_delete(const char *fname, MPI_Comm comm, int keyval)
{
    wh_comm_t *c;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_comm(fname, comm, &c)) || (rc = chk_keyval(c, fname, keyval, WH_H_COMM, &kv)))
        return rc;
    if ((rc = wh_attr_delete(&c->attrs, c->obj.handle, kv)) != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    return MPI_SUCCESS;
}

static int body_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                   MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                                   void *extra_state)
{
    return create_keyval("MPI_Comm_create_keyval", WH_H_COMM, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval,
                         extra_state);
}

static int body_Comm_free_keyval(int *comm_keyval)
{
    return free_keyval("MPI_Comm_free_keyval", WH_H_COMM, comm_keyval);
}

static int body_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return comm_set("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

static int body_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return comm_get("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}

static int body_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return comm_delete("MPI_Comm_delete_attr", comm, comm_keyval);
}

/* MPI-1 names (deprecated): the same operations on communicators */
static int body_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                              void *extra_state)
{
    return create_keyval("MPI_Keyval_create", WH_H_COMM, copy_fn, delete_fn, keyval, extra_state);
}

static int body_Keyval_free(int *keyval)
{
    return free_keyval("MPI_Keyval_free", WH_H_COMM, keyval);
}

static int body_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_set("MPI_Attr_put", comm, keyval, attribute_val);
}

static int body_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_get("MPI_Attr_get", comm, keyval, attribute_val, flag);
}

static int body_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_delete("MPI_Attr_delete", comm, keyval);
}

/* ---------- datatypes ---------- */

static int body_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                                   MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                                   void *extra_state)
{
    return create_keyval("MPI_Type_create_keyval", WH_H_DTYPE, type_copy_attr_fn, type_delete_attr_fn, type_keyval,
                         extra_state);
}

static int body_Type_free_keyval(int *type_keyval)
{
    return free_keyval("MPI_Type_free_keyval", WH_H_DTYPE, type_keyval);
}

static int body_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char fname[] = "MPI_Type_set_attr";
    int lang = wh_attr_lang_take();
    wh_dtype_t *t;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_type(fname, datatype, &t)) || (rc = chk_keyval(NULL, fname, type_keyval, WH_H_DTYPE, &kv)))
        return rc;
    rc = wh_attr_set(&t->attrs, datatype, kv, attribute_val, lang);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, fname, rc);
}

static int body_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char fname[] = "MPI_Type_get_attr";
    int lang = wh_attr_lang_take();
    wh_dtype_t *t;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_type(fname, datatype, &t)))
        return rc;
    CHK_PTR(NULL, fname, attribute_val, "attribute_val");
    CHK_PTR(NULL, fname, flag, "flag");
    if ((rc = chk_keyval(NULL, fname, type_keyval, WH_H_DTYPE, &kv)))
        return rc;
    *flag = wh_attr_get(t->attrs, kv, (void **)attribute_val, lang);
    return MPI_SUCCESS;
}

static int body_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char fname[] = "MPI_Type_delete_attr";
    wh_dtype_t *t;
    wh_keyval_t *kv;
    int rc;
    if ((rc = chk_type(fname, datatype, &t)) || (rc = chk_keyval(NULL, fname, type_keyval, WH_H_DTYPE, &kv)))
        return rc;
    rc = wh_attr_delete(&t->attrs, datatype, kv);
    return rc == MPI_SUCCESS ? rc : wh_raise_comm(NULL, fname, rc);
}

/* ---------- windows (attributes themselves come with the window code) ---------- */

static int body_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                  MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
    return create_keyval("MPI_Win_create_keyval", WH_H_WIN, win_copy_attr_fn, win_delete_attr_fn, win_keyval,
                         extra_state);
}

static int body_Win_free_keyval(int *win_keyval)
{
    return free_keyval("MPI_Win_free_keyval", WH_H_WIN, win_keyval);
}

#include "entry/attr.h"
