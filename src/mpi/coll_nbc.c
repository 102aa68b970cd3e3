/* Nonblocking collectives (MPI_I*, MPI-4.1 chapter 6.12) and the request
 * kind WH_REQ_NBC behind them and the persistent collectives (coll_persist.c).
 *
 * Each call checks its arguments exactly like its blocking form (the shared
 * functions of coll.c and coll2.c), builds a schedule (src/coll/sched.h)
 * and returns a request that MPI_Wait/Test and friends complete.  The
 * schedule advances from every MPI call that drives the progress engine. */
#include "mpi/coll_nbc.h"
#include "mpi/reqapi.h"

/* ---------- the request kind ---------- */

static int nbc_start(wh_req_t *r)
{
    return wh_sched_start(r->extra);
}

static void nbc_release(wh_req_t *r)
{
    wh_sched_free(r->extra);
    r->extra = NULL;
    wh_req_release(r);
}

/* MPI_Request_free of an active request: the schedule runs to its end, then
 * frees itself and the request (sched.c). */
static void nbc_abandon(wh_req_t *r)
{
    wh_sched_t *s = r->extra;
    r->persistent = 0;
    if (s && s->active)
        wh_sched_abandon(s);
    else
        nbc_release(r);
}

static const wh_req_ops_t nbc_ops = {.start = nbc_start, .release = nbc_release, .abandon = nbc_abandon};

int wh_nbc_begin(const char *fname, wh_comm_t *c, const wh_nbc_t *nb, wh_sched_t **sp)
{
    if (!nb->req || !(*sp = wh_sched_new(c))) {
        if (WH_CDEV_ON())
            wh_cdev_drop();
        return wh_raise_comm(c, fname, !nb->req ? wh_error(MPI_ERR_ARG, "request is NULL")
                                                : wh_error(MPI_ERR_NO_MEM, "out of memory creating a collective schedule"));
    }
    wh_req_kind_ops[WH_REQ_NBC] = &nbc_ops;
    if (WH_CDEV_ON())
        wh_cdev_sched_begin(*sp); /* device buffers: host temporaries, copied in first */
    return MPI_SUCCESS;
}

int wh_nbc_post(const char *fname, wh_sched_t *s, const wh_nbc_t *nb, int build_rc)
{
    wh_comm_t *c = s->home;
    if (WH_CDEV_ON())
        wh_cdev_sched_end(s); /* device buffers: copied out last */
    int rc = build_rc != MPI_SUCCESS ? build_rc : wh_sched_commit(s);
    wh_req_t *r = NULL;
    if (rc == MPI_SUCCESS && !(r = wh_req_alloc(WH_REQ_NBC)))
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory allocating a request");
    if (rc != MPI_SUCCESS) {
        c->obj.refs++; /* the handler runs on c after the schedule let go of it */
        wh_sched_free(s);
        rc = wh_raise_comm(c, fname, rc);
        wh_comm_release(c);
        return rc;
    }
    r->comm = c;
    c->obj.refs++;
    r->extra = s;
    r->poll_fn = wh_sched_poll;
    s->req = r;
    if (nb->persistent) {
        r->persistent = 1;
        r->complete = 1; /* inactive until MPI_Start */
        wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    } else if ((rc = wh_sched_start(s)) != MPI_SUCCESS) {
        c->obj.refs++;
        nbc_release(r);
        rc = wh_raise_comm(c, fname, rc);
        wh_comm_release(c);
        return rc;
    }
    *nb->req = r->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- entry points ---------- */

static int body_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_barrier("MPI_Ibarrier", &nb, comm);
}

static int body_Ibcast(const char *fname, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                       MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_bcast(fname, &nb, buffer, count, datatype, root, comm);
}

static int body_Ireduce(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_reduce(fname, &nb, sendbuf, recvbuf, count, datatype, op, root, comm);
}

static int body_Iallreduce(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_allred(fname, &nb, WH_RED_ALL, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Igather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_gather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static int body_Igatherv(const char *fname, int large, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const MPI_Count recvcounts_c[], const int displs[],
                         const MPI_Aint displs_c[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_gatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts_c, displs_c,
                                   recvtype, root, comm)
           : wh_mc_gatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                             comm);
}

static int body_Iscatter(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                         MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_scatter(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static int body_Iscatterv(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                          const MPI_Count sendcounts_c[], const int displs[], const MPI_Aint displs_c[],
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                          MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_scatterv_c(fname, &nb, sendbuf, sendcounts_c, displs_c, sendtype, recvbuf, recvcount,
                                    recvtype, root, comm)
           : wh_mc_scatterv_i(fname, &nb, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
}

static int body_Iallgather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Iallgatherv(const char *fname, int large, const void *sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const MPI_Count recvcounts_c[], const int displs[], const MPI_Aint displs_c[],
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_allgatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts_c, displs_c,
                                      recvtype, comm)
           : wh_mc_allgatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm);
}

static int body_Ialltoall(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Ialltoallv(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                           const MPI_Count sendcounts_c[], const int sdispls[], const MPI_Aint sdispls_c[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const MPI_Count recvcounts_c[], const int rdispls[], const MPI_Aint rdispls_c[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_alltoallv_c(fname, &nb, sendbuf, sendcounts_c, sdispls_c, sendtype, recvbuf, recvcounts_c,
                                     rdispls_c, recvtype, comm)
           : wh_mc_alltoallv_i(fname, &nb, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm);
}

static int body_Ialltoallw(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                           const MPI_Count sendcounts_c[], const int sdispls[], const MPI_Aint sdispls_c[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Count recvcounts_c[], const int rdispls[], const MPI_Aint rdispls_c[],
                           const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_alltoallw_c(fname, &nb, sendbuf, sendcounts_c, sdispls_c, sendtypes, recvbuf, recvcounts_c,
                                     rdispls_c, recvtypes, comm)
           : wh_mc_alltoallw_i(fname, &nb, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                               recvtypes, comm);
}

static int body_Ireduce_scatter_block(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_redscat_block(fname, &nb, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

static int body_Ireduce_scatter(const char *fname, int large, const void *sendbuf, void *recvbuf,
                                const int recvcounts[], const MPI_Count recvcounts_c[], MPI_Datatype datatype,
                                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return large ? wh_mc_redscat_c(fname, &nb, sendbuf, recvbuf, recvcounts_c, datatype, op, comm)
           : wh_mc_redscat_i(fname, &nb, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

static int body_Iscan(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_allred(fname, &nb, WH_RED_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Iexscan(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mc_allred(fname, &nb, WH_RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

#include "entry/coll_nbc.h"
