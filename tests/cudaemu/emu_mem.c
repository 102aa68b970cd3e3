/* cudaemu: device memory the CPU cannot touch, pinned host memory, pointer
 * attributes, legacy CUDA IPC memory handles.
 *
 * Device memory is a memfd mapped twice: once PROT_NONE at the address the
 * application gets (so a host access faults, as on a GPU), once read-write at
 * a "shadow" address only the emulator's copy engines use.  An IPC handle
 * names the owner's memfd by (pid, fd, inode); the opener reopens it through
 * /proc/<pid>/fd/<fd>, which works only inside the same PID namespace — the
 * real driver's legacy IPC also fails across PID namespaces. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "emu.h"

static emu_alloc_t *allocs;
static pthread_rwlock_t alloc_lock = PTHREAD_RWLOCK_INITIALIZER;
static _Atomic uint64_t next_id = 1;

/* device allocations come in GPU pages of 64 KiB, aligned to them (what
 * GPUDirect / GDRCopy pin and map) */
#define EMU_GPU_PAGE ((size_t)1 << 16)
static size_t page_round(size_t n)
{
    return (n + EMU_GPU_PAGE - 1) / EMU_GPU_PAGE * EMU_GPU_PAGE;
}

emu_alloc_t *emu_find(uintptr_t p, size_t n)
{
    emu_alloc_t *hit = NULL;
    pthread_rwlock_rdlock(&alloc_lock);
    for (emu_alloc_t *a = allocs; a; a = a->next)
        if (p >= a->base && p - a->base < a->size) {
            if (n <= a->size - (p - a->base) || !n)
                hit = a;
            else
                hit = (emu_alloc_t *)1; /* overflow marker */
            break;
        }
    pthread_rwlock_unlock(&alloc_lock);
    return hit;
}

static int is_devkind(int k)
{
    return k == EMU_DEVICE || k == EMU_IPC_MAPPED || k == EMU_VMM;
}

void *emu_xlate(uintptr_t p, size_t n, int *is_dev, int *dev, CUresult *rc)
{
    emu_alloc_t *a = emu_find(p, n);
    *is_dev = 0;
    *dev = -1;
    if (a == (emu_alloc_t *)1) {
        *rc = CUDA_ERROR_INVALID_VALUE; /* copy past the end of an allocation */
        return NULL;
    }
    if (a && a->kind == EMU_VMM && !(a->flags & EMU_ACCESS)) {
        *rc = CUDA_ERROR_INVALID_VALUE; /* mapped, but cuMemSetAccess never granted access */
        return NULL;
    }
    if (a && is_devkind(a->kind)) {
        *is_dev = 1;
        *dev = a->dev;
        return a->shadow + (p - a->base);
    }
    return (void *)p; /* host memory (pinned or pageable): the CPU touches it directly */
}

int emu_is_devkind(int k)
{
    return is_devkind(k);
}

/* Test hook for pointer-kind caches (wharf's mem/cuda): [0] advances when
 * any allocation or mapping appears (a host address may have become device
 * memory), [1] when one goes away (a device address may now be host
 * memory).  A real driver has no such counters: CUPTI driver-API callbacks
 * on the same calls give the same events (see docs/GPU.md). */
EMU_API _Atomic uint64_t cudaemu_mem_gen[2];

void emu_add_alloc(emu_alloc_t *a)
{
    atomic_fetch_add(&cudaemu_mem_gen[0], 1);
    a->id = atomic_fetch_add(&next_id, 1);
    pthread_rwlock_wrlock(&alloc_lock);
    a->next = allocs;
    allocs = a;
    pthread_rwlock_unlock(&alloc_lock);
}

/* unlink the allocation starting exactly at base with one of the kinds */
emu_alloc_t *emu_take_alloc(uintptr_t base, int k1, int k2)
{
    pthread_rwlock_wrlock(&alloc_lock);
    emu_alloc_t **pp = &allocs, *a = NULL;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base && ((*pp)->kind == k1 || (*pp)->kind == k2)) {
            a = *pp;
            *pp = a->next;
            atomic_fetch_add(&cudaemu_mem_gen[1], 1);
            break;
        }
    pthread_rwlock_unlock(&alloc_lock);
    return a;
}

