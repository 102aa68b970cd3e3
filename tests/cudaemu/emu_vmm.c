/* cudaemu: the virtual memory management API (cuMemCreate, cuMemMap, ...)
 * with POSIX file descriptor export.  A physical allocation is a memfd whose
 * name carries its GPU's UUID; mapping it puts a PROT_NONE view at the
 * reserved address (the CPU cannot touch it) and a read-write shadow for the
 * copy engines, usable only after cuMemSetAccess.  The exported handle is a
 * real file descriptor (a dup of the memfd): the application passes it over a
 * Unix socket; the importer learns the GPU from the memfd's name. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu.h"

#define EMU_VMM_MAGIC 0x564d4d31u
#define EMU_GRANULARITY ((size_t)2 << 20) /* 2 MiB, as on current GPUs */

typedef struct emu_vmm {
    uint32_t magic;
    int fd;
    size_t size;
    int dev;        /* visible ordinal */
    unsigned types; /* requested handle types */
    int owner;      /* created here (counted in the device's memory) */
    _Atomic int refs;
} emu_vmm_t;

typedef struct emu_resv {
    uintptr_t base;
    size_t size;
    struct emu_resv *next;
} emu_resv_t;
static emu_resv_t *resvs;
static pthread_mutex_t resv_lock = PTHREAD_MUTEX_INITIALIZER;

static emu_vmm_t *vmm_of(CUmemGenericAllocationHandle h)
{
    emu_vmm_t *v = (emu_vmm_t *)(uintptr_t)h;
    return v && v->magic == EMU_VMM_MAGIC ? v : NULL;
}

static void vmm_put(emu_vmm_t *v)
{
    if (atomic_fetch_sub(&v->refs, 1) != 1)
        return;
    if (v->owner)
        atomic_fetch_sub(&emu_devs[v->dev].mem_used, v->size);
    close(v->fd);
    v->magic = 0;
    free(v);
}

static int in_reservation(uintptr_t p, size_t n)
{
    int ok = 0;
    pthread_mutex_lock(&resv_lock);
    for (emu_resv_t *r = resvs; r; r = r->next)
        if (p >= r->base && p - r->base <= r->size && n <= r->size - (p - r->base))
            ok = 1;
    pthread_mutex_unlock(&resv_lock);
    return ok;
}

