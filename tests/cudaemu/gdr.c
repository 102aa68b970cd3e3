/* cudaemu: a GDRCopy-like library (libgdrapi.so.2).  Pinning device memory
 * of the emulated driver gives the CPU a window onto it: the emulator's own
 * read-write view of the allocation (reached through a private entry point
 * of libcuda.so.1), in 64 KiB GPU pages.  Without the emulated driver loaded,
 * gdr_open fails as it does without the gdrdrv kernel module. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gdrapi_emu.h"

#define EMU_API __attribute__((visibility("default")))

struct gdr {
    int (*window)(uintptr_t addr, size_t size, uintptr_t *base, size_t *mapsz, char **shadow);
    int (*fault)(const char *fn);
};

typedef struct pin {
    uint32_t magic;
    uint64_t va, size;
    char *cpu; /* the window for va */
    int mapped;
} pin_t;
#define PIN_MAGIC 0x4744524du

static pin_t *pin_of(gdr_mh_t h)
{
    pin_t *p = (pin_t *)h.h;
    return p && p->magic == PIN_MAGIC ? p : NULL;
}

EMU_API gdr_t gdr_open(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        lib = dlopen("libcuda.so.1", RTLD_NOW);
    gdr_t g = lib ? calloc(1, sizeof *g) : NULL;
    if (!g)
        return NULL;
    *(void **)&g->window = dlsym(lib, "cudaemu_gdr_window");
    *(void **)&g->fault = dlsym(lib, "cudaemu_fault");
    if (!g->window || !g->fault || g->fault("gdr_open")) {
        free(g);
        return NULL; /* a real driver without gdrdrv */
    }
    return g;
}

EMU_API int gdr_close(gdr_t g)
{
    free(g);
    return 0;
}

EMU_API int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token, uint32_t va_space,
                           gdr_mh_t *handle)
{
    (void)p2p_token, (void)va_space;
    if (!g || !handle || !size)
        return EINVAL;
    if (g->fault("gdr_pin_buffer"))
        return ENOMEM;
    uintptr_t base;
    size_t mapsz;
    char *shadow;
    if (g->window(addr, size, &base, &mapsz, &shadow))
        return EINVAL; /* not device memory of the driver */
    uint64_t va = addr & GPU_PAGE_MASK;
    uint64_t end = (addr + size + GPU_PAGE_OFFSET) & GPU_PAGE_MASK;
    if (va < base || end > base + mapsz)
        return EINVAL;
    pin_t *p = calloc(1, sizeof *p);
    if (!p)
        return ENOMEM;
    p->magic = PIN_MAGIC;
    p->va = va;
    p->size = end - va;
    p->cpu = shadow + (va - base);
    handle->h = (unsigned long)p;
    return 0;
}

EMU_API int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)
{
    pin_t *p = pin_of(handle);
    if (!g || !p || p->mapped)
        return EINVAL; /* unmap first */
    p->magic = 0;
    free(p);
    return 0;
}

EMU_API int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag)
{
    if (!g || !pin_of(handle) || !flag)
        return EINVAL;
    *flag = 0;
    return 0;
}

EMU_API int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info)
{
    pin_t *p = pin_of(handle);
    if (!g || !p || !info)
        return EINVAL;
    memset(info, 0, sizeof *info);
    info->va = p->va;
    info->mapped_size = p->size;
    info->page_size = (uint32_t)GPU_PAGE_SIZE;
    info->mapped = p->mapped ? 1 : 0;
    info->wc_mapping = 1;
    info->mapping_type = p->mapped ? GDR_MAPPING_TYPE_WC : GDR_MAPPING_TYPE_NONE;
    return 0;
}

EMU_API int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)
{
    pin_t *p = pin_of(handle);
    if (!g || !p || !va || size != p->size || p->mapped)
        return EINVAL;
    p->mapped = 1;
    *va = p->cpu;
    return 0;
}

EMU_API int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)
{
    pin_t *p = pin_of(handle);
    if (!g || !p || !p->mapped || va != p->cpu || size != p->size)
        return EINVAL;
    p->mapped = 0;
    return 0;
}

/* Timing: a CPU store through the write-combining BAR mapping is fast, a
 * load is an uncached PCIe read (GDRCopy's published figures, roughly):
 * CUDAEMU_GDR_TO_GBPS (8), CUDAEMU_GDR_FROM_GBPS (0.5), CUDAEMU_GDR_LAT_US
 * (0.1) per copy; CUDAEMU_TIMING=0 turns it off like the driver's model. */
static double to_gbps, from_gbps, lat_ns;
static int timing_on;
static pthread_once_t tonce = PTHREAD_ONCE_INIT;

static double env_num(const char *name, double dflt)
{
    const char *s = getenv(name);
    return s && *s ? atof(s) : dflt;
}

static void timing_init(void)
{
    to_gbps = env_num("CUDAEMU_GDR_TO_GBPS", 8);
    from_gbps = env_num("CUDAEMU_GDR_FROM_GBPS", 0.5);
    lat_ns = env_num("CUDAEMU_GDR_LAT_US", 0.1) * 1000.0;
    timing_on = (int)env_num("CUDAEMU_TIMING", 1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* spin until the modeled time of a copy of n bytes that started at t0 */
static void pace(uint64_t t0, size_t n, int to)
{
    pthread_once(&tonce, timing_init);
    if (!timing_on)
        return;
    double bw = to ? to_gbps : from_gbps;
    uint64_t end = t0 + (uint64_t)(lat_ns + (double)n / (bw > 0 ? bw : 1));
    /* spun, not yielded: CPU loads and stores through the BAR mapping keep
     * the cpu busy for their whole time, and a yield handed the cpu to a
     * runnable thread of that cpu for the rest of its time slice (2-8 KiB
     * device ping-pong took 2x the driver-copy path's time;
     * docs/PERFORMANCE.md) */
    while (now_ns() < end)
        ;
}

static int in_map(const pin_t *p, const void *d, size_t size)
{
    const char *c = d;
    return p && p->mapped && c >= p->cpu && size <= p->size && (size_t)(c - p->cpu) <= p->size - size;
}

EMU_API int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr, size_t size)
{
    if (!in_map(pin_of(handle), map_d_ptr, size))
        return EINVAL;
    uint64_t t0 = now_ns();
    memcpy(map_d_ptr, h_ptr, size);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the write-combining flush */
    pace(t0, size, 1);
    return 0;
}

EMU_API int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr, size_t size)
{
    if (!in_map(pin_of(handle), map_d_ptr, size))
        return EINVAL;
    uint64_t t0 = now_ns();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    memcpy(h_ptr, map_d_ptr, size);
    pace(t0, size, 0);
    return 0;
}

EMU_API void gdr_runtime_get_version(int *major, int *minor)
{
    *major = 2;
    *minor = 5;
}

EMU_API int gdr_driver_get_version(gdr_t g, int *major, int *minor)
{
    if (!g)
        return EINVAL;
    *major = 2;
    *minor = 5;
    return 0;
}

EMU_API int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v)
{
    if (!g || !v)
        return EINVAL;
    if (attr == GDR_ATTR_USE_PERSISTENT_MAPPING) {
        *v = 1;
        return 0;
    }
    return EINVAL;
}