/* Map fd twice: PROT_NONE for the application, read-write for the emulator. */
static int map_twice(int fd, size_t mapsz, uintptr_t *base, char **shadow)
{
    char *r = mmap(NULL, mapsz + EMU_GPU_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return -1;
    uintptr_t al = ((uintptr_t)r + EMU_GPU_PAGE - 1) & ~(uintptr_t)(EMU_GPU_PAGE - 1);
    if (al > (uintptr_t)r)
        munmap(r, al - (uintptr_t)r);
    if ((uintptr_t)r + EMU_GPU_PAGE > al)
        munmap((void *)(al + mapsz), (uintptr_t)r + EMU_GPU_PAGE - al);
    void *d = mmap((void *)al, mapsz, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (d == MAP_FAILED) {
        munmap((void *)al, mapsz);
        return -1;
    }
    void *s = mmap(NULL, mapsz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (s == MAP_FAILED) {
        munmap(d, mapsz);
        return -1;
    }
    *base = (uintptr_t)d;
    *shadow = s;
    return 0;
}

EMU_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!dptr || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    emu_dev_t *d = &emu_devs[c->dev];
    size_t mapsz = page_round(bytesize);
    if (emu_fault("cuMemAlloc") || atomic_fetch_add(&d->mem_used, mapsz) + mapsz > d->mem_total) {
        atomic_fetch_sub(&d->mem_used, mapsz);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    emu_alloc_t *a = calloc(1, sizeof *a);
    int fd = memfd_create("cudaemu-device", MFD_CLOEXEC);
    if (!a || fd < 0 || ftruncate(fd, (off_t)mapsz) || map_twice(fd, mapsz, &a->base, &a->shadow)) {
        if (fd >= 0)
            close(fd);
        free(a);
        atomic_fetch_sub(&d->mem_used, mapsz);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    const char *poison = getenv("CUDAEMU_POISON");
    if (!poison || strcmp(poison, "0"))
        memset(a->shadow, 0xcd, bytesize); /* fresh device memory is not zero */
    a->size = bytesize;
    a->mapsz = mapsz;
    a->kind = EMU_DEVICE;
    a->dev = c->dev;
    a->ctx = c;
    a->fd = fd;
    emu_add_alloc(a);
    *dptr = (CUdeviceptr)a->base;
    return CUDA_SUCCESS;
}

static void unmap_dev(emu_alloc_t *a)
{
    munmap((void *)a->base, a->mapsz);
    munmap(a->shadow, a->mapsz);
    if (a->fd >= 0)
        close(a->fd);
}

EMU_API CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!dptr)
        return CUDA_SUCCESS;
    emu_alloc_t *a = emu_take_alloc((uintptr_t)dptr, EMU_DEVICE, EMU_DEVICE);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    emu_ctx_sync(a->ctx); /* cuMemFree synchronizes the device */
    unmap_dev(a);
    atomic_fetch_sub(&emu_devs[a->dev].mem_used, a->mapsz);
    free(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemGetInfo(size_t *free_b, size_t *total)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!free_b || !total)
        return CUDA_ERROR_INVALID_VALUE;
    emu_dev_t *d = &emu_devs[c->dev];
    *total = d->mem_total;
    *free_b = d->mem_total - atomic_load(&d->mem_used);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!pp || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_fault("cuMemHostAlloc"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    size_t mapsz = page_round(bytesize);
    void *p = mmap(NULL, mapsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    emu_alloc_t *a = calloc(1, sizeof *a);
    if (p == MAP_FAILED || !a) {
        if (p != MAP_FAILED)
            munmap(p, mapsz);
        free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->base = (uintptr_t)p;
    a->size = bytesize;
    a->mapsz = mapsz;
    a->kind = EMU_HOST_ALLOC;
    a->dev = c->dev;
    a->ctx = c;
    a->fd = -1;
    a->flags = Flags;
    emu_add_alloc(a);
    *pp = p;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

EMU_API CUresult CUDAAPI cuMemFreeHost(void *p)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    emu_alloc_t *a = emu_take_alloc((uintptr_t)p, EMU_HOST_ALLOC, EMU_HOST_ALLOC);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    emu_ctx_sync(a->ctx);
    munmap((void *)a->base, a->mapsz);
    free(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!p || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_fault("cuMemHostRegister"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    emu_alloc_t *hit = emu_find((uintptr_t)p, 1);
    if (!hit)
        hit = emu_find((uintptr_t)p + bytesize - 1, 1);
    if (hit)
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    emu_alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->base = (uintptr_t)p;
    a->size = bytesize;
    a->kind = EMU_HOST_REG;
    a->dev = c->dev;
    a->ctx = c;
    a->fd = -1;
    a->flags = Flags;
    emu_add_alloc(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemHostUnregister(void *p)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    emu_alloc_t *a = emu_take_alloc((uintptr_t)p, EMU_HOST_REG, EMU_HOST_REG);
    if (!a)
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    emu_ctx_sync(a->ctx);
    free(a);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pdptr || Flags)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)p, 1);
    if (!a || a == (emu_alloc_t *)1 || is_devkind(a->kind))
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    emu_alloc_t *a = emu_find((uintptr_t)dptr, 1);
    if (!a || a == (emu_alloc_t *)1 || !is_devkind(a->kind))
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = (CUdeviceptr)a->base;
    if (psize)
        *psize = a->size;
    return CUDA_SUCCESS;
}

/* One attribute of the allocation a (NULL: not a CUDA pointer). */
static CUresult attr_of(emu_alloc_t *a, uintptr_t p, CUpointer_attribute at, void *data)
{
    int dev = a && is_devkind(a->kind);
    switch (at) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = a ? a->ctx : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = !a ? 0 : dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = a ? (CUdeviceptr)p : 0;
        break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (dev)
            return CUDA_ERROR_INVALID_VALUE; /* device memory has no host mapping */
        *(void **)data = a ? (void *)p : NULL;
        break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(bool *)data = false;
        break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(bool *)data = a != NULL;
        break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        *(bool *)data = a && a->kind == EMU_DEVICE;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = a ? a->id : 0;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = a ? a->dev : -2;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = a ? (CUdeviceptr)a->base : 0;
        break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = a ? a->size : 0;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* test hook: calls of cuPointerGetAttribute(s), so tests see what a pointer-kind cache saves */
EMU_API _Atomic uint64_t cudaemu_ptrattr_calls;

EMU_API CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    atomic_fetch_add(&cudaemu_ptrattr_calls, 1);
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)ptr, 1);
    if (!a || a == (emu_alloc_t *)1)
        return CUDA_ERROR_INVALID_VALUE; /* not memory the driver knows */
    return attr_of(a, (uintptr_t)ptr, attribute, data);
}

EMU_API CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                                void **data, CUdeviceptr ptr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)ptr, 1);
    if (a == (emu_alloc_t *)1)
        a = NULL;
    /* unlike cuPointerGetAttribute, an unknown pointer is no error: the
     * attributes get their null values */
    for (unsigned i = 0; i < numAttributes; i++) {
        if (!data[i])
            return CUDA_ERROR_INVALID_VALUE;
        CUresult rc = attr_of(a, (uintptr_t)ptr, attributes[i], data[i]);
        if (rc == CUDA_ERROR_INVALID_VALUE && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER)
            *(void **)data[i] = NULL, rc = CUDA_SUCCESS;
        if (rc)
            return rc;
    }
    return CUDA_SUCCESS;
}

