/* Shared by the MPI point-to-point and request entry points (src/mpi/p2p*.c,
 * request.c, bsend.c): argument checks, status output, request completion,
 * and the hooks other layers use to plug their request kinds into
 * MPI_Wait/Test/Cancel/Request_free/Start.
 *
 * Request state as seen from the MPI layer:
 *   null        MPI_REQUEST_NULL
 *   inactive    r->persistent && !r->active (created by *_init, or completed
 *               by a wait/test): completes at once with an empty status
 *   active      otherwise; complete when r->complete is set
 *   message     an MPI_Message from MPI_(I)mprobe: a receive request with no
 *               datatype yet (wh_req_is_msg); not a valid MPI_Request
 */
#ifndef WH_MPI_REQAPI_H
#define WH_MPI_REQAPI_H
#include <mpi.h>
#include "mpi/api.h"
#include "proto/request.h"

/* ---------- request kinds owned by other layers ----------
 * A layer that creates requests of its own kind (generalized requests,
 * nonblocking/persistent collectives) registers hooks here once, e.g. at
 * MPI_Init: wh_req_kind_ops[WH_REQ_GREQ] = &my_ops.  Every hook is optional.
 * Progress of such requests: wait/test loops call r->poll_fn(r) (if set)
 * for each incomplete request they wait on; it returns nonzero if it made
 * progress and sets r->complete (release store) when done. */
typedef struct wh_req_ops {
    /* MPI_Start of an inactive persistent request of this kind */
    int (*start)(wh_req_t *r);
    /* complete request: fill r->status and r->err before they are reported
       (generalized requests call their query_fn here) */
    void (*query)(wh_req_t *r);
    /* release a complete request (instead of wh_req_release) */
    void (*release)(wh_req_t *r);
    /* a wait/test/MPI_Request_free is about to release complete request r:
       returns an error code reported when the request itself succeeded
       (generalized requests call their free_fn here); called at most once
       per request by the MPI layer, must tolerate a second call */
    int (*finish)(wh_req_t *r);
    /* MPI_Cancel of an active request; returns an MPI error code.  Kinds
       with WH_REQ_CANCEL_DONE set also get complete requests (generalized
       requests tell cancel_fn whether they were complete) */
    int (*cancel)(wh_req_t *r);
    /* MPI_Cancel of any request of the kind, active or not, is an error
       (MPI_ERR_REQUEST) saying this (partitioned requests: MPICH refuses them
       too; a cancel that did nothing would leave MPI_Wait hanging) */
    const char *no_cancel;
    /* MPI_Request_free of an active, incomplete request: finish it in the
       background and release it (default: r->user_freed = 1, which the
       protocol layer honours for its send/receive requests) */
    void (*abandon)(wh_req_t *r);
} wh_req_ops_t;

#define WH_REQ_KINDS 8
#define WH_REQ_CANCEL_DONE(kind) ((kind) == WH_REQ_GREQ)
#define WH_REQ_COMPOUND 6 /* src/mpi: MPI_Isendrecv(_replace), MPI_*iflush_buffer */
extern const wh_req_ops_t *wh_req_kind_ops[WH_REQ_KINDS];

/* ---------- buffered sends (src/mpi/bsend.c) ---------- */
/* Pack (buf,count,dt) into the buffer attached to c (or the process buffer)
 * and start the send; *ureq (if not NULL) gets a request that is already
 * complete.  Returns MPI_SUCCESS or an error code (not raised). */
int wh_bsend(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c,
             wh_req_t **ureq);
/* MPI_Start of a persistent request made by MPI_Bsend_init. */
int wh_bsend_start(wh_req_t *r);
/* Keep r (an internal request) alive until it completes, then release it
 * and free(mem).  Used for operations abandoned by MPI_Request_free. */
int wh_bsend_background(wh_req_t *r, void *mem);
/* Release finished background work; returns the number of items still pending. */
int wh_bsend_reap(void);
/* MPI_Finalize: wait until every buffered send has completed, detach all. */
void wh_bsend_finalize(void);

/* ---------- compound requests (src/mpi/p2p_sendrecv.c) ---------- */
/* A request of kind WH_REQ_COMPOUND that completes when its parts do
 * (either part may be NULL); tmp is freed with it.  NULL if out of memory. */
wh_req_t *wh_compound_new(wh_req_t *send, wh_req_t *recv, void *tmp);
extern const wh_req_ops_t wh_compound_ops;

/* ---------- status ---------- */
static inline void wh_status_empty(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        st->count_lo = 0;
        st->count_hi_and_cancelled = 0;
    }
}

/* Copy a request's status to the user.  MPI_ERROR is left alone: only the
 * multiple-completion calls set it, and only with MPI_ERR_IN_STATUS. */
static inline void wh_status_out(MPI_Status *st, const MPI_Status *src)
{
    if (st != MPI_STATUS_IGNORE) {
        st->MPI_SOURCE = src->MPI_SOURCE;
        st->MPI_TAG = src->MPI_TAG;
        st->count_lo = src->count_lo;
        st->count_hi_and_cancelled = src->count_hi_and_cancelled;
    }
}

/* ---------- request state ---------- */
static inline int wh_req_done(const wh_req_t *r)
{
    return __atomic_load_n(&r->complete, __ATOMIC_ACQUIRE);
}

