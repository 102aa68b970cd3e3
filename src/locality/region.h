/* The node region: the shared memory co-resident ranks meet in.  One provider
 * interface, two providers:
 *   file   a file in the node directory (WHARF_NODE_DIR, default /dev/shm),
 *          created by the first rank to arrive, grown as layers carve from it,
 *          unlinked once every co-resident rank is attached;
 *   fixed  an existing fixed-size mapping (WHARF_NODE_REGION: an ivshmem PCI
 *          BAR in a VM, or any pre-sized file); never created or removed, its
 *          stale contents from an earlier job are reset by the first claimant.
 * The registry (registry.c) and every shm channel buffer are carved inside. */
#ifndef WH_LOCALITY_REGION_H
#define WH_LOCALITY_REGION_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct wh_region wh_region_t;

typedef struct wh_region_provider {
    const char *name;
    /* Open or create the region named by job scope `name`, at least `len`
     * bytes usable; sets r->base, r->len, r->created (this rank made it). */
    int (*open)(wh_region_t *r, const char *name, size_t len);
    /* Make [0, len) usable (the file provider grows the file). */
    int (*grow)(wh_region_t *r, size_t len);
    /* Remove the name (file provider); the mapping stays valid. */
    void (*unlink)(wh_region_t *r);
    void (*close)(wh_region_t *r);
} wh_region_provider_t;

struct wh_region {
    const wh_region_provider_t *prov;
    unsigned char *base;
    size_t len;         /* usable bytes (file: current size) */
    size_t map_len;     /* bytes reserved in the address space */
    int fd;
    int created;        /* this rank created the file */
    int unlinked;
    dev_t dev;          /* identity of the region as this rank sees it */
    ino_t ino;
    int tmpfs;
    char path[512];
};

extern const wh_region_provider_t wh_region_file, wh_region_fixed;
void wh_region_close_map(wh_region_t *r); /* munmap + close, for providers */
#endif
