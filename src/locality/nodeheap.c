/* The node-shared allocator (see nodeheap.h). */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "locality/nodeheap.h"
#include "util/log.h"

#define LOCK_WAIT_NS 2000000000LL /* 2 s: a holder that takes longer is presumed dead */

size_t wh_nheap_ctl_size(uint32_t nchunks)
{
    return sizeof(wh_nheap_ctl_t) + (size_t)nchunks * sizeof(uint32_t);
}

int wh_nheap_open(wh_nheap_t *h, wh_nheap_ctl_t *ctl, unsigned char *region, uint64_t base, uint32_t nchunks,
                  int format, int (*grow)(void *, size_t), void *arg)
{
    h->ctl = ctl;
    h->region = region;
    h->grow = grow;
    h->arg = arg;
    if (format) {
        memset(ctl->run, 0, (size_t)nchunks * sizeof(uint32_t));
        ctl->nchunks = nchunks;
        ctl->base = base;
        ctl->used = 0;
        __atomic_store_n(&ctl->lock, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&ctl->format, WH_NHEAP_FORMAT, __ATOMIC_RELEASE);
    }
    return 0;
}

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* usable by this rank: formatted, with the base it expects */
static int ready(const wh_nheap_t *h)
{
    return h->ctl && __atomic_load_n(&h->ctl->format, __ATOMIC_ACQUIRE) == WH_NHEAP_FORMAT;
}

static int lock(wh_nheap_t *h)
{
    long long end = 0;
    for (unsigned spins = 0;; spins++) {
        uint32_t z = 0;
        if (__atomic_compare_exchange_n(&h->ctl->lock, &z, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return 0;
        if (spins > 64) {
            if (!end)
                end = mono_ns() + LOCK_WAIT_NS;
            else if (mono_ns() > end) {
                WH_WARN("nodeheap", "node heap lock held for more than 2 s (a rank died inside?): not allocating");
                return -1;
            }
            sched_yield();
        }
    }
}

static void unlock(wh_nheap_t *h) { __atomic_store_n(&h->ctl->lock, 0, __ATOMIC_RELEASE); }

void *wh_nheap_alloc(wh_nheap_t *h, size_t len, uint64_t *off)
{
    if (!ready(h) || !len)
        return NULL;
    wh_nheap_ctl_t *c = h->ctl;
    size_t need = (len + WH_NHEAP_CHUNK - 1) / WH_NHEAP_CHUNK;
    if (need > c->nchunks)
        return NULL;
    if (lock(h))
        return NULL;
    uint32_t n = c->nchunks, start = n;
    for (uint32_t i = 0; i + need <= n;) {
        uint32_t r = c->run[i];
        if (r) { /* skip the allocation starting here */
            i += r == WH_NHEAP_IN ? 1 : r;
            continue;
        }
        uint32_t j = i;
        while (j < i + need && !c->run[j])
            j++;
        if (j == i + need) {
            start = i;
            break;
        }
        i = j;
    }
    if (start == n) {
        unlock(h);
        return NULL;
    }
    c->run[start] = (uint32_t)need;
    for (uint32_t k = 1; k < need; k++)
        c->run[start + k] = WH_NHEAP_IN;
    c->used += (uint32_t)need;
    unlock(h);
    uint64_t o = c->base + (uint64_t)start * WH_NHEAP_CHUNK;
    if (h->grow(h->arg, o + need * WH_NHEAP_CHUNK) != 0) {
        wh_nheap_free(h, o);
        return NULL;
    }
    void *p = h->region + o;
    memset(p, 0, need * WH_NHEAP_CHUNK);
    *off = o;
    return p;
}

/* chunk index of allocation offset off, or -1 */
static long chunk_of(const wh_nheap_t *h, uint64_t off, size_t len)
{
    const wh_nheap_ctl_t *c = h->ctl;
    if (off < c->base || (off - c->base) % WH_NHEAP_CHUNK)
        return -1;
    uint64_t i = (off - c->base) / WH_NHEAP_CHUNK;
    if (i >= c->nchunks)
        return -1;
    uint32_t r = __atomic_load_n(&c->run[i], __ATOMIC_ACQUIRE);
    if (!r || r == WH_NHEAP_IN || (uint64_t)r * WH_NHEAP_CHUNK < len)
        return -1;
    return (long)i;
}

void *wh_nheap_attach(wh_nheap_t *h, uint64_t off, size_t len)
{
    if (!ready(h) || chunk_of(h, off, len) < 0)
        return NULL;
    if (h->grow(h->arg, off + len) != 0)
        return NULL;
    return h->region + off;
}

int wh_nheap_locate(const wh_nheap_t *h, const void *p, size_t len, uint64_t *off)
{
    /* (addresses as integers: p may lie in any object) */
    uintptr_t a = (uintptr_t)p, base = (uintptr_t)h->region;
    if (!ready(h) || !h->region || a < base)
        return 0;
    uint64_t o = (uint64_t)(a - base), end = h->ctl->base + (uint64_t)h->ctl->nchunks * WH_NHEAP_CHUNK;
    if (o < h->ctl->base || o > end || len > end - o)
        return 0;
    *off = o;
    return 1;
}

const void *wh_nheap_range(wh_nheap_t *h, uint64_t off, size_t len)
{
    if (!ready(h) || !len)
        return NULL;
    const wh_nheap_ctl_t *c = h->ctl;
    uint64_t end = c->base + (uint64_t)c->nchunks * WH_NHEAP_CHUNK;
    if (off < c->base || off > end || len > end - off)
        return NULL;
    for (uint64_t i = (off - c->base) / WH_NHEAP_CHUNK; i <= (off + len - 1 - c->base) / WH_NHEAP_CHUNK; i++)
        if (!__atomic_load_n(&c->run[i], __ATOMIC_ACQUIRE))
            return NULL; /* a free chunk: not memory anyone lent */
    if (h->grow(h->arg, off + len) != 0)
        return NULL;
    return h->region + off;
}

int wh_nheap_free(wh_nheap_t *h, uint64_t off)
{
    if (!ready(h) || lock(h))
        return -1;
    long i = chunk_of(h, off, 0);
    if (i < 0) {
        unlock(h);
        return -1;
    }
    wh_nheap_ctl_t *c = h->ctl;
    uint32_t r = c->run[i];
    for (uint32_t k = 0; k < r; k++)
        c->run[i + k] = 0;
    c->used -= r;
    unlock(h);
    return 0;
}

uint32_t wh_nheap_used(const wh_nheap_t *h) { return ready(h) ? h->ctl->used : 0; }
