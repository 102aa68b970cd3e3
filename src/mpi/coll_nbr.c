/* Nonblocking (MPI_Ineighbor_*) and persistent (MPI_Neighbor_*_init)
 * neighbourhood collectives with their large-count (_c) variants.  They check
 * their arguments like the blocking calls (the shared functions of
 * topo_nbr.c) and build one schedule group: every receive, then every send,
 * with the per-direction tag offsets of the blocking exchange
 * (wh_sched_neighbor, src/coll/neighbor.c). */
#include "mpi/coll_nbc.h"

/* ---------- nonblocking ---------- */

static int body_Ineighbor_allgather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                    MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgatherv";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}

static int body_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_allgatherv_c";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_allgatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}

static int body_Ineighbor_alltoall(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Request *request)
{
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallv";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, sdispls, NULL, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, NULL, recvtype, NULL, comm);
}

static int body_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallv_c";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, recvtype, NULL, comm);
}

static int body_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                    MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallw";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, NULL, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, NULL, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

static int body_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                      MPI_Request *request)
{
    static const char fname[] = "MPI_Ineighbor_alltoallw_c";
    wh_nbc_t nb = {request, 0};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

/* ---------- persistent ---------- */

static int body_Neighbor_allgather_init(const char *fname, const void *sendbuf, MPI_Count sendcount,
                                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgather(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgatherv_init";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgatherv_i(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}

static int body_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_allgatherv_init_c";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_allgatherv_c(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                  comm);
}

static int body_Neighbor_alltoall_init(const char *fname, const void *sendbuf, MPI_Count sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoall(fname, &nb, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int body_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallv_init";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, sdispls, NULL, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, NULL, recvtype, NULL, comm);
}

static int body_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallv_init_c";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                                  rdispls, recvtype, NULL, comm);
}

static int body_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                        MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallw_init";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_i(fname, &nb, sendbuf, sendcounts, NULL, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, NULL, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

static int body_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                          const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                          MPI_Info info, MPI_Request *request)
{
    static const char fname[] = "MPI_Neighbor_alltoallw_init_c";
    WH_NBC_INFO(fname, info);
    wh_nbc_t nb = {request, 1};
    return wh_mn_nbr_alltoallvw_c(fname, &nb, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                  recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

#include "entry/coll_nbr.h"
