/* Persistent collectives (MPI_*_init, MPI-4.1 chapter 6.13): the schedule is
 * built once, at the init call (which, like every collective, all ranks
 * make in the same order), and runs again at every MPI_Start/MPI_Startall;
 * MPI_Request_free releases it when the request is inactive.  The request
 * kind is the one of the nonblocking collectives (coll_nbc.c). */
#include "mpi/coll_nbc.h"

WH_API int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Barrier_init");
    WH_NBC_INFO("MPI_Barrier_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_barrier("MPI_Barrier_init", &nb, comm);
}
WH_ALIAS(MPI_Barrier_init, PMPI_Barrier_init)

WH_API int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Bcast_init");
    WH_NBC_INFO("MPI_Bcast_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_bcast("MPI_Bcast_init", &nb, buffer, count, datatype, root, comm);
}
WH_ALIAS(MPI_Bcast_init, PMPI_Bcast_init)

WH_API int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Bcast_init_c");
    WH_NBC_INFO("MPI_Bcast_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_bcast("MPI_Bcast_init_c", &nb, buffer, count, datatype, root, comm);
}
WH_ALIAS(MPI_Bcast_init_c, PMPI_Bcast_init_c)

WH_API int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_init");
    WH_NBC_INFO("MPI_Reduce_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_reduce("MPI_Reduce_init", &nb, sendbuf, recvbuf, count, datatype, op, root, comm);
}
WH_ALIAS(MPI_Reduce_init, PMPI_Reduce_init)

WH_API int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_init_c");
    WH_NBC_INFO("MPI_Reduce_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_reduce("MPI_Reduce_init_c", &nb, sendbuf, recvbuf, count, datatype, op, root, comm);
}
WH_ALIAS(MPI_Reduce_init_c, PMPI_Reduce_init_c)

WH_API int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allreduce_init");
    WH_NBC_INFO("MPI_Allreduce_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Allreduce_init", &nb, WH_RED_ALL, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Allreduce_init, PMPI_Allreduce_init)

WH_API int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allreduce_init_c");
    WH_NBC_INFO("MPI_Allreduce_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Allreduce_init_c", &nb, WH_RED_ALL, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Allreduce_init_c, PMPI_Allreduce_init_c)

WH_API int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Gather_init");
    WH_NBC_INFO("MPI_Gather_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gather("MPI_Gather_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
}
WH_ALIAS(MPI_Gather_init, PMPI_Gather_init)

WH_API int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Gather_init_c");
    WH_NBC_INFO("MPI_Gather_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gather("MPI_Gather_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
}
WH_ALIAS(MPI_Gather_init_c, PMPI_Gather_init_c)

WH_API int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Gatherv_init");
    WH_NBC_INFO("MPI_Gatherv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gatherv_i("MPI_Gatherv_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, root, comm);
}
WH_ALIAS(MPI_Gatherv_init, PMPI_Gatherv_init)

WH_API int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Gatherv_init_c");
    WH_NBC_INFO("MPI_Gatherv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_gatherv_c("MPI_Gatherv_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, root, comm);
}
WH_ALIAS(MPI_Gatherv_init_c, PMPI_Gatherv_init_c)

WH_API int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scatter_init");
    WH_NBC_INFO("MPI_Scatter_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatter("MPI_Scatter_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}
WH_ALIAS(MPI_Scatter_init, PMPI_Scatter_init)

WH_API int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scatter_init_c");
    WH_NBC_INFO("MPI_Scatter_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatter("MPI_Scatter_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         comm);
}
WH_ALIAS(MPI_Scatter_init_c, PMPI_Scatter_init_c)

WH_API int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scatterv_init");
    WH_NBC_INFO("MPI_Scatterv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatterv_i("MPI_Scatterv_init", &nb, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                            recvtype, root, comm);
}
WH_ALIAS(MPI_Scatterv_init, PMPI_Scatterv_init)

WH_API int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                                MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scatterv_init_c");
    WH_NBC_INFO("MPI_Scatterv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_scatterv_c("MPI_Scatterv_init_c", &nb, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                            recvtype, root, comm);
}
WH_ALIAS(MPI_Scatterv_init_c, PMPI_Scatterv_init_c)

WH_API int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allgather_init");
    WH_NBC_INFO("MPI_Allgather_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgather("MPI_Allgather_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm);
}
WH_ALIAS(MPI_Allgather_init, PMPI_Allgather_init)

