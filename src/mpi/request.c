/* MPI request completion: Wait/Test and their any/some/all forms, Cancel,
 * Request_free, Request_get_status(+_all/_any/_some).
 *
 * Errors: single completions return (and raise on the request's
 * communicator) the request's error; multiple completions return
 * MPI_ERR_IN_STATUS and then, and only then, set MPI_ERROR in every status
 * they report (MPI_SUCCESS for requests that succeeded).  Null and inactive
 * requests complete at once with an empty status. */
#include <stdio.h>
#include <stdlib.h>

#include "mpi/reqapi.h"
#include "proto/p2p.h"

const wh_req_ops_t *wh_req_kind_ops[WH_REQ_KINDS] = {[WH_REQ_COMPOUND] = &wh_compound_ops};

#define WH_ST(statuses, i) ((statuses) == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &(statuses)[i])

static inline const wh_req_ops_t *kind_ops(const wh_req_t *r)
{
    return r->kind < WH_REQ_KINDS ? wh_req_kind_ops[r->kind] : NULL;
}

/* Let another layer's request compute its final status (generalized requests). */
static inline void req_query(wh_req_t *r)
{
    if (__builtin_expect(r->kind > WH_REQ_RECV, 0)) {
        const wh_req_ops_t *o = kind_ops(r);
        if (o && o->query)
            o->query(r);
    }
}

/* Give incomplete request r a chance to advance: its own hook, then the
 * engine.  Returns nonzero if anything happened. */
static inline int req_poll(wh_req_t *r)
{
    return r->poll_fn ? r->poll_fn(r) : 0;
}

void wh_req_wait_slow(wh_req_t *r) { wh_req_block(r); }

void wh_req_free_done(wh_req_t *r)
{
    const wh_req_ops_t *o = kind_ops(r);
    if (o && o->release)
        o->release(r);
    else
        wh_req_release(r);
}

wh_req_t *wh_req_new_done(int src)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_SEND);
    if (!r)
        return NULL;
    wh_status_set(&r->status, src, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    return r;
}

/* Another layer's last word before complete request r is released (the
 * free_fn of a generalized request): its error becomes r's if r succeeded. */
static void req_finish_hook(wh_req_t *r)
{
    if (__builtin_expect(r->kind > WH_REQ_RECV, 0)) {
        const wh_req_ops_t *o = kind_ops(r);
        int rc = o && o->finish ? o->finish(r) : MPI_SUCCESS;
        if (r->err == MPI_SUCCESS)
            r->err = rc;
    }
}

