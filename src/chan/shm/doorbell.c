/* Doorbells (doorbell.h): the sleeper's and the waker's slow paths. */
#include <errno.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "chan/shm/doorbell.h"

int wh_db_fence;
static int db_state; /* 0 not tried, 1 membarrier registered, -1 fences */

int wh_db_setup(void)
{
    if (db_state == 0) {
        long r = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0);
        db_state = r == 0 ? 1 : -1;
        wh_db_fence = db_state < 0;
    }
    return db_state > 0 ? 0 : -1;
}

void wh_db_wake_slow(wh_db_t *d)
{
    uint32_t w = __atomic_load_n(&d->word, __ATOMIC_RELAXED);
    while (w & WH_DB_FLAGS) {
        /* one waker wins: it bumps the sequence and clears the flag, so later
         * wakers see nobody asleep and the sleeper's FUTEX_WAIT (if not yet
         * entered) finds the word changed */
        if (__atomic_compare_exchange_n(&d->word, &w, (w + 4u) & ~WH_DB_FLAGS, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
            syscall(SYS_futex, &d->word, FUTEX_WAKE, 1, NULL, NULL, 0);
            __atomic_add_fetch(&d->wakes, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

uint32_t wh_db_arm(wh_db_t *d, int want_space)
{
    uint32_t w = __atomic_or_fetch(&d->word, WH_DB_ASLEEP | (want_space ? WH_DB_SPACE : 0u), __ATOMIC_SEQ_CST);
    /* the flag before the second look, and every waker's work store before
     * its load of the flag (doorbell.h); without membarrier the wakers fence */
    if (db_state > 0)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
    return w;
}

int wh_db_wait(wh_db_t *d, uint32_t armed, long timeout_us)
{
    struct timespec ts = {.tv_sec = timeout_us / 1000000, .tv_nsec = (timeout_us % 1000000) * 1000};
    int saved = errno;
    syscall(SYS_futex, &d->word, FUTEX_WAIT, armed, &ts, NULL, 0); /* EAGAIN: rung already */
    errno = saved;
    __atomic_add_fetch(&d->naps, 1, __ATOMIC_RELAXED);
    uint32_t w = armed;
    /* still our armed value: nobody rang, lower the flag ourselves */
    return !__atomic_compare_exchange_n(&d->word, &w, armed & ~WH_DB_FLAGS, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED);
}

void wh_db_disarm(wh_db_t *d)
{
    __atomic_and_fetch(&d->word, ~WH_DB_FLAGS, __ATOMIC_SEQ_CST);
}
