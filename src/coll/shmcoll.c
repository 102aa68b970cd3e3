/* Node-shared-memory collectives: when every rank of an intracommunicator
 * shares this node region and is served by the shm channel, small barriers,
 * broadcasts, reductions and allreduces go through one block of node memory
 * (the node-shared allocator) instead of messages.
 *
 * Block layout (per rank r, each on its own cache lines): NCELL slot lines
 * (collective k uses slot k % NCELL: r's flag for k — r arrived at k, so it
 * finished every earlier one —, the size r wrote and, up to INLINE bytes,
 * the payload itself), done[r] (the last one r has finished, read only when
 * the block is freed, and by the release barrier), a line of its own (rank
 * 0's holds the sleepy word every post reads), and NCELL cells of WHARF_COLL_SHM_MAX bytes for
 * larger payloads (collective k uses cell k % NCELL).  Flags are
 * single-writer sequence numbers that only grow, never reset: collective k
 * (every rank counts the same k: collectives are called in the same order)
 * waits for the slot of k >= k.  A rank writes slot and cell k % NCELL, which readers of
 * k - NCELL used, once every flag >= k - NCELL + 1 (all of them left
 * k - NCELL): after an allreduce or a barrier that holds already, and a
 * broadcast root (or a reduce leaf) may run NCELL - 1 collectives ahead of
 * slow readers; the least flag seen by the last scan (floor) spares
 * rescanning every rank's line while the window is known to be open.  Reductions combine the cells in rank order, so non-commutative
 * ops are right.
 *
 * Set up lazily by the first eligible collective on the communicator (one
 * allocation by rank 0, its offset broadcast, everyone attaches, all agree);
 * when the allocator says no (budget, no region) the communicator keeps the
 * point-to-point algorithms for good.
 *
 * Waiting (wait_ge): WHARF_COLL_SPIN polls of the progress engine without
 * yielding (a writer running on another cpu posts within a microsecond),
 * then the core is given away on every idle poll (wh_progress_idle: yield
 * under oversubscription), and where WHARF_COLL_SLEEP allows (auto: when the
 * node runs more ranks than cpus) a wait that has lasted
 * WHARF_COLL_SLEEP_AFTER microseconds sleeps on the flag word itself
 * (FUTEX_WAIT on shared memory: keyed by the mapping, so it works across
 * processes and PID namespaces of one kernel), counting itself in the word
 * after the flag; a rank that raises a flag with sleepers counted wakes
 * them.  Short waits never reach the futex, so neither side pays for it;
 * long ones stop burning time slices in yields.  The sleep is bounded
 * (200 us) so point-to-point traffic still progresses; only where every
 * member shares this kernel (boot_id), never across VMs.  auto on a node
 * the job does not oversubscribe: a waiter sleeps right after the spin
 * polls while the host is busy (more runnable tasks than cpus, counting
 * processes in other containers: util/hostload.h), since a yield there
 * often keeps the cpu from the rank it waits for, and never otherwise. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "coll/shmcoll.h"
#include "chan/shm/shm.h"
#include "coord/coord.h"
#include "core/cs.h"
#include "locality/locality.h"
#include "locality/nodeheap.h"
#include "pmi/pmi.h"
#include "util/hostload.h"
#include "util/log.h"
#include "util/tunables.h"

#include "coll/shmc_impl.h"

static inline uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* sleep on *p (seen at cur < v) for at most 200 us, counted as a sleeper */
static void nap(volatile uint64_t *p, uint64_t v, unsigned *naps)
{
    static const struct timespec ts = {0, 200000};
    long r = 0;
    uint64_t cur;
    __atomic_add_fetch(sleepers(p), 1, __ATOMIC_SEQ_CST);
    if ((cur = __atomic_load_n(p, __ATOMIC_SEQ_CST)) < v)
        r = futex(p, FUTEX_WAIT, (uint32_t)cur, &ts);
    __atomic_sub_fetch(sleepers(p), 1, __ATOMIC_SEQ_CST);
    /* a long wait: the peer may be gone with the launcher (as wh_progress_idle checks) */
    if (r != 0 && errno == ETIMEDOUT && (++*naps & 4095) == 0 && wh_pmi_lost()) {
        WH_ERRLOG("coll", "lost the connection to the launcher while waiting in a collective; exiting");
        _exit(1);
    }
}

/* Wait until *p >= v: spin (WHARF_COLL_SPIN polls of the engine, no yield:
 * the writer may be running on another cpu and about to post), then give
 * the core away on every idle poll (wh_progress_idle: sched_yield under
 * oversubscription), and where sleeping is allowed (s->can_sleep) sleep on
 * the flag once the wait has lasted WHARF_COLL_SLEEP_AFTER microseconds —
 * a short wait never reaches the futex, so neither side pays for it. */
