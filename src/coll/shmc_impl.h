/* Private to src/coll: the node-shared-memory collectives' block layout,
 * its flag and cell accessors and the waiting helpers that shmcoll.c
 * (setup, barrier, bcast, reductions, large messages) and shmcells.c
 * (gather, scatter, alltoall, scans, reduce_scatter, allgatherv through the
 * cells) share.  The layout and the rules are described in shmcoll.c. */
#ifndef WH_COLL_SHMC_IMPL_H
#define WH_COLL_SHMC_IMPL_H
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll.h"

#define LINE 64
#define NCELL 8 /* cells per rank: a root (or a reduce leaf) may run NCELL - 1 collectives ahead */

typedef struct shmc {
    int state;          /* 1 ready, -1 not available */
    unsigned char *base;
    uint64_t off;       /* node-heap offset (rank 0 frees it) */
    size_t cell;        /* bytes per cell */
    size_t stride;      /* bytes per rank */
    uint64_t seq;       /* the collective being run */
    uint64_t floor;     /* every flag was >= floor when last looked at */
    int can_sleep;      /* waiters may sleep on a futex (same kernel, WHARF_COLL_SLEEP) */
    int sleep_busy;     /* auto, node not oversubscribed: sleep only while the host is busy (util/hostload.h) */
    int spin;           /* polls before giving the core away (WHARF_COLL_SPIN, 0 when sleeping at once) */
    uint64_t sleep_after; /* microseconds of yielding before a sleep (WHARF_COLL_SLEEP_AFTER, or 0) */
    int release;        /* WHARF_COLL_SHM_BARRIER=release: rank 0 releases the barrier */
    int herd;           /* far more ranks than cpus (WHARF_COLL_SLEEP_RATIO): rank 0 combines and releases */
    /* the large block (shm-large), set up by the first large collective */
    int bstate;         /* 0 not tried, 1 ready, -1 not available */
    unsigned char *bbase;
    uint64_t boff;
    size_t bcell;       /* bytes per cell (WHARF_COLL_SHM_CHUNK, rounded) */
    size_t bstride;     /* bytes per rank: flag line, out line, 2 cells */
    uint64_t bseq;      /* steps (bflag values) */
    uint64_t bchunk;    /* chunks run (bout values; chunk t uses cell t % 2) */
} shmc_t;

/* Per rank: NCELL slot lines, the done line, NCELL cells.  The slot line of
 * collective k (k % NCELL) holds r's flag for k (the sequence number, at
 * offset 0), the waiter count of that flag (8), the bytes r wrote for k (12)
 * and, when they fit (INLINE bytes), the payload itself (16): a reader of a
 * small collective takes flag, size and data with one cache line.  A slot
 * only grows (k, k + NCELL, ...), so "r arrived at v" is the slot of v
 * holding at least v, for any v. */
#define INLINE (LINE - 16)
static inline volatile uint64_t *flag(const shmc_t *s, int r, uint64_t k)
{
    return (volatile uint64_t *)(s->base + (size_t)r * s->stride + (size_t)(k % NCELL) * LINE);
}
static inline volatile uint64_t *done(const shmc_t *s, int r)
{
    return (volatile uint64_t *)(s->base + (size_t)r * s->stride + NCELL * LINE);
}
/* herd allreduce: whether rank 0 failed to combine the last one it released
 * (the word after the done line's waiter count) */
static inline volatile uint32_t *herd_rc(const shmc_t *s)
{
    return (volatile uint32_t *)((volatile unsigned char *)done(s, 0) + 12);
}
/* where rank r's `total` bytes of collective k are: inline in its slot line,
 * or its cell k % NCELL (the writer's total decides; readers use the size
 * the writer published, or their own once they checked it matches) */
static inline unsigned char *cell(const shmc_t *s, int r, uint64_t k, size_t total)
{
    if (total <= INLINE)
        return (unsigned char *)flag(s, r, k) + 16;
    return s->base + (size_t)r * s->stride + (NCELL + 2) * LINE + (size_t)(k % NCELL) * s->cell;
}

/* bytes rank r wrote for collective k, published in the slot line before
 * the flag is raised.  Ranks that pass different counts (erroneous: type
 * signatures must match) get an error instead of garbage. */
static inline volatile uint32_t *csize(const shmc_t *s, int r, uint64_t k)
{
    return (volatile uint32_t *)((volatile unsigned char *)flag(s, r, k) + 12);
}

/* sleep_busy: whether any rank has slept on a flag of the block (0, then 1
 * for good).  Until then a writer skips the fence and the waiter count, as
 * where nobody may sleep; the first sleeper sets it before it counts itself,
 * so a writer that looked just before can miss waking that one sleeper once,
 * which then wakes from its bounded nap.  Every post reads it: it has rank
 * 0's extra line to itself, written once, so it stays in every cpu's cache
 * (as a word of rank 0's done line, which rank 0 writes after every
 * collective, it cost the other ranks a cache miss per post). */
static inline volatile uint32_t *sleepy(const shmc_t *s)
{
    return (volatile uint32_t *)(s->base + (NCELL + 1) * LINE);
}

/* the waiter count of a flag: the 32-bit word after it (flags start their line) */
static inline volatile uint32_t *sleepers(volatile uint64_t *p)
{
    return (volatile uint32_t *)(p + 1);
}

static inline long futex(volatile uint64_t *p, int op, uint32_t val, const struct timespec *ts)
{
    /* the low half of the 64-bit flag: it changes with every new value */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    volatile uint32_t *w = (volatile uint32_t *)p;
#else
    volatile uint32_t *w = (volatile uint32_t *)p + 1;
#endif
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

/* raise a flag (single writer) and wake whoever sleeps on it; where no
 * waiter of c may sleep (s->can_sleep is alike on every rank) a release
 * store is enough: nobody counts itself in the word after the flag, and the
 * full fence the sleeper handshake needs (store the flag, then read the
 * count) costs a 2-rank barrier about a fifth of its time */
static inline void post(const shmc_t *s, volatile uint64_t *p, uint64_t v)
{
    if (!s->can_sleep || (s->sleep_busy && !__atomic_load_n(sleepy(s), __ATOMIC_RELAXED))) {
        __atomic_store_n(p, v, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(sleepers(p), __ATOMIC_SEQ_CST) != 0, 0))
        futex(p, FUTEX_WAKE, INT_MAX, NULL);
}

/* the first error of rc (MPI_SUCCESS or an error) and r */
static inline int first_err(int rc, int r)
{
    return rc != MPI_SUCCESS ? rc : r;
}

/* c's block, set up on first use (collective), or NULL: point-to-point */
shmc_t *wh_shmc_get(wh_comm_t *c);
/* wait until *p >= v (spin, yield, sleep as the block's mode says); the
 * flag already there costs one load, in line */
void wh_shmc_wait_slow(const shmc_t *s, volatile uint64_t *p, uint64_t v);
static inline void wh_shmc_wait_ge(const shmc_t *s, volatile uint64_t *p, uint64_t v)
{
    if (__builtin_expect(__atomic_load_n(p, __ATOMIC_ACQUIRE) < v, 0))
        wh_shmc_wait_slow(s, p, v);
}
/* every flag of the n ranks >= v (remembers the least value seen) */
void wh_shmc_wait_flags(shmc_t *s, int n, uint64_t v);
/* the error for a rank that contributed got bytes where want were expected */
int wh_shmc_size_mismatch(size_t got, size_t want, int from);
#endif
