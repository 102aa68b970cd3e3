/* MPI point-to-point entry points: the send modes and receive, blocking and
 * nonblocking, with their large-count (_c) variants.  Each pair shares one
 * always-inlined body so the int version pays nothing for the MPI_Count one.
 *
 * Hot path (small message to a co-resident peer): the generated PMPI_X
 * (entry/p2p.h: initialization check, then the inlined body), a comm
 * table lookup, a few compares, the datatype lookup, then straight into the
 * protocol layer (wh_send / wh_irecv); no allocation beyond the request
 * table's free list, no system calls. */
#include <limits.h>

#include "mpi/reqapi.h"
#include "proto/p2p.h"

#define WH_INLINE static inline __attribute__((always_inline))

/* ---------- error reporting shared by the p2p files ---------- */

/* A user error handler may clear the code it is given; the call still
 * failed (and callers rely on a non-zero result to stop), so the original
 * code is returned then. */
int wh_p2p_raise(wh_comm_t *c, const char *fname, int code)
{
    int rc = wh_raise_comm(c, fname, code);
    return rc != MPI_SUCCESS ? rc : code;
}

int wh_p2p_bad(const char *fname, wh_comm_t *c, int what, long long v, const char *name)
{
    int code;
    switch (what) {
    case WH_BAD_COMM:
        if ((MPI_Comm)v == MPI_COMM_NULL)
            code = wh_error(MPI_ERR_COMM, "%s is MPI_COMM_NULL", name);
        else
            code = wh_error(MPI_ERR_COMM, "%s 0x%x is not a valid communicator (freed or never created)", name,
                            (unsigned)v);
        break;
    case WH_BAD_COUNT:
        code = wh_error(MPI_ERR_COUNT, "%s is negative (%lld)", name, v);
        break;
    case WH_BAD_RANK:
        code = wh_error(MPI_ERR_RANK, "%s rank %lld is out of range: the communicator has %d ranks (0..%d)%s", name,
                        v, c ? wh_p2p_size(c) : 0, c ? wh_p2p_size(c) - 1 : -1,
                        name[0] == 's' ? ", MPI_ANY_SOURCE or MPI_PROC_NULL" : " or MPI_PROC_NULL");
        break;
    case WH_BAD_TAG:
        code = wh_error(MPI_ERR_TAG, "invalid %s %lld: tags must be in 0..MPI_TAG_UB (%d)%s", name, v, INT_MAX,
                        v == MPI_ANY_TAG ? "; MPI_ANY_TAG is only allowed when receiving" : "");
        break;
    case WH_BAD_BUFFER:
        code = wh_error(MPI_ERR_BUFFER, "%s is NULL but count is %lld", name, v);
        break;
    case WH_BAD_REQUEST:
        if ((MPI_Request)v == MPI_REQUEST_NULL)
            code = wh_error(MPI_ERR_REQUEST, "%s is MPI_REQUEST_NULL", name);
        else
            code = wh_error(MPI_ERR_REQUEST, "%s 0x%x is not a valid request (freed, completed or never created)",
                            name, (unsigned)v);
        break;
    case WH_BAD_MESSAGE:
        if ((MPI_Message)v == MPI_MESSAGE_NULL)
            code = wh_error(MPI_ERR_REQUEST, "%s is MPI_MESSAGE_NULL", name);
        else
            code = wh_error(MPI_ERR_REQUEST,
                            "%s 0x%x is not a valid message handle (already received, or not from MPI_Mprobe/MPI_Improbe)",
                            name, (unsigned)v);
        break;
    default:
        code = wh_error(MPI_ERR_ARG, "%s is NULL", name);
        break;
    }
    return wh_p2p_raise(c, fname, code);
}

/* ---------- sends ---------- */

WH_INLINE int send_checks(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dth, int dest,
                          int tag, MPI_Comm comm, wh_comm_t **cp, wh_dtype_t **dtp)
{
    int rc;
    if ((rc = wh_chk_comm(fname, comm, cp)) || (rc = wh_chk_data(fname, *cp, buf, count, dth, dtp)) ||
        (rc = wh_chk_dest(fname, *cp, dest, tag)))
        return rc;
    return MPI_SUCCESS;
}