/* r is complete and queried: report and release/deactivate it. */
int wh_req_finish(wh_req_t *r, MPI_Request *h, MPI_Status *st)
{
    if (!r->persistent)
        req_finish_hook(r);
    int err = r->err;
    wh_status_out(st, &r->status);
    if (r->persistent) {
        r->active = 0;
    } else {
        wh_req_free_done(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

/* Finish r and raise its error (if any) on its communicator.  The
 * communicator is held across the release so the handler can run on it. */
static int __attribute__((noinline)) finish_raise(const char *fname, wh_req_t *r, MPI_Request *h, MPI_Status *st)
{
    req_query(r);
    wh_comm_t *c = r->comm;
    if (c)
        c->obj.refs++;
    int err = wh_req_finish(r, h, st);
    if (err != MPI_SUCCESS)
        err = wh_p2p_raise(c, fname, err);
    if (c)
        wh_comm_release(c);
    return err;
}

static inline int finish_one(const char *fname, wh_req_t *r, MPI_Request *h, MPI_Status *st)
{
    if (__builtin_expect(r->err == MPI_SUCCESS && r->kind <= WH_REQ_RECV, 1)) {
        wh_status_out(st, &r->status);
        if (r->persistent) {
            r->active = 0;
        } else {
            wh_req_release(r);
            *h = MPI_REQUEST_NULL;
        }
        return MPI_SUCCESS;
    }
    return finish_raise(fname, r, h, st);
}

/* ---------- single request ---------- */

static int body_Wait(MPI_Request *request, MPI_Status *status)
{
    WH_CHK_PTR("MPI_Wait", NULL, request, "request");
    WH_CHK_PTR("MPI_Wait", NULL, status, "status");
    MPI_Request h = *request;
    if (h == MPI_REQUEST_NULL) {
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    wh_req_t *r = wh_req_user(h);
    if (__builtin_expect(!r, 0))
        return wh_p2p_bad("MPI_Wait", NULL, WH_BAD_REQUEST, h, "request");
    if (wh_req_inactive(r)) {
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    wh_req_wait_done(r);
    return finish_one("MPI_Wait", r, request, status);
}

static int body_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    WH_CHK_PTR("MPI_Test", NULL, request, "request");
    WH_CHK_PTR("MPI_Test", NULL, flag, "flag");
    WH_CHK_PTR("MPI_Test", NULL, status, "status");
    MPI_Request h = *request;
    if (h == MPI_REQUEST_NULL) {
        *flag = 1;
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    wh_req_t *r = wh_req_user(h);
    if (__builtin_expect(!r, 0))
        return wh_p2p_bad("MPI_Test", NULL, WH_BAD_REQUEST, h, "request");
    if (wh_req_inactive(r)) {
        *flag = 1;
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!wh_req_done(r)) {
        req_poll(r);
        wh_progress();
        if (!wh_req_done(r)) {
            *flag = 0;
            wh_test_idle();
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return finish_one("MPI_Test", r, request, status);
}

static int body_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    WH_CHK_PTR("MPI_Request_get_status", NULL, flag, "flag");
    WH_CHK_PTR("MPI_Request_get_status", NULL, status, "status");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    wh_req_t *r = wh_req_user(request);
    if (!r)
        return wh_p2p_bad("MPI_Request_get_status", NULL, WH_BAD_REQUEST, request, "request");
    if (wh_req_inactive(r)) {
        *flag = 1;
        wh_status_empty(status);
        return MPI_SUCCESS;
    }
    if (!wh_req_done(r)) {
        req_poll(r);
        wh_progress();
    }
    if (!(*flag = wh_req_done(r))) {
        wh_test_idle();
        return MPI_SUCCESS;
    }
    req_query(r);
    wh_status_out(status, &r->status);
    if (r->err != MPI_SUCCESS)
        return wh_p2p_raise(r->comm, "MPI_Request_get_status", r->err);
    return MPI_SUCCESS;
}

static int body_Request_free(MPI_Request *request)
{
    WH_CHK_PTR("MPI_Request_free", NULL, request, "request");
    wh_req_t *r = wh_req_user(*request);
    if (!r)
        return wh_p2p_bad("MPI_Request_free", NULL, WH_BAD_REQUEST, *request, "request");
    if (wh_req_done(r) || wh_req_inactive(r)) {
        int rc = MPI_SUCCESS;
        if (!r->persistent) {
            int before = r->err;
            req_finish_hook(r);
            rc = before == MPI_SUCCESS ? r->err : MPI_SUCCESS;
        }
        wh_comm_t *c = r->comm;
        if (rc != MPI_SUCCESS && c)
            c->obj.refs++; /* the handler runs on it after the release */
        wh_req_free_done(r);
        *request = MPI_REQUEST_NULL;
        if (rc != MPI_SUCCESS) {
            rc = wh_p2p_raise(c, "MPI_Request_free", rc);
            if (c)
                wh_comm_release(c);
        }
        return rc;
    } else {
        /* active: completes in the background, released when it does */
        const wh_req_ops_t *o = kind_ops(r);
        if (o && o->abandon) {
            o->abandon(r);
        } else {
            r->persistent = 0;
            r->user_freed = 1;
        }
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

static int body_Cancel(MPI_Request *request)
{
    WH_CHK_PTR("MPI_Cancel", NULL, request, "request");
    wh_req_t *r = wh_req_user(*request);
    if (!r)
        return wh_p2p_bad("MPI_Cancel", NULL, WH_BAD_REQUEST, *request, "request");
    const wh_req_ops_t *ko = kind_ops(r);
    if (ko && ko->no_cancel)
        return wh_p2p_raise(r->comm, "MPI_Cancel",
                            wh_error(MPI_ERR_REQUEST, "request 0x%x: %s", (unsigned)*request, ko->no_cancel));
    /* a send request that completed locally (an eager message) may still be
       withdrawn from the receiver's unexpected queue, as in MPICH */
    if (wh_req_inactive(r) || (wh_req_done(r) && !WH_REQ_CANCEL_DONE(r->kind) && r->kind != WH_REQ_SEND))
        return MPI_SUCCESS;
    if (r->kind == WH_REQ_RECV) {
        wh_cancel_recv(r); /* 0: already matched; it completes normally */
    } else if (r->kind == WH_REQ_SEND) {
        int rc = wh_cancel_send(r); /* completes once the receiver answered */
        if (rc != MPI_SUCCESS)
            return wh_p2p_raise(r->comm, "MPI_Cancel", rc);
    } else {
        const wh_req_ops_t *o = kind_ops(r);
        if (o && o->cancel) {
            int rc = o->cancel(r);
            if (rc != MPI_SUCCESS)
                return wh_p2p_raise(r->comm, "MPI_Cancel", rc);
        }
    }
    return MPI_SUCCESS;
}

/* ---------- arrays of requests ---------- */

/* Check count/array/status arguments and every handle.  Returns the number
 * of active requests through *nactive. */
static int check_array(const char *fname, int count, const MPI_Request reqs[], const void *statuses,
                       int *nactive)
{
    if (count < 0)
        return wh_p2p_bad(fname, NULL, WH_BAD_COUNT, count, "count");
    int n = 0;
    if (count == 0) { /* empty: the arrays may be NULL (MPICH checks them only when count > 0) */
        *nactive = 0;
        return MPI_SUCCESS;
    }
    WH_CHK_PTR(fname, NULL, reqs, "array_of_requests");
    WH_CHK_PTR(fname, NULL, statuses, "array_of_statuses");
    for (int i = 0; i < count; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        wh_req_t *r = wh_req_user(reqs[i]);
        if (!r) {
            char what[64];
            snprintf(what, sizeof what, "array_of_requests[%d]", i);
            return wh_p2p_raise(NULL, fname,
                                 wh_error(MPI_ERR_REQUEST, "%s (0x%x) is not a valid request", what,
                                          (unsigned)reqs[i]));
        }
        if (!wh_req_inactive(r))
            n++;
    }
    *nactive = n;
    return MPI_SUCCESS;
}

/* Active request at index i, or NULL for null/inactive entries. */
static inline wh_req_t *active_at(const MPI_Request reqs[], int i)
{
    if (reqs[i] == MPI_REQUEST_NULL)
        return NULL;
    wh_req_t *r = wh_req_get(reqs[i]);
    return wh_req_inactive(r) ? NULL : r;
}

/* After a multiple completion found failures: raise MPI_ERR_IN_STATUS on the
 * communicator of the first failed request. */
static int raise_in_status(const char *fname, wh_comm_t *c, int nfail, int total, int first_idx, int first_err)
{
    char text[MPI_MAX_ERROR_STRING];
    wh_error_text(first_err, text, sizeof text);
    int code = wh_error(MPI_ERR_IN_STATUS, "%d of %d completed requests failed; the first, index %d: %s", nfail,
                        total, first_idx, text);
    code = wh_p2p_raise(c, fname, code);
    if (c)
        wh_comm_release(c);
    return code;
}

/* Report complete active requests and release or deactivate them (unless
 * keep).  idx == NULL: every entry of reqs[0..count), statuses by index,
 * null/inactive entries get empty statuses; otherwise the n entries
 * idx[0..n), k-th status for idx[k].  Returns MPI_SUCCESS or the raised
 * MPI_ERR_IN_STATUS. */
static int report_done(const char *fname, MPI_Request reqs[], int count, const int *idx, int n, MPI_Status *statuses,
                       int keep)
{
    int nfail = 0, total = 0, first_idx = -1, first_err = MPI_SUCCESS;
    wh_comm_t *fc = NULL;
    int lim = idx ? n : count;
    for (int k = 0; k < lim; k++) {
        int i = idx ? idx[k] : k;
        wh_req_t *r = active_at(reqs, i);
        if (!r)
            continue;
        total++;
        req_query(r);
        if (!keep && !r->persistent)
            req_finish_hook(r);
        if (r->err != MPI_SUCCESS && nfail++ == 0) {
            first_idx = i;
            first_err = r->err;
            if ((fc = r->comm))
                fc->obj.refs++;
        }
    }
    for (int k = 0; k < lim; k++) {
        int i = idx ? idx[k] : k;
        MPI_Status *st = WH_ST(statuses, k);
        wh_req_t *r = active_at(reqs, i);
        if (!r) {
            wh_status_empty(st);
            continue;
        }
        int err = r->err;
        if (keep)
            wh_status_out(st, &r->status);
        else
            wh_req_finish(r, &reqs[i], st);
        if (nfail && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
    }
    if (!nfail)
        return MPI_SUCCESS;
    return raise_in_status(fname, fc, nfail, total, first_idx, first_err);
}

/* Shared by Waitall/Testall/Request_get_status_all once every active request
 * is complete. */
static int all_done(const char *fname, int count, MPI_Request reqs[], MPI_Status statuses[], int keep)
{
    return report_done(fname, reqs, count, NULL, 0, statuses, keep);
}

static int body_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    int nact, rc = check_array("MPI_Waitall", count, array_of_requests, array_of_statuses, &nact);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < count; i++) {
        wh_req_t *r = active_at(array_of_requests, i);
        if (r)
            wh_req_wait_done(r);
    }
    return all_done("MPI_Waitall", count, array_of_requests, array_of_statuses, 0);
}

/* One pass: poll incomplete active requests; returns 1 if all are complete. */
static int all_complete(int count, const MPI_Request reqs[])
{
    int progressed = 0;
    for (int i = 0; i < count; i++) {
        wh_req_t *r = active_at(reqs, i);
        if (r && !wh_req_done(r)) {
            if (!progressed) {
                wh_progress();
                progressed = 1;
            }
            req_poll(r);
            if (!wh_req_done(r))
                return 0;
        }
    }
    return 1;
}

static int body_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status *array_of_statuses)
{
    WH_CHK_PTR("MPI_Testall", NULL, flag, "flag");
    int nact, rc = check_array("MPI_Testall", count, array_of_requests, array_of_statuses, &nact);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(*flag = all_complete(count, array_of_requests))) {
        wh_test_idle();
        return MPI_SUCCESS;
    }
    return all_done("MPI_Testall", count, array_of_requests, array_of_statuses, 0);
}

static int body_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                       MPI_Status *array_of_statuses)
{
    WH_CHK_PTR("MPI_Request_get_status_all", NULL, flag, "flag");
    int nact, rc = check_array("MPI_Request_get_status_all", count, array_of_requests, array_of_statuses, &nact);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(*flag = all_complete(count, array_of_requests))) {
        wh_test_idle();
        return MPI_SUCCESS;
    }
    /* keep = 1: nothing is written through the (const) handle array */
    return all_done("MPI_Request_get_status_all", count, (MPI_Request *)array_of_requests, array_of_statuses, 1);
}

/* First complete active request (polling each incomplete one once), or -1. */
static int find_done(int count, const MPI_Request reqs[])
{
    for (int i = 0; i < count; i++) {
        wh_req_t *r = active_at(reqs, i);
        if (r && (wh_req_done(r) || (req_poll(r), wh_req_done(r))))
            return i;
    }
    return -1;
}

/* Waitany/Testany/Request_get_status_any.  block: wait for one; keep: do not
 * release.  *flag may be NULL (Waitany). */
static int any_common(const char *fname, int count, MPI_Request reqs[], int *indx, int *flag, MPI_Status *status,
                      int block, int keep)
{
    WH_CHK_PTR(fname, NULL, indx, "indx");
    int nact, rc = check_array(fname, count, reqs, status, &nact);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nact == 0) {
        *indx = MPI_UNDEFINED;
        if (flag)
            *flag = 1;
        if (status) /* NULL is allowed with count 0 */
            wh_status_empty(status);
        return MPI_SUCCESS;
    }
    int i = find_done(count, reqs);
    if (i < 0 && !block) {
        wh_progress();
        i = find_done(count, reqs);
    }
    for (unsigned idle = 0; i < 0 && block; i = find_done(count, reqs)) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    if (i < 0) {
        *indx = MPI_UNDEFINED;
        *flag = 0;
        wh_test_idle();
        return MPI_SUCCESS;
    }
    *indx = i;
    if (flag)
        *flag = 1;
    wh_req_t *r = wh_req_get(reqs[i]);
    if (keep) {
        req_query(r);
        wh_status_out(status, &r->status);
        return r->err == MPI_SUCCESS ? MPI_SUCCESS : wh_p2p_raise(r->comm, fname, r->err);
    }
    return finish_raise(fname, r, &reqs[i], status);
}

static int body_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    return any_common("MPI_Waitany", count, array_of_requests, indx, NULL, status, 1, 0);
}

static int body_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status)
{
    WH_CHK_PTR("MPI_Testany", NULL, flag, "flag");
    return any_common("MPI_Testany", count, array_of_requests, indx, flag, status, 0, 0);
}

