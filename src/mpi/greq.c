/* Generalized requests (MPI_Grequest_start/complete): requests whose
 * operation the user runs, plugged into MPI_Wait/Test/Cancel/Request_free
 * through the request-kind hooks of src/mpi/reqapi.h.
 *
 * Callbacks, as MPI-4.1 section 13.2 orders them:
 *   query_fn   fills the status each time a completed request is reported
 *              (wait/test, MPI_Request_get_status); its return value is the
 *              request's error;
 *   free_fn    once, after the query of the wait/test that completes the
 *              request, or, for a request freed with MPI_Request_free, in
 *              whichever of MPI_Request_free and MPI_Grequest_complete comes
 *              last; its error is reported if the request itself succeeded;
 *   cancel_fn  on MPI_Cancel, with complete = whether MPI_Grequest_complete
 *              was already called. */
#include <stdlib.h>

#include "mpi/reqapi.h"

typedef struct wh_greq {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    int freed; /* free_fn has run */
} wh_greq_t;

/* a callback's return value as an MPI error code */
static int cb_code(int rc, const char *what)
{
    if (rc == MPI_SUCCESS || wh_err_valid(rc))
        return rc;
    return wh_error(MPI_ERR_OTHER, "generalized request %s returned %d, not an MPI error code", what, rc);
}

static void greq_query(wh_req_t *r)
{
    wh_greq_t *g = r->extra;
    /* what query_fn does not set reads as an empty status */
    wh_status_set(&r->status, MPI_UNDEFINED, MPI_UNDEFINED, MPI_SUCCESS, 0, 0);
    r->err = g->query_fn ? cb_code(g->query_fn(g->extra_state, &r->status), "query_fn") : MPI_SUCCESS;
}

static int greq_finish(wh_req_t *r)
{
    wh_greq_t *g = r->extra;
    if (g->freed)
        return MPI_SUCCESS;
    g->freed = 1;
    return g->free_fn ? cb_code(g->free_fn(g->extra_state), "free_fn") : MPI_SUCCESS;
}

static void greq_release(wh_req_t *r)
{
    greq_finish(r); /* no-op unless the request was released another way */
    free(r->extra);
    r->extra = NULL;
    wh_req_release(r);
}

static int greq_cancel(wh_req_t *r)
{
    wh_greq_t *g = r->extra;
    if (!g->cancel_fn)
        return MPI_SUCCESS;
    return cb_code(g->cancel_fn(g->extra_state, wh_req_done(r)), "cancel_fn");
}

/* MPI_Request_free before MPI_Grequest_complete: free_fn waits for it */
static void greq_abandon(wh_req_t *r)
{
    r->user_freed = 1;
}

static const wh_req_ops_t greq_ops = {
    .query = greq_query,
    .release = greq_release,
    .finish = greq_finish,
    .cancel = greq_cancel,
    .abandon = greq_abandon,
};

static int body_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    static const char fname[] = "MPI_Grequest_start";
    WH_CHK_PTR(fname, NULL, request, "request");
    wh_req_kind_ops[WH_REQ_GREQ] = &greq_ops;
    wh_greq_t *g = malloc(sizeof *g);
    wh_req_t *r = g ? wh_req_alloc(WH_REQ_GREQ) : NULL;
    if (!r) {
        free(g);
        return wh_p2p_raise(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory starting a generalized request"));
    }
    *g = (wh_greq_t){.query_fn = query_fn, .free_fn = free_fn, .cancel_fn = cancel_fn, .extra_state = extra_state};
    r->extra = g;
    r->rank = MPI_UNDEFINED;
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Grequest_complete(MPI_Request request)
{
    static const char fname[] = "MPI_Grequest_complete";
    wh_req_t *r = wh_req_user(request);
    if (!r)
        return wh_p2p_bad(fname, NULL, WH_BAD_REQUEST, request, "request");
    if (r->kind != WH_REQ_GREQ)
        return wh_p2p_raise(NULL, fname, wh_error(MPI_ERR_REQUEST, "request 0x%x is not a generalized request",
                                                   (unsigned)request));
    if (wh_req_done(r))
        return wh_p2p_raise(NULL, fname, wh_error(MPI_ERR_REQUEST, "generalized request 0x%x is already complete",
                                                   (unsigned)request));
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    if (r->user_freed) { /* MPI_Request_free came first: free it now */
        int rc = greq_finish(r);
        greq_release(r);
        if (rc != MPI_SUCCESS)
            return wh_p2p_raise(NULL, fname, rc);
    }
    return MPI_SUCCESS;
}

#include "entry/greq.h"