/* ---- legacy IPC ---- */
typedef struct {
    uint32_t magic;
    int32_t pid;
    int32_t fd;
    uint32_t pad;
    uint64_t id;
    uint64_t size;
    uint64_t pidns;
    uint64_t ino;
    unsigned char uuid[16];
} emu_ipc_mem_t;
_Static_assert(sizeof(emu_ipc_mem_t) <= sizeof(CUipcMemHandle), "IPC handle fits 64 bytes");

static uint64_t pidns_ino(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}

EMU_API CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    emu_alloc_t *a = emu_find((uintptr_t)dptr, 1);
    if (!a || a == (emu_alloc_t *)1 || a->kind != EMU_DEVICE || a->base != (uintptr_t)dptr)
        return CUDA_ERROR_INVALID_VALUE; /* the base of a device allocation of this process */
    if (emu_fault("cuIpcGetMemHandle"))
        return CUDA_ERROR_INVALID_VALUE;
    struct stat st;
    if (fstat(a->fd, &st))
        return CUDA_ERROR_OPERATING_SYSTEM;
    emu_ipc_mem_t h = {.magic = EMU_IPC_MAGIC, .pid = getpid(), .fd = a->fd, .id = a->id, .size = a->size,
                       .pidns = pidns_ino(), .ino = (uint64_t)st.st_ino};
    memcpy(h.uuid, emu_devs[a->dev].uuid, 16);
    memset(pHandle, 0, sizeof *pHandle);
    memcpy(pHandle->reserved, &h, sizeof h);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!pdptr)
        return CUDA_ERROR_INVALID_VALUE;
    emu_ipc_mem_t h;
    memcpy(&h, handle.reserved, sizeof h);
    if (h.magic != EMU_IPC_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    if (emu_fault("cuIpcOpenMemHandle"))
        return CUDA_ERROR_MAP_FAILED;
    if (h.pidns != pidns_ino() || h.pid == getpid())
        return CUDA_ERROR_INVALID_CONTEXT; /* other PID namespace, or this very process */
    int dev = -1;
    for (int i = 0; i < emu_ndev; i++)
        if (!memcmp(emu_devs[i].uuid, h.uuid, 16))
            dev = i;
    if (dev < 0)
        return CUDA_ERROR_INVALID_DEVICE; /* the GPU is not visible here */
    if (dev != c->dev && (!(Flags & CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) ||
                          !emu_peer_pair(emu_devs[dev].host_index, emu_devs[c->dev].host_index)))
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    struct stat st;
    size_t mapsz = page_round(h.size);
    if (fstat(fd, &st) || (uint64_t)st.st_ino != h.ino || (size_t)st.st_size != mapsz) {
        close(fd);
        return CUDA_ERROR_INVALID_HANDLE; /* freed, the fd number reused */
    }
    emu_alloc_t *a = calloc(1, sizeof *a);
    if (!a || map_twice(fd, mapsz, &a->base, &a->shadow)) {
        close(fd);
        free(a);
        return CUDA_ERROR_MAP_FAILED;
    }
    close(fd);
    a->fd = -1;
    a->size = h.size;
    a->mapsz = mapsz;
    a->kind = EMU_IPC_MAPPED;
    a->dev = dev;
    a->ctx = c;
    emu_add_alloc(a);
    *pdptr = (CUdeviceptr)a->base;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    if (!emu_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    emu_alloc_t *a = emu_take_alloc((uintptr_t)dptr, EMU_IPC_MAPPED, EMU_IPC_MAPPED);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    emu_ctx_sync(a->ctx);
    unmap_dev(a);
    free(a);
    return CUDA_SUCCESS;
}

/* Private to the emulator's GDRCopy library (libgdrapi.so.2): the shadow
 * address of device memory [addr, addr+size) and its allocation's base and
 * size; 0 on success. */
EMU_API int cudaemu_gdr_window(uintptr_t addr, size_t size, uintptr_t *base, size_t *mapsz, char **shadow)
{
    emu_alloc_t *a = emu_find(addr, size);
    if (!a || a == (emu_alloc_t *)1 || (a->kind != EMU_DEVICE && a->kind != EMU_VMM))
        return -1;
    *base = a->base;
    *mapsz = a->mapsz;
    *shadow = a->shadow;
    return 0;
}

/* Private: fault injection for the GDRCopy library */
EMU_API int cudaemu_fault(const char *fn)
{
    return emu_fault(fn);
}
