/* MPI point-to-point with CUDA device buffers on the emulated driver: every
 * combination of device/host send and receive buffers, blocking and
 * nonblocking, sizes around the eager and fragment thresholds, a strided
 * datatype on device memory, and MPI_Sendrecv.  The receive buffers are
 * device memory the CPU cannot touch: a wharf path that forgot it is device
 * memory crashes the test; one that forgot to wait for a copy fails the data
 * checks (the emulator's streams run with random delays).
 * GPU_TEST_ALLOC=vmm allocates every device buffer with the virtual memory
 * management API instead (cuMemCreate with POSIX file descriptor export,
 * cuMemAddressReserve, cuMemMap, cuMemSetAccess): memory legacy CUDA IPC
 * cannot share, the VMM file-descriptor scheme can. */
#include <cuda.h>
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(name) static __typeof__(&name) p_##name
#define LOAD(name) p_##name = (__typeof__(p_##name))sym(#name)
F(cuInit); F(cuDeviceGetCount); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc);
F(cuMemFree); F(cuMemcpyHtoD); F(cuMemcpyDtoH); F(cuMemsetD8); F(cuPointerGetAttribute);
F(cuMemCreate); F(cuMemAddressReserve); F(cuMemMap); F(cuMemSetAccess); F(cuMemUnmap); F(cuMemAddressFree);
F(cuMemRelease); F(cuMemGetAllocationGranularity);
static int use_vmm;
static CUdevice mydev;
static __typeof__(&cuGetProcAddress) gpa;
static int fails;

#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #c);                    \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)
#define CK(call) CHECK((call) == CUDA_SUCCESS)

static void *sym(const char *name)
{
    void *fn = NULL;
    if (gpa(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, NULL) || !fn) {
        fprintf(stderr, "cuGetProcAddress(%s) failed\n", name);
        exit(2);
    }
    return fn;
}

static int rank;

/* VMM allocations: address -> handle and mapped size */
#define NVMM 64
static struct {
    CUdeviceptr p;
    size_t size;
    CUmemGenericAllocationHandle h;
} vmm[NVMM];

