/* The CUDA memory kind (see wh_cuda.h).  Loaded exactly as a real driver
 * would be: dlopen("libcuda.so.1"), then cuGetProcAddress for every entry
 * point, at the API version wharf is written for. */
#include <ctype.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "mem/cuda/wh_cuda.h"
#include "mem/mem.h"
#include "util/log.h"
#include "util/tunables.h"

int wh_cuda_on, wh_cuda_ndev;
wh_cuda_fns_t wh_cu;
static void *lib;
/* wharf's own stream for staging copies (created on the first copy, in the
 * context current then), so its copies never wait for the application's
 * work on the legacy default stream */
static wh_CUstream copy_stream;
static wh_CUcontext copy_ctx;

const char *wh_cuda_errname(wh_CUresult rc)
{
    const char *s = NULL;
    if (wh_cu.cuGetErrorName && wh_cu.cuGetErrorName(rc, &s) == WH_CUDA_SUCCESS && s)
        return s;
    return "unknown CUDA error";
}

wh_CUresult wh_cuda_ctx_for(const void *p)
{
    wh_CUcontext cur = NULL, c = NULL;
    wh_CUresult rc = wh_cu.cuCtxGetCurrent(&cur);
    if (rc != WH_CUDA_SUCCESS || cur)
        return rc;
    rc = wh_cu.cuPointerGetAttribute(&c, WH_CU_POINTER_ATTRIBUTE_CONTEXT, (wh_CUdeviceptr)(uintptr_t)p);
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuCtxSetCurrent(c);
    return rc;
}

/* Device memory is what the driver reports as CU_MEMORYTYPE_DEVICE; pinned
 * host memory is host memory (the CPU reaches it). */
static int cuda_owns(const void *p)
{
    return wh_cuda_owns_cached(p); /* kcache.c: the driver's answer, cached */
}

size_t wh_cuda_gdr_max[2];

/* wharf's stream in the context current now (made the context of device
 * memory dev if none is); NULL with *rc set when it cannot be had, or when
 * another context than the stream's is current (the caller copies
 * synchronously then). */
static wh_CUstream stream_get(const void *dev, wh_CUresult *rc)
{
    wh_CUcontext cur = NULL;
    *rc = wh_cuda_ctx_for(dev);
    if (*rc == WH_CUDA_SUCCESS)
        *rc = wh_cu.cuCtxGetCurrent(&cur);
    if (*rc != WH_CUDA_SUCCESS || !cur)
        return NULL;
    if (!copy_stream) {
        if (wh_cu.cuStreamCreate(&copy_stream, WH_CU_STREAM_NON_BLOCKING) == WH_CUDA_SUCCESS)
            copy_ctx = cur;
        else
            copy_stream = NULL;
    }
    return copy_stream && cur == copy_ctx ? copy_stream : NULL;
}

static int cuda_copy(void *dst, int dk, const void *src, int sk, size_t n)
{
    if (!n)
        return MPI_SUCCESS;
    if (n <= wh_cuda_gdr_max[dk == WH_MEM_CUDA] && wh_cuda_gdr_on() && !wh_cuda_gdr_copy(dst, dk, src, sk, n))
        return MPI_SUCCESS; /* small: through a GDRCopy mapping */
    wh_CUresult rc;
    wh_CUstream st = stream_get(dk == WH_MEM_CUDA ? dst : src, &rc);
    if (rc == WH_CUDA_SUCCESS) {
        wh_CUdeviceptr d = (wh_CUdeviceptr)(uintptr_t)dst, s = (wh_CUdeviceptr)(uintptr_t)src;
        if (st) {
            rc = wh_cu.cuMemcpyAsync(d, s, n, st);
            if (rc == WH_CUDA_SUCCESS)
                rc = wh_cu.cuStreamSynchronize(st);
            if (rc == WH_CUDA_ERROR_OUT_OF_MEMORY) { /* no memory for the asynchronous copy: the synchronous one */
                static int warned;
                if (!warned++)
                    WH_WARN("cuda", "an asynchronous copy of %zu bytes ran out of memory (%s): copies that do so are "
                                    "retried synchronously (slower)", n, wh_cuda_errname(rc));
                rc = wh_cu.cuMemcpy(d, s, n);
            }
        } else {
            rc = wh_cu.cuMemcpy(d, s, n); /* another context: the synchronous copy */
        }
    }
    if (rc != WH_CUDA_SUCCESS)
        return wh_error(MPI_ERR_OTHER, "CUDA copy of %zu bytes (%s to %s memory) failed: %s", n,
                        sk == WH_MEM_CUDA ? "device" : "host", dk == WH_MEM_CUDA ? "device" : "host",
                        wh_cuda_errname(rc));
    return MPI_SUCCESS;
}