void wh_shmc_wait_slow(const shmc_t *s, volatile uint64_t *p, uint64_t v)
{
    if (__builtin_expect(__atomic_load_n(p, __ATOMIC_ACQUIRE) >= v, 1))
        return;
    unsigned idle = 0, naps = 0;
    int polls = 0;
    uint64_t since = 0;
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v) {
        if (wh_progress())
            continue;
        if (polls < s->spin) {
            polls++;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            continue;
        }
        if (s->can_sleep) {
            int now;
            if (s->sleep_busy) {
                /* at once, while the host is busy: a yield there often keeps
                 * the cpu (not while other threads wait for the MPI lock) */
                now = !wh_cs_on && wh_host_busy();
            } else {
                uint64_t t = s->sleep_after ? now_us() : 1;
                if (!since && s->sleep_after)
                    since = t;
                now = since && t - since >= s->sleep_after;
                now |= !s->sleep_after;
            }
            if (now) {
                /* whatever its own mode, a sleeper tells every writer to look
                 * for sleepers (ranks whose cpusets differ may differ in mode) */
                if (!__atomic_load_n(sleepy(s), __ATOMIC_RELAXED))
                    __atomic_store_n(sleepy(s), 1, __ATOMIC_SEQ_CST);
                nap(p, v, &naps);
                continue;
            }
        }
        /* never the doorbell: the flag's writer does not ring it */
        wh_progress_idle_nosleep(&idle);
    }
}

static void wait_all(const shmc_t *s, int n, volatile uint64_t *(*which)(const shmc_t *, int), uint64_t v)
{
    for (int r = 0; r < n; r++)
        wh_shmc_wait_ge(s, which(s, r), v);
}

/* every flag >= v; flags only grow, so the least value seen in the last
 * scan is a floor that spares the next scans (a root or leaf running ahead
 * checks the NCELL window without touching every rank's line) */
void wh_shmc_wait_flags(shmc_t *s, int n, uint64_t v)
{
    if (s->floor >= v)
        return;
    uint64_t lo = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        volatile uint64_t *p = flag(s, r, v);
        wh_shmc_wait_ge(s, p, v);
        uint64_t cur = __atomic_load_n(p, __ATOMIC_ACQUIRE);
        lo = cur < lo ? cur : lo;
    }
    s->floor = lo;
}

/* every member co-resident and served by the shm channel */
static int members_local(const wh_comm_t *c)
{
    for (int r = 0; r < c->size; r++) {
        int w = wh_comm_wrank(c, r);
        if (w != wh_job.rank && (wh_job.local_index[w] < 0 || wh_coord_peers[w].chan != WH_CHAN_SHM))
            return 0;
    }
    return 1;
}

/* WHARF_COLL_SLEEP for c: not off, and every member on this kernel (a
 * futex cannot wake a waiter in another VM); auto on a node the job does not
 * oversubscribe sleeps only while the host is busy (s->sleep_busy) */
static int may_sleep(const wh_comm_t *c)
{
    if (!strcmp(wh_tun.coll_sleep, "off"))
        return 0;
    const wh_reg_rec_t *me = wh_loc_me();
    if (!me)
        return 0;
    for (int r = 0; r < c->size; r++) {
        int lp = wh_job.local_index[wh_comm_wrank(c, r)];
        const wh_reg_rec_t *o = lp >= 0 ? wh_loc_rec(lp) : NULL;
        if (!o || strncmp(o->boot_id, me->boot_id, sizeof me->boot_id))
            return 0;
    }
    return 1;
}

/* One allocation of len bytes shared by every rank of c: rank 0 allocates,
 * broadcasts the offset, all attach and agree (collective over c).  Returns
 * 1 with *offp and *basep set, or 0 (then c keeps the point-to-point algorithms). */
static int block_alloc(wh_comm_t *c, size_t len, uint64_t *offp, unsigned char **basep)
{
    int ok = wh_loc_have_region() && members_local(c);
    uint64_t off = 0;
    unsigned char *base = NULL;
    if (c->rank == 0 && ok && !wh_node_alloc(len, &off))
        off = 0;
    wh_dtype_t *byte = wh_coll_byte();
    int rc = wh_bcast_binomial(&off, sizeof off, byte, 0, c);
    if (rc == MPI_SUCCESS && off)
        base = wh_node_attach(off, len);
    int mine = rc == MPI_SUCCESS && base != NULL, all = 0;
    wh_dtype_t *i32 = wh_dtype_get(MPI_INT);
    rc = wh_allreduce_recdbl(&mine, &all, 1, MPI_INT, i32, wh_op_get(MPI_MIN), c);
    if (rc == MPI_SUCCESS && all) {
        *offp = off;
        *basep = base;
        WH_DEBUG("coll", "communicator %#x: shared-memory collective block of %zu bytes at node offset %llu",
                 (unsigned)c->obj.handle, len, (unsigned long long)off);
        return 1;
    }
    if (c->rank == 0 && off)
        wh_node_free(off);
    return 0;
}

