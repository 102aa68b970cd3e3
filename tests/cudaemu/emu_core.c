/* cudaemu: initialization, devices from the topology file, contexts, fault
 * injection, the timing model. */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"

emu_dev_t emu_devs[EMU_MAX_DEV];
int emu_ndev;
int emu_inited;
pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;

#define EMU_MAX_HOST 64
static unsigned char peer[EMU_MAX_HOST][EMU_MAX_HOST];
static int init_rc = -1;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

typedef struct {
    unsigned char uuid[16];
    char pci[16];
    int numa;
    size_t mem;
    char name[64];
} host_gpu_t;
static host_gpu_t hgpu[EMU_MAX_HOST];
static int nhost;

int emu_peer_pair(int a, int b)
{
    if (a == b)
        return 1;
    if (a < 0 || b < 0 || a >= EMU_MAX_HOST || b >= EMU_MAX_HOST)
        return 0;
    return peer[a][b];
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (tolower((unsigned char)*end)) {
    case 'k': v *= 1024.0; break;
    case 'm': v *= 1024.0 * 1024; break;
    case 'g': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

static int parse_uuid(const char *s, unsigned char out[16])
{
    if (!strncmp(s, "GPU-", 4))
        s += 4;
    int k = 0;
    for (; *s && k < 32; s++) {
        if (*s == '-')
            continue;
        if (!isxdigit((unsigned char)*s))
            return -1;
        int v = isdigit((unsigned char)*s) ? *s - '0' : tolower((unsigned char)*s) - 'a' + 10;
        if (k % 2 == 0)
            out[k / 2] = (unsigned char)(v << 4);
        else
            out[k / 2] |= (unsigned char)v;
        k++;
    }
    return k == 32 && !*s ? 0 : -1;
}

/* Topology file: "gpu uuid=GPU-... pci=0000:3b:00.0 numa=0 mem=16g name=..."
 * lines (host index = order), "peer A B" lines, "#" comments. */
static int load_topology(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cudaemu: CUDAEMU_TOPOLOGY=%s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[512];
    int lineno = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s || *s == '#')
            continue;
        char *save = NULL, *tok = strtok_r(s, " \t\r\n", &save);
        if (!strcmp(tok, "gpu")) {
            if (nhost >= EMU_MAX_HOST) {
                bad = 1;
                break;
            }
            host_gpu_t *g = &hgpu[nhost];
            memset(g, 0, sizeof *g);
            for (int i = 0; i < 16; i++)
                g->uuid[i] = (unsigned char)(0x5a ^ (i * 17) ^ nhost);
            snprintf(g->pci, sizeof g->pci, "0000:%02x:00.0", 0x10 + nhost);
            g->mem = (size_t)16 << 30;
            snprintf(g->name, sizeof g->name, "cudaemu GPU %d", nhost);
            while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
                char *eq = strchr(tok, '=');
                if (!eq) {
                    bad = 1;
                    break;
                }
                *eq++ = 0;
                if (!strcmp(tok, "uuid"))
                    bad |= parse_uuid(eq, g->uuid) != 0;
                else if (!strcmp(tok, "pci"))
                    snprintf(g->pci, sizeof g->pci, "%s", eq);
                else if (!strcmp(tok, "numa"))
                    g->numa = atoi(eq);
                else if (!strcmp(tok, "mem"))
                    g->mem = parse_size(eq);
                else if (!strcmp(tok, "name"))
                    snprintf(g->name, sizeof g->name, "%s", eq);
                else
                    bad = 1;
            }
            nhost++;
        } else if (!strcmp(tok, "peer")) {
            char *a = strtok_r(NULL, " \t\r\n", &save), *b = strtok_r(NULL, " \t\r\n", &save);
            int x = a ? atoi(a) : -1, y = b ? atoi(b) : -1;
            if (x < 0 || y < 0 || x >= EMU_MAX_HOST || y >= EMU_MAX_HOST)
                bad = 1;
            else
                peer[x][y] = peer[y][x] = 1;
        } else {
            bad = 1;
        }
        if (bad)
            break;
    }
    fclose(f);
    if (bad) {
        fprintf(stderr, "cudaemu: %s:%d: cannot parse\n", path, lineno);
        return -1;
    }
    return 0;
}

/* index of the host GPU an entry of a visibility list names (index or UUID), -1 if none */
static int name_to_host(const char *e, const int *among, int n)
{
    unsigned char u[16];
    if (!strncmp(e, "GPU-", 4)) {
        if (parse_uuid(e, u))
            return -1;
        for (int i = 0; i < n; i++)
            if (!memcmp(hgpu[among[i]].uuid, u, 16))
                return among[i];
        return -1;
    }
    char *end;
    long v = strtol(e, &end, 10);
    if (end == e || *end || v < 0 || v >= n)
        return -1;
    return among[v];
}

