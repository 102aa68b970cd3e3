/* MPI_Sendrecv, MPI_Sendrecv_replace and their nonblocking forms
 * MPI_Isendrecv/MPI_Isendrecv_replace (+_c), and the compound request kind
 * (WH_REQ_COMPOUND) that represents a send/receive pair as one request.
 *
 * The receive is always posted before the send starts, so a pair sent to
 * oneself matches.  The _replace forms pack the outgoing data into a
 * temporary buffer first (the receive may land in the user buffer while the
 * send is still in flight) and send it as bytes. */
#include <stdlib.h>

#include "mpi/reqapi.h"
#include "proto/p2p.h"

#define WH_INLINE static inline __attribute__((always_inline))

/* ---------- compound requests ---------- */

typedef struct wh_cmp {
    wh_req_t *s, *r; /* parts (either may be NULL) */
    void *tmp;       /* freed when the send part is done */
} wh_cmp_t;

/* poll_fn of compound requests: completes the parent once both parts are done. */
static int cmp_poll(wh_req_t *p)
{
    wh_cmp_t *x = p->extra;
    if (!x || (x->s && !wh_req_done(x->s)) || (x->r && !wh_req_done(x->r)))
        return 0;
    int err = MPI_SUCCESS;
    if (x->r) {
        p->status = x->r->status;
        err = x->r->err;
        wh_req_release(x->r);
    } else {
        wh_status_set(&p->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    }
    if (x->s) {
        if (err == MPI_SUCCESS)
            err = x->s->err;
        wh_req_release(x->s);
    }
    free(x->tmp);
    free(x);
    p->extra = NULL;
    p->err = err;
    __atomic_store_n(&p->complete, 1, __ATOMIC_RELEASE);
    return 1;
}

/* MPI_Request_free of an incomplete compound: let the parts finish alone. */
static void cmp_abandon(wh_req_t *p)
{
    wh_cmp_t *x = p->poll_fn == cmp_poll ? p->extra : NULL;
    if (x) {
        if (x->r) {
            if (wh_req_done(x->r))
                wh_req_release(x->r);
            else
                x->r->user_freed = 1;
        }
        if (x->s && !wh_req_done(x->s)) {
            if (wh_bsend_background(x->s, x->tmp) != MPI_SUCCESS) {
                wh_req_wait_done(x->s); /* out of memory: finish it here */
                wh_req_release(x->s);
                free(x->tmp);
            }
        } else {
            if (x->s)
                wh_req_release(x->s);
            free(x->tmp);
        }
        free(x);
        p->extra = NULL;
    }
    wh_req_release(p);
}

const wh_req_ops_t wh_compound_ops = {.abandon = cmp_abandon};

wh_req_t *wh_compound_new(wh_req_t *s, wh_req_t *r, void *tmp)
{
    wh_req_t *p = wh_req_alloc(WH_REQ_COMPOUND);
    wh_cmp_t *x = malloc(sizeof *x);
    if (!p || !x) {
        free(x);
        if (p)
            wh_req_release(p);
        return NULL;
    }
    x->s = s;
    x->r = r;
    x->tmp = tmp;
    p->extra = x;
    p->poll_fn = cmp_poll;
    wh_comm_t *c = r ? r->comm : s ? s->comm : NULL;
    if (c) {
        p->comm = c;
        c->obj.refs++;
    }
    cmp_poll(p);
    return p;
}

/* ---------- shared start ---------- */

/* Post the receive, then start the send.  For replace, (sbuf,scount,sdt) is
 * packed into *tmp first.  On error the code is raised and returned and
 * nothing is left pending. */
static int start_pair(const char *fname, wh_comm_t *c, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt,
                      int dest, int stag, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt, int src, int rtag,
                      int replace, wh_req_t **srp, wh_req_t **rrp, void **tmp)
{
    int rc;
    *tmp = NULL;
    if (replace) {
        size_t n = wh_dtype_bytes(sdt, (size_t)scount);
        wh_dtype_t *bytes = wh_dtype_get(MPI_BYTE);
        if (dest != MPI_PROC_NULL && n) {
            if (!(*tmp = malloc(n)))
                return wh_p2p_raise(c, fname,
                                     wh_error(MPI_ERR_NO_MEM, "out of memory for a %zu-byte temporary buffer", n));
            if ((rc = wh_dtype_pack(sbuf, (size_t)scount, sdt, 0, *tmp, n)) != MPI_SUCCESS)
                goto fail;
        }
        sbuf = *tmp;
        scount = (MPI_Count)n;
        sdt = bytes;
    }
    if ((rc = wh_irecv(rbuf, rcount, rdt, src, rtag, c, WH_CTX_P2P, rrp)) != MPI_SUCCESS)
        goto fail;
    if ((rc = wh_isend(sbuf, scount, sdt, dest, stag, c, WH_CTX_P2P, WH_MODE_STD, srp)) != MPI_SUCCESS) {
        if (!wh_cancel_recv(*rrp))
            wh_req_wait_done(*rrp);
        wh_req_release(*rrp);
        goto fail;
    }
    return MPI_SUCCESS;
fail:
    free(*tmp);
    *tmp = NULL;
    return wh_p2p_raise(c, fname, rc);
}

WH_INLINE int pair_checks(const char *fname, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest,
                          int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                          wh_comm_t **cp, wh_dtype_t **sdt, wh_dtype_t **rdt)
{
    int rc;
    if ((rc = wh_chk_comm(fname, comm, cp)) || (rc = wh_chk_data(fname, *cp, sbuf, scount, stype, sdt)) ||
        (rc = wh_chk_dest(fname, *cp, dest, stag)) || (rc = wh_chk_data(fname, *cp, rbuf, rcount, rtype, rdt)) ||
        (rc = wh_chk_src(fname, *cp, src, rtag)))
        return rc;
    return MPI_SUCCESS;
}

/* Blocking pair: wait for both, report the receive status. */
static int pair_wait(const char *fname, wh_comm_t *c, wh_req_t *sr, wh_req_t *rr, void *tmp, MPI_Status *status)
{
    wh_req_wait_done(sr);
    wh_req_wait_done(rr);
    int rc = rr->err != MPI_SUCCESS ? rr->err : sr->err;
    wh_status_out(status, &rr->status);
    wh_req_release(sr);
    wh_req_release(rr);
    free(tmp);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : wh_p2p_raise(c, fname, rc);
}

static int pair_request(const char *fname, wh_comm_t *c, wh_req_t *sr, wh_req_t *rr, void *tmp,
                        MPI_Request *request)
{
    wh_req_t *p = wh_compound_new(sr, rr, tmp);
    if (!p) {
        pair_wait(fname, c, sr, rr, tmp, MPI_STATUS_IGNORE);
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request"));
    }
    *request = p->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- MPI_Sendrecv / MPI_Isendrecv ---------- */

WH_INLINE int sendrecv_common(const char *fname, const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest,
                              int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
                              MPI_Comm comm, MPI_Status *status, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *sdt, *rdt;
    int rc = pair_checks(fname, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, &c, &sdt, &rdt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (request)
        WH_CHK_PTR(fname, c, request, "request");
    else
        WH_CHK_PTR(fname, c, status, "status");
    wh_req_t *sr, *rr;
    void *tmp;
    rc = start_pair(fname, c, sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, 0, &sr, &rr, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    return request ? pair_request(fname, c, sr, rr, tmp, request) : pair_wait(fname, c, sr, rr, tmp, status);
}

static int body_Sendrecv(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_common(fname, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                           source, recvtag, comm, status, NULL);
}

static int body_Isendrecv(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                          int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source,
                          int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_common(fname, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                           recvtype, source, recvtag, comm, MPI_STATUS_IGNORE, request);
}

/* ---------- MPI_Sendrecv_replace / MPI_Isendrecv_replace ---------- */

static int replace_common(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int stag,
                          int src, int rtag, MPI_Comm comm, MPI_Status *status, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc;
    if ((rc = wh_chk_comm(fname, comm, &c)) || (rc = wh_chk_data(fname, c, buf, count, datatype, &dt)) ||
        (rc = wh_chk_dest(fname, c, dest, stag)) || (rc = wh_chk_src(fname, c, src, rtag)))
        return rc;
    if (request)
        WH_CHK_PTR(fname, c, request, "request");
    else
        WH_CHK_PTR(fname, c, status, "status");
    wh_req_t *sr, *rr;
    void *tmp;
    rc = start_pair(fname, c, buf, count, dt, dest, stag, buf, count, dt, src, rtag, 1, &sr, &rr, &tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    return request ? pair_request(fname, c, sr, rr, tmp, request) : pair_wait(fname, c, sr, rr, tmp, status);
}

static int body_Sendrecv_replace(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                 int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return replace_common(fname, buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                          NULL);
}

static int body_Isendrecv_replace(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                  int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return replace_common(fname, buf, count, datatype, dest, sendtag, source, recvtag, comm,
                          MPI_STATUS_IGNORE, request);
}

#include "entry/p2p_sendrecv.h"