static int body_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *indx, int *flag,
                                       MPI_Status *status)
{
    WH_CHK_PTR("MPI_Request_get_status_any", NULL, flag, "flag");
    return any_common("MPI_Request_get_status_any", count, (MPI_Request *)array_of_requests, indx, flag, status, 0,
                      1);
}

/* Waitsome/Testsome/Request_get_status_some. */
static int some_common(const char *fname, int incount, MPI_Request reqs[], int *outcount, int indices[],
                       MPI_Status statuses[], int block, int keep)
{
    WH_CHK_PTR(fname, NULL, outcount, "outcount");
    int nact, rc = check_array(fname, incount, reqs, statuses, &nact);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nact == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    WH_CHK_PTR(fname, NULL, indices, "array_of_indices");
    int n = 0;
    /* a test always drives the engine once: with keep, requests found complete
       stay in the array, and a caller polling for more must still progress */
    if (!block)
        wh_progress();
    for (unsigned idle = 0;;) {
        for (int i = 0; i < incount; i++) {
            wh_req_t *r = active_at(reqs, i);
            if (r && (wh_req_done(r) || (req_poll(r), wh_req_done(r))))
                indices[n++] = i;
        }
        if (n || !block)
            break;
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    if (!n) /* a test that found none */
        wh_test_idle();
    *outcount = n;
    return report_done(fname, reqs, incount, indices, n, statuses, keep);
}

static int body_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                         MPI_Status *array_of_statuses)
{
    return some_common("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1,
                       0);
}

static int body_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                         MPI_Status *array_of_statuses)
{
    return some_common("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0,
                       0);
}

static int body_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                        int array_of_indices[], MPI_Status *array_of_statuses)
{
    return some_common("MPI_Request_get_status_some", incount, (MPI_Request *)array_of_requests, outcount,
                       array_of_indices, array_of_statuses, 0, 1);
}

#include "entry/request.h"