/* Apply a comma list to the candidates: the result keeps the listed ones in
 * list order, up to the first invalid entry (as CUDA_VISIBLE_DEVICES does). */
static int apply_list(const char *list, int *cand, int n)
{
    int out[EMU_MAX_HOST], m = 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *e = strtok_r(buf, ", ", &save); e && m < EMU_MAX_HOST; e = strtok_r(NULL, ", ", &save)) {
        int h = name_to_host(e, cand, n);
        if (h < 0)
            break;
        out[m++] = h;
    }
    memcpy(cand, out, (size_t)m * sizeof *cand);
    return m;
}

static void do_init(void)
{
    const char *topo = getenv("CUDAEMU_TOPOLOGY");
    if (!topo || !*topo) {
        init_rc = CUDA_ERROR_NO_DEVICE;
        return;
    }
    if (load_topology(topo)) {
        init_rc = CUDA_ERROR_INVALID_VALUE;
        return;
    }
    int cand[EMU_MAX_HOST], n = nhost;
    for (int i = 0; i < n; i++)
        cand[i] = i;
    const char *vis = getenv("CUDAEMU_VISIBLE"); /* what the container was given */
    const char *vfile = getenv("CUDAEMU_VISIBLE_FILE");
    char line[512];
    if (vis && *vis) {
        n = apply_list(vis, cand, n);
    } else if (vfile && *vfile) {
        /* the container runtime's assignment: "HOSTNAME LIST" lines, the
         * line of this container's hostname ("*": any other); none: no GPU */
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        FILE *f = fopen(vfile, "r");
        int found = 0;
        while (f && !found && fgets(line, sizeof line, f)) {
            char name[256], list[256] = "";
            if (line[0] == '#' || sscanf(line, "%255s %255s", name, list) < 1)
                continue;
            if (!strcmp(name, host) || !strcmp(name, "*")) {
                n = apply_list(list, cand, n);
                found = 1;
            }
        }
        if (f)
            fclose(f);
        else
            fprintf(stderr, "cudaemu: CUDAEMU_VISIBLE_FILE=%s: %s\n", vfile, strerror(errno));
        if (!found)
            n = 0;
    }
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (cvd)
        n = apply_list(cvd, cand, n);
    if (n > EMU_MAX_DEV)
        n = EMU_MAX_DEV;
    for (int i = 0; i < n; i++) {
        host_gpu_t *g = &hgpu[cand[i]];
        emu_dev_t *d = &emu_devs[i];
        d->host_index = cand[i];
        memcpy(d->uuid, g->uuid, 16);
        snprintf(d->pci, sizeof d->pci, "%s", g->pci);
        if (sscanf(g->pci, "%x:%x:%x", (unsigned *)&d->domain, (unsigned *)&d->bus, (unsigned *)&d->slot) != 3)
            d->domain = d->bus = d->slot = 0;
        d->numa = g->numa;
        d->mem_total = g->mem;
        snprintf(d->name, sizeof d->name, "%s", g->name);
    }
    emu_ndev = n;
    init_rc = n ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

EMU_API CUresult CUDAAPI cuInit(unsigned int Flags)
{
    if (Flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_fault("cuInit"))
        return CUDA_ERROR_NO_DEVICE;
    pthread_once(&init_once, do_init);
    if (init_rc == CUDA_SUCCESS)
        emu_inited = 1;
    return (CUresult)init_rc;
}

EMU_API CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = CUDA_VERSION;
    return CUDA_SUCCESS;
}

#define NEED_INIT()                                                                                                    \
    do {                                                                                                               \
        if (!emu_inited)                                                                                               \
            return CUDA_ERROR_NOT_INITIALIZED;                                                                         \
    } while (0)
#define NEED_DEV(d)                                                                                                    \
    do {                                                                                                               \
        NEED_INIT();                                                                                                   \
        if ((d) < 0 || (d) >= emu_ndev)                                                                                \
            return CUDA_ERROR_INVALID_DEVICE;                                                                          \
    } while (0)

EMU_API CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    NEED_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = emu_ndev;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    NEED_DEV(ordinal);
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    NEED_DEV(dev);
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", emu_devs[dev].name);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    NEED_DEV(dev);
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid->bytes, emu_devs[dev].uuid, 16);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid(uuid, dev);
}

