/* The pointer-kind cache of the CUDA memory kind: which addresses are device
 * memory, without asking the driver every time.
 *
 * - Device allocations the driver reported (base and size from the range
 *   attributes) are kept in a small sorted interval map; a pointer inside
 *   one is device memory.  Cleared whenever any device memory went away
 *   (a freed range may become host memory).
 * - Host pages (4 KiB) that the driver called host memory are kept in the
 *   memory-kind layer's direct-mapped table of page numbers (wh_mem_hostpg,
 *   tested inline by wh_mem_query before any call); a pointer on one is host
 *   memory.  Cleared whenever any device memory appeared (a host address
 *   may since have been unmapped and reused by the driver).
 * Both need to hear of allocations and frees the application makes straight
 * to the driver.  The emulated driver counts them (cudaemu_mem_gen, looked up
 * with dlsym); a real driver has no such counters, so with one the cache is
 * off (every query asks the driver, as before) until the counters are fed by
 * CUPTI driver-API callbacks (docs/GPU.md).  WHARF_CUDA_KCACHE=0 turns it
 * off too.  Races between threads only lose entries (each slot is one
 * aligned word; the map is rebuilt under the MPI critical section). */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "mem/cuda/wh_cuda.h"
#include "mem/mem.h"
#include "util/tunables.h"

#define POS_MAX 128

static const volatile uint64_t *gens; /* [0] allocations, [1] frees */
static uint64_t seen[2];
static struct ival {
    uintptr_t lo, hi;
} pos[POS_MAX];
static int npos;
uint64_t wh_cuda_kc_hits, wh_cuda_kc_misses;

static const uint64_t no_gen;

void wh_cuda_kcache_init(void *lib)
{
    gens = NULL;
    npos = 0;
    memset(wh_mem_hostpg, 0, sizeof wh_mem_hostpg);
    wh_mem_gen = &no_gen;
    wh_mem_gen_seen = 0;
    if (lib && wh_tun.cuda_kcache)
        gens = (const volatile uint64_t *)dlsym(lib, "cudaemu_mem_gen");
    if (gens) {
        seen[0] = gens[0];
        seen[1] = gens[1];
        wh_mem_gen = &gens[0];
        wh_mem_gen_seen = seen[0];
    }
}

void wh_cuda_kcache_finalize(void)
{
    gens = NULL;
    npos = 0;
    memset(wh_mem_hostpg, 0, sizeof wh_mem_hostpg);
    wh_mem_gen = &no_gen;
    wh_mem_gen_seen = 0;
}

uint64_t wh_cuda_kcache_freegen(void)
{
    return gens ? gens[1] : 0;
}

int wh_cuda_kcache_on(void)
{
    return gens != NULL;
}

static void pos_add(uintptr_t lo, uintptr_t hi)
{
    if (npos == POS_MAX)
        npos = 0; /* full: start over */
    int i = npos;
    while (i > 0 && pos[i - 1].lo > lo) {
        pos[i] = pos[i - 1];
        i--;
    }
    pos[i] = (struct ival){lo, hi};
    npos++;
}

static int pos_find(uintptr_t a)
{
    int lo = 0, hi = npos - 1;
    while (lo <= hi) {
        int m = (lo + hi) / 2;
        if (a < pos[m].lo)
            hi = m - 1;
        else if (a >= pos[m].hi)
            lo = m + 1;
        else
            return 1;
    }
    return 0;
}

/* the driver's answer: 1 device memory, 0 anything else */
static int ask(const void *p)
{
    unsigned int mt = 0;
    if (wh_cu.cuPointerGetAttribute(&mt, WH_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (wh_CUdeviceptr)(uintptr_t)p) !=
        WH_CUDA_SUCCESS)
        return 0; /* not memory the driver knows: plain host memory */
    return mt == WH_CU_MEMORYTYPE_DEVICE;
}

int wh_cuda_owns_cached(const void *p)
{
    if (!gens)
        return ask(p);
    uint64_t ga = gens[0], gf = gens[1];
    if (__builtin_expect(gf != seen[1], 0)) {
        npos = 0;
        seen[1] = gf;
    }
    if (__builtin_expect(ga != seen[0], 0)) {
        memset(wh_mem_hostpg, 0, sizeof wh_mem_hostpg);
        wh_mem_gen_seen = seen[0] = ga;
    }
    uintptr_t a = (uintptr_t)p, pg = (a >> 12) + 1;
    uintptr_t *slot = &wh_mem_hostpg[pg % WH_MEM_HOSTPG];
    if (*slot == pg || (npos && pos_find(a))) {
        wh_cuda_kc_hits++;
        return *slot != pg;
    }
    wh_cuda_kc_misses++;
    int dev = ask(p);
    if (!dev) {
        *slot = pg;
        return 0;
    }
    wh_CUdeviceptr base = 0;
    size_t size = 0;
    if (wh_cu.cuPointerGetAttribute(&base, WH_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (wh_CUdeviceptr)a) ==
            WH_CUDA_SUCCESS &&
        wh_cu.cuPointerGetAttribute(&size, WH_CU_POINTER_ATTRIBUTE_RANGE_SIZE, (wh_CUdeviceptr)a) == WH_CUDA_SUCCESS &&
        size && base <= a && a < base + size)
        pos_add((uintptr_t)base, (uintptr_t)(base + size));
    return 1;
}
