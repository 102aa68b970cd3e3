/* The node-shared allocator: node-region memory allocated and freed at run
 * time (per communicator, per window) by any co-resident rank, within the
 * per-node budget WHARF_NODE_HEAP, in chunks of WH_NHEAP_CHUNK bytes.
 *
 * A control block (a lock word and one run-length entry per chunk) is carved
 * from the region at init, like the shm queues; the heap's chunks lie past
 * everything carved at init, so the file grows (and the tmpfs pays) only as
 * chunks are handed out.  An allocation is named by its offset in the region:
 * the allocating rank passes it to its peers (through its communicator), who
 * attach it.  Exhaustion, a lock held too long (a rank that died inside), or a
 * region that cannot grow make wh_node_alloc return NULL: callers fall back,
 * they never fail. */
#ifndef WH_LOCALITY_NODEHEAP_H
#define WH_LOCALITY_NODEHEAP_H
#include <stddef.h>
#include <stdint.h>

#define WH_NHEAP_CHUNK ((size_t)64 << 10)

typedef struct wh_nheap_ctl {
    uint32_t lock;      /* 0 free, else held (spin, bounded) */
    uint32_t nchunks;   /* chunks in the budget */
    uint64_t base;      /* region offset of chunk 0 (the same for every rank, checked) */
    uint32_t used;      /* chunks handed out */
    uint32_t format;    /* WH_NHEAP_FORMAT once initialized */
    uint32_t run[];     /* per chunk: n = first of an n-chunk allocation, WH_NHEAP_IN inside one, 0 free */
} wh_nheap_ctl_t;
#define WH_NHEAP_FORMAT 0x6e686570u
#define WH_NHEAP_IN 0xffffffffu

/* One heap as seen by this rank (a unit test can make several). */
typedef struct wh_nheap {
    wh_nheap_ctl_t *ctl;
    unsigned char *region;                     /* the region's base in this process */
    int (*grow)(void *arg, size_t len);        /* make region [0, len) usable here */
    void *arg;
} wh_nheap_t;

size_t wh_nheap_ctl_size(uint32_t nchunks);
/* Every co-resident rank opens with the same parameters; `format` on exactly
 * one of them (the first) initializes the control block. */
int wh_nheap_open(wh_nheap_t *h, wh_nheap_ctl_t *ctl, unsigned char *region, uint64_t base, uint32_t nchunks,
                  int format, int (*grow)(void *, size_t), void *arg);
/* Allocate len bytes (zeroed); NULL when the budget or the region says no. */
void *wh_nheap_alloc(wh_nheap_t *h, size_t len, uint64_t *off);
/* Map an allocation another rank made; NULL if off/len name no allocation. */
void *wh_nheap_attach(wh_nheap_t *h, uint64_t off, size_t len);
/* 1 if [p, p + len) of this process lies in the heap's chunks (*off: its
 * region offset, the same for every rank); no check of what is allocated */
int wh_nheap_locate(const wh_nheap_t *h, const void *p, size_t len, uint64_t *off);
/* [off, off + len) as mapped here, if every chunk it touches is allocated
 * (a peer's offset, checked before any byte is read); else NULL */
const void *wh_nheap_range(wh_nheap_t *h, uint64_t off, size_t len);
/* Free (by any rank that knows the offset); returns 0, or -1 if off is not an allocation. */
int wh_nheap_free(wh_nheap_t *h, uint64_t off);
uint32_t wh_nheap_used(const wh_nheap_t *h);

/* The job's heap in the node region (locality.c): NULL/-1 when this rank has
 * no node region with co-residents or the heap is disabled. */
void *wh_node_alloc(size_t len, uint64_t *off);
void *wh_node_attach(uint64_t off, size_t len);
int wh_node_free(uint64_t off);
int wh_node_locate(const void *p, size_t len, uint64_t *off);
const void *wh_node_range(uint64_t off, size_t len);
#endif