int wh_cuda_async_on(void)
{
    return wh_cu.cuMemcpyDtoHAsync && wh_cu.cuMemcpyHtoDAsync && wh_cu.cuEventCreate && wh_cu.cuEventDestroy &&
           wh_cu.cuEventRecord && wh_cu.cuEventQuery;
}

wh_CUresult wh_cuda_copy_async(void *dst, int dk, const void *src, int sk, size_t n, wh_CUevent ev)
{
    wh_CUresult rc;
    wh_CUstream st = stream_get(dk == WH_MEM_CUDA ? dst : src, &rc);
    if (!st)
        return rc == WH_CUDA_SUCCESS ? WH_CUDA_ERROR_INVALID_VALUE : rc;
    if (dk == WH_MEM_CUDA && sk == WH_MEM_HOST)
        rc = wh_cu.cuMemcpyHtoDAsync((wh_CUdeviceptr)(uintptr_t)dst, src, n, st);
    else if (dk == WH_MEM_HOST && sk == WH_MEM_CUDA)
        rc = wh_cu.cuMemcpyDtoHAsync(dst, (wh_CUdeviceptr)(uintptr_t)src, n, st);
    else
        rc = wh_cu.cuMemcpyAsync((wh_CUdeviceptr)(uintptr_t)dst, (wh_CUdeviceptr)(uintptr_t)src, n, st);
    if (rc == WH_CUDA_SUCCESS)
        rc = wh_cu.cuEventRecord(ev, st);
    return rc;
}

wh_CUresult wh_cuda_event_new(wh_CUevent *e)
{
    return wh_cu.cuEventCreate(e, WH_CU_EVENT_DISABLE_TIMING);
}

int wh_cuda_event_done(wh_CUevent e)
{
    wh_CUresult rc = wh_cu.cuEventQuery(e);
    return rc == WH_CUDA_SUCCESS ? 1 : rc == WH_CUDA_ERROR_NOT_READY ? 0 : -rc;
}

static const wh_mem_ops_t cuda_ops = {.name = "cuda", .owns = cuda_owns, .copy = cuda_copy};

/* WHARF_CUDA=1 makes every failure fatal; auto logs it and stays host-only */
static int give_up(int required, const char *fmt, const char *what)
{
    if (required)
        return wh_error(MPI_ERR_OTHER, fmt, what);
    WH_DEBUG("cuda", fmt, what);
    if (lib)
        dlclose(lib);
    lib = NULL;
    memset(&wh_cu, 0, sizeof wh_cu);
    return MPI_SUCCESS;
}

