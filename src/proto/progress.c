/* The progress engine: one loop polls every channel that serves a peer,
 * pushes queued messages and rendezvous fragments, runs the upper layers'
 * hooks; the waiting policy decides between spinning and yielding. */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/cs.h"
#include "proto/proto.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

wh_p2p_am_t wh_p2p_am;

int wh_proto_init(void)
{
    WH_CHECK(wh_am_register("p2p.eager", wh_am_eager, &wh_p2p_am.eager));
    WH_CHECK(wh_am_register("p2p.rts", wh_am_rts, &wh_p2p_am.rts));
    WH_CHECK(wh_am_register("p2p.sack", wh_am_sack, &wh_p2p_am.sack));
    WH_CHECK(wh_am_register("p2p.cts", wh_am_cts, &wh_p2p_am.cts));
    WH_CHECK(wh_am_register("p2p.data", wh_am_data, &wh_p2p_am.data));
    WH_CHECK(wh_am_register("p2p.fin", wh_am_fin, &wh_p2p_am.fin));
    WH_CHECK(wh_am_register("p2p.cancel", wh_am_cancel, &wh_p2p_am.cancel));
    WH_CHECK(wh_am_register("p2p.cancel_ack", wh_am_cancel_ack, &wh_p2p_am.cancel_ack));
    return MPI_SUCCESS;
}

void wh_proto_finalize(void)
{
    wh_match_finalize();
    wh_am_reset();
}

/* 1: spin (yield only now and then); 0: spin for spin_count idle polls, then
 * yield on every idle poll (at once when the host is oversubscribed).  auto is
 * the hybrid: a rank cannot see every process that shares its CPUs (other
 * containers, other jobs), and sched_yield costs well under a microsecond
 * when nobody else is runnable. */
static int spin_mode;
static unsigned poll_tick;

/* Progress hooks of upper layers (nonblocking collectives, one-sided, ...):
 * called from every wh_progress(), so any MPI call on the rank advances them. */
#define WH_PROGRESS_HOOKS 8
static wh_progress_hook_t hooks[WH_PROGRESS_HOOKS];
static const int *hook_work[WH_PROGRESS_HOOKS];
static int nhooks;

int wh_progress_hook_add(wh_progress_hook_t fn, const int *work)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return MPI_SUCCESS;
    if (nhooks == WH_PROGRESS_HOOKS)
        return wh_error(MPI_ERR_INTERN, "too many progress hooks (%d)", WH_PROGRESS_HOOKS);
    hooks[nhooks] = fn;
    hook_work[nhooks++] = work;
    return MPI_SUCCESS;
}

void wh_progress_init(void)
{
    spin_mode = !strcmp(wh_tun.wait, "spin"); /* yield and auto: the hybrid (tunable choices checked at load) */
    char polled[64] = "";
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (wh_chan_polled[c] && c != WH_CHAN_SELF)
            snprintf(polled + strlen(polled), sizeof polled - strlen(polled), " %s", wh_chans[c]->name);
    WH_DEBUG("progress", "wait policy %s (local ranks %d, oversubscribed %d); channels polled:%s",
             spin_mode ? "spin" : "yield", wh_job.local_size, wh_job.oversubscribed, polled);
}

int wh_progress(void)
{
    wh_cs_yield(); /* MPI_THREAD_MULTIPLE: a waiting thread may come in here */
    int n = wh_chans_progress();
    if (__builtin_expect(wh_pend_head != NULL, 0))
        n += wh_pending_push();
    if (wh_rndv_nstreams)
        n += wh_rndv_push();
    for (int i = 0; i < nhooks; i++) /* idle layers cost a load and a branch */
        if (*hook_work[i])
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
    /* Now and then: a co-resident peer that died ends the job with its name
     * instead of leaving this rank waiting forever. */
    if ((++poll_tick & 0x3ffff) == 0)
        wh_chans_check_peers();
    /* Rarely: notice a launcher that went away, so an orphaned rank ends. */
    if ((poll_tick & 0xfffff) == 0) {
        if (wh_pmi_lost()) {
            WH_ERRLOG("progress", "lost the connection to the launcher; exiting");
            _exit(1);
        }
    }
}
