/* MPI_Get_hw_resource_info (MPI-4.1 11.4.2): the hardware this process runs
 * on, as far as wharf knows it.  Keys:
 *   mpi_hw_resource_type   "mpi_shared_memory": the one resource type
 *                          MPI_COMM_TYPE_RESOURCE_GUIDED splits on (the node
 *                          group of MPI_COMM_TYPE_SHARED)
 *   wharf_node_ranks       processes of the job in this process's node group
 *   wharf_cpus             CPUs in this process's affinity mask
 *   wharf_hostname         the host name */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "mpi/api.h"

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
