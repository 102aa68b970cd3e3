/* Nonblocking (MPI_Ineighbor_*) and persistent (MPI_Neighbor_*_init)
 * neighbourhood collectives with their large-count (_c) variants.  They check
 * their arguments like the blocking calls (the shared functions of
 * topo_nbr.c) and build one schedule group: every receive, then every send,
 * with the per-direction tag offsets of the blocking exchange
 * (wh_sched_neighbor, src/coll/neighbor.c). */
#include "mpi/coll_nbc.h"

/* ---------- nonblocking ---------- */

WH_API int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgather";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Ineighbor_allgather, PMPI_Ineighbor_allgather)

WH_API int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                      MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgather_c";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Ineighbor_allgather_c, PMPI_Ineighbor_allgather_c)

WH_API int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgatherv";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}
WH_ALIAS(MPI_Ineighbor_allgatherv, PMPI_Ineighbor_allgatherv)

WH_API int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgatherv_c";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}
WH_ALIAS(MPI_Ineighbor_allgatherv_c, PMPI_Ineighbor_allgatherv_c)

WH_API int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoall";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoall, PMPI_Ineighbor_alltoall)

WH_API int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoall_c";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoall_c, PMPI_Ineighbor_alltoall_c)

WH_API int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallv";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, sdispls, NULL, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, NULL, recvtype, NULL, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoallv, PMPI_Ineighbor_alltoallv)

WH_API int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallv_c";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, recvtype, NULL, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoallv_c, PMPI_Ineighbor_alltoallv_c)

WH_API int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                    MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallw";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, NULL, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, NULL, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoallw, PMPI_Ineighbor_alltoallw)

WH_API int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                      MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallw_c";
    WH_CHECK_INIT(fname);
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}
WH_ALIAS(MPI_Ineighbor_alltoallw_c, PMPI_Ineighbor_alltoallw_c)

/* ---------- persistent ---------- */

WH_API int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgather_init";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Neighbor_allgather_init, PMPI_Neighbor_allgather_init)

WH_API int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgather_init_c";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Neighbor_allgather_init_c, PMPI_Neighbor_allgather_init_c)

WH_API int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgatherv_init";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}
WH_ALIAS(MPI_Neighbor_allgatherv_init, PMPI_Neighbor_allgatherv_init)

WH_API int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgatherv_init_c";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}
WH_ALIAS(MPI_Neighbor_allgatherv_init_c, PMPI_Neighbor_allgatherv_init_c)

WH_API int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoall_init";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Neighbor_alltoall_init, PMPI_Neighbor_alltoall_init)

WH_API int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoall_init_c";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
WH_ALIAS(MPI_Neighbor_alltoall_init_c, PMPI_Neighbor_alltoall_init_c)

WH_API int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallv_init";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, sdispls, NULL, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, NULL, recvtype, NULL, comm);
}
WH_ALIAS(MPI_Neighbor_alltoallv_init, PMPI_Neighbor_alltoallv_init)

WH_API int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallv_init_c";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, recvtype, NULL, comm);
}
WH_ALIAS(MPI_Neighbor_alltoallv_init_c, PMPI_Neighbor_alltoallv_init_c)

WH_API int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallw_init";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, NULL, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, NULL, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}
WH_ALIAS(MPI_Neighbor_alltoallw_init, PMPI_Neighbor_alltoallw_init)

WH_API int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                          MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallw_init_c";
    WH_CHECK_INIT(fname);
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}
WH_ALIAS(MPI_Neighbor_alltoallw_init_c, PMPI_Neighbor_alltoallw_init_c)
