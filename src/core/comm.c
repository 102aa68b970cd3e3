/* Communicators, groups, error handlers, keyvals and attribute lists: the
 * object tables, the builtin objects and the context-id pool.  Creating
 * communicators (agreeing on a context id over a parent, dup, split, ...)
 * needs communication and lives above the collectives, in src/comm. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "util/log.h"

wh_tab_t wh_comm_tab, wh_group_tab, wh_errh_tab, wh_keyval_tab;

#define WH_CTX_WORDS (WH_CTX_IDS / 64)

static uint64_t ctx_free[WH_CTX_WORDS]; /* bit set = id free here */

static wh_comm_t builtin_comm[2]; /* MPI_COMM_WORLD, MPI_COMM_SELF */
static int self_wrank;
static int world_ready;

static wh_group_t group_empty = {
    .obj = {.handle = MPI_GROUP_EMPTY, .refs = 1},
    .size = 0,
    .rank = MPI_UNDEFINED,
};

static wh_errh_t builtin_errh[4] = {
    [0] = {.obj = {.handle = MPI_ERRORS_ARE_FATAL, .refs = 1}, .kind = WH_ERRH_FATAL},
    [1] = {.obj = {.handle = MPI_ERRORS_RETURN, .refs = 1}, .kind = WH_ERRH_RETURN},
    [3] = {.obj = {.handle = MPI_ERRORS_ABORT, .refs = 1}, .kind = WH_ERRH_ABORT},
};

/* src/coll may cache per-communicator state in coll_data; it frees it here
 * when it provides this hook (otherwise coll_data is a single allocation). */
void wh_coll_comm_release(wh_comm_t *c) __attribute__((weak));

static void ensure_tabs(void)
{
    if (!wh_comm_tab.objsize) {
        wh_tab_init(&wh_comm_tab, WH_H_COMM, sizeof(wh_comm_t));
        wh_tab_init(&wh_group_tab, WH_H_GROUP, sizeof(wh_group_t));
        wh_tab_init(&wh_errh_tab, WH_H_ERRH, sizeof(wh_errh_t));
        wh_tab_init(&wh_keyval_tab, WH_H_KEYVAL, sizeof(wh_keyval_t));
    }
}

static inline int is_builtin(int h) { return WH_HKIND(h) != WH_HK_INDIRECT; }

/* ---------- handle lookup ---------- */

wh_comm_t *wh_comm_get(MPI_Comm h)
{
    if (WH_HKIND(h) == WH_HK_BUILTIN) {
        uint32_t i = (uint32_t)h - (uint32_t)MPI_COMM_WORLD;
        return i < 2 && world_ready ? &builtin_comm[i] : NULL;
    }
    return wh_tab_get(&wh_comm_tab, h);
}

wh_group_t *wh_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &group_empty;
    return wh_tab_get(&wh_group_tab, h);
}

wh_errh_t *wh_errh_get(MPI_Errhandler h)
{
    if (WH_HKIND(h) == WH_HK_BUILTIN) {
        uint32_t i = (uint32_t)h - (uint32_t)MPI_ERRORS_ARE_FATAL;
        return i < 4 && builtin_errh[i].obj.handle == h ? &builtin_errh[i] : NULL;
    }
    return wh_tab_get(&wh_errh_tab, h);
}

wh_keyval_t *wh_keyval_get(int keyval)
{
    wh_keyval_t *kv = wh_tab_get(&wh_keyval_tab, keyval);
    return kv && !kv->freed ? kv : NULL;
}

/* ---------- context ids ---------- */

void wh_ctx_release(uint32_t ctx)
{
    uint32_t id = ctx >> 1;
    if (id >= 2 && id < WH_CTX_IDS)
        ctx_free[id / 64] |= 1ull << (id % 64);
}

int wh_ctx_is_free(uint32_t id)
{
    return id < WH_CTX_IDS && (ctx_free[id / 64] >> (id % 64) & 1);
}

void wh_ctx_take(uint32_t id)
{
    if (id < WH_CTX_IDS)
        ctx_free[id / 64] &= ~(1ull << (id % 64));
}

/* ---------- communicators ---------- */

