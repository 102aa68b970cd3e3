/* MPI_Get_hw_resource_info (MPI-4.1 11.4.2): the hardware this process runs
 * on, as far as wharf knows it.  Keys:
 *   mpi_hw_resource_type   "mpi_shared_memory": the one resource type
 *                          MPI_COMM_TYPE_RESOURCE_GUIDED splits on (the node
 *                          group of MPI_COMM_TYPE_SHARED)
 *   wharf_node_ranks       processes of the job in this process's node group
 *   wharf_cpus             CPUs in this process's affinity mask
 *   wharf_hostname         the host name
 *
 * Also MPICH's (and Open MPI's) run-time queries for device-buffer support:
 * MPIX_GPU_query_support, MPIX_Query_cuda_support and the HIP and Level
 * Zero ones.  CUDA support means a device buffer given to any MPI call is
 * recognized: the CUDA driver was loaded at MPI_Init (WHARF_CUDA).  HIP and
 * Level Zero buffers are never recognized. */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "mpi/api.h"
#include "mem/cuda/wh_cuda.h"

WH_API int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    static const char fname[] = "MPI_Get_hw_resource_info";
    WH_CHECK_INIT(fname);
    if (!hw_info)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "hw_info is NULL"));
    cpu_set_t set;
    int ncpu = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        ncpu = CPU_COUNT(&set);
    if (ncpu <= 0)
        ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    char nranks[16], cpus[16];
    snprintf(nranks, sizeof nranks, "%d", wh_job.local_size);
    snprintf(cpus, sizeof cpus, "%d", ncpu);
    MPI_Info inf;
    int rc = wh_info_new(&inf);
    if (rc == MPI_SUCCESS && !(rc = wh_info_put(inf, "mpi_hw_resource_type", "mpi_shared_memory")) &&
        !(rc = wh_info_put(inf, "wharf_node_ranks", nranks)) && !(rc = wh_info_put(inf, "wharf_cpus", cpus)))
        rc = wh_info_put(inf, "wharf_hostname", wh_job.hostname);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(NULL, fname, rc);
    *hw_info = inf;
    return MPI_SUCCESS;
}
WH_ALIAS(MPI_Get_hw_resource_info, PMPI_Get_hw_resource_info)

WH_API int PMPIX_GPU_query_support(int gpu_type, int *is_supported)
{
    static const char fname[] = "MPIX_GPU_query_support";
    if (!is_supported)
        return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_ARG, "is_supported is NULL"));
    switch (gpu_type) {
    case MPIX_GPU_SUPPORT_CUDA:
        *is_supported = wh_cuda_on;
        return MPI_SUCCESS;
    case MPIX_GPU_SUPPORT_ZE:
    case MPIX_GPU_SUPPORT_HIP:
        *is_supported = 0;
        return MPI_SUCCESS;
    default:
        return wh_raise_comm(NULL, fname,
                             wh_error(MPI_ERR_ARG,
                                      "gpu_type %d is none of MPIX_GPU_SUPPORT_CUDA (%d), _ZE (%d) or _HIP (%d)",
                                      gpu_type, MPIX_GPU_SUPPORT_CUDA, MPIX_GPU_SUPPORT_ZE, MPIX_GPU_SUPPORT_HIP));
    }
}
WH_ALIAS(MPIX_GPU_query_support, PMPIX_GPU_query_support)

WH_API int PMPIX_Query_cuda_support(void)
{
    return wh_cuda_on;
}
WH_ALIAS(MPIX_Query_cuda_support, PMPIX_Query_cuda_support)

WH_API int PMPIX_Query_hip_support(void)
{
    return 0;
}
WH_ALIAS(MPIX_Query_hip_support, PMPIX_Query_hip_support)

WH_API int PMPIX_Query_ze_support(void)
{
    return 0;
}
WH_ALIAS(MPIX_Query_ze_support, PMPIX_Query_ze_support)