WH_API int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allgather_init_c");
    WH_NBC_INFO("MPI_Allgather_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgather("MPI_Allgather_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                           comm);
}
WH_ALIAS(MPI_Allgather_init_c, PMPI_Allgather_init_c)

WH_API int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allgatherv_init");
    WH_NBC_INFO("MPI_Allgatherv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgatherv_i("MPI_Allgatherv_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm);
}
WH_ALIAS(MPI_Allgatherv_init, PMPI_Allgatherv_init)

WH_API int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Allgatherv_init_c");
    WH_NBC_INFO("MPI_Allgatherv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allgatherv_c("MPI_Allgatherv_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                              recvtype, comm);
}
WH_ALIAS(MPI_Allgatherv_init_c, PMPI_Allgatherv_init_c)

WH_API int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoall_init");
    WH_NBC_INFO("MPI_Alltoall_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoall("MPI_Alltoall_init", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Alltoall_init, PMPI_Alltoall_init)

WH_API int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoall_init_c");
    WH_NBC_INFO("MPI_Alltoall_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoall("MPI_Alltoall_init_c", &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm);
}
WH_ALIAS(MPI_Alltoall_init_c, PMPI_Alltoall_init_c)

WH_API int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoallv_init");
    WH_NBC_INFO("MPI_Alltoallv_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallv_i("MPI_Alltoallv_init", &nb, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}
WH_ALIAS(MPI_Alltoallv_init, PMPI_Alltoallv_init)

WH_API int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoallv_init_c");
    WH_NBC_INFO("MPI_Alltoallv_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallv_c("MPI_Alltoallv_init_c", &nb, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm);
}
WH_ALIAS(MPI_Alltoallv_init_c, PMPI_Alltoallv_init_c)

WH_API int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                               const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoallw_init");
    WH_NBC_INFO("MPI_Alltoallw_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallw_i("MPI_Alltoallw_init", &nb, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm);
}
WH_ALIAS(MPI_Alltoallw_init, PMPI_Alltoallw_init)

WH_API int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                 const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Alltoallw_init_c");
    WH_NBC_INFO("MPI_Alltoallw_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_alltoallw_c("MPI_Alltoallw_init_c", &nb, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                             recvcounts, rdispls, recvtypes, comm);
}
WH_ALIAS(MPI_Alltoallw_init_c, PMPI_Alltoallw_init_c)

WH_API int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_scatter_block_init");
    WH_NBC_INFO("MPI_Reduce_scatter_block_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_block("MPI_Reduce_scatter_block_init", &nb, sendbuf, recvbuf, recvcount, datatype, op, comm);
}
WH_ALIAS(MPI_Reduce_scatter_block_init, PMPI_Reduce_scatter_block_init)

WH_API int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                            MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_scatter_block_init_c");
    WH_NBC_INFO("MPI_Reduce_scatter_block_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_block("MPI_Reduce_scatter_block_init_c", &nb, sendbuf, recvbuf, recvcount, datatype, op,
                               comm);
}
WH_ALIAS(MPI_Reduce_scatter_block_init_c, PMPI_Reduce_scatter_block_init_c)

WH_API int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_scatter_init");
    WH_NBC_INFO("MPI_Reduce_scatter_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_i("MPI_Reduce_scatter_init", &nb, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
WH_ALIAS(MPI_Reduce_scatter_init, PMPI_Reduce_scatter_init)

WH_API int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Reduce_scatter_init_c");
    WH_NBC_INFO("MPI_Reduce_scatter_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_redscat_c("MPI_Reduce_scatter_init_c", &nb, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
WH_ALIAS(MPI_Reduce_scatter_init_c, PMPI_Reduce_scatter_init_c)

WH_API int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scan_init");
    WH_NBC_INFO("MPI_Scan_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Scan_init", &nb, WH_RED_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Scan_init, PMPI_Scan_init)

WH_API int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Scan_init_c");
    WH_NBC_INFO("MPI_Scan_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Scan_init_c", &nb, WH_RED_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Scan_init_c, PMPI_Scan_init_c)

WH_API int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Exscan_init");
    WH_NBC_INFO("MPI_Exscan_init", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Exscan_init", &nb, WH_RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Exscan_init, PMPI_Exscan_init)

WH_API int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_CHECK_INIT("MPI_Exscan_init_c");
    WH_NBC_INFO("MPI_Exscan_init_c", info);
    wh_nbc_t nb = {request, 1};
    return wh_mc_allred("MPI_Exscan_init_c", &nb, WH_RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}
WH_ALIAS(MPI_Exscan_init_c, PMPI_Exscan_init_c)