WH_INLINE int send_blocking(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dth, int dest, int tag,
                            MPI_Comm comm, int mode)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc = send_checks(fname, buf, count, dth, dest, tag, comm, &c, &dt);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    if (mode == WH_MODE_STD) {
        rc = wh_send(buf, count, dt, dest, tag, c, WH_CTX_P2P);
    } else if (mode == WH_MODE_BUFFERED) {
        rc = wh_bsend(buf, count, dt, dest, tag, c, NULL);
    } else {
        wh_req_t *r;
        rc = wh_isend_x(buf, count, dt, dest, tag, c, WH_CTX_P2P, mode, WH_TRACE_BLK, &r);
        if (rc == MPI_SUCCESS) {
            wh_req_wait_done(r);
            rc = r->err;
            wh_req_release(r);
        }
    }
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_p2p_raise(c, fname, rc);
    return MPI_SUCCESS;
}

WH_INLINE int send_nonblocking(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dth, int dest,
                               int tag, MPI_Comm comm, int mode, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc = send_checks(fname, buf, count, dth, dest, tag, comm, &c, &dt);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    WH_CHK_PTR(fname, c, request, "request");
    wh_req_t *r;
    if (mode == WH_MODE_BUFFERED)
        rc = wh_bsend(buf, count, dt, dest, tag, c, &r);
    else
        rc = wh_isend(buf, count, dt, dest, tag, c, WH_CTX_P2P, mode, &r);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_p2p_raise(c, fname, rc);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

/* Bodies of the send modes, each serving MPI_X and MPI_X_c (entry/p2p.h). */
WH_INLINE int body_Send(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                        int tag, MPI_Comm comm)
{
    return send_blocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_STD);
}

WH_INLINE int body_Ssend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm)
{
    return send_blocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_SYNC);
}

WH_INLINE int body_Rsend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm)
{
    return send_blocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_READY);
}

WH_INLINE int body_Bsend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm)
{
    return send_blocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_BUFFERED);
}

WH_INLINE int body_Isend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_STD, request);
}

WH_INLINE int body_Issend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_SYNC, request);
}

WH_INLINE int body_Irsend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_READY, request);
}

WH_INLINE int body_Ibsend(const char *fname, const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request)
{
    return send_nonblocking(fname, buf, count, datatype, dest, tag, comm, WH_MODE_BUFFERED, request);
}

/* ---------- receives ---------- */

WH_INLINE int recv_checks(const char *fname, void *buf, MPI_Count count, MPI_Datatype dth, int src, int tag,
                          MPI_Comm comm, wh_comm_t **cp, wh_dtype_t **dtp)
{
    int rc;
    if ((rc = wh_chk_comm(fname, comm, cp)) || (rc = wh_chk_data(fname, *cp, buf, count, dth, dtp)) ||
        (rc = wh_chk_src(fname, *cp, src, tag)))
        return rc;
    return MPI_SUCCESS;
}

WH_INLINE int recv_blocking(const char *fname, void *buf, MPI_Count count, MPI_Datatype dth, int src, int tag,
                            MPI_Comm comm, MPI_Status *status)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc = recv_checks(fname, buf, count, dth, src, tag, comm, &c, &dt);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    WH_CHK_PTR(fname, c, status, "status");
    wh_req_t *r;
    rc = wh_irecv_x(buf, count, dt, src, tag, c, WH_CTX_P2P, WH_TRACE_BLK, &r);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_p2p_raise(c, fname, rc);
    wh_req_wait_done(r);
    rc = r->err;
    wh_status_out(status, &r->status);
    wh_req_release(r);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_p2p_raise(c, fname, rc);
    return MPI_SUCCESS;
}

WH_INLINE int recv_nonblocking(const char *fname, void *buf, MPI_Count count, MPI_Datatype dth, int src, int tag,
                               MPI_Comm comm, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc = recv_checks(fname, buf, count, dth, src, tag, comm, &c, &dt);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return rc;
    WH_CHK_PTR(fname, c, request, "request");
    wh_req_t *r;
    rc = wh_irecv(buf, count, dt, src, tag, c, WH_CTX_P2P, &r);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_p2p_raise(c, fname, rc);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

WH_INLINE int body_Recv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Status *status)
{
    return recv_blocking(fname, buf, count, datatype, source, tag, comm, status);
}

WH_INLINE int body_Irecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return recv_nonblocking(fname, buf, count, datatype, source, tag, comm, request);
}

#include "entry/p2p.h"