static inline int wh_req_is_msg(const wh_req_t *r)
{
    return r->kind == WH_REQ_RECV && !r->dt && r->extra;
}

static inline int wh_req_inactive(const wh_req_t *r)
{
    return r->persistent && !r->active;
}

/* User handle -> active or inactive request; NULL for an invalid handle
 * (including MPI_REQUEST_NULL and message handles). */
static inline wh_req_t *wh_req_user(MPI_Request h)
{
    wh_req_t *r = wh_req_get(h);
    if (__builtin_expect(r && wh_req_is_msg(r), 0))
        return NULL;
    return r;
}

/* Block until r is complete (progress loop with the waiting policy). */
void wh_req_wait_slow(wh_req_t *r);
static inline void wh_req_wait_done(wh_req_t *r)
{
    if (!wh_req_done(r))
        wh_req_wait_slow(r);
}

/* A complete request whose result is being reported: fill *st (may be
 * MPI_STATUS_IGNORE), then release it (*h = MPI_REQUEST_NULL) or make a
 * persistent one inactive.  Returns the request's error code. */
int wh_req_finish(wh_req_t *r, MPI_Request *h, MPI_Status *st);
/* Release a complete (non-persistent) request through its kind's hook. */
void wh_req_free_done(wh_req_t *r);
/* A new request that is already complete with an empty status (source src). */
wh_req_t *wh_req_new_done(int src);

/* ---------- argument checks ----------
 * Inline fast paths; the cold functions format the message and raise the
 * error on c (NULL = default handler), returning a non-zero code for the
 * caller to return (wh_p2p_raise is wh_raise_comm with that guarantee). */
enum wh_badarg {
    WH_BAD_COMM, WH_BAD_COUNT, WH_BAD_RANK, WH_BAD_TAG, WH_BAD_BUFFER, WH_BAD_ARG, WH_BAD_REQUEST,
    WH_BAD_MESSAGE,
};
int wh_p2p_bad(const char *fname, wh_comm_t *c, int what, long long value, const char *name)
    __attribute__((cold, noinline));
int wh_p2p_raise(wh_comm_t *c, const char *fname, int code) __attribute__((cold, noinline));

/* Ranks a point-to-point call may address in c (the remote group of an
 * intercommunicator is addressed by the same rank range here). */
static inline int wh_p2p_size(const wh_comm_t *c)
{
    return c->size;
}

static inline int wh_chk_comm(const char *fname, MPI_Comm comm, wh_comm_t **cp)
{
    wh_comm_t *c = *cp = wh_comm_get(comm);
    if (__builtin_expect(!c, 0))
        return wh_p2p_bad(fname, NULL, WH_BAD_COMM, comm, "comm");
    return MPI_SUCCESS;
}

/* count, datatype and buffer of one message description */
static inline int wh_chk_data(const char *fname, wh_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dth,
                              wh_dtype_t **dtp)
{
    if (__builtin_expect(count < 0, 0))
        return wh_p2p_bad(fname, c, WH_BAD_COUNT, count, "count");
    int rc = wh_dtype_check_comm(dth, dtp);
    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        /* an empty message may name no datatype at all (MPICH checks the type
           only when count > 0): it moves as zero bytes */
        if (count == 0 && dth == MPI_DATATYPE_NULL) {
            *dtp = wh_dtype_get(MPI_BYTE);
            return MPI_SUCCESS;
        }
        return wh_p2p_raise(c, fname, rc);
    }
    const wh_dtype_t *dt = *dtp;
    /* MPI_BOTTOM (NULL) is legal with a derived type holding absolute addresses */
    if (__builtin_expect(!buf && count > 0 && dt->size && (dt->predefined || dt->true_lb == 0), 0))
        return wh_p2p_bad(fname, c, WH_BAD_BUFFER, count, "buf");
    return MPI_SUCCESS;
}

static inline int wh_chk_dest(const char *fname, wh_comm_t *c, int dest, int tag)
{
    if (__builtin_expect(tag < 0, 0))
        return wh_p2p_bad(fname, c, WH_BAD_TAG, tag, "tag");
    if (__builtin_expect((unsigned)dest >= (unsigned)wh_p2p_size(c) && dest != MPI_PROC_NULL, 0))
        return wh_p2p_bad(fname, c, WH_BAD_RANK, dest, "dest");
    return MPI_SUCCESS;
}

static inline int wh_chk_src(const char *fname, wh_comm_t *c, int src, int tag)
{
    if (__builtin_expect(tag < 0 && tag != MPI_ANY_TAG, 0))
        return wh_p2p_bad(fname, c, WH_BAD_TAG, tag, "tag");
    if (__builtin_expect((unsigned)src >= (unsigned)wh_p2p_size(c) && src != MPI_PROC_NULL && src != MPI_ANY_SOURCE,
                         0))
        return wh_p2p_bad(fname, c, WH_BAD_RANK, src, "source");
    return MPI_SUCCESS;
}

#define WH_CHK_PTR(fname, c, p, name)                                                             \
    do {                                                                                          \
        if (__builtin_expect(!(p), 0))                                                            \
            return wh_p2p_bad((fname), (c), WH_BAD_ARG, 0, (name));                               \
    } while (0)
#endif