wh_comm_t *wh_comm_new(int n, const int *wranks, int myrank, uint32_t ctx)
{
    ensure_tabs();
    wh_comm_t *c = wh_tab_alloc(&wh_comm_tab);
    if (!c)
        return NULL;
    int ident = n == wh_job.size;
    for (int i = 0; wranks && ident && i < n; i++)
        ident = wranks[i] == i;
    if (!ident) {
        int *w = malloc((size_t)n * sizeof(int));
        if (!w) {
            wh_tab_free(&wh_comm_tab, c);
            return NULL;
        }
        memcpy(w, wranks, (size_t)n * sizeof(int));
        c->wranks = w;
    }
    static uint32_t serials;
    c->serial = __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
    c->rank = myrank;
    c->size = n;
    c->ctx = ctx;
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->errh_default = 1;
    return c;
}

static void attr_list_drop(wh_attr_t **list);

void wh_comm_release(wh_comm_t *c)
{
    if (!c || is_builtin(c->obj.handle) || --c->obj.refs > 0)
        return;
    attr_list_drop(&c->attrs);
    if (c->coll_data) {
        if (wh_coll_comm_release)
            wh_coll_comm_release(c);
        else
            free(c->coll_data);
        c->coll_data = NULL;
    }
    if (c->group)
        wh_group_release(c->group);
    free(c->topo);
    wh_comm_release(c->local);
    wh_errh_release(wh_errh_get(c->errh));
    free((void *)c->wranks);
    wh_ctx_release(c->ctx);
    wh_tab_free(&wh_comm_tab, c);
}

void wh_comm_set_errh(wh_comm_t *c, MPI_Errhandler h)
{
    wh_errh_t *n = wh_errh_get(h), *old = wh_errh_get(c->errh);
    if (n && !is_builtin(h))
        n->obj.refs++;
    c->errh = h;
    c->errh_default = 0;
    wh_errh_release(old);
}

int wh_comm_free(wh_comm_t *c)
{
    int rc = wh_attr_delete_all(&c->attrs, c->obj.handle);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_comm_release(c);
    return MPI_SUCCESS;
}

wh_group_t *wh_comm_group(wh_comm_t *c)
{
    if (c->is_inter)
        return wh_comm_group(c->local);
    if (!c->group) {
        int *w = NULL;
        if (!c->wranks) {
            if (!(w = malloc((size_t)c->size * sizeof(int))))
                return NULL;
            for (int i = 0; i < c->size; i++)
                w[i] = i;
        }
        c->group = wh_group_new(c->size, w ? w : c->wranks);
        free(w);
        if (!c->group)
            return NULL;
    }
    if (!is_builtin(c->group->obj.handle))
        c->group->obj.refs++;
    return c->group;
}

wh_group_t *wh_comm_remote_group(wh_comm_t *c)
{
    return wh_group_new(c->size, c->wranks);
}

/* ---------- groups ---------- */

wh_group_t *wh_group_new(int n, const int *wranks)
{
    if (n == 0)
        return &group_empty;
    ensure_tabs();
    wh_group_t *g = wh_tab_alloc(&wh_group_tab);
    if (!g)
        return NULL;
    if (!(g->wranks = malloc((size_t)n * sizeof(int)))) {
        wh_tab_free(&wh_group_tab, g);
        return NULL;
    }
    memcpy(g->wranks, wranks, (size_t)n * sizeof(int));
    g->size = n;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (wranks[i] == wh_job.rank) {
            g->rank = i;
            break;
        }
    return g;
}

void wh_group_release(wh_group_t *g)
{
    if (!g || is_builtin(g->obj.handle) || --g->obj.refs > 0)
        return;
    free(g->wranks);
    wh_tab_free(&wh_group_tab, g);
}

/* ---------- error handlers ---------- */

wh_errh_t *wh_errh_new(int kind, int target, MPI_Comm_errhandler_function *fn)
{
    ensure_tabs();
    wh_errh_t *e = wh_tab_alloc(&wh_errh_tab);
    if (e) {
        e->kind = kind;
        e->target = target;
        e->comm_fn = fn;
    }
    return e;
}