EMU_API CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", emu_devs[dev].domain, emu_devs[dev].bus, emu_devs[dev].slot);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
    NEED_INIT();
    unsigned dom = 0, bus = 0, slot = 0;
    if (!dev || !pciBusId)
        return CUDA_ERROR_INVALID_VALUE;
    if (sscanf(pciBusId, "%x:%x:%x", &dom, &bus, &slot) != 3) {
        dom = 0;
        if (sscanf(pciBusId, "%x:%x", &bus, &slot) != 2)
            return CUDA_ERROR_INVALID_VALUE;
    }
    for (int i = 0; i < emu_ndev; i++)
        if ((unsigned)emu_devs[i].domain == dom && (unsigned)emu_devs[i].bus == bus &&
            (unsigned)emu_devs[i].slot == slot) {
            *dev = i;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_DEVICE;
}

EMU_API CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
    NEED_DEV(dev);
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = emu_devs[dev].mem_total;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    const emu_dev_t *d = &emu_devs[dev];
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = d->bus; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = d->slot; break;
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *pi = d->domain; break;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID: *pi = d->numa; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 8; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *pi = 2; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED: *pi = 0; break;
    default: *pi = 0; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    NEED_DEV(dev);
    NEED_DEV(peerDev);
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    *canAccessPeer = dev != peerDev && emu_peer_pair(emu_devs[dev].host_index, emu_devs[peerDev].host_index);
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */
#define EMU_CTX_STACK 16
static __thread CUcontext ctx_stack[EMU_CTX_STACK];
static __thread int ctx_depth; /* ctx_stack[ctx_depth-1] is current */

CUcontext emu_ctx_current(void)
{
    return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

CUcontext emu_ctx_need(CUresult *rc)
{
    if (!emu_inited) {
        *rc = CUDA_ERROR_NOT_INITIALIZED;
        return NULL;
    }
    CUcontext c = emu_ctx_current();
    if (!c || c->magic != EMU_CTX_MAGIC) {
        *rc = CUDA_ERROR_INVALID_CONTEXT;
        return NULL;
    }
    return c;
}

static CUcontext ctx_new(int dev, int primary, unsigned flags)
{
    CUcontext c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = EMU_CTX_MAGIC;
    c->dev = dev;
    c->primary = primary;
    c->flags = flags;
    if (emu_stream_attach(c)) {
        free(c);
        return NULL;
    }
    return c;
}

static void ctx_free(CUcontext c)
{
    emu_ctx_sync(c);
    emu_stream_detach(c);
    c->magic = 0;
    free(c);
}

EMU_API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&emu_lock);
    emu_dev_t *d = &emu_devs[dev];
    if (!d->primary)
        d->primary = ctx_new(dev, 1, d->primary_flags);
    if (d->primary)
        d->primary_refs++;
    *pctx = d->primary;
    pthread_mutex_unlock(&emu_lock);
    return *pctx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EMU_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    NEED_DEV(dev);
    pthread_mutex_lock(&emu_lock);
    emu_dev_t *d = &emu_devs[dev];
    CUresult rc = CUDA_SUCCESS;
    if (!d->primary_refs)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (--d->primary_refs == 0) {
        /* the real driver destroys the primary context here; keep the object
         * (threads may still have it current) but drain its streams */
        emu_ctx_sync(d->primary);
    }
    pthread_mutex_unlock(&emu_lock);
    return rc;
}

EMU_API CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    NEED_DEV(dev);
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = emu_devs[dev].primary_flags;
    *active = emu_devs[dev].primary_refs > 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    NEED_DEV(dev);
    emu_devs[dev].primary_flags = flags;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    NEED_DEV(dev);
    if (emu_devs[dev].primary)
        emu_ctx_sync(emu_devs[dev].primary);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (ctx_depth >= EMU_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUcontext c = ctx_new(dev, 0, flags);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = c;
    *pctx = c;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    NEED_INIT();
    if (!ctx || ctx->magic != EMU_CTX_MAGIC || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] == ctx) {
            memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof *ctx_stack);
            ctx_depth--;
            i--;
        }
    ctx_free(ctx);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = emu_ctx_current();
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    NEED_INIT();
    if (ctx && ctx->magic != EMU_CTX_MAGIC)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {
        if (ctx_depth)
            ctx_depth--;
        return CUDA_SUCCESS;
    }
    if (!ctx_depth)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    NEED_INIT();
    if (!ctx || ctx->magic != EMU_CTX_MAGIC)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth >= EMU_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    NEED_INIT();
    if (!ctx_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = ctx_stack[--ctx_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuCtxSynchronize(void)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    emu_ctx_sync(c);
    return CUDA_SUCCESS;
}

/* ---- fault injection: CUDAEMU_FAIL="cuIpcOpenMemHandle,cuMemAlloc@3" fails
 * every call of the first, and the third call of the second ---- */
#define EMU_MAX_FAULTS 16
static struct {
    char name[48];
    long nth; /* 0: every call */
    _Atomic long calls;
} faults[EMU_MAX_FAULTS];
static int nfaults = -1;
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;

static void fault_init(void)
{
    nfaults = 0;
    const char *s = getenv("CUDAEMU_FAIL");
    if (!s)
        return;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *e = strtok_r(buf, ", ", &save); e && nfaults < EMU_MAX_FAULTS; e = strtok_r(NULL, ", ", &save)) {
        char *at = strchr(e, '@');
        if (at)
            *at++ = 0;
        snprintf(faults[nfaults].name, sizeof faults[nfaults].name, "%s", e);
        faults[nfaults].nth = at ? atol(at) : 0;
        nfaults++;
    }
}