EMU_API CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                                       CUmemAllocationGranularity_flags option)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    (void)option;
    if (!granularity || !prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || prop->location.id < 0 ||
        prop->location.id >= emu_ndev)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = EMU_GRANULARITY;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                     const CUmemAllocationProp *prop, unsigned long long flags)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!handle || !prop || flags || !size || size % EMU_GRANULARITY || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = prop->location.id;
    if (dev < 0 || dev >= emu_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    emu_dev_t *d = &emu_devs[dev];
    if (emu_fault("cuMemCreate") || atomic_fetch_add(&d->mem_used, size) + size > d->mem_total) {
        atomic_fetch_sub(&d->mem_used, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    char name[64];
    int k = snprintf(name, sizeof name, "cudaemu-vmm-");
    for (int i = 0; i < 16; i++)
        k += snprintf(name + k, sizeof name - (size_t)k, "%02x", d->uuid[i]);
    emu_vmm_t *v = calloc(1, sizeof *v);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (!v || fd < 0 || ftruncate(fd, (off_t)size)) {
        if (fd >= 0)
            close(fd);
        free(v);
        atomic_fetch_sub(&d->mem_used, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    v->magic = EMU_VMM_MAGIC;
    v->fd = fd;
    v->size = size;
    v->dev = dev;
    v->types = (unsigned)prop->requestedHandleTypes;
    v->owner = 1;
    v->refs = 1;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    emu_vmm_t *v = vmm_of(handle);
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    vmm_put(v); /* mappings keep their reference */
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                             unsigned long long flags)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!ptr || !size || size % EMU_GRANULARITY || flags || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t al = alignment > EMU_GRANULARITY ? alignment : EMU_GRANULARITY;
    (void)addr; /* a hint only */
    char *p = mmap(NULL, size + al, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    emu_resv_t *r = malloc(sizeof *r);
    if (p == MAP_FAILED || !r) {
        if (p != MAP_FAILED)
            munmap(p, size + al);
        free(r);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    uintptr_t base = ((uintptr_t)p + al - 1) & ~(uintptr_t)(al - 1);
    if (base > (uintptr_t)p)
        munmap(p, base - (uintptr_t)p);
    if ((uintptr_t)p + size + al > base + size)
        munmap((void *)(base + size), (uintptr_t)p + size + al - (base + size));
    r->base = base;
    r->size = size;
    pthread_mutex_lock(&resv_lock);
    r->next = resvs;
    resvs = r;
    pthread_mutex_unlock(&resv_lock);
    *ptr = (CUdeviceptr)base;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    pthread_mutex_lock(&resv_lock);
    emu_resv_t **pp = &resvs, *r = NULL;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->base == (uintptr_t)ptr && (*pp)->size == size) {
            r = *pp;
            *pp = r->next;
            break;
        }
    pthread_mutex_unlock(&resv_lock);
    if (!r)
        return CUDA_ERROR_INVALID_VALUE;
    munmap((void *)r->base, r->size);
    free(r);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                                  unsigned long long flags)
{
    emu_vmm_t *v = vmm_of(handle);
    if (!v || flags || offset || !size || size > v->size || size % EMU_GRANULARITY ||
        !in_reservation((uintptr_t)ptr, size))
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_find((uintptr_t)ptr, size))
        return CUDA_ERROR_ALREADY_MAPPED;
    /* "cuMemMap:imported" fails only mappings of imported handles (the
     * importing side of an IPC scheme, not the application's own memory) */
    if (emu_fault("cuMemMap") || (!v->owner && emu_fault("cuMemMap:imported")))
        return CUDA_ERROR_OUT_OF_MEMORY; /* page tables of the device */
    emu_alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    void *d = mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, v->fd, 0);
    void *s = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
    if (d == MAP_FAILED || s == MAP_FAILED) {
        if (s != MAP_FAILED)
            munmap(s, size);
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    atomic_fetch_add(&v->refs, 1);
    a->base = (uintptr_t)ptr;
    a->size = size;
    a->mapsz = size;
    a->shadow = s;
    a->kind = EMU_VMM;
    a->dev = v->dev;
    a->ctx = emu_ctx_current();
    a->fd = -1;
    a->vmm = v;
    emu_add_alloc(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    emu_alloc_t *a = emu_take_alloc((uintptr_t)ptr, EMU_VMM, EMU_VMM);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    if (a->size != size) {
        emu_add_alloc(a); /* partial unmaps are not emulated */
        return CUDA_ERROR_INVALID_VALUE;
    }
    emu_ctx_sync(a->ctx);
    munmap(a->shadow, a->mapsz);
    /* the range stays reserved */
    mmap((void *)a->base, a->mapsz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    vmm_put(a->vmm);
    free(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    if (!desc || !count)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)ptr, size);
    if (!a || a == (emu_alloc_t *)1 || a->kind != EMU_VMM || a->base != (uintptr_t)ptr)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned grant = 0;
    for (size_t i = 0; i < count; i++) {
        const CUmemAccessDesc *e = &desc[i];
        if (e->location.type != CU_MEM_LOCATION_TYPE_DEVICE || e->location.id < 0 || e->location.id >= emu_ndev)
            return CUDA_ERROR_INVALID_DEVICE;
        if (e->location.id != a->dev &&
            !emu_peer_pair(emu_devs[e->location.id].host_index, emu_devs[a->dev].host_index))
            return CUDA_ERROR_INVALID_DEVICE; /* no peer path to the memory */
        if (e->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
            grant = EMU_ACCESS;
    }
    a->flags = (a->flags & ~EMU_ACCESS) | grant;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                                      CUmemAllocationHandleType handleType, unsigned long long flags)
{
    emu_vmm_t *v = vmm_of(handle);
    if (!v || !shareableHandle || flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || !(v->types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return CUDA_ERROR_NOT_SUPPORTED; /* only what cuMemCreate was asked for */
    if (emu_fault("cuMemExportToShareableHandle"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    int fd = dup(v->fd);
    if (fd < 0)
        return CUDA_ERROR_OPERATING_SYSTEM;
    *(int *)shareableHandle = fd;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                                        CUmemAllocationHandleType shHandleType)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_fault("cuMemImportFromShareableHandle"))
        return CUDA_ERROR_INVALID_HANDLE;
    int fd = (int)(intptr_t)osHandle;
    char link[64], target[256];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    struct stat st;
    if (n <= 0 || fstat(fd, &st))
        return CUDA_ERROR_INVALID_HANDLE;
    target[n] = 0;
    const char *u = strstr(target, "cudaemu-vmm-");
    if (!u || strlen(u) < 12 + 32)
        return CUDA_ERROR_INVALID_HANDLE; /* not a handle of this driver */
    unsigned char uuid[16];
    for (int i = 0; i < 16; i++) {
        unsigned x = 0;
        sscanf(u + 12 + 2 * i, "%2x", &x);
        uuid[i] = (unsigned char)x;
    }
    int dev = -1;
    for (int i = 0; i < emu_ndev; i++)
        if (!memcmp(emu_devs[i].uuid, uuid, 16))
            dev = i;
    if (dev < 0)
        return CUDA_ERROR_INVALID_DEVICE; /* its GPU is not visible here */
    emu_vmm_t *v = calloc(1, sizeof *v);
    int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (!v || mine < 0) {
        if (mine >= 0)
            close(mine);
        free(v);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    v->magic = EMU_VMM_MAGIC;
    v->fd = mine;
    v->size = (size_t)st.st_size;
    v->dev = dev;
    v->types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    v->refs = 1;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

/* The physical allocation mapped at addr (any address of a mapping made by
 * cuMemMap): the handle the mapping was made with, one more reference. */
EMU_API CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)addr, 1);
    if (!a || a == (emu_alloc_t *)1 || a->kind != EMU_VMM)
        return CUDA_ERROR_INVALID_VALUE; /* not mapped by cuMemMap (cuMemAlloc memory has no such handle) */
    emu_vmm_t *v = a->vmm;
    atomic_fetch_add(&v->refs, 1);
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                                CUmemGenericAllocationHandle handle)
{
    emu_vmm_t *v = vmm_of(handle);
    if (!v || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    memset(prop, 0, sizeof *prop);
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->requestedHandleTypes = (CUmemAllocationHandleType)v->types;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = v->dev;
    return CUDA_SUCCESS;
}