void wh_errh_release(wh_errh_t *e)
{
    if (!e || is_builtin(e->obj.handle) || --e->obj.refs > 0)
        return;
    wh_tab_free(&wh_errh_tab, e);
}

/* ---------- keyvals and attributes ---------- */

int wh_keyval_create(int kind, MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                     void *extra_state, int *keyval)
{
    ensure_tabs();
    wh_keyval_t *kv = wh_tab_alloc(&wh_keyval_tab);
    if (!kv)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a keyval");
    kv->kind = kind;
    kv->copy_fn = copy_fn;
    kv->delete_fn = delete_fn;
    kv->extra_state = extra_state;
    *keyval = kv->obj.handle;
    return MPI_SUCCESS;
}

static void keyval_release(wh_keyval_t *kv)
{
    if (kv && --kv->obj.refs == 0)
        wh_tab_free(&wh_keyval_tab, kv);
}

void wh_keyval_free(wh_keyval_t *kv)
{
    kv->freed = 1;
    keyval_release(kv);
}

/* keyval object of an attribute (freed keyvals included: attributes keep them) */
static wh_keyval_t *attr_kv(const wh_attr_t *a) { return wh_tab_get(&wh_keyval_tab, a->keyval); }

static int cb_error(int rc, const char *what, int keyval)
{
    if (wh_err_valid(rc))
        return rc;
    return wh_error(MPI_ERR_OTHER, "attribute %s callback of keyval 0x%x returned %d", what, (unsigned)keyval, rc);
}

static int call_delete(int obj, const wh_attr_t *a)
{
    wh_keyval_t *kv = attr_kv(a);
    if (!kv || !kv->delete_fn)
        return MPI_SUCCESS;
    int rc = kv->delete_fn(obj, a->keyval, a->value, kv->extra_state);
    return rc == MPI_SUCCESS ? rc : cb_error(rc, "delete", a->keyval);
}

_Thread_local int wh_attr_lang;

static int attr_append(wh_attr_t **list, wh_keyval_t *kv, void *val, int lang)
{
    wh_attr_t *a = malloc(sizeof *a);
    if (!a)
        return wh_error(MPI_ERR_NO_MEM, "out of memory storing an attribute");
    a->next = NULL;
    a->keyval = kv->obj.handle;
    a->lang = lang;
    a->value = val;
    while (*list)
        list = &(*list)->next;
    *list = a;
    kv->obj.refs++;
    return MPI_SUCCESS;
}

int wh_attr_set(wh_attr_t **list, int obj, wh_keyval_t *kv, void *val, int lang)
{
    for (wh_attr_t *a = *list; a; a = a->next) {
        if (a->keyval == kv->obj.handle) {
            int rc = call_delete(obj, a);
            if (rc == MPI_SUCCESS) {
                a->value = val;
                a->lang = lang;
            }
            return rc;
        }
    }
    return attr_append(list, kv, val, lang);
}

int wh_attr_get(const wh_attr_t *list, const wh_keyval_t *kv, void **val, int lang)
{
    for (const wh_attr_t *a = list; a; a = a->next) {
        if (a->keyval == kv->obj.handle) {
            /* C reading an integer set from Fortran: a pointer to it (an
               INTEGER read through it sees the low half: little-endian) */
            *val = lang == WH_ATTR_C && a->lang != WH_ATTR_C ? (void *)&((wh_attr_t *)a)->value : a->value;
            return 1;
        }
    }
    return 0;
}

/* Unlink a (if still in list); returns 1 if it was there. */
static int attr_unlink(wh_attr_t **list, const wh_attr_t *a)
{
    for (wh_attr_t **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == a) {
            *pp = a->next;
            return 1;
        }
    return 0;
}

static void attr_append_node(wh_attr_t **list, wh_attr_t *a)
{
    a->next = NULL;
    while (*list)
        list = &(*list)->next;
    *list = a;
}

/* Delete the attribute a of list: it leaves the list before its delete
 * callback runs, so the callback may delete (or look up) any other attribute
 * of the object; if the callback fails, a goes back (as the newest). */