static shmc_t *setup(wh_comm_t *c, wh_coll_state_t *st)
{
    shmc_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->state = -1;
    st->shm = s;
    s->cell = (wh_tun.coll_shm_max + LINE - 1) & ~(size_t)(LINE - 1);
    s->stride = (NCELL + 2) * LINE + NCELL * s->cell;
    if (block_alloc(c, (size_t)c->size * s->stride, &s->off, &s->base))
        s->state = 1;
    s->can_sleep = may_sleep(c);
    s->sleep_busy = s->can_sleep && !strcmp(wh_tun.coll_sleep, "auto") && !wh_job.oversubscribed;
    s->spin = wh_tun.coll_spin >= 0 ? wh_tun.coll_spin : wh_job.oversubscribed ? 0 : 20;
    s->sleep_after = wh_tun.coll_sleep_after > 0 ? (uint64_t)wh_tun.coll_sleep_after : 0;
    /* far more ranks than cpus: the ranks a waiter needs are mostly not running */
    if (s->can_sleep && wh_tun.coll_sleep_ratio > 0 && wh_job.ncpu > 0 &&
        wh_job.local_size >= wh_tun.coll_sleep_ratio * wh_job.ncpu) {
        s->spin = 0;
        s->sleep_after = 0;
        s->herd = 1;
    }
    /* two ranks with a cpu each: the flat barrier is one line's transfer
     * where release is two (0.23 against 0.34 us); under oversubscription
     * rank 0 leaving first keeps a broadcast after it from waiting for its
     * root to be scheduled */
    s->release = !strcmp(wh_tun.coll_shm_barrier, "release") ||
                 (!strcmp(wh_tun.coll_shm_barrier, "auto") && (c->size != 2 || wh_job.oversubscribed));
    WH_DEBUG("coll", "communicator %#x: shared-memory collectives %s, waiters %s", (unsigned)c->obj.handle,
             s->state == 1 ? "on" : "off",
             s->herd        ? "sleep on the flags at once, allreduce combined by rank 0 (ranks far outnumber cpus)"
             : s->sleep_busy ? "sleep on the flags after WHARF_COLL_SPIN polls while the host is busy, else yield"
             : s->can_sleep ? "sleep on the flags after WHARF_COLL_SPIN polls"
                            : "yield");
    return s;
}

/* the block of c, or NULL when c uses the point-to-point algorithms */
shmc_t *wh_shmc_get(wh_comm_t *c)
{
    wh_coll_state_t *st = c->coll_data;
    if (__builtin_expect(st != NULL && st->shm != NULL, 1))
        return st->shm->state == 1 ? st->shm : NULL;
    /* only what every rank sees alike may decide here: the setup itself is collective */
    if (!wh_tun.coll_shm || c->size < 2 || c->is_inter || !(st = wh_coll_state(c)))
        return NULL;
    shmc_t *s = setup(c, st);
    return s && s->state == 1 ? s : NULL;
}

/* rank 0: wait (bounded) until every rank's counter *at(r) reached v, then
 * free the block at off; a late reader leaks it rather than reuse under it */
static void free_when(const shmc_t *s, int n, volatile uint64_t *(*at)(const shmc_t *, int), uint64_t v,
                      uint64_t off)
{
    for (int r = 0; r < n; r++) {
        for (unsigned long i = 0; __atomic_load_n(at(s, r), __ATOMIC_ACQUIRE) < v; i++) {
            if (i > 2000000UL)
                return;
            unsigned idle = 0;
            wh_progress_idle(&idle);
        }
    }
    wh_node_free(off);
}

static inline volatile uint64_t *bout(const shmc_t *s, int r);

void wh_shmc_release(wh_comm_t *c, shmc_t *s)
{
    if (s->state == 1 && c->rank == 0)
        free_when(s, c->size, done, s->seq, s->off);
    if (s->bstate == 1 && c->rank == 0)
        free_when(s, c->size, bout, s->bchunk, s->boff);
    free(s);
}

int wh_shmc_usable(wh_comm_t *c, size_t bytes)
{
    if (bytes > wh_tun.coll_shm_max)
        return 0;
    return wh_shmc_get(c) != NULL;
}

/* flat: everyone waits for every arrival flag.  release
 * (WHARF_COLL_SHM_BARRIER): rank 0 waits for every arrival and raises its
 * done line, the others wait for that one line (done[0] >= k: rank 0 has
 * seen everyone arrive at k). */
