/* The CUDA memory kind: device pointers recognized through the driver's
 * pointer attributes, copies between host and device memory through the
 * driver.  The driver is loaded at MPI_Init (WHARF_CUDA=auto|0|1); without
 * it nothing is registered and the host path is unchanged. */
#ifndef WH_MEM_CUDA_WH_CUDA_H
#define WH_MEM_CUDA_WH_CUDA_H
#include <stddef.h>
#include <stdint.h>

#include "mem/cuda/cuda_abi.h"

/* Load the driver (per WHARF_CUDA) and register WH_MEM_CUDA. */
int wh_cuda_init(void);
void wh_cuda_finalize(void);
/* 1 once the driver is loaded and initialized; devices it reports */
extern int wh_cuda_on, wh_cuda_ndev;

/* the driver's entry points, filled by wh_cuda_init */
typedef struct wh_cuda_fns {
#define WH_CUDA_PFN(name, params) wh_CUresult (*name) params;
    WH_CUDA_FNS(WH_CUDA_PFN)
    WH_CUDA_FNS_VMM(WH_CUDA_PFN) /* NULL when the driver lacks them */
    WH_CUDA_FNS_OPT(WH_CUDA_PFN)
#undef WH_CUDA_PFN
} wh_cuda_fns_t;
extern wh_cuda_fns_t wh_cu;

/* Name of a CUresult (for messages). */
const char *wh_cuda_errname(wh_CUresult rc);
/* The GPU this rank uses, for the locality report: "G=UUID;B=PCI;V=UUID:R,..."
 * with the device of the current context (else the only visible one, else
 * "-") and every visible GPU's relation to it (s itself, p peer-capable, v
 * visible without peer access).  Empty without a driver. */
void wh_cuda_describe(char *out, size_t len);
/* Make a context current on this thread if none is (the context of the
 * device memory at p); returns a CUresult. */
wh_CUresult wh_cuda_ctx_for(const void *p);

/* ---- asynchronous copies (the device-buffer pipeline) ---- */
/* Issue a copy of n bytes on wharf's stream and record ev after it; a
 * CUresult (an error: nothing was queued, the caller copies synchronously). */
wh_CUresult wh_cuda_copy_async(void *dst, int dk, const void *src, int sk, size_t n, wh_CUevent ev);
wh_CUresult wh_cuda_event_new(wh_CUevent *e);
/* 1 when the driver has what asynchronous copies need (WH_CUDA_FNS_OPT) */
int wh_cuda_async_on(void);
/* 1 when the work before the event is done, 0 not yet, < 0 an error (-CUresult) */
int wh_cuda_event_done(wh_CUevent e);
/* Largest copy made through GDRCopy: [0] device to host, [1] host to device
 * (from the tunables; the coordinator sets them from the switch points of
 * the peer a message is decided for) */
extern size_t wh_cuda_gdr_max[2];

/* ---- the pointer-kind cache (kcache.c) ---- */
/* Set up for the loaded driver lib (on only when it reports allocation
 * events and WHARF_CUDA_KCACHE=1). */
void wh_cuda_kcache_init(void *lib);
void wh_cuda_kcache_finalize(void);
int wh_cuda_kcache_on(void);
/* 1 if p is device memory (the driver's answer, cached) */
int wh_cuda_owns_cached(const void *p);
extern uint64_t wh_cuda_kc_hits, wh_cuda_kc_misses;
/* count of frees the driver reported (0 forever without events) */
uint64_t wh_cuda_kcache_freegen(void);

/* ---- GDRCopy for small copies (gdr.c) ---- */
void wh_cuda_gdr_init(void);
void wh_cuda_gdr_finalize(void);
int wh_cuda_gdr_on(void);
/* copy through a GDRCopy mapping: 0 done, 1 not possible (use the driver) */
int wh_cuda_gdr_copy(void *dst, int dk, const void *src, int sk, size_t n);
extern uint64_t wh_cuda_gdr_copies;

/* ---- CUDA IPC between co-resident ranks (ipc.c) ---- */
/* What a sender publishes so a co-resident receiver can map its device buffer. */
enum { WH_CUDA_IPC_LEGACY = 0, WH_CUDA_IPC_VMM = 1 };
typedef struct wh_cuda_ipc {
    wh_CUipcMemHandle handle; /* LEGACY: of the allocation containing the buffer */
    uint64_t id;              /* the allocation's buffer id (never reused by the driver) */
    uint64_t offset;          /* of the buffer in the allocation (VMM: in the mapping) */
    uint64_t size;            /* VMM: bytes of the sender's mapping */
    uint32_t scheme;          /* WH_CUDA_IPC_* */
    uint32_t pad;
} wh_cuda_ipc_t;
/* Describe device buffer p (0 or an MPI error code): a legacy IPC handle,
 * or for memory mapped with cuMemMap from an allocation made exportable as
 * a POSIX file descriptor, a VMM description (WHARF_CUDA_IPC_SCHEME picks). */
int wh_cuda_ipc_export(const void *p, wh_cuda_ipc_t *out);
/* Map the buffer a peer exported (cached per peer and allocation): *p is its
 * address here; returns a CUresult (the caller falls back on failure). */
wh_CUresult wh_cuda_ipc_import(int wpeer, const wh_cuda_ipc_t *in, void **p);
void wh_cuda_ipc_finalize(void);

/* ---- the VMM file-descriptor scheme (vmm.c) ----
 * The sender exports the cuMemCreate allocation behind its buffer as a file
 * descriptor and serves it, on request, over a Unix socket (SCM_RIGHTS) from a
 * small thread; the receiver connects, imports the descriptor, maps it and
 * copies device to device.  The socket is a file in the node directory (ranks
 * that share the node region reach it, in any PID namespace) and an abstract
 * socket (ranks sharing a network namespace reach it).  Set up once the job's
 * nonce is known; off until then. */
void wh_cuda_vmm_setup(const char *dir, uint64_t nonce);
int wh_cuda_vmm_on(void);
/* 0, or a CUresult: p is not exportable this way */
wh_CUresult wh_cuda_vmm_export(const void *p, wh_cuda_ipc_t *out);
wh_CUresult wh_cuda_vmm_import(int wpeer, const wh_cuda_ipc_t *in, void **p);
void wh_cuda_vmm_finalize(void);
/* the NUMA node closest to GPU d (the driver's answer, else sysfs), -1 unknown */
int wh_cuda_numa(int d);
#endif
