/* CUDA IPC between co-resident ranks: the sender exports the allocation
 * holding its device buffer (a legacy IPC handle + the buffer's offset, or
 * for cuMemCreate memory a VMM file descriptor served over a Unix socket,
 * vmm.c), the receiver maps it once per (peer, allocation) and copies device
 * to device.
 * Mappings are cached (the driver never reuses a buffer id, so an entry can
 * go stale but never wrong) and closed when evicted or at finalize. */
#include <mpi.h>
#include <string.h>

#include "core/err.h"
#include "mem/cuda/wh_cuda.h"
#include "util/log.h"
#include "util/tunables.h"

#define IPC_CACHE 64
static struct {
    int wpeer; /* -1: free */
    uint64_t id;
    wh_CUdeviceptr base;
} cache[IPC_CACHE];
static int cache_init, cache_next;

static int legacy_export(const void *p, wh_cuda_ipc_t *out);

int wh_cuda_ipc_export(const void *p, wh_cuda_ipc_t *out)
{
    const char *sch = wh_tun.cuda_ipc_scheme;
    int legacy = strcmp(sch, "vmm") != 0, vmm = strcmp(sch, "legacy") != 0;
    memset(out, 0, sizeof *out);
    if (legacy && legacy_export(p, out) == MPI_SUCCESS)
        return MPI_SUCCESS;
    wh_CUresult rc = vmm ? wh_cuda_vmm_export(p, out) : WH_CUDA_ERROR_NOT_SUPPORTED;
    if (rc != WH_CUDA_SUCCESS)
        return wh_error(MPI_ERR_OTHER, "CUDA IPC: cannot export device buffer %p (WHARF_CUDA_IPC_SCHEME=%s): %s", p,
                        sch, wh_cuda_errname(rc));
    return MPI_SUCCESS;
}

static int legacy_export(const void *p, wh_cuda_ipc_t *out)
{
    wh_CUdeviceptr base = 0;
    size_t size = 0;
    unsigned long long id = 0;
    wh_CUdeviceptr dp = (wh_CUdeviceptr)(uintptr_t)p;
    wh_CUresult rc = wh_cu.cuMemGetAddressRange(&base, &size, dp);
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuPointerGetAttribute(&id, WH_CU_POINTER_ATTRIBUTE_BUFFER_ID, base);
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuIpcGetMemHandle(&out->handle, base);
    if (rc != WH_CUDA_SUCCESS)
        return MPI_ERR_OTHER; /* e.g. cuMemMap memory: the VMM scheme may take it */
    out->scheme = WH_CUDA_IPC_LEGACY;
    out->id = id;
    out->offset = dp - base;
    return MPI_SUCCESS;
}

wh_CUresult wh_cuda_ipc_import(int wpeer, const wh_cuda_ipc_t *in, void **p)
{
    if (in->scheme == WH_CUDA_IPC_VMM)
        return wh_cuda_vmm_import(wpeer, in, p);
    if (!cache_init) {
        for (int i = 0; i < IPC_CACHE; i++)
            cache[i].wpeer = -1;
        cache_init = 1;
    }
    for (int i = 0; i < IPC_CACHE; i++)
        if (cache[i].wpeer == wpeer && cache[i].id == in->id) {
            *p = (void *)(uintptr_t)(cache[i].base + in->offset);
            return WH_CUDA_SUCCESS;
        }
    /* the mapping lands in the current context: make sure there is one */
    wh_CUcontext cur = NULL;
    wh_CUresult rc = wh_cu.cuCtxGetCurrent(&cur);
    if (rc == WH_CUDA_SUCCESS && !cur) {
        wh_CUdevice dev = 0;
        wh_CUcontext c = NULL;
        rc = wh_cu.cuDeviceGet(&dev, 0);
        if (rc == WH_CUDA_SUCCESS)
            rc = wh_cu.cuDevicePrimaryCtxRetain(&c, dev);
        if (rc == WH_CUDA_SUCCESS)
            rc = wh_cu.cuCtxSetCurrent(c);
    }
    wh_CUdeviceptr base = 0;
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuIpcOpenMemHandle(&base, in->handle, WH_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    if (rc != WH_CUDA_SUCCESS)
        return rc;
    int slot = cache_next;
    cache_next = (cache_next + 1) % IPC_CACHE;
    if (cache[slot].wpeer >= 0)
        wh_cu.cuIpcCloseMemHandle(cache[slot].base); /* copies are synchronous: nothing in flight */
    cache[slot].wpeer = wpeer;
    cache[slot].id = in->id;
    cache[slot].base = base;
    WH_DEBUG("cuda", "CUDA IPC: mapped buffer %llu of rank %d", (unsigned long long)in->id, wpeer);
    *p = (void *)(uintptr_t)(base + in->offset);
    return WH_CUDA_SUCCESS;
}

void wh_cuda_ipc_finalize(void)
{
    if (!cache_init)
        return;
    for (int i = 0; i < IPC_CACHE; i++)
        if (cache[i].wpeer >= 0) {
            wh_cu.cuIpcCloseMemHandle(cache[i].base);
            cache[i].wpeer = -1;
        }
}