int wh_shmc_barrier(wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    uint64_t k = ++s->seq;
    post(s, flag(s, c->rank, k), k);
    if (!s->release || c->rank == 0) {
        wh_shmc_wait_flags(s, c->size, k);
        if (s->release) {
            post(s, done(s, 0), k);
            return MPI_SUCCESS;
        }
    } else {
        wh_shmc_wait_ge(s, done(s, 0), k);
        s->floor = k; /* everyone arrived at k */
    }
    __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int wh_shmc_ready(wh_comm_t *c)
{
    wh_coll_state_t *st = c->coll_data;
    return wh_tun.coll_shm_nbc && st && st->shm && st->shm->state == 1;
}

/* The barrier's number is taken here, at the call, in the order of c's
 * collectives (blocking ones included) on every rank.  Raising only the
 * flag, as a broadcast's non-root does, leaves the slot line's payload
 * alone, so it needs no wait for the cell window.  Nobody waiting on a
 * flag here sleeps on the flag's futex (the barrier's waiters test from
 * the progress engine and may sleep on their doorbells), so the doorbells
 * of the communicator's ranks are rung too. */
uint64_t wh_shmc_arrive(wh_comm_t *c)
{
    shmc_t *s = ((wh_coll_state_t *)c->coll_data)->shm;
    uint64_t k = ++s->seq;
    post(s, flag(s, c->rank, k), k);
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            wh_shm_ring(wh_job.local_index[wh_comm_wrank(c, r)]);
    return k;
}

int wh_shmc_arrived(wh_comm_t *c, uint64_t k)
{
    shmc_t *s = ((wh_coll_state_t *)c->coll_data)->shm;
    if (s->floor < k) {
        for (int r = 0; r < c->size; r++)
            if (__atomic_load_n(flag(s, r, k), __ATOMIC_ACQUIRE) < k)
                return 0;
        s->floor = k;
    }
    /* done only grows: a blocking collective after this barrier may have finished first */
    if (__atomic_load_n(done(s, c->rank), __ATOMIC_RELAXED) < k)
        __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
    return 1;
}

/* rank `from` contributed `got` bytes where this rank has `want`: the
 * classes MPICH gives (more than the buffer holds: truncation) */
int wh_shmc_size_mismatch(size_t got, size_t want, int from)
{
    if (got > want)
        return wh_error(MPI_ERR_TRUNCATE,
                        "message truncated: rank %d contributed %zu bytes to the collective, this rank's buffer "
                        "holds %zu (the ranks passed different counts)",
                        from, got, want);
    return wh_error(MPI_ERR_OTHER,
                    "message sizes do not match across processes in the collective: rank %d contributed %zu bytes "
                    "but this rank expected %zu",
                    from, got, want);
}

int wh_shmc_bcast(void *buf, size_t bytes, int root, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    uint64_t k = ++s->seq;
    if (c->rank == root) {
        if (k >= NCELL)
            wh_shmc_wait_flags(s, c->size, k - NCELL + 1);
        memcpy(cell(s, root, k, bytes), buf, bytes);
        *csize(s, root, k) = (uint32_t)bytes;
        post(s, flag(s, root, k), k);
    } else {
        post(s, flag(s, c->rank, k), k);
        wh_shmc_wait_ge(s, flag(s, root, k), k);
        size_t got = *csize(s, root, k);
        memcpy(buf, cell(s, root, k, got), got < bytes ? got : bytes);
        if (__builtin_expect(got != bytes, 0)) {
            __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
            return wh_shmc_size_mismatch(got, bytes, root);
        }
    }
    __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

/* reduce (root >= 0: only root gets the result) or allreduce (root < 0) of
 * count elements that form one block at the buffer (lower bound 0) */
int wh_shmc_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   int root, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    uint64_t k = ++s->seq;
    int n = c->size, me = c->rank;
    size_t bytes = (size_t)count * dt->size;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* one block at the buffer (selectors check) */
    /* An allreduce where ranks far outnumber cpus: if every rank waited for
     * every flag, each arrival would wake every sleeper (n^2 wake-ups); rank 0
     * combines alone, puts the result in its own cell (nobody else reads its
     * contribution then) and raises its done line, the one word the others
     * sleep on (n wake-ups). */
    int herd = root < 0 && s->herd;
    if (herd)
        root = 0;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, n, k - NCELL + 1);
    memcpy(cell(s, me, k, bytes), mine, bytes);
    *csize(s, me, k) = (uint32_t)bytes;
    post(s, flag(s, me, k), k);
    int rc = MPI_SUCCESS;
    if (root < 0 || me == root) {
        wh_shmc_wait_ge(s, flag(s, n - 1, k), k);
        memcpy(rbuf, cell(s, n - 1, k, *csize(s, n - 1, k)), bytes);
        if (__builtin_expect(*csize(s, n - 1, k) != (uint32_t)bytes, 0))
            rc = wh_shmc_size_mismatch(*csize(s, n - 1, k), bytes, n - 1);
        /* out = c0 op (c1 op (... op c(n-1))): rank order for non-commutative ops.
         * Every flag is waited for even after an error (a reduce leaf's cell
         * stays in use until the combiners have read it). */
        for (int r = n - 2; r >= 0; r--) {
            wh_shmc_wait_ge(s, flag(s, r, k), k);
            if (__builtin_expect(*csize(s, r, k) != (uint32_t)bytes, 0) && rc == MPI_SUCCESS)
                rc = wh_shmc_size_mismatch(*csize(s, r, k), bytes, r);
            if (rc == MPI_SUCCESS)
                rc = wh_op_apply(op, cell(s, r, k, bytes), rbuf, (size_t)count, dth, dt);
        }
        if (root < 0 || herd)
            s->floor = k; /* every flag was seen at k */
        if (herd) {
            if (rc == MPI_SUCCESS)
                memcpy(cell(s, 0, k, bytes), rbuf, bytes);
            *herd_rc(s) = rc == MPI_SUCCESS ? 0 : 1;
            post(s, done(s, 0), k);
        }
    } else if (herd) {
        wh_shmc_wait_ge(s, done(s, 0), k);
        s->floor = k; /* rank 0 saw every flag at k */
        if (__builtin_expect(*herd_rc(s) != 0, 0)) {
            /* name a rank whose size differs from mine, or from rank 0's */
            int r = 0;
            while (r < n && *csize(s, r, k) == (uint32_t)bytes)
                r++;
            if (r < n)
                rc = wh_shmc_size_mismatch(*csize(s, r, k), bytes, r);
            else
                rc = wh_error(MPI_ERR_OTHER, "the allreduce failed at rank 0, which combines it: every rank passed "
                                             "%zu bytes (different datatypes or operations?)", bytes);
        } else {
            memcpy(rbuf, cell(s, 0, k, bytes), bytes);
        }
    }
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}

