/* The asynchronous progress thread (WHARF_ASYNC_PROGRESS, docs/RMA.md).
 *
 * Passive-target operations that travel as active messages (lock grants,
 * puts and accumulates to private windows, get replies, flush acks) need the
 * target's progress engine to run.  With the tunable on, the first window
 * creation starts one thread per process that, every WHARF_ASYNC_PROGRESS_US
 * microseconds, takes the MPI critical section (core/cs.h) if nobody holds it,
 * drives wh_progress until it runs dry, and lets go.  The critical section is
 * switched on for the rest of the run (every entry point then takes the
 * process lock, as under MPI_THREAD_MULTIPLE); the thread enters with a
 * trylock, so an application thread inside MPI — which progresses by itself —
 * is never made to wait for it, and wh_progress hands the lock over to an
 * application thread that waits for it (core/cs.h). */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "core/cs.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

static pthread_t thr;
static int running, stop;
uint64_t wh_rma_async_rounds; /* rounds in which the thread found work (tests, debug) */

static void *async_loop(void *arg)
{
    (void)arg;
    long us = wh_tun.async_progress_us > 0 ? wh_tun.async_progress_us : 1;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        if (pthread_mutex_trylock(&wh_cs_mutex) == 0) {
            wh_cs_depth = 1;
            int n = 0, k = 0;
            while (k++ < 1000 && wh_progress() > 0)
                n++;
            if (n)
                wh_rma_async_rounds++;
            wh_cs_depth = 0;
            pthread_mutex_unlock(&wh_cs_mutex);
        }
        while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
            ;
        ts.tv_sec = us / 1000000;
        ts.tv_nsec = (us % 1000000) * 1000;
    }
    return NULL;
}

int wh_rma_async_start(void)
{
    if (running || !wh_tun.async_progress)
        return MPI_SUCCESS;
    if (!wh_cs_on) {
        /* Called inside an entry point that entered with the critical section
         * off (depth 0): take the lock as if it had been on, so the entry
         * point's exit releases it (core/cs.h). */
        pthread_mutex_lock(&wh_cs_mutex);
        wh_cs_depth = 1;
        wh_cs_enable();
    }
    stop = 0;
    int e = pthread_create(&thr, NULL, async_loop, NULL);
    if (e) {
        WH_WARN("rma", "cannot start the asynchronous progress thread (error %d); passive-target operations "
                       "will need the target in MPI", e);
        return MPI_SUCCESS;
    }
    running = 1;
    WH_DEBUG("rma", "asynchronous progress thread started (every %d us)", wh_tun.async_progress_us);
    return MPI_SUCCESS;
}

void wh_rma_async_stop(void)
{
    if (!running)
        return;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    /* The thread does block on the lock in one place: wh_progress yields the
     * critical section to a thread waiting for it (wh_cs_yield) and takes it
     * back with a blocking lock.  If that waiter was this thread, entering
     * MPI_Finalize, the thread now waits for the lock held here: give the lock
     * up while joining.  The thread then finishes its round (the runtime is
     * still whole) and sees `stop`. */
    int held = wh_cs_depth;
    if (held)
        pthread_mutex_unlock(&wh_cs_mutex);
    pthread_join(thr, NULL);
    if (held)
        pthread_mutex_lock(&wh_cs_mutex);
    running = 0;
}
