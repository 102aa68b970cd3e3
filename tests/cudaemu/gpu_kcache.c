/* The pointer-kind cache (src/mem/cuda/kcache.c) on the emulated driver,
 * which counts cuPointerGetAttribute calls (cudaemu_ptrattr_calls):
 * - 1000 host-buffer messages ask the driver a handful of times at most
 *   (WHARF_CUDA_KCACHE=0: at least once per message, so the count is real);
 * - 200 small device-buffer messages likewise (the allocation's interval);
 * - after cuMemFree the freed range is asked about again: host memory mapped
 *   at the old device address is sent as host memory, with the right data,
 *   and a new device allocation is recognized. */
#include <sys/mman.h>

#include "gpu_common.h"

static uint64_t calls(void)
{
    static _Atomic uint64_t *c;
    if (!c) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        c = lib ? dlsym(lib, "cudaemu_ptrattr_calls") : NULL;
        if (!c) {
            fprintf(stderr, "the emulator does not count pointer queries\n");
            exit(2);
        }
    }
    return *c;
}

enum { M = 1000, SMALL = 256 };

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    const char *kc = getenv("WHARF_CUDA_KCACHE");
    int cache = !kc || strcmp(kc, "0");
    int peer = rank ^ 1;
    char hb[SMALL];
    if (peer < nprocs) {
        /* host buffers */
        memset(hb, rank, sizeof hb);
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t c0 = calls();
        for (int i = 0; i < M; i++) {
            if (rank % 2 == 0)
                MPI_Send(hb, SMALL, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            else
                MPI_Recv(hb, SMALL, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        uint64_t host_q = calls() - c0;
        printf("rank %d: %d host messages, %llu pointer queries\n", rank, M, (unsigned long long)host_q);
        if (cache)
            CHECK(host_q <= 16);
        else
            CHECK(host_q >= M);
        /* small device buffers */
        int *h = malloc(SMALL);
        for (int i = 0; i < SMALL / 4; i++)
            h[i] = i * 3 + 1;
        void *d = dev_from(rank % 2 == 0 ? h : NULL, SMALL);
        c0 = calls();
        for (int i = 0; i < 200; i++) {
            if (rank % 2 == 0)
                MPI_Send(d, SMALL, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
            else
                MPI_Recv(d, SMALL, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        uint64_t dev_q = calls() - c0;
        printf("rank %d: 200 device messages, %llu pointer queries\n", rank, (unsigned long long)dev_q);
        if (cache)
            CHECK(dev_q <= 16);
        check_ints(d, h, SMALL / 4, "device messages");
        /* free it, put host memory at the same address, send from there */
        dev_free(d);
        char *hm = mmap(d, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        int same = hm == (char *)d;
        MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (same) {
            if (rank % 2 == 0)
                memcpy(hm, h, SMALL);
            else
                memset(hm, 0, SMALL);
            c0 = calls();
            if (rank % 2 == 0)
                MPI_Send(hm, SMALL, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
            else
                MPI_Recv(hm, SMALL, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(calls() > c0); /* the freed interval was forgotten: the driver was asked */
            CHECK(!memcmp(hm, h, SMALL));
            munmap(hm, 65536);
        } else if (rank == 0) {
            printf("the freed address could not be mapped again: that part skipped\n");
        }
        if (hm != MAP_FAILED && !same && hm)
            munmap(hm, 65536);
        /* a new device allocation is device memory again */
        void *d2 = dev_from(rank % 2 == 0 ? h : NULL, SMALL);
        if (rank % 2 == 0)
            MPI_Send(d2, SMALL, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
        else
            MPI_Recv(d2, SMALL, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_ints(d2, h, SMALL / 4, "new device allocation");
        dev_free(d2);
        free(h);
    }
    return gpu_finish("gpu kcache");
}
