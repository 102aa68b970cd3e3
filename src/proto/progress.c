/* The progress engine: one loop polls every channel that serves a peer, and
 * the waiting policy decides between spinning, yielding and blocking. */
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

/* 1: spin (yield only now and then); 0: spin for spin_count idle polls, then
 * yield on every idle poll (at once when the host is oversubscribed).  auto is
 * the hybrid: a rank cannot see every process that shares its CPUs (other
 * containers, other jobs), and sched_yield costs well under a microsecond
 * when nobody else is runnable. */
static int spin_mode;
static int net_on, shm_on, self_on;
static unsigned poll_tick;

/* Progress hooks of upper layers (nonblocking collectives, one-sided, ...):
 * called from every wh_progress(), so any MPI call on the rank advances them. */
#define WH_PROGRESS_HOOKS 8
static wh_progress_hook_t hooks[WH_PROGRESS_HOOKS];
static int nhooks;

int wh_progress_hook_add(wh_progress_hook_t fn)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return MPI_SUCCESS;
    if (nhooks == WH_PROGRESS_HOOKS)
        return wh_error(MPI_ERR_INTERN, "too many progress hooks (%d)", WH_PROGRESS_HOOKS);
    hooks[nhooks++] = fn;
    return MPI_SUCCESS;
}

void wh_progress_init(void)
{
    const char *w = wh_tun.wait;
    if (!strcmp(w, "spin"))
        spin_mode = 1;
    else if (!strcmp(w, "yield"))
        spin_mode = 0;
    else
        spin_mode = 0;
    net_on = wh_chan_active[WH_CHAN_NET];
    shm_on = wh_chan_active[WH_CHAN_SHM];
    self_on = 1;
    (void)self_on;
    WH_DEBUG("progress", "wait policy %s (local ranks %d, oversubscribed %d); channels polled:%s%s",
             spin_mode ? "spin" : "yield", wh_job.local_size, wh_job.oversubscribed, shm_on ? " shm" : "",
             net_on ? " net" : "");
}

int wh_progress(void)
{
    int n = 0;
    if (shm_on)
        n += wh_chan_shm_ops.progress();
    if (net_on)
        n += wh_chan_net_ops.progress();
    n += wh_pending_push();
    for (int i = 0; i < nhooks; i++)
        n += hooks[i]();
    return n;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

void wh_progress_idle(unsigned *idle)
{
    unsigned i = ++*idle;
    if (spin_mode) {
        cpu_relax();
        /* after a long idle spell, let others run now and then */
        if ((i & 0xffff) == 0)
            sched_yield();
    } else if (i >= (unsigned)wh_tun.spin_count || wh_job.oversubscribed) {
        sched_yield();
    } else {
        cpu_relax();
    }
    /* Rarely: notice a launcher that went away, so an orphaned rank ends. */
    if ((++poll_tick & 0xfffff) == 0) {
        if (wh_pmi_lost()) {
            WH_ERRLOG("progress", "lost the connection to the launcher; exiting");
            _exit(1);
        }
    }
}