/* ---------- large messages (shm-large) ----------
 * A second block, per rank: a step flag line (bflag), a line with the last
 * chunk the rank finished reading (bout), and 2 cells of WHARF_COLL_SHM_CHUNK
 * bytes.  A message goes in chunks of one cell; chunk t (counted over every
 * large collective of c) uses cell t % 2, so the next chunk's copy-in
 * overlaps this one's copy-out; a cell is written for chunk t once every
 * bout >= t - 2.  bflag holds steps (bseq, every rank counts alike) that
 * only grow; bout chunk numbers that only grow.
 *   bcast: the root copies the chunk into its cell and raises its flag;
 *          the others copy it out.
 *   reduce/allreduce ("parallel slices"): everyone copies its chunk into
 *          its cell, all but its own slice; once all have, rank r combines
 *          slice r of all cells and of its own buffer in rank order into
 *          that slice of its own cell (a reduce root not in place: into
 *          rbuf); once all have, the result is copied out of the n cells
 *          (by everyone, or the root).
 *          Pipelined: the step that says "my slice of chunk j is reduced"
 *          also says "chunk j + 1 is copied in" (one wait per chunk). */
static inline volatile uint64_t *bflag(const shmc_t *s, int r)
{
    return (volatile uint64_t *)(s->bbase + (size_t)r * s->bstride);
}
static inline volatile uint64_t *bout(const shmc_t *s, int r)
{
    return (volatile uint64_t *)(s->bbase + (size_t)r * s->bstride + LINE);
}
/* the total bytes rank r passed to the large collective whose first step is
 * k (two slots in r's flag line: a rank starts the collective after the next
 * only once every rank passed the first step of this one, after reading) */
static inline volatile uint64_t *bsize(const shmc_t *s, int r, uint64_t k)
{
    return (volatile uint64_t *)(s->bbase + (size_t)r * s->bstride + 16) + k % 2;
}
static inline unsigned char *bcell(const shmc_t *s, int r, uint64_t t)
{
    return s->bbase + (size_t)r * s->bstride + 2 * LINE + (size_t)(t % 2) * s->bcell;
}

int wh_shmc_large_usable(wh_comm_t *c, size_t bytes, size_t elem)
{
    if (bytes <= wh_tun.coll_shm_max || wh_tun.coll_shm_chunk < LINE || elem > (wh_tun.coll_shm_chunk & ~(size_t)(LINE - 1)))
        return 0;
    shmc_t *s = wh_shmc_get(c);
    if (!s)
        return 0;
    if (__builtin_expect(s->bstate == 0, 0)) {
        s->bstate = -1;
        s->bcell = wh_tun.coll_shm_chunk & ~(size_t)(LINE - 1);
        s->bstride = 2 * LINE + 2 * s->bcell;
        if (block_alloc(c, (size_t)c->size * s->bstride, &s->boff, &s->bbase))
            s->bstate = 1;
    }
    return s->bstate == 1;
}

/* the next chunk: its number, once its cell may be written */
static uint64_t next_chunk(shmc_t *s, int n)
{
    uint64_t t = ++s->bchunk;
    if (t > 2)
        wait_all(s, n, bout, t - 2);
    return t;
}

int wh_shmc_bcast_large(void *buf, size_t bytes, int root, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank;
    if (me == root) {
        for (size_t pos = 0; pos < bytes; pos += s->bcell) {
            size_t len = bytes - pos < s->bcell ? bytes - pos : s->bcell;
            uint64_t k = ++s->bseq, t = next_chunk(s, n);
            if (pos == 0)
                *bsize(s, root, k) = bytes;
            memcpy(bcell(s, root, t), (char *)buf + pos, len);
            post(s, bflag(s, root), k);
            post(s, bout(s, me), t);
        }
        return MPI_SUCCESS;
    }
    /* the root's size decides the steps: a rank that passed another count
     * (erroneous) still takes every chunk, keeps what fits, and fails */
    size_t total = bytes;
    for (size_t pos = 0; pos < total; pos += s->bcell) {
        uint64_t t = ++s->bchunk; /* the root waits for readers, they need not wait for each other */
        uint64_t k = ++s->bseq;
        wh_shmc_wait_ge(s, bflag(s, root), k);
        if (pos == 0)
            total = *bsize(s, root, k);
        size_t len = total - pos < s->bcell ? total - pos : s->bcell;
        if (pos < bytes)
            memcpy((char *)buf + pos, bcell(s, root, t), len < bytes - pos ? len : bytes - pos);
        post(s, bout(s, me), t);
    }
    return total == bytes ? MPI_SUCCESS : wh_shmc_size_mismatch(total, bytes, root);
}

/* a reduce's single-copy offer (shmcma.c), two slots as bsize, in the
 * free bytes of the bout line */
static inline wh_cma_offer_t *boffer(const shmc_t *s, int r, uint64_t k)
{
    return (wh_cma_offer_t *)(s->bbase + (size_t)r * s->bstride + LINE + 16) + k % 2;
}
_Static_assert(16 + 2 * sizeof(wh_cma_offer_t) <= LINE, "two offers fit the bout line");

/* The offers of the first step: 1 when all go single-copy (*anyw: someone
 * offered, and so skipped copying chunk 0 in) */
