/* MPI_Probe/Iprobe, matched probes (MPI_Mprobe/Improbe) and matched
 * receives (MPI_Mrecv/Imrecv).
 *
 * An MPI_Message is the handle of the receive request the protocol layer
 * creates when a matched probe removes a message from matching (see
 * wh_req_is_msg); MPI_Mrecv/Imrecv turn that request into the receive.
 * A probe for MPI_PROC_NULL yields MPI_MESSAGE_NO_PROC. */
#include "mpi/reqapi.h"
#include "proto/p2p.h"

static int probe_checks(const char *fname, int source, int tag, MPI_Comm comm, wh_comm_t **cp)
{
    int rc;
    if ((rc = wh_chk_comm(fname, comm, cp)) || (rc = wh_chk_src(fname, *cp, source, tag)))
        return rc;
    return MPI_SUCCESS;
}

/* Probe until a match (block) or once.  msg: NULL for plain probes. */
static int probe_common(const char *fname, int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                        MPI_Status *status, int block, int matched)
{
    wh_comm_t *c;
    int rc = probe_checks(fname, source, tag, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!block)
        WH_CHK_PTR(fname, c, flag, "flag");
    if (matched)
        WH_CHK_PTR(fname, c, message, "message");
    WH_CHK_PTR(fname, c, status, "status");
    int found = 0;
    MPI_Status st;
    wh_req_t *m = NULL;
    for (unsigned idle = 0;;) {
        rc = wh_iprobe(source, tag, c, WH_CTX_P2P, &found, &st, matched ? &m : NULL);
        if (rc != MPI_SUCCESS)
            return wh_p2p_raise(c, fname, rc);
        if (found || !block)
            break;
        wh_progress_idle(&idle); /* wh_iprobe drove the engine once */
    }
    if (!found && !block)
        wh_test_idle();
    if (flag)
        *flag = found;
    if (found) {
        wh_status_out(status, &st);
        if (matched)
            *message = m ? m->obj.handle : MPI_MESSAGE_NO_PROC;
    } else if (matched) {
        *message = MPI_MESSAGE_NULL;
    }
    return MPI_SUCCESS;
}

static int body_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_common("MPI_Probe", source, tag, comm, NULL, NULL, status, 1, 0);
}

static int body_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_common("MPI_Iprobe", source, tag, comm, flag, NULL, status, 0, 0);
}

static int body_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return probe_common("MPI_Mprobe", source, tag, comm, NULL, message, status, 1, 1);
}

static int body_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    return probe_common("MPI_Improbe", source, tag, comm, flag, message, status, 0, 1);
}

/* Start the receive of a matched message.  *rp = the receive request, or
 * NULL for MPI_MESSAGE_NO_PROC; *cp = its communicator (NULL for NO_PROC). */
static int mrecv_start(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                       wh_req_t **rp, wh_comm_t **cp)
{
    *rp = NULL;
    *cp = NULL;
    WH_CHK_PTR(fname, NULL, message, "message");
    if (*message == MPI_MESSAGE_NO_PROC) {
        if (count < 0)
            return wh_p2p_bad(fname, NULL, WH_BAD_COUNT, count, "count");
        wh_dtype_t *dt;
        int rc = wh_dtype_check_comm(datatype, &dt);
        if (rc != MPI_SUCCESS && !(count == 0 && datatype == MPI_DATATYPE_NULL)) /* as wh_chk_data */
            return wh_p2p_raise(NULL, fname, rc);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    wh_req_t *m = wh_req_get(*message);
    if (!m || !wh_req_is_msg(m))
        return wh_p2p_bad(fname, NULL, WH_BAD_MESSAGE, *message, "message");
    wh_comm_t *c = m->comm;
    wh_dtype_t *dt;
    int rc = wh_chk_data(fname, c, buf, count, datatype, &dt);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_req_t *r;
    rc = wh_imrecv(buf, count, dt, m, &r);
    if (rc != MPI_SUCCESS)
        return wh_p2p_raise(c, fname, rc);
    *message = MPI_MESSAGE_NULL;
    *rp = r;
    *cp = c;
    return MPI_SUCCESS;
}

static int mrecv_blocking(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                          MPI_Status *status)
{
    WH_CHK_PTR(fname, NULL, status, "status");
    wh_req_t *r;
    wh_comm_t *c;
    int rc = mrecv_start(fname, buf, count, datatype, message, &r, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!r) {
        if (status != MPI_STATUS_IGNORE) {
            MPI_Status st;
            wh_status_set(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
            wh_status_out(status, &st);
        }
        return MPI_SUCCESS;
    }
    c->obj.refs++; /* the handler may need it after the request is gone */
    wh_req_wait_done(r);
    rc = r->err;
    wh_status_out(status, &r->status);
    wh_req_release(r);
    if (rc != MPI_SUCCESS)
        rc = wh_p2p_raise(c, fname, rc);
    wh_comm_release(c);
    return rc;
}

static int mrecv_nonblocking(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Message *message, MPI_Request *request)
{
    WH_CHK_PTR(fname, NULL, request, "request");
    wh_req_t *r;
    wh_comm_t *c;
    int rc = mrecv_start(fname, buf, count, datatype, message, &r, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!r && !(r = wh_req_new_done(MPI_PROC_NULL)))
        return wh_p2p_raise(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request"));
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Mrecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                      MPI_Status *status)
{
    return mrecv_blocking(fname, buf, count, datatype, message, status);
}

static int body_Imrecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                       MPI_Request *request)
{
    return mrecv_nonblocking(fname, buf, count, datatype, message, request);
}

#include "entry/p2p_probe.h"
