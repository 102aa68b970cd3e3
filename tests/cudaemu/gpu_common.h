/* Shared by the MPI tests on device buffers (gpu_coll.c, gpu_rma.c): load
 * the (emulated) driver before MPI_Init, pick a GPU per rank, move data
 * between host arrays and device memory, count failed checks. */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(name) static __typeof__(&name) p_##name
#define LOAD(name) p_##name = (__typeof__(p_##name))sym(#name)
F(cuInit); F(cuDeviceGetCount); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc);
F(cuMemFree); F(cuMemcpyHtoD); F(cuMemcpyDtoH); F(cuMemsetD8);
static __typeof__(&cuGetProcAddress) gpa;
static int fails, rank, nprocs;

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #c);                    \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)
#define CK(call) CHECK((call) == CUDA_SUCCESS)

static inline void *sym(const char *name)
{
    void *fn = NULL;
    if (gpa(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, NULL) || !fn) {
        fprintf(stderr, "cuGetProcAddress(%s) failed\n", name);
        exit(2);
    }
    return fn;
}

/* load the driver and make a GPU current (by PMI_RANK), then MPI_Init */
static inline void gpu_init(int *argc, char ***argv)
{
    const char *pr = getenv("PMI_RANK");
    rank = pr ? atoi(pr) : 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(gpa = (__typeof__(gpa))dlsym(lib, "cuGetProcAddress_v2"))) {
        fprintf(stderr, "no emulated driver: %s\n", dlerror());
        exit(2);
    }
    LOAD(cuInit); LOAD(cuDeviceGetCount); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent);
    LOAD(cuMemAlloc); LOAD(cuMemFree); LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH); LOAD(cuMemsetD8);
    CK(p_cuInit(0));
    int ndev = 0;
    CK(p_cuDeviceGetCount(&ndev));
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, rank % (ndev ? ndev : 1)));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
}

/* device memory holding a copy of n bytes of h (h NULL: filled with 0xee) */
static inline void *dev_from(const void *h, size_t n)
{
    CUdeviceptr d = 0;
    CK(p_cuMemAlloc(&d, n ? n : 1));
    if (h && n)
        CK(p_cuMemcpyHtoD(d, h, n));
    else
        CK(p_cuMemsetD8(d, 0xee, n ? n : 1));
    return (void *)(uintptr_t)d;
}

static inline void dev_put(void *d, const void *h, size_t n)
{
    if (n)
        CK(p_cuMemcpyHtoD((CUdeviceptr)(uintptr_t)d, h, n));
}

/* a malloc'd host copy of n bytes of device memory */
static inline void *dev_get(const void *d, size_t n)
{
    void *h = malloc(n ? n : 1);
    if (n)
        CK(p_cuMemcpyDtoH(h, (CUdeviceptr)(uintptr_t)d, n));
    return h;
}

static inline void dev_free(void *d)
{
    CK(p_cuMemFree((CUdeviceptr)(uintptr_t)d));
}

/* compare n ints of device memory d with want; report the first difference */
static inline void check_ints(const void *d, const int *want, size_t n, const char *what)
{
    int *got = dev_get(d, n * sizeof(int));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i] && !bad++)
            first = i;
    if (bad)
        fprintf(stderr, "rank %d: %s: %zu of %zu ints wrong (first [%zu] = %d, want %d)\n", rank, what, bad, n, first,
                got[first], want[first]);
    CHECK(bad == 0);
    free(got);
}

static inline int gpu_finish(const char *name)
{
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %s (%d failed checks)\n", name, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total != 0;
}
#endif