static int cma_decide(const shmc_t *s, int n, int root, uint64_t k, wh_cma_offer_t *all, int *anyw)
{
    *anyw = 0;
    for (int r = 0; r < n; r++) {
        memcpy(&all[r], boffer(s, r, k), sizeof all[r]);
        *anyw |= all[r].want != 0;
    }
    return wh_cma_reduce_agree(all, n, root); /* (it needs every rank's offer) */
}

/* the word a status step carries in place of a size (cma_status: the
 * same slot, which the step's flag publishes alike) */
static inline volatile uint64_t *bstatus(const shmc_t *s, int r, uint64_t k) { return bsize(s, r, k); }

/* one more step carrying each rank's status of a single-copy phase: the
 * worst of all (0 ok, 1 refused, 2 error) */
static uint64_t cma_status(shmc_t *s, int n, int me, uint64_t *k, int my)
{
    *k = ++s->bseq;
    *bstatus(s, me, *k) = my == MPI_SUCCESS ? 0 : my == WH_FALLBACK ? 1 : 2;
    post(s, bflag(s, me), *k);
    wait_all(s, n, bflag, *k);
    uint64_t worst = 0;
    for (int r = 0; r < n; r++)
        worst = *bstatus(s, r, *k) > worst ? *bstatus(s, r, *k) : worst;
    return worst;
}

int wh_shmc_reduce_large(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                         wh_op_t *op, int root, wh_comm_t *c, int *cma)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS, out = root < 0 || me == root;
    size_t esz = dt->size, per = s->bcell / esz; /* elements per chunk */
    const char *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t m = (size_t)(((size_t)count + per - 1) / per); /* chunks */
    /* the root of a reduce (not in place) combines its own slice straight into rbuf */
    int direct = root >= 0 && me == root && sbuf != MPI_IN_PLACE;
    /* chunk j: elements [j * per, j * per + len(j)); rank r combines its
     * slice [SL(len, r), SL(len, r + 1)) of it, in its own cell, where it
     * copied nothing in: its own elements of that slice stay in its buffer */
#define CH_LEN(j) ((size_t)count - (j) * per < per ? (size_t)count - (j) * per : per)
#define SL(len, r) ((len) * (size_t)(r) / (size_t)n)
#define COPY_IN(j, t)                                                                                    \
    do {                                                                                                 \
        size_t l_ = CH_LEN(j), lo_ = SL(l_, me), hi_ = SL(l_, me + 1);                                   \
        const char *src_ = mine + (j) * per * esz;                                                       \
        memcpy(bcell(s, me, t), src_, lo_ * esz);                                                        \
        memcpy(bcell(s, me, t) + hi_ * esz, src_ + hi_ * esz, (l_ - hi_) * esz);                         \
    } while (0)
    uint64_t tprev = 0, t = next_chunk(s, n), k = ++s->bseq;
    *bsize(s, me, k) = (size_t)count * esz;
    /* single copy (shmcma.c), offered in this first step: a rank that
     * offers copies chunk 0 in only if the others turn it down */
    int offer = cma && n <= WH_CMA_MAXN;
    int want = offer && wh_cma_reduce_offer(c, mine, out ? (char *)rbuf : NULL, (size_t)count * esz, op, root,
                                            boffer(s, me, k));
    if (!want)
        COPY_IN(0, t);
    post(s, bflag(s, me), k);
    wait_all(s, n, bflag, k);
    /* every rank sees every size: all stop here alike when counts differ */
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++)
        if (*bsize(s, r, k) != (size_t)count * esz)
            rc = wh_shmc_size_mismatch(*bsize(s, r, k), (size_t)count * esz, r);
    if (rc != MPI_SUCCESS) {
        post(s, bout(s, me), t);
        return rc;
    }
    if (offer) {
        wh_cma_offer_t all[WH_CMA_MAXN];
        int anyw;
        if (cma_decide(s, n, root, k, all, &anyw)) {
            post(s, bout(s, me), t); /* (chunk t's cell unused) */
            int my = wh_cma_reduce_run(all, mine, (char *)rbuf, (size_t)count, dth, dt, op, root, c);
            uint64_t worst = cma_status(s, n, me, &k, my);
            if (root < 0 && !worst) { /* allreduce: every slice combined, now everyone's to everyone */
                my = wh_cma_allreduce_collect(all, (char *)rbuf, (size_t)count, esz, c);
                worst = cma_status(s, n, me, &k, my);
            }
            rc = wh_cma_reduce_settle(all, n, my, (int)worst, root);
            if (rc != WH_FALLBACK) {
                *cma = 1;
                return rc;
            }
            return wh_shmc_reduce_large(sbuf, rbuf, count, dth, dt, op, root, c, NULL); /* all alike */
        }
        if (anyw) { /* turned down: who offered copies chunk 0 in now, one more step */
            if (want)
                COPY_IN(0, t);
            k = ++s->bseq;
            post(s, bflag(s, me), k);
        }
    }
    for (size_t j = 0; j <= m; j++) {
        wait_all(s, n, bflag, k); /* chunk j copied in by all; chunk j - 1 reduced by all */
        if (j > 0) { /* chunk j - 1 is reduced, slice r in rank r's cell */
            size_t l = CH_LEN(j - 1);
            char *dst = (char *)rbuf + (j - 1) * per * esz;
            for (int r = 0; out && r < n; r++)
                if (!(direct && r == me))
                    memcpy(dst + SL(l, r) * esz, bcell(s, r, tprev) + SL(l, r) * esz, (SL(l, r + 1) - SL(l, r)) * esz);
            post(s, bout(s, me), tprev);
        }
        if (j == m)
            break;
        /* my slice of chunk j: acc = x0 op (x1 op (... op x(n-1))), rank order */
        size_t len = CH_LEN(j), lo = SL(len, me), hi = SL(len, me + 1), off = j * per + lo;
        unsigned char *acc = direct ? (unsigned char *)rbuf + off * esz : bcell(s, me, t) + lo * esz;
#define X(r) ((r) == me ? (const void *)(mine + off * esz) : (const void *)(bcell(s, r, t) + lo * esz))
        if (hi > lo) {
            rc = wh_op_apply3(op, X(n - 2), X(n - 1), acc, hi - lo, dth, dt);
            for (int r = n - 3; r >= 0 && rc == MPI_SUCCESS; r--)
                rc = wh_op_apply(op, X(r), acc, hi - lo, dth, dt);
        }
#undef X
        tprev = t;
        if (j + 1 < m) {
            t = next_chunk(s, n);
            COPY_IN(j + 1, t);
        }
        k = ++s->bseq;
        post(s, bflag(s, me), k);
    }