int emu_fault(const char *fn)
{
    pthread_once(&fault_once, fault_init);
    for (int i = 0; i < nfaults; i++)
        if (!strcmp(faults[i].name, fn)) {
            long k = atomic_fetch_add(&faults[i].calls, 1) + 1;
            if (!faults[i].nth || faults[i].nth == k) {
                fprintf(stderr, "cudaemu: injected failure of %s (call %ld)\n", fn, k);
                return 1;
            }
        }
    return 0;
}

/* ---- timing model ---- */
static double gbps[6], lat_ns;
static int timing_on = -1;
static unsigned delay_us, poll_us, spin_ns = 20000;
static pthread_once_t timing_once = PTHREAD_ONCE_INIT;

static double env_num(const char *name, double dflt)
{
    const char *s = getenv(name);
    return s && *s ? atof(s) : dflt;
}

static void timing_init(void)
{
    /* defaults: PCIe Gen4 x16 (~25 GB/s achieved each way), copies inside one
     * HBM2e device (~700 GB/s: read + write of 1.5 TB/s), NVLink-3 peers with
     * 4 links (~100 GB/s each way), device-to-device through the host when
     * the pair is not peer-capable (~12 GB/s), host memcpy (~10 GB/s) */
    gbps[EMU_H2D] = env_num("CUDAEMU_H2D_GBPS", 25);
    gbps[EMU_D2H] = env_num("CUDAEMU_D2H_GBPS", 25);
    gbps[EMU_D2D] = env_num("CUDAEMU_D2D_GBPS", 700);
    gbps[EMU_P2P] = env_num("CUDAEMU_P2P_GBPS", 100);
    gbps[EMU_D2D_STAGED] = env_num("CUDAEMU_STAGED_GBPS", 12);
    gbps[EMU_H2H] = env_num("CUDAEMU_H2H_GBPS", 10);
    lat_ns = env_num("CUDAEMU_LAT_US", 2) * 1000.0;
    timing_on = (int)env_num("CUDAEMU_TIMING", 1);
    delay_us = (unsigned)env_num("CUDAEMU_STREAM_DELAY_US", 0);
    poll_us = (unsigned)env_num("CUDAEMU_ENGINE_POLL_US", 50);
    spin_ns = (unsigned)(env_num("CUDAEMU_WAIT_SPIN_US", 20) * 1000.0);
}

uint64_t emu_model_ns(int path, size_t n)
{
    pthread_once(&timing_once, timing_init);
    if (!timing_on)
        return 0;
    double bw = gbps[path] > 0 ? gbps[path] : 1;
    return (uint64_t)(lat_ns + (double)n / bw); /* bytes / (GB/s) = ns */
}

unsigned emu_stream_delay_us(void)
{
    pthread_once(&timing_once, timing_init);
    return delay_us;
}

uint64_t emu_spin_ns(void)
{
    pthread_once(&timing_once, timing_init);
    return spin_ns;
}

unsigned emu_engine_poll_us(void)
{
    pthread_once(&timing_once, timing_init);
    return poll_us;
}

uint64_t emu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The modeled end of a copy.  A wait of at most CUDAEMU_WAIT_SPIN_US (20)
 * is spun: yielding handed the cpu to any runnable thread of that cpu (a
 * rank polling for this very copy, say) for the rest of its time slice,
 * which turned a 2 us modeled copy into 200-400 us (8 B device ping-pong
 * through the pipeline).  Longer waits sleep while more than 200 us are
 * left and yield after that, as before: spinning their tail, or sleeping
 * closer to the end, made the remote-GPU pipeline slower (its chunks wait
 * ~64 us each, and a spinning or late-waking copy engine takes a cpu the
 * transport needs; docs/PERFORMANCE.md). */
void emu_wait_until(uint64_t t)
{
    pthread_once(&timing_once, timing_init);
    uint64_t now = emu_now_ns();
    if (now < t && t - now <= spin_ns) {
        while (emu_now_ns() < t)
            ;
        return;
    }
    for (; now < t; now = emu_now_ns()) {
        if (t - now > 200000) {
            struct timespec ts = {0, (long)(t - now - 100000)};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}
