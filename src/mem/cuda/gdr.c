/* GDRCopy for small host<->device copies: the device buffer's allocation is
 * pinned and mapped into the CPU's address space once (libgdrapi.so.2,
 * loaded with dlopen like the driver), then a copy is a CPU memcpy through
 * the mapping (gdr_copy_to/from_mapping) — no driver call, no stream, no
 * copy-engine latency.  Stores through the write-combining mapping are fast,
 * loads are uncached PCIe reads, hence two limits (WHARF_CUDA_GDR_H2D_MAX,
 * WHARF_CUDA_GDR_D2H_MAX).
 *
 * Pins are cached per allocation (up to PINS).  A pin is dropped when the
 * driver reports any free (the pointer-kind cache's event counter) or when
 * gdr_get_callback_flag says the memory was invalidated (the mechanism
 * GDRCopy offers on real hardware).  Anything failing (no library, gdr_open
 * failing as without the gdrdrv module, a pin or map refused) falls back to
 * driver copies; a refused pin logs one warning.  The declarations below
 * are written from GDRCopy's published 2.x API (no registry ships
 * gdrapi.h): never checked against the real header. */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "mem/cuda/wh_cuda.h"
#include "mem/mem.h"
#include "util/log.h"
#include "util/tunables.h"

typedef struct {
    unsigned long h;
} gdr_mh_t;
typedef struct {
    uint64_t va, mapped_size;
    uint32_t page_size;
    uint64_t tm_cycles;
    uint32_t cycles_per_ms;
    unsigned mapped : 1, wc_mapping : 1;
    int mapping_type;
} gdr_info_t;

static struct {
    void *(*open)(void);
    int (*close)(void *g);
    int (*pin)(void *g, unsigned long addr, size_t size, uint64_t tok, uint32_t vas, gdr_mh_t *h);
    int (*unpin)(void *g, gdr_mh_t h);
    int (*info)(void *g, gdr_mh_t h, gdr_info_t *i);
    int (*map)(void *g, gdr_mh_t h, void **va, size_t size);
    int (*unmap)(void *g, gdr_mh_t h, void *va, size_t size);
    int (*flag)(void *g, gdr_mh_t h, int *flag);
    int (*to)(gdr_mh_t h, void *map, const void *src, size_t n);
    int (*from)(gdr_mh_t h, void *dst, const void *map, size_t n);
} G;
static void *glib, *gh;

#define PINS 32
static struct pin {
    uintptr_t lo, hi; /* the allocation */
    uint64_t va;      /* first mapped device address */
    char *map;        /* its CPU address */
    size_t mapsz;
    gdr_mh_t mh;
} pins[PINS];
static int npins, warned;
static uint64_t freegen;
uint64_t wh_cuda_gdr_copies;

int wh_cuda_gdr_on(void)
{
    return gh != NULL;
}

void wh_cuda_gdr_init(void)
{
    if (!wh_tun.cuda_gdr || !(glib = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL)))
        return;
    const char *names[] = {"gdr_open",  "gdr_close", "gdr_pin_buffer",         "gdr_unpin_buffer",
                           "gdr_get_info_v2", "gdr_map", "gdr_unmap", "gdr_get_callback_flag",
                           "gdr_copy_to_mapping", "gdr_copy_from_mapping"};
    void **slots = (void **)&G;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!(slots[i] = dlsym(glib, names[i]))) {
            WH_DEBUG("cuda", "libgdrapi.so.2 has no %s: no GDRCopy", names[i]);
            dlclose(glib);
            glib = NULL;
            return;
        }
    if (!(gh = G.open())) {
        WH_DEBUG("cuda", "gdr_open failed (no gdrdrv module?): no GDRCopy");
        return;
    }
    freegen = wh_cuda_kcache_freegen();
    WH_DEBUG("cuda", "GDRCopy on: host-to-device copies <= %zu B, device-to-host <= %zu B through CPU mappings",
             wh_tun.cuda_gdr_h2d_max, wh_tun.cuda_gdr_d2h_max);
}

static void drop(struct pin *p)
{
    G.unmap(gh, p->mh, p->map, p->mapsz);
    G.unpin(gh, p->mh);
    *p = pins[--npins];
}

void wh_cuda_gdr_finalize(void)
{
    if (!gh)
        return;
    while (npins)
        drop(&pins[0]);
    if (wh_cuda_gdr_copies)
        WH_INFO("cuda", "GDRCopy: %llu small copies through CPU mappings", (unsigned long long)wh_cuda_gdr_copies);
    G.close(gh);
    gh = NULL;
    wh_cuda_gdr_copies = 0;
}

static struct pin *pin_for(uintptr_t a)
{
    uint64_t fg = wh_cuda_kcache_freegen();
    if (fg != freegen) { /* memory went away somewhere: mappings may be stale */
        while (npins)
            drop(&pins[0]);
        freegen = fg;
    }
    for (int i = 0; i < npins; i++)
        if (a >= pins[i].lo && a < pins[i].hi) {
            int inval = 0;
            if (G.flag(gh, pins[i].mh, &inval) == 0 && !inval)
                return &pins[i];
            drop(&pins[i]);
            break;
        }
    wh_CUdeviceptr base = 0;
    size_t size = 0;
    if (wh_cu.cuMemGetAddressRange(&base, &size, (wh_CUdeviceptr)a) != WH_CUDA_SUCCESS || !size)
        return NULL;
    struct pin p = {.lo = (uintptr_t)base, .hi = (uintptr_t)(base + size)};
    int rc = G.pin(gh, (unsigned long)base, size, 0, 0, &p.mh);
    gdr_info_t info;
    if (rc == 0) {
        memset(&info, 0, sizeof info);
        if ((rc = G.info(gh, p.mh, &info)) == 0 && (rc = G.map(gh, p.mh, (void **)&p.map, info.mapped_size)))
            G.unpin(gh, p.mh);
    }
    if (rc) {
        if (!warned++)
            WH_WARN("cuda", "GDRCopy could not pin/map device memory at 0x%llx (error %d): small copies of such "
                    "buffers use driver copies", (unsigned long long)base, rc);
        return NULL;
    }
    p.va = info.va;
    p.mapsz = info.mapped_size;
    if (npins == PINS)
        drop(&pins[0]);
    pins[npins] = p;
    return &pins[npins++];
}

int wh_cuda_gdr_copy(void *dst, int dk, const void *src, int sk, size_t n)
{
    int to = dk == WH_MEM_CUDA;
    if (!gh || dk == sk || n > wh_cuda_gdr_max[to])
        return 1;
    uintptr_t a = (uintptr_t)(to ? dst : src);
    struct pin *p = pin_for(a);
    if (!p || a < p->va || a - p->va + n > p->mapsz)
        return 1;
    char *m = p->map + (a - p->va);
    int rc = to ? G.to(p->mh, m, src, n) : G.from(p->mh, dst, m, n);
    if (rc)
        return 1;
    wh_cuda_gdr_copies++;
    return 0;
}
