/* The CUDA memory kind: device pointers recognized through the driver's
 * pointer attributes, copies between host and device memory through the
 * driver.  The driver is loaded at MPI_Init (WHARF_CUDA=auto|0|1); without
 * it nothing is registered and the host path is unchanged. */
#ifndef WH_MEM_CUDA_WH_CUDA_H
#define WH_MEM_CUDA_WH_CUDA_H
#include <stddef.h>

#include "mem/cuda/cuda_abi.h"

/* Load the driver (per WHARF_CUDA) and register WH_MEM_CUDA. */
int wh_cuda_init(void);
void wh_cuda_finalize(void);
/* 1 once the driver is loaded and initialized */
extern int wh_cuda_on;

/* the driver's entry points, filled by wh_cuda_init */
typedef struct wh_cuda_fns {
#define WH_CUDA_PFN(name, params) wh_CUresult (*name) params;
    WH_CUDA_FNS(WH_CUDA_PFN)
#undef WH_CUDA_PFN
} wh_cuda_fns_t;
extern wh_cuda_fns_t wh_cu;

/* Name of a CUresult (for messages). */
const char *wh_cuda_errname(wh_CUresult rc);
/* Make a context current on this thread if none is (the context of the
 * device memory at p); returns a CUresult. */
wh_CUresult wh_cuda_ctx_for(const void *p);
#endif
