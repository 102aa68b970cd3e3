/* Persistent collectives (MPI_*_init, MPI-4.1 chapter 6.13): the schedule is
 * built once, at the init call (which, like every collective, all ranks
 * make in the same order), and runs again at every MPI_Start/MPI_Startall;
 * MPI_Request_free releases it when the request is inactive.  The request
 * kind is the one of the nonblocking collectives (coll_nbc.c). */
#include "mpi/coll_nbc.h"

static int body_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Barrier_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_barrier("MPI_Barrier_init", &nb, comm);
}

static int body_Bcast_init(const char *fname, void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_bcast(fname, &nb, buffer, count, datatype, root, comm);
}

static int body_Reduce_init(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_reduce(fname, &nb, sendbuf, recvbuf, count, datatype, op, root, comm);
}

static int body_Allreduce_init(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred(fname, &nb, WH_RED_ALL, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Gather_init(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
}

static int body_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Gatherv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gatherv_i("MPI_Gatherv_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, root, comm);
}

static int body_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Gatherv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gatherv_c("MPI_Gatherv_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, root, comm);
}

static int body_Scatter_init(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatter(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}

static int body_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Scatterv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatterv_i("MPI_Scatterv_init", &nb, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                            recvtype, root, comm);
}

static int body_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Scatterv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatterv_c("MPI_Scatterv_init_c", &nb, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                            recvtype, root, comm);
}

static int body_Allgather_init(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm);
}

static int body_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Allgatherv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgatherv_i("MPI_Allgatherv_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm);
}

static int body_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Allgatherv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgatherv_c("MPI_Allgatherv_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm);
}

static int body_Alltoall_init(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Alltoallv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallv_i("MPI_Alltoallv_init", &nb, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}

static int body_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    WH_NBC_INFO("MPI_Alltoallv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallv_c("MPI_Alltoallv_init_c", &nb, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}

static int body_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    WH_NBC_INFO("MPI_Alltoallw_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallw_i("MPI_Alltoallw_init", &nb, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm);
}

static int body_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Alltoallw_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallw_c("MPI_Alltoallw_init_c", &nb, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                             recvcounts, rdispls, recvtypes, comm);
}

static int body_Reduce_scatter_block_init(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_block(fname, &nb, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

static int body_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO("MPI_Reduce_scatter_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_i("MPI_Reduce_scatter_init", &nb, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

static int body_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request)
{
    WH_NBC_INFO("MPI_Reduce_scatter_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_c("MPI_Reduce_scatter_init_c", &nb, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

static int body_Scan_init(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred(fname, &nb, WH_RED_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Exscan_init(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred(fname, &nb, WH_RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

#include "entry/coll_persist.h"
