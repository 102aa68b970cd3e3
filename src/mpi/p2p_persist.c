/* Persistent point-to-point requests: MPI_{Send,Bsend,Ssend,Rsend,Recv}_init
 * (+_c) and MPI_Start/MPI_Startall.  A persistent request is created
 * inactive; MPI_Start activates it; the wait/test that completes it makes
 * it inactive again; starting an active one is an error. */
#include "mpi/reqapi.h"
#include "proto/p2p.h"

#define WH_INLINE static inline __attribute__((always_inline))

WH_INLINE int send_init(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dth, int dest, int tag,
                        MPI_Comm comm, int mode, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc;
    if ((rc = wh_chk_comm(fname, comm, &c)) || (rc = wh_chk_data(fname, c, buf, count, dth, &dt)) ||
        (rc = wh_chk_dest(fname, c, dest, tag)))
        return rc;
    WH_CHK_PTR(fname, c, request, "request");
    wh_req_t *r;
    if ((rc = wh_send_init(buf, count, dt, dest, tag, c, mode, &r)) != MPI_SUCCESS)
        return wh_p2p_raise(c, fname, rc);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

/* Bodies of MPI_{Send,Ssend,Rsend,Bsend}_init, each serving MPI_X and MPI_X_c. */
static int body_Send_init(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_init(fname, buf, count, datatype, dest, tag, comm, WH_MODE_STD, request);
}

static int body_Ssend_init(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_init(fname, buf, count, datatype, dest, tag, comm, WH_MODE_SYNC, request);
}

static int body_Rsend_init(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_init(fname, buf, count, datatype, dest, tag, comm, WH_MODE_READY, request);
}

static int body_Bsend_init(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                           int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_init(fname, buf, count, datatype, dest, tag, comm, WH_MODE_BUFFERED, request);
}

WH_INLINE int recv_init(const char *fname, void *buf, MPI_Count count, MPI_Datatype dth, int src, int tag,
                        MPI_Comm comm, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc;
    if ((rc = wh_chk_comm(fname, comm, &c)) || (rc = wh_chk_data(fname, c, buf, count, dth, &dt)) ||
        (rc = wh_chk_src(fname, c, src, tag)))
        return rc;
    WH_CHK_PTR(fname, c, request, "request");
    wh_req_t *r;
    if ((rc = wh_recv_init(buf, count, dt, src, tag, c, &r)) != MPI_SUCCESS)
        return wh_p2p_raise(c, fname, rc);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Recv_init(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return recv_init(fname, buf, count, datatype, source, tag, comm, request);
}

/* Validate one handle for MPI_Start(all): a persistent, inactive request. */
static int start_check(const char *fname, MPI_Request h, int idx, wh_req_t **rp)
{
    wh_req_t *r = *rp = wh_req_user(h);
    const char *what = NULL;
    if (!r)
        what = h == MPI_REQUEST_NULL ? "is MPI_REQUEST_NULL" : "is not a valid request";
    else if (!r->persistent)
        what = "is not a persistent request";
    else if (r->active)
        what = "is already active (started and not yet completed by a wait or test)";
    if (what) {
        int code = idx < 0 ? wh_error(MPI_ERR_REQUEST, "request 0x%x %s", (unsigned)h, what)
                           : wh_error(MPI_ERR_REQUEST, "array_of_requests[%d] (0x%x) %s", idx, (unsigned)h, what);
        *rp = NULL;
        return wh_p2p_raise(r ? r->comm : NULL, fname, code);
    }
    return MPI_SUCCESS;
}

static int start_one(const char *fname, wh_req_t *r)
{
    int rc;
    if (r->kind == WH_REQ_SEND && r->mode == WH_MODE_BUFFERED) {
        rc = wh_bsend_start(r);
    } else if (r->kind == WH_REQ_SEND || r->kind == WH_REQ_RECV) {
        rc = wh_req_start(r);
    } else {
        const wh_req_ops_t *o = r->kind < WH_REQ_KINDS ? wh_req_kind_ops[r->kind] : NULL;
        r->active = 1;
        rc = o && o->start ? o->start(r) : wh_error(MPI_ERR_REQUEST, "request kind %d cannot be started", r->kind);
    }
    if (rc != MPI_SUCCESS) {
        r->active = 0;
        return wh_p2p_raise(r->comm, fname, rc);
    }
    return MPI_SUCCESS;
}

static int body_Start(MPI_Request *request)
{
    WH_CHK_PTR("MPI_Start", NULL, request, "request");
    wh_req_t *r;
    int rc = start_check("MPI_Start", *request, -1, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return start_one("MPI_Start", r);
}

static int body_Startall(int count, MPI_Request array_of_requests[])
{
    if (count < 0)
        return wh_p2p_bad("MPI_Startall", NULL, WH_BAD_COUNT, count, "count");
    if (count > 0)
        WH_CHK_PTR("MPI_Startall", NULL, array_of_requests, "array_of_requests");
    wh_req_t *r;
    for (int i = 0; i < count; i++) {
        int rc = start_check("MPI_Startall", array_of_requests[i], i, &r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < count; i++) {
        /* checked again: the same request may appear twice */
        int rc = start_check("MPI_Startall", array_of_requests[i], i, &r);
        if (rc == MPI_SUCCESS)
            rc = start_one("MPI_Startall", r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

#include "entry/p2p_persist.h"
