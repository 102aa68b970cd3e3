/* wharf's mpi-ext.h: the extension header Open MPI programs include to learn
 * whether device buffers may be passed to MPI calls.  As in Open MPI,
 * MPIX_CUDA_AWARE_SUPPORT says the library was built able to handle them;
 * MPIX_Query_cuda_support() says whether it does in this run (the CUDA driver
 * was loaded at MPI_Init; docs/GPU.md).  ROCm/HIP: not supported. */
#ifndef WHARF_MPI_EXT_H
#define WHARF_MPI_EXT_H

#include <mpi.h>

#define MPIX_CUDA_AWARE_SUPPORT 1
#define MPIX_ROCM_AWARE_SUPPORT 0

#endif
