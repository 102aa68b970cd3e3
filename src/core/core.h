/* Core objects shared by every layer: communicators, groups, error handlers,
 * attribute keyvals, and the job (world) state. */
#ifndef WH_CORE_CORE_H
#define WH_CORE_CORE_H
#include <mpi.h>
#include <stdint.h>
#include "core/attrlang.h"
#include "core/handle.h"
#include "core/err.h"
#include "core/job.h"

/* ---------- groups ---------- */
typedef struct wh_group {
    wh_obj_t obj;
    int size;
    int rank;       /* my rank in the group or MPI_UNDEFINED */
    int *wranks;    /* group rank -> world rank */
    int session;    /* MPI_Session it derives from (MPI_Group_from_session_pset), or 0 */
} wh_group_t;

/* ---------- error handlers ---------- */
enum wh_errh_kind { WH_ERRH_FATAL, WH_ERRH_RETURN, WH_ERRH_ABORT, WH_ERRH_USER };
typedef struct wh_errh {
    wh_obj_t obj;
    int kind;
    int target;     /* WH_H_COMM, WH_H_WIN, WH_H_FILE: what it may be attached to */
    void (*comm_fn)(MPI_Comm *, int *, ...);
} wh_errh_t;

/* ---------- attributes ---------- */
typedef struct wh_attr {
    struct wh_attr *next;
    int keyval;
    int lang; /* WH_ATTR_* (core/attrlang.h): who set it */
    void *value;
} wh_attr_t;
/* wharf_attr_lang()'s value: the language of the attribute call in progress on this thread */
extern _Thread_local int wh_attr_lang;
static inline int wh_attr_lang_take(void)
{
    int l = wh_attr_lang;
    wh_attr_lang = WH_ATTR_C;
    return l;
}

/* ---------- communicators ----------
 * Intracommunicator: rank/size/wranks describe the one group.
 * Intercommunicator (is_inter): rank is my rank in the local group, but
 * size and wranks describe the REMOTE group, the ranks point-to-point calls
 * address (so src/proto needs no special case); the local group is the
 * intracommunicator `local` (its own context, for internal agreement). */
typedef struct wh_comm {
    wh_obj_t obj;
    int rank, size;
    uint32_t ctx;          /* point-to-point context id; collectives use ctx | 1 */
    const int *wranks;     /* comm rank -> world rank; NULL means identity (COMM_WORLD) */
    wh_group_t *group;     /* lazily created by MPI_Comm_group */
    int errh;              /* MPI_Errhandler handle */
    int errh_default;      /* never set on it or its ancestors: errors go to MPI_COMM_WORLD's
                            * current handler (as MPICH; errh still reads MPI_ERRORS_ARE_FATAL) */
    wh_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    uint32_t coll_seq;     /* collective sequence number (for internal tags) */
    uint32_t cid_seq;      /* context-id agreements over this comm (src/comm: internal tags) */
    int is_inter;
    struct wh_comm *local; /* intercommunicator: the local group as an intracommunicator (owned) */
    void *topo;            /* owned by src/comm: process topology, one allocation (free()d here) */
    const char *hw_resource; /* static string: mpi_hw_resource_type of a split_type result, or NULL */
    uint8_t hints_set, hints_val; /* the mpi_assert_* hints given (bit i: src/mpi/comm.c's assert_keys[i]) */
    void *coll_data;       /* owned by src/coll: cached topology-aware state */
    int session;           /* MPI_Session it derives from (its buffered-send buffer), or 0 */
    uint32_t serial;       /* creation number: tells apart communicators that reuse a context id */
} wh_comm_t;

static inline int wh_comm_wrank(const wh_comm_t *c, int r)
{
    return c->wranks ? c->wranks[r] : r;
}

/* size of the local group (MPI_Comm_size) */
static inline int wh_comm_local_size(const wh_comm_t *c)
{
    return c->is_inter ? c->local->size : c->size;
}

/* Handle <-> object.  wh_comm_get returns NULL for invalid or freed handles. */
wh_comm_t *wh_comm_get(MPI_Comm h);
wh_group_t *wh_group_get(MPI_Group h);
wh_errh_t *wh_errh_get(MPI_Errhandler h);

/* Create a communicator over the world ranks wranks[0..n) (copied) with a
 * context id agreed by the caller (src/comm); myrank is my index. */
wh_comm_t *wh_comm_new(int n, const int *wranks, int myrank, uint32_t ctx);
void wh_comm_release(wh_comm_t *c);

/* ---------- context-id pool (src/core/comm.c) ----------
 * Each process keeps the set of ids no communicator of its own uses; the
 * agreement on a new id (src/comm/cid.c) takes one with wh_ctx_take.  ctx =
 * id << 1, so ctx | 1 is the collective context; ids 0 and 1 are
 * MPI_COMM_WORLD and MPI_COMM_SELF.  An id returns to the pool when the last
 * reference to its communicator is dropped. */
