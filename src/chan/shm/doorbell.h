/* Doorbells: how a rank that waits idle for a long time sleeps in the kernel
 * instead of burning time slices in sched_yield, and how co-resident ranks
 * that make work for it wake it (WHARF_WAIT_SLEEP, docs/DESIGN.md).
 *
 * Every co-resident rank owns one cache line of the shm channel's node region;
 * its first 32-bit word is the futex word: bit 0 says "asleep (or about to
 * be)", bit 1 "and wake me when my outbound cells or slots are freed" (the
 * sleeper has sends waiting for room), bits 2..31 a sequence bumped by every
 * wake-up.  Senders ring on bit 0, receivers that consumed a rank's cells on
 * bit 1 (so a rank asleep with nothing queued is not woken by every
 * consumption of what it sent earlier).
 *
 *   sleeper (the owner)             waker (anyone who made work for it)
 *   w = word |= ASLEEP              publish the work (release store)
 *   barrier (below)                 load word (plain: the hot path)
 *   look for work once more         if its bit: CAS word to (seq + 1, awake),
 *   FUTEX_WAIT(word == w, timeout)    the winner issues FUTEX_WAKE
 *   clear ASLEEP if still set
 *
 * The waker's store of the work and its load of the word must not be
 * reordered (store buffer: the load could complete first), nor the
 * sleeper's store of the flag and its second look.  The sleeper pays for
 * both: membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) after raising the flag
 * runs a full barrier on every cpu that runs a registered process, so a
 * waker either saw the flag or had made its work visible before the second
 * look.  The waker's fast path stays one plain load of a line nobody writes
 * while nobody sleeps.  A process whose kernel refused the registration
 * (seccomp, old kernels) sets wh_db_fence and pays a full fence per wake
 * check instead.  A missed wake-up (a writer this protocol does not cover)
 * costs at most the bounded timeout, never a hang.
 *
 * FUTEX_WAIT/WAKE without FUTEX_PRIVATE_FLAG: a shared futex is keyed by
 * the mapped file and offset, so it works between processes, containers and
 * PID namespaces of one kernel; never between VMs sharing a fixed region
 * (the caller checks boot ids). */
#ifndef WH_CHAN_SHM_DOORBELL_H
#define WH_CHAN_SHM_DOORBELL_H
#include <stdint.h>

#define WH_DB_ASLEEP 1u
#define WH_DB_SPACE 2u  /* also wake on freed room (set with ASLEEP) */
#define WH_DB_FLAGS 3u

typedef struct wh_db {
    _Alignas(64) volatile uint32_t word;
    uint32_t naps, wakes; /* statistics of the owner / its wakers (relaxed, approximate) */
    uint32_t pad[13];
} wh_db_t;
_Static_assert(sizeof(wh_db_t) == 64, "a doorbell is one cache line");

extern int wh_db_fence; /* membarrier unavailable here: fence before every wake check */

/* Once per process before the first wake check (registration is idempotent);
 * 0 when membarrier works, else sets wh_db_fence and returns -1. */
int wh_db_setup(void);

/* Waker, after publishing work for d's owner with a release store: `bit`
 * WH_DB_ASLEEP (a message for it) or WH_DB_SPACE (room freed for it). */
void wh_db_wake_slow(wh_db_t *d);
static inline void wh_db_ring(wh_db_t *d, uint32_t bit)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST); /* the compiler keeps the load after the store */
    if (__builtin_expect(wh_db_fence, 0))
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(__atomic_load_n(&d->word, __ATOMIC_RELAXED) & bit, 0))
        wh_db_wake_slow(d);
}

/* Sleeper (d's owner): raise the flag (with WH_DB_SPACE if want_space) and
 * order it before the caller's second look for work; returns the word to
 * wait on. */
uint32_t wh_db_arm(wh_db_t *d, int want_space);
/* Sleep while the word is still `armed`, at most timeout_us; then the flag
 * is down.  Returns 1 if a waker rang (or had rung since wh_db_arm), 0 on
 * timeout. */
int wh_db_wait(wh_db_t *d, uint32_t armed, long timeout_us);
/* Lower the flag without sleeping (work was found after wh_db_arm). */
void wh_db_disarm(wh_db_t *d);
#endif