#undef COPY_IN
#undef SL
#undef CH_LEN
    return rc;
}

/* Allgather of blk bytes per rank, at most WHARF_COLL_SHM_MAX, through the
 * inline cells.  Either side may be any datatype: a non-contiguous
 * contribution is packed first, a non-contiguous result gathered packed and
 * unpacked at the end (local choices only). */
int wh_shmc_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c)
{
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    size_t blk = (size_t)rcount * rdt->size;
    wh_dtype_t *byte = wh_coll_byte();
    if (sbuf == MPI_IN_PLACE) {
        sbuf = wh_coll_elt(rbuf, (MPI_Aint)me * rcount, rdt);
        scount = rcount;
        sdt = rdt;
    }
    /* sbytes != blk: the counts disagree (erroneous).  This rank reports it
     * and contributes a zero-padded block of blk bytes, so every rank still
     * runs the same steps (the readers of the small path see the size) */
    size_t sbytes = (size_t)scount * sdt->size;
    const char *src;
    char *dst, *stmp = NULL, *rtmp = NULL;
    if (__builtin_expect(sbytes != blk, 0) || !wh_dtype_is_contig(sdt, (size_t)scount, sbuf, &src)) {
        size_t len = sbytes > blk ? sbytes : blk;
        if (!(stmp = calloc(1, len)))
            return wh_coll_nomem("shared-memory allgather", len);
        rc = wh_dtype_copy(sbuf, (size_t)scount, sdt, stmp, sbytes, byte);
        if (rc == MPI_SUCCESS && sbytes != blk)
            rc = wh_shmc_size_mismatch(sbytes, blk, me);
        src = stmp;
    }
    const char *rstart;
    if (wh_dtype_is_contig(rdt, (size_t)rcount * (size_t)n, rbuf, &rstart)) {
        dst = (char *)rstart;
    } else if (!(dst = rtmp = malloc(blk * (size_t)n))) {
        free(stmp);
        return wh_coll_nomem("shared-memory allgather", blk * (size_t)n);
    }
    uint64_t k = ++s->seq;
    if (k >= NCELL)
        wh_shmc_wait_flags(s, n, k - NCELL + 1);
    memcpy(cell(s, me, k, blk), src, blk);
    *csize(s, me, k) = (uint32_t)sbytes;
    post(s, flag(s, me, k), k);
    for (int q = 0; q < n; q++) {
        wh_shmc_wait_ge(s, flag(s, q, k), k);
        if (__builtin_expect(*csize(s, q, k) != (uint32_t)blk, 0) && rc == MPI_SUCCESS)
            rc = wh_shmc_size_mismatch(*csize(s, q, k), blk, q);
        if (!(q == me && dst + (size_t)q * blk == src))
            memcpy(dst + (size_t)q * blk, cell(s, q, k, blk), blk);
    }
    s->floor = k;
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    if (rtmp)
        rc = first_err(rc, wh_dtype_copy(rtmp, blk * (size_t)n, byte, rbuf, (size_t)rcount * (size_t)n, rdt));
    free(stmp);
    free(rtmp);
    return rc;
}

/* Allgatherv of large blocks through the big cells, in lockstep as the
 * allgather's large path: step j carries bytes [j x bcell, (j + 1) x bcell)
 * of every block (a block that ended sends nothing more).  The first step
 * also publishes each rank's block size, so that every rank runs the same
 * number of steps (the largest published block's) and sees a count that
 * differs from its own rcounts (erroneous) instead of hanging. */