#define WH_CTX_IDS 4096
int wh_ctx_is_free(uint32_t id);
void wh_ctx_take(uint32_t id);
void wh_ctx_release(uint32_t ctx); /* give back the id of ctx (ids 0 and 1 are never given back) */

/* ---------- the job ---------- */


extern wh_tab_t wh_comm_tab, wh_group_tab, wh_errh_tab, wh_keyval_tab;

/* Called at the start of every MPI function that needs an initialized library. */
#define WH_CHECK_INIT(fname)                                                                      \
    do {                                                                                          \
        if (__builtin_expect(!wh_job.initialized || wh_job.finalized, 0))                         \
            return wh_err_not_initialized(fname);                                                 \
    } while (0)
int wh_err_not_initialized(const char *fname);

/* ---------- object management (src/core/comm.c) ----------
 * The collective constructors (dup, split, create, intercommunicators) are
 * in src/comm (comm/comm.h). */
/* MPI_Comm_free: runs attribute delete callbacks, then drops the user reference */
int wh_comm_free(wh_comm_t *c);
wh_group_t *wh_comm_group(wh_comm_t *c);             /* local group, new reference; NULL if out of memory */
wh_group_t *wh_comm_remote_group(wh_comm_t *c);      /* intercommunicator: new group; NULL if out of memory */

/* MPI_Init / MPI_Finalize (called by src/mpi/init.c) */
int wh_comm_init_world(void);
void wh_comm_finalize_attrs(void); /* MPI_COMM_SELF attributes: first step of MPI_Finalize */
void wh_comm_finalize(void);

wh_group_t *wh_group_new(int n, const int *wranks);   /* copies wranks; NULL if out of memory */
void wh_group_release(wh_group_t *g);                 /* drops one reference (builtins ignored) */

wh_errh_t *wh_errh_new(int kind, int target, MPI_Comm_errhandler_function *fn);
void wh_errh_release(wh_errh_t *e);                   /* drops one reference (builtins ignored) */
void wh_comm_set_errh(wh_comm_t *c, MPI_Errhandler h); /* takes a reference on h */

/* ---------- keyvals and attributes (src/core/comm.c) ---------- */
typedef struct wh_keyval {
    wh_obj_t obj;                              /* refs: user handle + attributes using it */
    int kind;                                  /* WH_H_COMM, WH_H_DTYPE or WH_H_WIN */
    MPI_Comm_copy_attr_function *copy_fn;      /* NULL: MPI_*_NULL_COPY_FN (not copied) */
    MPI_Comm_delete_attr_function *delete_fn;  /* NULL: nothing to call */
    void *extra_state;
    int freed;                                 /* MPI_*_free_keyval was called */
} wh_keyval_t;

wh_keyval_t *wh_keyval_get(int keyval);      /* live, not freed, user-created; else NULL */
int wh_keyval_create(int kind, MPI_Comm_copy_attr_function *copy_fn, MPI_Comm_delete_attr_function *delete_fn,
                     void *extra_state, int *keyval);
void wh_keyval_free(wh_keyval_t *kv);
/* Attribute lists of any object kind (obj = its handle, passed to callbacks).
 * Datatypes keep theirs in wh_dtype_t.attrs: MPI_Type_dup should call
 *   wh_attr_t *a = NULL; rc = wh_attr_copy_all(old->attrs, oldh, &a); new->attrs = a;
 * and MPI_Type_free  rc = wh_attr_delete_all(&t->attrs, h);  (always on the object's own
 * list pointer, never a copy: delete callbacks may delete other attributes) */
int wh_attr_set(wh_attr_t **list, int obj, wh_keyval_t *kv, void *val, int lang); /* lang: the setter's WH_ATTR_* */
/* returns the flag; *val as the reader's language (lang) sees it */
int wh_attr_get(const wh_attr_t *list, const wh_keyval_t *kv, void **val, int lang);
int wh_attr_delete(wh_attr_t **list, int obj, wh_keyval_t *kv);
int wh_attr_copy_all(const wh_attr_t *from, int oldobj, wh_attr_t **to);
int wh_attr_delete_all(wh_attr_t **list, int obj);

/* ---------- info objects (src/mpi/info.c) ---------- */
int wh_info_new(MPI_Info *out);
int wh_info_valid(MPI_Info h);                         /* live info handle (not MPI_INFO_NULL) */
/* value of key in info (MPI_INFO_NULL allowed: NULL), valid until the info changes */
const char *wh_info_lookup(MPI_Info h, const char *key);
int wh_info_put(MPI_Info h, const char *key, const char *val);

#endif