static int attr_remove(wh_attr_t **list, int obj, wh_attr_t *a)
{
    attr_unlink(list, a);
    int rc = call_delete(obj, a);
    if (rc != MPI_SUCCESS) {
        attr_append_node(list, a);
        return rc;
    }
    keyval_release(attr_kv(a));
    free(a);
    return MPI_SUCCESS;
}

int wh_attr_delete(wh_attr_t **list, int obj, wh_keyval_t *kv)
{
    for (wh_attr_t *a = *list; a; a = a->next)
        if (a->keyval == kv->obj.handle)
            return attr_remove(list, obj, a);
    return MPI_SUCCESS;
}

/* On error *to holds the attributes copied so far (the caller deletes them). */
int wh_attr_copy_all(const wh_attr_t *from, int oldobj, wh_attr_t **to)
{
    for (const wh_attr_t *a = from; a; a = a->next) {
        wh_keyval_t *kv = attr_kv(a);
        if (!kv || !kv->copy_fn)
            continue;
        void *out = NULL;
        int flag = 0;
        int rc = kv->copy_fn(oldobj, a->keyval, kv->extra_state, a->value, &out, &flag);
        if (rc != MPI_SUCCESS)
            return cb_error(rc, "copy", a->keyval);
        if (flag && (rc = attr_append(to, kv, out, a->lang)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Delete callbacks run newest first (each may delete other attributes of
 * the object); on error the attributes not yet deleted stay. */
int wh_attr_delete_all(wh_attr_t **list, int obj)
{
    while (*list) {
        wh_attr_t *a = *list;
        while (a->next)
            a = a->next;
        int rc = attr_remove(list, obj, a);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* drop without callbacks (objects that never reached the user) */
static void attr_list_drop(wh_attr_t **list)
{
    while (*list) {
        wh_attr_t *a = *list;
        *list = a->next;
        keyval_release(attr_kv(a));
        free(a);
    }
}

/* ---------- MPI_Init / MPI_Finalize ---------- */

static void builtin_init(wh_comm_t *c, MPI_Comm h, int rank, int size, uint32_t ctx, const int *wranks,
                         const char *name)
{
    memset(c, 0, sizeof *c);
    c->obj.handle = h;
    c->obj.refs = INT_MAX / 2;
    c->rank = rank;
    c->size = size;
    c->ctx = ctx;
    c->wranks = wranks;
    c->errh = MPI_ERRORS_ARE_FATAL;
    c->errh_default = 1;
    snprintf(c->name, sizeof c->name, "%s", name);
}

int wh_comm_init_world(void)
{
    ensure_tabs();
    memset(ctx_free, 0xff, sizeof ctx_free);
    ctx_free[0] &= ~3ull; /* ids 0 and 1 */
    self_wrank = wh_job.rank;
    builtin_init(&builtin_comm[0], MPI_COMM_WORLD, wh_job.rank, wh_job.size, 0, NULL, "MPI_COMM_WORLD");
    builtin_init(&builtin_comm[1], MPI_COMM_SELF, 0, 1, 2, wh_job.size == 1 ? NULL : &self_wrank, "MPI_COMM_SELF");
    world_ready = 1;
    return MPI_SUCCESS;
}

/* MPI_Finalize acts as if MPI_COMM_SELF were freed first: its attribute
 * delete callbacks run (newest first) while communication still works
 * (wh_comm_finalize_attrs, the first step of MPI_Finalize); those of
 * MPI_COMM_WORLD run at the end (wh_comm_finalize). */
static void builtin_drop_attrs(wh_comm_t *c)
{
    int rc = wh_attr_delete_all(&c->attrs, c->obj.handle);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        WH_WARN("comm", "MPI_Finalize: deleting attributes of %s: %s", c->name, wh_error_text(rc, msg, sizeof msg));
        attr_list_drop(&c->attrs);
    }
}

void wh_comm_finalize_attrs(void)
{
    builtin_drop_attrs(&builtin_comm[1]);
}

void wh_comm_finalize(void)
{
    for (int i = 1; i >= 0; i--) {
        wh_comm_t *c = &builtin_comm[i];
        builtin_drop_attrs(c);
        wh_group_release(c->group); /* the cached reference; user handles may still hold it */
        c->group = NULL;
    }
}
