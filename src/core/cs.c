/* MPI_THREAD_MULTIPLE's critical section (cs.h). */
#include <sched.h>

#include "core/cs.h"

int wh_cs_on;
pthread_mutex_t wh_cs_mutex = PTHREAD_MUTEX_INITIALIZER;
int wh_cs_waiters;
__thread int wh_cs_depth __attribute__((tls_model("initial-exec")));

void wh_cs_lock_slow(void)
{
    __atomic_add_fetch(&wh_cs_waiters, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&wh_cs_mutex);
    __atomic_sub_fetch(&wh_cs_waiters, 1, __ATOMIC_RELAXED);
}

void wh_cs_yield_slow(void)
{
    pthread_mutex_unlock(&wh_cs_mutex);
    sched_yield(); /* a plain unlock/lock would usually take it straight back */
    if (pthread_mutex_trylock(&wh_cs_mutex) != 0)
        wh_cs_lock_slow();
}

/* Called while initializing MPI (no other thread may call MPI yet): entry
 * points take the lock from the next call on; the one running now entered
 * with depth 0 and leaves without unlocking. */
void wh_cs_enable(void)
{
    __atomic_store_n(&wh_cs_on, 1, __ATOMIC_RELEASE);
}
