/* cudaemu: virtual memory management.  Physical memory from cuMemCreate,
 * mapped into a reserved range, usable by copies only after cuMemSetAccess,
 * never by the CPU; exported as a real file descriptor that another process
 * (exec'ed, inheriting it as a Unix socket would deliver it) imports, maps on
 * the peer GPU and reads and writes. */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemcpyHtoD); F(cuMemcpyDtoH);
F(cuMemGetAllocationGranularity); F(cuMemCreate); F(cuMemRelease); F(cuMemAddressReserve); F(cuMemAddressFree);
F(cuMemMap); F(cuMemUnmap); F(cuMemSetAccess); F(cuMemExportToShareableHandle); F(cuMemImportFromShareableHandle);
F(cuPointerGetAttribute); F(cuIpcGetMemHandle); F(cuMemGetAddressRange); F(cuMemRetainAllocationHandle);
F(cuMemGetAllocationPropertiesFromHandle); F(cuMemAlloc); F(cuMemFree);

static void load_all(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemcpyHtoD);
    LOAD(cuMemcpyDtoH); LOAD(cuMemGetAllocationGranularity); LOAD(cuMemCreate); LOAD(cuMemRelease);
    LOAD(cuMemAddressReserve); LOAD(cuMemAddressFree); LOAD(cuMemMap); LOAD(cuMemUnmap); LOAD(cuMemSetAccess);
    LOAD(cuMemExportToShareableHandle); LOAD(cuMemImportFromShareableHandle); LOAD(cuPointerGetAttribute);
    LOAD(cuIpcGetMemHandle); LOAD(cuMemGetAddressRange); LOAD(cuMemRetainAllocationHandle);
    LOAD(cuMemGetAllocationPropertiesFromHandle); LOAD(cuMemAlloc); LOAD(cuMemFree);
}

static void ctx_on(int ordinal)
{
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, ordinal));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
}

static CUmemAccessDesc rw(int ordinal)
{
    CUmemAccessDesc d;
    memset(&d, 0, sizeof d);
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = ordinal;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

static int child(int fd, size_t size)
{
    load_all();
    CK(p_cuInit(0));
    ctx_on(1);
    CUmemGenericAllocationHandle h;
    CK(p_cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr va;
    CK(p_cuMemAddressReserve(&va, size, 0, 0, 0));
    CK(p_cuMemMap(va, size, 0, h, 0));
    CK(p_cuMemRelease(h)); /* the mapping keeps it */
    CUmemAccessDesc d = rw(1); /* GPU 1 reaches GPU 0's memory as a peer */
    CK(p_cuMemSetAccess(va, size, &d, 1));
    unsigned char *buf = malloc(size);
    CK(p_cuMemcpyDtoH(buf, va, size));
    int bad = 0;
    for (size_t i = 0; i < size; i++)
        bad += buf[i] != (unsigned char)(i % 253);
    CHECK(bad == 0);
    memset(buf, 0x3c, 64);
    CK(p_cuMemcpyHtoD(va, buf, 64));
    CK(p_cuMemUnmap(va, size));
    CK(p_cuMemAddressFree(va, size));
    free(buf);
    return t_fail != 0;
}

int main(int argc, char **argv)
{
    if (argc == 3)
        return child(atoi(argv[1]), (size_t)atol(argv[2]));
    load_all();
    CK(p_cuInit(0));
    ctx_on(0);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t gran = 0;
    CK(p_cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK(gran == (2u << 20));
    size_t size = 2 * gran;
    CUmemGenericAllocationHandle h;
    CHECK(p_cuMemCreate(&h, size + 1, &prop, 0) == CUDA_ERROR_INVALID_VALUE); /* not a granularity multiple */
    CK(p_cuMemCreate(&h, size, &prop, 0));
    CUdeviceptr va;
    CK(p_cuMemAddressReserve(&va, 2 * size, 0, 0, 0));
    CHECK(va % gran == 0);
    CK(p_cuMemMap(va, size, 0, h, 0));
    unsigned char *buf = malloc(size);
    for (size_t i = 0; i < size; i++)
        buf[i] = (unsigned char)(i % 253);
    /* mapped but no access granted yet: the copy is refused */
    CHECK(p_cuMemcpyHtoD(va, buf, size) != CUDA_SUCCESS);
    CUmemAccessDesc far = rw(0);
    far.location.id = 5;
    CHECK(p_cuMemSetAccess(va, size, &far, 1) == CUDA_ERROR_INVALID_DEVICE);
    CUmemAccessDesc d = rw(0);
    CK(p_cuMemSetAccess(va, size, &d, 1));
    CK(p_cuMemcpyHtoD(va, buf, size));
    unsigned mt = 0;
    CK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + 100));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CUdeviceptr base = 0;
    size_t rsize = 0;
    CK(p_cuMemGetAddressRange(&base, &rsize, va + 100));
    CHECK(base == va && rsize == size);
    CUipcMemHandle ih;
    CHECK(p_cuIpcGetMemHandle(&ih, va) == CUDA_ERROR_INVALID_VALUE); /* no legacy IPC on VMM memory */
    /* the allocation behind any address of the mapping: the handle it was mapped with, one more reference */
    CUmemGenericAllocationHandle rh = 0;
    CK(p_cuMemRetainAllocationHandle(&rh, (void *)(uintptr_t)(va + size - 1)));
    CHECK(rh == h);
    CUmemAllocationProp got;
    memset(&got, 0x7f, sizeof got);
    CK(p_cuMemGetAllocationPropertiesFromHandle(&got, rh));
    CHECK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
          got.location.id == 0 && got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    CK(p_cuMemRelease(rh)); /* h and the mapping still hold it */
    CHECK(p_cuMemRetainAllocationHandle(&rh, (void *)(uintptr_t)(va + size)) == CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr plain = 0;
    CK(p_cuMemAlloc(&plain, 4096));
    CHECK(p_cuMemRetainAllocationHandle(&rh, (void *)(uintptr_t)plain) == CUDA_ERROR_INVALID_VALUE);
    CK(p_cuMemFree(plain));
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into an abort */
        (void)*(volatile unsigned char *)(uintptr_t)va; /* the CPU cannot touch it */
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

    /* export a real file descriptor; the child inherits it */
    int fd = -1;
    CK(p_cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK(fd >= 0);
    char a1[16], a2[32];
    snprintf(a1, sizeof a1, "%d", fd);
    snprintf(a2, sizeof a2, "%zu", size);
    pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], a1, a2, (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    close(fd);
    CK(p_cuMemcpyDtoH(buf, va, 128));
    CHECK(buf[0] == 0x3c && buf[63] == 0x3c && buf[64] == 64 % 253);
    CK(p_cuMemUnmap(va, size));
    CHECK(p_cuMemcpyDtoH(buf, va, 16) == CUDA_ERROR_INVALID_VALUE); /* unmapped: no device memory there */
    CK(p_cuMemRelease(h));
    CK(p_cuMemAddressFree(va, 2 * size));
    free(buf);
    printf("cudaemu vmm: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
