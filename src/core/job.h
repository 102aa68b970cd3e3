/* The job: this process's place in MPI_COMM_WORLD and on its node, set by
 * MPI_Init (src/mpi/init.c) and read by every layer; and the one way to take
 * the whole job down. */
#ifndef WH_CORE_JOB_H
#define WH_CORE_JOB_H
#include <mpi.h>

typedef struct wh_job {
    int rank, size;             /* in MPI_COMM_WORLD */
    int initialized, finalized;
    int thread_level;
    char hostname[MPI_MAX_PROCESSOR_NAME];
    int *host_of;               /* world rank -> host index (co-residence) */
    int nhosts;
    int my_host;
    int local_rank, local_size; /* among ranks of my host */
    int *local_ranks;           /* local index -> world rank */
    int *local_index;           /* world rank -> local index or -1 */
    int oversubscribed;         /* more ranks on this host than cpus in my cpuset */
    int ncpu;                   /* cpus in my cpuset */
    double t0;                  /* time base of MPI_Wtime */
} wh_job_t;

extern wh_job_t wh_job;

/* Abort the whole job through the launcher (or exit as a singleton), after
 * running the registered cleanups (e.g. removing a node region this rank owns). */
_Noreturn void wh_job_abort(int code, const char *msg);
/* Register a cleanup run by wh_job_abort (async-signal-safe work only). */
void wh_job_on_abort(void (*fn)(void));

/* Fatal-signal dispositions around library code that installs its own
 * handlers (provider initialization): save before, restore after. */
#define WH_SIG_GUARDED 7
struct sigaction;
void wh_sig_save(struct sigaction *saved);          /* WH_SIG_GUARDED entries */
void wh_sig_restore(const struct sigaction *saved);
#endif