static CUresult dalloc(CUdeviceptr *d, size_t n)
{
    if (!use_vmm)
        return p_cuMemAlloc(d, n);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = mydev;
    size_t g = 0;
    CK(p_cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t sz = (n + g - 1) / g * g;
    int slot = 0;
    while (slot < NVMM && vmm[slot].p)
        slot++;
    CHECK(slot < NVMM);
    CUresult rc = p_cuMemCreate(&vmm[slot].h, sz, &prop, 0);
    if (rc == CUDA_SUCCESS)
        rc = p_cuMemAddressReserve(d, sz, 0, 0, 0);
    if (rc == CUDA_SUCCESS)
        rc = p_cuMemMap(*d, sz, 0, vmm[slot].h, 0);
    CUmemAccessDesc acc = {.location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    if (rc == CUDA_SUCCESS)
        rc = p_cuMemSetAccess(*d, sz, &acc, 1);
    vmm[slot].p = *d;
    vmm[slot].size = sz;
    return rc;
}

static CUresult dfree(CUdeviceptr d)
{
    if (!use_vmm)
        return p_cuMemFree(d);
    for (int i = 0; i < NVMM; i++)
        if (vmm[i].p == d) {
            CUresult rc = p_cuMemUnmap(d, vmm[i].size);
            if (rc == CUDA_SUCCESS)
                rc = p_cuMemAddressFree(d, vmm[i].size);
            if (rc == CUDA_SUCCESS)
                rc = p_cuMemRelease(vmm[i].h);
            vmm[i].p = 0;
            return rc;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static unsigned char pat(size_t i, int seed)
{
    return (unsigned char)((i * 131u + (unsigned)seed * 7u + (i >> 8)) & 0xff);
}

/* a buffer of n bytes of the given kind (1 = device), filled with the pattern */
static void *mkbuf(int dev, size_t n, int seed)
{
    unsigned char *h = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        h[i] = pat(i, seed);
    if (!dev)
        return h;
    CUdeviceptr d = 0;
    CK(dalloc(&d, n ? n : 1));
    if (n)
        CK(p_cuMemcpyHtoD(d, h, n));
    free(h);
    return (void *)(uintptr_t)d;
}

static void *mkrecv(int dev, size_t n)
{
    if (!dev) {
        unsigned char *h = malloc(n ? n : 1);
        memset(h, 0xee, n ? n : 1);
        return h;
    }
    CUdeviceptr d = 0;
    CK(dalloc(&d, n ? n : 1));
    CK(p_cuMemsetD8(d, 0xee, n ? n : 1));
    return (void *)(uintptr_t)d;
}

static void check_buf(int dev, void *b, size_t n, int seed, const char *what)
{
    unsigned char *h = b;
    if (dev) {
        h = malloc(n ? n : 1);
        if (n)
            CK(p_cuMemcpyDtoH(h, (CUdeviceptr)(uintptr_t)b, n));
    }
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (h[i] != pat(i, seed)) {
            if (!bad)
                first = i;
            bad++;
        }
    if (bad)
        fprintf(stderr, "rank %d: %s: %zu of %zu bytes wrong (first at %zu)\n", rank, what, bad, n, first);
    CHECK(bad == 0);
    if (dev)
        free(h);
}

static void freebuf(int dev, void *b)
{
    if (dev)
        CK(dfree((CUdeviceptr)(uintptr_t)b));
    else
        free(b);
}

int main(int argc, char **argv)
{
    /* the GPU is chosen before MPI_Init (by the launcher's rank variable, as
     * applications do with local-rank variables), so wharf sees which one */
    const char *pr = getenv("PMI_RANK");
    rank = pr ? atoi(pr) : 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib || !(gpa = (__typeof__(gpa))dlsym(lib, "cuGetProcAddress_v2"))) {
        fprintf(stderr, "no emulated driver: %s\n", dlerror());
        return 2;
    }
    LOAD(cuInit); LOAD(cuDeviceGetCount); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent);
    LOAD(cuMemAlloc); LOAD(cuMemFree); LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH); LOAD(cuMemsetD8);
    LOAD(cuPointerGetAttribute);
    use_vmm = getenv("GPU_TEST_ALLOC") && !strcmp(getenv("GPU_TEST_ALLOC"), "vmm");
    if (use_vmm) {
        LOAD(cuMemCreate); LOAD(cuMemAddressReserve); LOAD(cuMemMap); LOAD(cuMemSetAccess); LOAD(cuMemUnmap);
        LOAD(cuMemAddressFree); LOAD(cuMemRelease); LOAD(cuMemGetAllocationGranularity);
    }
    CK(p_cuInit(0));
    int ndev = 0;
    CK(p_cuDeviceGetCount(&ndev));
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, rank % (ndev ? ndev : 1)));
    mydev = dev;
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));

    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* MPICH's and Open MPI's run-time queries say device buffers are taken */
    CHECK(MPIX_Query_cuda_support() == 1);
    CHECK(MPIX_CUDA_AWARE_SUPPORT == 1);
    int sup = -1;
    CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &sup) == MPI_SUCCESS && sup == 1);
    CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &sup) == MPI_SUCCESS && sup == 0);
    CHECK(MPIX_Query_hip_support() == 0 && MPIX_Query_ze_support() == 0);

    /* device memory really is out of the CPU's reach, and wharf sees it as such */
    void *probe = mkrecv(1, 64);
    unsigned mt = 0;
    CK(p_cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)probe));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    freebuf(1, probe);

    const size_t sizes[] = {0, 1, 100, 8192, 8193, 16385, 65536, 300000, (4u << 20) + 3};
    const int nsizes = (int)(sizeof sizes / sizeof *sizes);
    int peer = rank ^ 1;
    if (peer < size) {
        for (int si = 0; si < nsizes; si++) {
            size_t n = sizes[si];
            for (int kinds = 0; kinds < 4; kinds++) {
                int sdev = kinds & 1, rdev = (kinds >> 1) & 1;
                int seed = si * 4 + kinds;
                char what[96];
                snprintf(what, sizeof what, "%zu B %s -> %s", n, sdev ? "device" : "host", rdev ? "device" : "host");
                /* blocking, rank even sends to odd */
                if (rank % 2 == 0) {
                    void *s = mkbuf(sdev, n, seed);
                    MPI_Send(s, (int)n, MPI_BYTE, peer, si, MPI_COMM_WORLD);
                    freebuf(sdev, s);
                } else {
                    void *r = mkrecv(rdev, n);
                    MPI_Status st;
                    MPI_Recv(r, (int)n, MPI_BYTE, peer, si, MPI_COMM_WORLD, &st);
                    int cnt = -1;
                    MPI_Get_count(&st, MPI_BYTE, &cnt);
                    CHECK(cnt == (int)n);
                    check_buf(rdev, r, n, seed, what);
                    freebuf(rdev, r);
                }
                /* nonblocking exchange both ways at once */
                void *s = mkbuf(sdev, n, seed + 1000 + rank);
                void *r = mkrecv(rdev, n);
                MPI_Request q[2];
                MPI_Irecv(r, (int)n, MPI_BYTE, peer, 100 + si, MPI_COMM_WORLD, &q[0]);
                MPI_Isend(s, (int)n, MPI_BYTE, peer, 100 + si, MPI_COMM_WORLD, &q[1]);
                MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
                check_buf(rdev, r, n, seed + 1000 + peer, what);
                freebuf(sdev, s);
                freebuf(rdev, r);
            }
        }

        /* a strided datatype on device memory: every other int of 2 x 4000 */
        enum { CNT = 4000 };
        MPI_Datatype vec;
        MPI_Type_vector(CNT, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        size_t bytes = (size_t)CNT * 2 * sizeof(int);
        if (rank % 2 == 0) {
            void *s = mkbuf(1, bytes, 77);
            MPI_Send(s, 1, vec, peer, 500, MPI_COMM_WORLD);
            MPI_Send(s, 1, vec, peer, 501, MPI_COMM_WORLD);
            freebuf(1, s);
        } else {
            /* packed into contiguous device memory, then unpacked into strided device memory */
            unsigned char *full = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
            for (size_t i = 0; i < bytes; i++)
                full[i] = pat(i, 77);
            void *r = mkrecv(1, CNT * sizeof(int));
            MPI_Recv(r, CNT, MPI_INT, peer, 500, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CK(p_cuMemcpyDtoH(got, (CUdeviceptr)(uintptr_t)r, CNT * sizeof(int)));
            for (int i = 0; i < CNT; i++)
                memcpy(want + i * sizeof(int), full + 2 * i * sizeof(int), sizeof(int));
            CHECK(!memcmp(got, want, CNT * sizeof(int)));
            freebuf(1, r);
            void *r2 = mkrecv(1, bytes);
            MPI_Recv(r2, 1, vec, peer, 501, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CK(p_cuMemcpyDtoH(got, (CUdeviceptr)(uintptr_t)r2, bytes));
            int bad = 0;
            for (int i = 0; i < CNT; i++) {
                bad += memcmp(got + 2 * i * sizeof(int), full + 2 * i * sizeof(int), sizeof(int)) != 0;
                bad += got[(2 * i + 1) * sizeof(int)] != 0xee; /* the gaps stay untouched */
            }
            CHECK(bad == 0);
            freebuf(1, r2);
            free(full);
            free(want);
            free(got);
        }
        MPI_Type_free(&vec);

        /* a window of large device messages of mixed sizes in flight at once:
         * the receiver announces every matched one, and the sender fills the
         * pipeline ring for the next while the receiver still empties the one
         * before.  Pass 1 posts the receives in reverse order (the ring's
         * order is the receiver's, not the sender's) and mixes host buffers in. */
        {
            enum { W = 7 };
            const size_t wsz[W] = {300000, 65536, (1u << 20) + 5, 70000, 8193, 2u << 20, 262144};
            void *wb[W];
            int wdev[W];
            MPI_Request wq[W];
            for (int pass = 0; pass < 2; pass++) {
                for (int j = 0; j < W; j++) {
                    int i = pass && rank % 2 ? W - 1 - j : j;
                    wdev[i] = !pass || i % 3 != 1;
                    if (rank % 2 == 0) {
                        wb[i] = mkbuf(wdev[i], wsz[i], 900 + 10 * pass + i);
                        MPI_Isend(wb[i], (int)wsz[i], MPI_BYTE, peer, 700 + i, MPI_COMM_WORLD, &wq[i]);
                    } else {
                        wb[i] = mkrecv(wdev[i], wsz[i]);
                        MPI_Irecv(wb[i], (int)wsz[i], MPI_BYTE, peer, 700 + i, MPI_COMM_WORLD, &wq[i]);
                    }
                }
                MPI_Waitall(W, wq, MPI_STATUSES_IGNORE);
                for (int i = 0; i < W; i++) {
                    if (rank % 2)
                        check_buf(wdev[i], wb[i], wsz[i], 900 + 10 * pass + i, "window");
                    freebuf(wdev[i], wb[i]);
                }
            }
        }

        /* synchronous and buffered-free modes on small device buffers (staged eager) */
        for (int k = 0; k < 3; k++) {
            size_t m = k == 0 ? 8 : k == 1 ? 4096 : 4097;
            if (rank % 2 == 0) {
                void *sb = mkbuf(1, m, 400 + k);
                MPI_Ssend(sb, (int)m, MPI_BYTE, peer, 600 + k, MPI_COMM_WORLD);
                freebuf(1, sb);
            } else {
                void *rb = mkrecv(1, m);
                MPI_Recv(rb, (int)m, MPI_BYTE, peer, 600 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check_buf(1, rb, m, 400 + k, "ssend");
                freebuf(1, rb);
            }
        }

        /* sendrecv between device buffers */
        size_t n = 200000;
        void *s = mkbuf(1, n, 300 + rank), *r = mkrecv(1, n);
        MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, 9, r, (int)n, MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_buf(1, r, n, 300 + peer, "sendrecv");
        freebuf(1, s);
        freebuf(1, r);
    }
    /* to myself (the self channel), small and large, and a persistent send */
    for (int k = 0; k < 2; k++) {
        size_t n = k ? 1000000 : 1000;
        void *s = mkbuf(1, n, 700 + k), *r = mkrecv(1, n);
        MPI_Request q;
        MPI_Send_init(s, (int)n, MPI_BYTE, rank, 800 + k, MPI_COMM_WORLD, &q);
        for (int rep = 0; rep < 2; rep++) {
            MPI_Start(&q);
            MPI_Recv(r, (int)n, MPI_BYTE, rank, 800 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            check_buf(1, r, n, 700 + k, "self");
        }
        MPI_Request_free(&q);
        freebuf(1, s);
        freebuf(1, r);
    }
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("gpu p2p: %s (%d failed checks)\n", total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total != 0;
}
