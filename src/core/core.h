/* Core objects shared by every layer: communicators, groups, error handlers,
 * attribute keyvals, and the job (world) state. */
#ifndef WH_CORE_CORE_H
#define WH_CORE_CORE_H
#include <mpi.h>
#include <stdint.h>
#include "core/handle.h"
#include "core/err.h"

/* ---------- groups ---------- */
typedef struct wh_group {
    wh_obj_t obj;
    int size;
    int rank;       /* my rank in the group or MPI_UNDEFINED */
    int *wranks;    /* group rank -> world rank */
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
    void *value;
} wh_attr_t;

/* ---------- communicators ---------- */
typedef struct wh_comm {
    wh_obj_t obj;
    int rank, size;
    uint32_t ctx;          /* point-to-point context id; collectives use ctx | 1 */
    const int *wranks;     /* comm rank -> world rank; NULL means identity (COMM_WORLD) */
    wh_group_t *group;     /* lazily created by MPI_Comm_group */
    int errh;              /* MPI_Errhandler handle */
    wh_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    uint32_t coll_seq;     /* collective sequence number (for internal tags) */
    int is_inter;
    void *coll_data;       /* owned by src/coll: cached topology-aware state */
} wh_comm_t;

static inline int wh_comm_wrank(const wh_comm_t *c, int r)
{
    return c->wranks ? c->wranks[r] : r;
}

/* Handle <-> object.  wh_comm_get returns NULL for invalid or freed handles. */
wh_comm_t *wh_comm_get(MPI_Comm h);
wh_group_t *wh_group_get(MPI_Group h);
wh_errh_t *wh_errh_get(MPI_Errhandler h);

/* Create a communicator over the world ranks wranks[0..n) (copied) with a
 * context id agreed by the caller; myrank is my index.  Used by comm.c. */
wh_comm_t *wh_comm_new(int n, const int *wranks, int myrank, uint32_t ctx);
void wh_comm_release(wh_comm_t *c);

/* ---------- the job ---------- */
typedef struct wh_job {
    int rank, size;             /* in MPI_COMM_WORLD */
    int initialized, finalized;
    int thread_level;
    char hostname[MPI_MAX_PROCESSOR_NAME];
    int *host_of;               /* world rank -> host index (co-residence) */
    int nhosts;
    int my_host;
    int local_rank, local_size; /* among ranks of my host */
    int *local_ranks;           /* local index -> world rank */
    int *local_index;           /* world rank -> local index or -1 */
    int oversubscribed;         /* more ranks on this host than cpus in my cpuset */
    double t0;                  /* time base of MPI_Wtime */
} wh_job_t;

extern wh_job_t wh_job;
extern wh_tab_t wh_comm_tab, wh_group_tab, wh_errh_tab, wh_keyval_tab;

/* Called at the start of every MPI function that needs an initialized library. */
#define WH_CHECK_INIT(fname)                                                                      \
    do {                                                                                          \
        if (__builtin_expect(!wh_job.initialized || wh_job.finalized, 0))                         \
            return wh_err_not_initialized(fname);                                                 \
    } while (0)
int wh_err_not_initialized(const char *fname);

#endif