int wh_cuda_init(void)
{
    const char *mode = wh_tun.cuda;
    if (!strcmp(mode, "0"))
        return MPI_SUCCESS;
    int required = !strcmp(mode, "1");
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return give_up(required, "WHARF_CUDA: no CUDA driver: %s; device buffers are not recognized", dlerror());
    wh_pfn_cuGetProcAddress gpa = (wh_pfn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress_v2");
    if (!gpa)
        return give_up(required, "WHARF_CUDA: %s has no cuGetProcAddress_v2 (a CUDA 12 driver is needed)",
                       "libcuda.so.1");
#define WH_CUDA_LOAD(name, params)                                                                                     \
    {                                                                                                                  \
        void *fn = NULL;                                                                                               \
        int st = 0;                                                                                                    \
        if (gpa(#name, &fn, WH_CUDA_VERSION, 0, &st) != WH_CUDA_SUCCESS || !fn)                                        \
            return give_up(required, "WHARF_CUDA: the CUDA driver has no %s", #name);                                  \
        memcpy(&wh_cu.name, &fn, sizeof fn);                                                                           \
    }
    WH_CUDA_FNS(WH_CUDA_LOAD)
#undef WH_CUDA_LOAD
#define WH_CUDA_LOAD_OPT(name, params)                                                                                 \
    {                                                                                                                  \
        void *fn = NULL;                                                                                               \
        int st = 0;                                                                                                    \
        if (gpa(#name, &fn, WH_CUDA_VERSION, 0, &st) != WH_CUDA_SUCCESS)                                               \
            fn = NULL;                                                                                                 \
        memcpy(&wh_cu.name, &fn, sizeof fn);                                                                           \
    }
    WH_CUDA_FNS_VMM(WH_CUDA_LOAD_OPT)
    WH_CUDA_FNS_OPT(WH_CUDA_LOAD_OPT)
#undef WH_CUDA_LOAD_OPT
    wh_CUresult rc = wh_cu.cuInit(0);
    if (rc != WH_CUDA_SUCCESS)
        return give_up(required, "WHARF_CUDA: cuInit failed: %s; device buffers are not recognized",
                       wh_cuda_errname(rc));
    int ndev = 0, ver = 0;
    wh_cu.cuDeviceGetCount(&ndev);
    wh_cu.cuDriverGetVersion(&ver);
    wh_cuda_kcache_init(lib);
    wh_cuda_gdr_max[0] = wh_tun.cuda_gdr_d2h_max;
    wh_cuda_gdr_max[1] = wh_tun.cuda_gdr_h2d_max;
    wh_cuda_gdr_init();
    int err = wh_mem_register(WH_MEM_CUDA, &cuda_ops);
    if (err != MPI_SUCCESS)
        return err;
    wh_cuda_on = 1;
    wh_cuda_ndev = ndev;
    WH_DEBUG("cuda", "CUDA driver %d.%d loaded: %d device(s) visible; pointer-kind cache %s", ver / 1000,
             ver % 1000 / 10, ndev, wh_cuda_kcache_on() ? "on" : "off (no allocation events from the driver)");
    return MPI_SUCCESS;
}

void wh_cuda_finalize(void)
{
    if (!wh_cuda_on)
        return;
    wh_cuda_ipc_finalize();
    wh_cuda_vmm_finalize();
    wh_cuda_gdr_finalize();
    if (copy_stream)
        wh_cu.cuStreamDestroy(copy_stream);
    copy_stream = NULL;
    copy_ctx = NULL;
    wh_mem_unregister(WH_MEM_CUDA);
    wh_cuda_kcache_finalize();
    wh_cuda_on = 0;
    /* the library stays loaded: the application may still use the driver */
}

static void uuid_hex(const wh_CUuuid *u, char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", (unsigned char)u->bytes[i]);
}

int wh_cuda_numa(int d)
{
    int n = -1;
    if (wh_cu.cuDeviceGetAttribute(&n, WH_CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, d) == WH_CUDA_SUCCESS && n >= 0)
        return n;
    /* older drivers: the PCI device's node as the kernel reports it */
    char pci[32], path[96];
    if (wh_cu.cuDeviceGetPCIBusId(pci, (int)sizeof pci, d) != WH_CUDA_SUCCESS)
        return -1;
    for (char *c = pci; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", pci);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (fscanf(f, "%d", &n) != 1)
        n = -1;
    fclose(f);
    return n;
}

void wh_cuda_describe(char *out, size_t len)
{
    if (!len)
        return;
    out[0] = 0;
    if (!wh_cuda_on)
        return;
    wh_CUcontext cur = NULL;
    wh_CUdevice own = -1;
    if (wh_cu.cuCtxGetCurrent(&cur) == WH_CUDA_SUCCESS && cur && wh_cu.cuCtxGetDevice(&own) != WH_CUDA_SUCCESS)
        own = -1;
    if (own < 0 && wh_cuda_ndev == 1)
        own = 0;
    char hex[33] = "-", pci[32] = "-";
    wh_CUuuid u;
    if (own >= 0 && wh_cu.cuDeviceGetUuid(&u, own) == WH_CUDA_SUCCESS)
        uuid_hex(&u, hex);
    if (own >= 0 && wh_cu.cuDeviceGetPCIBusId(pci, (int)sizeof pci, own) != WH_CUDA_SUCCESS)
        snprintf(pci, sizeof pci, "-");
    size_t o = (size_t)snprintf(out, len, "G=%s;B=%s;N=%d;V=", hex, pci, own >= 0 ? wh_cuda_numa(own) : -1);
    for (int d = 0; d < wh_cuda_ndev && d < 16 && o + 40 < len; d++) {
        if (wh_cu.cuDeviceGetUuid(&u, d) != WH_CUDA_SUCCESS)
            continue;
        int can = 0;
        char rel = d == own ? 's' : 'v';
        if (own >= 0 && d != own && wh_cu.cuDeviceCanAccessPeer(&can, own, d) == WH_CUDA_SUCCESS && can)
            rel = 'p';
        uuid_hex(&u, hex);
        o += (size_t)snprintf(out + o, len - o, "%s%s:%c", d ? "," : "", hex, rel);
    }
}
