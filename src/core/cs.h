/* The critical section of MPI_THREAD_MULTIPLE: one process-wide lock taken by
 * every generated entry point (tools/gen/genapi.py) once a thread asked for
 * MPI_THREAD_MULTIPLE, reentrant per thread (a body may call other entry
 * points, user callbacks may call MPI), and given up inside the progress
 * engine while other threads wait for it, so a thread blocked in MPI_Recv or
 * MPI_Wait lets the others post, send and complete.  Single-threaded levels
 * pay one load and a not-taken branch per call.  MPICH's default global
 * critical section works the same way. */
#ifndef WH_CORE_CS_H
#define WH_CORE_CS_H
#include <pthread.h>

extern int wh_cs_on;                /* set once (MPI_THREAD_MULTIPLE granted), never cleared */
extern pthread_mutex_t wh_cs_mutex;
extern int wh_cs_waiters;           /* threads blocked on the lock */
extern __thread int wh_cs_depth __attribute__((tls_model("initial-exec")));

void wh_cs_lock_slow(void);
void wh_cs_yield_slow(void);
void wh_cs_enable(void);

static inline void wh_cs_enter(void)
{
    if (__builtin_expect(wh_cs_on, 0) && wh_cs_depth++ == 0 && pthread_mutex_trylock(&wh_cs_mutex) != 0)
        wh_cs_lock_slow();
}

static inline void wh_cs_exit(void)
{
    if (__builtin_expect(wh_cs_on, 0) && wh_cs_depth > 0 && --wh_cs_depth == 0)
        pthread_mutex_unlock(&wh_cs_mutex);
}

/* In wait loops: let a waiting thread in (no-op unless one waits). */
static inline void wh_cs_yield(void)
{
    if (__builtin_expect(wh_cs_on, 0) && __atomic_load_n(&wh_cs_waiters, __ATOMIC_RELAXED) && wh_cs_depth > 0)
        wh_cs_yield_slow();
}
#endif