static int agv_large(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                     const MPI_Aint *displs, MPI_Count each, wh_dtype_t *rdt, wh_comm_t *c)
{
    /* rcounts NULL: every block is `each` elements, block q at q x each */
#define CNT(q) (rcounts ? rcounts[q] : each)
#define DSP(q) (displs ? displs[q] : (MPI_Aint)(q) * (MPI_Aint)each)
    shmc_t *s = wh_shmc_get(c);
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    wh_dtype_t *byte = wh_coll_byte();
    size_t total = 0, mine = (size_t)CNT(me) * rdt->size;
    /* per block: where it goes (its place in rbuf, or in rtmp; NULL:
     * nowhere, out of memory: the steps still run, so no rank waits) and
     * the size its sender published */
    struct agv {
        char *dst;
        size_t pub;
    } few[32], *b = n <= 32 ? few : malloc((size_t)n * sizeof *b);
    if (!b)
        rc = wh_coll_nomem("shared-memory allgatherv", (size_t)n * sizeof *b);
    int scattered = 0; /* some block's layout is not one contiguous run: received into rtmp, unpacked after */
    for (int q = 0; q < n; q++) {
        const char *st;
        int one = wh_dtype_is_contig(rdt, (size_t)CNT(q), wh_coll_elt(rbuf, DSP(q), rdt), &st);
        total += (size_t)CNT(q) * rdt->size;
        scattered |= !one;
        if (b)
            b[q].dst = one ? (char *)st : NULL;
    }
    char *stmp = NULL, *rtmp = NULL;
    const char *src = NULL;
    int inplace = sbuf == MPI_IN_PLACE;
    if (inplace) {
        sbuf = wh_coll_elt(rbuf, DSP(me), rdt);
        scount = CNT(me);
        sdt = rdt;
    }
    size_t sbytes = (size_t)scount * sdt->size;
    if (__builtin_expect(sbytes != mine, 0) || !wh_dtype_is_contig(sdt, (size_t)scount, sbuf, &src)) {
        /* packed; a count that disagrees with rcounts (erroneous): reported
         * here, a zero-padded block sent */
        size_t len = sbytes > mine ? sbytes : mine;
        if (!(stmp = calloc(1, len ? len : 1)))
            rc = wh_coll_nomem("shared-memory allgatherv", len);
        else if ((rc = wh_dtype_copy(sbuf, (size_t)scount, sdt, stmp, sbytes, byte)) == MPI_SUCCESS && sbytes != mine)
            rc = wh_shmc_size_mismatch(sbytes, mine, me);
        src = stmp;
    }
    if (scattered && !(rtmp = malloc(total)))
        rc = first_err(rc, wh_coll_nomem("shared-memory allgatherv", total));
    size_t at = 0;
    for (int q = 0; b && rtmp && q < n; at += (size_t)CNT(q) * rdt->size, q++)
        if (!b[q].dst)
            b[q].dst = rtmp + at;
    size_t steps = 1;
    for (size_t j = 0, pos = 0; j < steps; j++, pos += s->bcell) {
        uint64_t t = next_chunk(s, n), k = ++s->bseq;
        if (j == 0)
            *bsize(s, me, k) = sbytes;
        if (pos < mine && src)
            memcpy(bcell(s, me, t), src + pos, mine - pos < s->bcell ? mine - pos : s->bcell);
        post(s, bflag(s, me), k);
        if (j == 0) { /* every size: the steps, and the blocks that match */
            wait_all(s, n, bflag, k);
            for (int q = 0; q < n; q++) {
                size_t p = *bsize(s, q, k), want = (size_t)CNT(q) * rdt->size;
                steps = p / s->bcell + (p % s->bcell != 0) > steps ? p / s->bcell + (p % s->bcell != 0) : steps;
                if (b)
                    b[q].pub = p;
                if (p != want && q != me)
                    rc = first_err(rc, wh_shmc_size_mismatch(p, want, q));
            }
        }
        for (int i = 0; b && i < n; i++) {
            int q = (me + i) % n;
            size_t l = (size_t)CNT(q) * rdt->size;
            if (pos >= l || !b[q].dst || (b[q].pub != l && q != me) || (q == me && inplace && !scattered))
                continue;
            wh_shmc_wait_ge(s, bflag(s, q), k);
            memcpy(b[q].dst + pos, bcell(s, q, t), l - pos < s->bcell ? l - pos : s->bcell);
        }
        post(s, bout(s, me), t);
    }
    at = 0;
    for (int q = 0; rtmp && b && q < n; at += (size_t)CNT(q) * rdt->size, q++)
        if (b[q].dst == rtmp + at && CNT(q))
            rc = first_err(rc, wh_dtype_copy(rtmp + at, (size_t)CNT(q) * rdt->size, byte,
                                             wh_coll_elt(rbuf, DSP(q), rdt), (size_t)CNT(q), rdt));
    if (b != few)
        free(b);
    free(stmp);
    free(rtmp);
    return rc;
#undef CNT
#undef DSP
}

int wh_shmc_allgatherv_large(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                             const MPI_Aint *displs, wh_dtype_t *rdt, wh_comm_t *c)
{
    return agv_large(sbuf, scount, sdt, rbuf, rcounts, displs, 0, rdt, c);
}

/* Allgather of larger blocks: the allgatherv above with equal counts. */
int wh_shmc_allgather_large(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                            wh_dtype_t *rdt, wh_comm_t *c)
{
    return agv_large(sbuf, scount, sdt, rbuf, NULL, NULL, rcount, rdt, c);
}
