/* Scratch memory for temporaries of collectives.
 *
 * A large temporary from malloc is, above glibc's mmap threshold, mapped on
 * every call and unmapped on free: the next call takes a page fault and a
 * page clear for every 4 KiB it touches.  A 1 MiB MPI_Scan at 2 ranks spent
 * about a third of its time there.  Blocks handed back here are kept, up to
 * WHARF_SCRATCH_CACHE bytes in WH_SCRATCH_SLOTS blocks, and the next request
 * takes the smallest cached block that fits (best fit, so a small request
 * does not pin a huge block).  Small blocks (below WH_SCRATCH_MIN) go straight
 * back to malloc, which serves them from its heap without faults anyway.
 *
 * A tiny spinlock guards the slots: collectives run under the MPI critical
 * section, but nonblocking schedules advance from the progress engine of any
 * thread, so the cache does not rely on the caller's lock. */
#include <stdint.h>
#include <stdlib.h>

#include "util/scratch.h"
#include "util/tunables.h"

#define WH_SCRATCH_SLOTS 8
#define WH_SCRATCH_MIN ((size_t)64 << 10)
#define WH_SCRATCH_HDR 64 /* keeps the block 64-byte aligned */

struct hdr {
    size_t size; /* usable bytes after the header */
};

static struct hdr *slot[WH_SCRATCH_SLOTS];
static size_t cached;
static int lk;

static void lock(void)
{
    while (__atomic_exchange_n(&lk, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&lk, __ATOMIC_RELAXED))
            ;
}

static void unlock(void)
{
    __atomic_store_n(&lk, 0, __ATOMIC_RELEASE);
}

void *wh_scratch_get(size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (bytes > SIZE_MAX - WH_SCRATCH_HDR)
        return NULL;
    struct hdr *h = NULL;
    if (bytes >= WH_SCRATCH_MIN / 2 && __atomic_load_n(&cached, __ATOMIC_RELAXED)) {
        lock();
        int best = -1;
        for (int i = 0; i < WH_SCRATCH_SLOTS; i++)
            if (slot[i] && slot[i]->size >= bytes && (best < 0 || slot[i]->size < slot[best]->size))
                best = i;
        if (best >= 0) {
            h = slot[best];
            slot[best] = NULL;
            __atomic_store_n(&cached, cached - h->size, __ATOMIC_RELAXED);
        }
        unlock();
    }
    if (!h) {
        void *p = NULL;
        if (posix_memalign(&p, WH_SCRATCH_HDR, WH_SCRATCH_HDR + bytes))
            return NULL;
        h = p;
        h->size = bytes;
    }
    return (char *)h + WH_SCRATCH_HDR;
}

void wh_scratch_put(void *p)
{
    if (!p)
        return;
    struct hdr *h = (struct hdr *)((char *)p - WH_SCRATCH_HDR);
    size_t cap = wh_tun.scratch_cache;
    if (h->size < WH_SCRATCH_MIN || h->size > cap) {
        free(h);
        return;
    }
    struct hdr *drop[WH_SCRATCH_SLOTS + 1];
    int nd = 0;
    lock();
    /* make room: drop the smallest cached blocks until this one fits */
    for (;;) {
        int empty = -1, small = -1;
        for (int i = 0; i < WH_SCRATCH_SLOTS; i++) {
            if (!slot[i])
                empty = i;
            else if (small < 0 || slot[i]->size < slot[small]->size)
                small = i;
        }
        if (empty >= 0 && cached + h->size <= cap) {
            slot[empty] = h;
            __atomic_store_n(&cached, cached + h->size, __ATOMIC_RELAXED);
            h = NULL;
            break;
        }
        if (small < 0 || slot[small]->size > h->size)
            break; /* keep the bigger cached blocks; this one goes */
        drop[nd++] = slot[small];
        __atomic_store_n(&cached, cached - slot[small]->size, __ATOMIC_RELAXED);
        slot[small] = NULL;
    }
    unlock();
    for (int i = 0; i < nd; i++)
        free(drop[i]);
    free(h);
}

void wh_scratch_drain(void)
{
    lock();
    for (int i = 0; i < WH_SCRATCH_SLOTS; i++) {
        free(slot[i]);
        slot[i] = NULL;
    }
    __atomic_store_n(&cached, 0, __ATOMIC_RELAXED);
    unlock();
}

size_t wh_scratch_cached(void)
{
    return __atomic_load_n(&cached, __ATOMIC_RELAXED);
}
