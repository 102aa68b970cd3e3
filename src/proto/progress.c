/* The progress engine: one loop polls every channel that serves a peer,
 * pushes queued messages and rendezvous fragments, runs the upper layers'
 * hooks; the waiting policy decides between spinning, yielding and sleeping.
 *
 * Sleeping (WHARF_WAIT_SLEEP, mirrors the shared-memory collectives'
 * WHARF_COLL_SLEEP): a wait that has yielded for WHARF_WAIT_SLEEP_AFTER
 * microseconds, where sleeping is allowed (auto: the node runs more ranks
 * than the cpuset has cpus; on a node the job does not oversubscribe, only
 * while the host is busy, util/hostload.h, and then right after the spin
 * polls: there a yield often keeps the cpu from the rank waited for), sleeps on the rank's doorbell in the node
 * region (the shm channel's nap: futex, rung by every co-resident rank that
 * puts a message in its queues — eager cells, rendezvous control messages,
 * CMA FINs, fragments — and, when it sleeps with sends queued, by whoever
 * frees room; chan/shm/doorbell.h).  Each sleep is bounded
 * (WHARF_WAIT_SLEEP_MAX; WHARF_WAIT_SLEEP_NET while the network channel is
 * polled too, whose traffic rings no doorbell), so a wake-up nobody rings
 * costs latency, never a hang, and the peer-death and launcher checks run
 * between sleeps (by time: the poll counts below barely move then).  Short
 * waits never reach the futex; a sender pays one load of the receiver's
 * doorbell per message while nobody sleeps.  Not while MPI_THREAD_MULTIPLE
 * (or the one-sided progress thread) holds the process lock: a sleeper would
 * keep the other threads out; not while the device pipeline polls CUDA
 * events. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cs.h"
#include "util/hostload.h"
#include "proto/proto.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

wh_p2p_am_t wh_p2p_am;
static uint64_t naps, naps_rung; /* doorbell sleeps (WHARF_LOG=debug prints them at finalize) */

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
    WH_CHECK(wh_am_register("p2p.push", wh_am_push, &wh_p2p_am.push));
    WH_CHECK(wh_am_register("p2p.pdata", wh_am_pdata, &wh_p2p_am.pdata));
    return MPI_SUCCESS;
}

void wh_proto_finalize(void)
{
    if (naps)
        WH_DEBUG("progress", "slept %llu times on the doorbell, %llu of them woken by a peer",
                 (unsigned long long)naps, (unsigned long long)naps_rung);
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
/* WHARF_TEST_YIELD resolved at init */
static int test_yield;

/* WHARF_WAIT_SLEEP resolved at init (and dropped for good if the channel
 * says it cannot); the current idle spell (the caller's idle count and when
 * its yielding began); when the slow checks last ran while sleeping */
static int sleep_mode;
/* auto on a node this job does not oversubscribe: sleep only while the
 * host is busy (util/hostload.h), and then right after the spin phase */
static int sleep_busy;
static unsigned spell_idle;
static uint64_t spell_t0, checked_t, lost_t;

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
    int autom = !strcmp(wh_tun.wait_sleep, "auto");
    sleep_mode = !spin_mode && wh_chan_polled[WH_CHAN_SHM] && wh_chans[WH_CHAN_SHM]->nap &&
                 (!strcmp(wh_tun.wait_sleep, "on") || autom);
    sleep_busy = autom && !wh_job.oversubscribed;
    test_yield = !strcmp(wh_tun.test_yield, "on") ||
                 (!strcmp(wh_tun.test_yield, "auto") && !spin_mode && wh_job.oversubscribed);
    spell_idle = 0;
    naps = naps_rung = 0;
    char polled[64] = "";
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (wh_chan_polled[c] && c != WH_CHAN_SELF)
            snprintf(polled + strlen(polled), sizeof polled - strlen(polled), " %s", wh_chans[c]->name);
    WH_DEBUG("progress", "wait policy %s%s (local ranks %d, oversubscribed %d); channels polled:%s",
             spin_mode ? "spin" : "yield",
             !sleep_mode ? "" : sleep_busy ? ", sleep on the doorbell while the host is busy" : ", then sleep on the doorbell",
             wh_job.local_size,
             wh_job.oversubscribed, polled);
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

static inline uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* In the yielding phase of idle poll i: once the spell has lasted
 * WHARF_WAIT_SLEEP_AFTER microseconds, sleep on the doorbell instead of
 * yielding (1), running the slow checks by time. */
static int idle_sleep(unsigned i)
{
    if (wh_cs_on || wh_pipe_active)
        return 0;
    long max = wh_tun.wait_sleep_max;
    if (wh_chan_polled[WH_CHAN_NET] && wh_tun.wait_sleep_net < max)
        max = wh_tun.wait_sleep_net;
    if (max <= 0)
        return 0;
    if (sleep_busy && !wh_host_busy())
        return 0;
    uint64_t t = now_us();
    if (i != spell_idle + 1) /* a new idle spell (the caller counts from 0 again) */
        spell_t0 = t;
    spell_idle = i;
    if (!sleep_busy && t - spell_t0 < (uint64_t)wh_tun.wait_sleep_after)
        return 0;
    int r = wh_chans[WH_CHAN_SHM]->nap(max, wh_pend_head != NULL || wh_rndv_nstreams > 0, wh_progress);
    if (r < 0) {
        sleep_mode = 0;
        WH_DEBUG("progress", "no doorbell sleep here (a co-resident rank on another kernel); yielding only");
        return 0;
    }
    naps++;
    naps_rung += (uint64_t)r;
    /* the slow checks wh_progress_idle runs by poll count, by time here */
    if (t - checked_t >= 100000) {
        checked_t = t;
        wh_chans_check_peers();
        if (t - lost_t >= 1000000) {
            lost_t = t;
            if (wh_pmi_lost()) {
                WH_ERRLOG("progress", "lost the connection to the launcher; exiting");
                _exit(1);
            }
        }
    }
    return 1;
}

static void idle_poll(unsigned *idle, int may_sleep)
{
    unsigned i = ++*idle;
    if (spin_mode) {
        cpu_relax();
        /* after a long idle spell, let others run now and then */
        if ((i & 0xffff) == 0)
            sched_yield();
    } else if (i >= (unsigned)wh_tun.spin_count || wh_job.oversubscribed) {
        if (may_sleep && sleep_mode && idle_sleep(i))
            return;
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

/* Open MPI's opal_progress yields after an empty pass when it
 * oversubscribes (mpi_yield_when_idle); here only a test that returns
 * "not yet" does, not every engine pass.  4 ranks on 2 cpus, MPI_Ibarrier
 * with computation and MPI_Test every 10 us (bench/suite wh_ibarrier):
 * docs/PERFORMANCE.md.  Not under MPI_THREAD_MULTIPLE: the caller holds
 * the library's lock, and its other threads are the ones to run. */
void wh_test_idle(void)
{
    if (test_yield && !wh_cs_on)
        sched_yield();
}

void wh_progress_idle(unsigned *idle)
{
    idle_poll(idle, 1);
}

void wh_progress_idle_nosleep(unsigned *idle)
{
    idle_poll(idle, 0);
}
