/* CPU atomics for accumulates on node-region windows (docs/RMA.md, "Atomicity").
 *
 * On a window whose memory lies in the node region, accumulates reach the
 * same element by two routes: a co-resident origin applies them itself, and
 * the target's handler applies those that came as active messages.  Both
 * routes pick the mechanism from the element alone, so every accumulate to a
 * given element uses the same one and they stay atomic with respect to each
 * other whatever the mix of operations, counts and origins:
 *
 * - integer elements (wh_op_int_bytes: 1, 2, 4 or 8 bytes) at a naturally
 *   aligned address: one C11-style atomic per element (fetch-add/and/or/xor,
 *   exchange, load; compare-exchange loops for MIN, MAX, PROD and the logical
 *   ops), when the window's atomics are on (WHARF_RMA_ATOMICS);
 * - everything else (floating point, pairs, misaligned integers): the
 *   window's lock word.
 *
 * Every predefined op valid on an integer has an atomic form, so the choice
 * never depends on the op and the accumulate_ops hint cannot make it wrong. */
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "locality/nodeheap.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

#define AT_MO __ATOMIC_SEQ_CST

/* the new element value of op applied to (origin v, target o) */
#define AT_COMBINE(T, S)                                                                                              \
    static T comb_##T(int opi, T o, T v, int sgn)                                                                     \
    {                                                                                                                 \
        switch (opi) {                                                                                                \
        case WH_OPI_MAX: return sgn ? ((S)v > (S)o ? v : o) : (v > o ? v : o);                                        \
        case WH_OPI_MIN: return sgn ? ((S)v < (S)o ? v : o) : (v < o ? v : o);                                        \
        case WH_OPI_PROD: return (T)((uint64_t)o * (uint64_t)v);                                                      \
        case WH_OPI_LAND: return (T)((o != 0) & (v != 0));                                                            \
        case WH_OPI_LOR: return (T)((o != 0) | (v != 0));                                                             \
        case WH_OPI_LXOR: return (T)((o != 0) ^ (v != 0));                                                            \
        case WH_OPI_SUM: return (T)(o + v);                                                                           \
        case WH_OPI_BAND: return (T)(o & v);                                                                          \
        case WH_OPI_BOR: return (T)(o | v);                                                                           \
        case WH_OPI_BXOR: return (T)(o ^ v);                                                                          \
        case WH_OPI_REPLACE: return v;                                                                                \
        default: return o; /* MPI_NO_OP */                                                                            \
        }                                                                                                             \
    }

/* n elements at a (ext bytes apart); data: packed origin values (NULL: MPI_NO_OP);
 * old (if not NULL) receives the previous values packed */
#define AT_APPLY(T)                                                                                                   \
    static void apply_##T(char *a, size_t n, size_t ext, const char *data, char *old, int opi, int sgn)              \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++, a += ext) {                                                                    \
            T *p = (T *)(void *)a, v = 0, o;                                                                          \
            if (data)                                                                                                 \
                memcpy(&v, data + i * sizeof(T), sizeof(T));                                                          \
            switch (data ? opi : WH_OPI_NO_OP) {                                                                      \
            case WH_OPI_NO_OP: o = __atomic_load_n(p, AT_MO); break;                                                  \
            case WH_OPI_REPLACE: o = __atomic_exchange_n(p, v, AT_MO); break;                                         \
            case WH_OPI_SUM: o = __atomic_fetch_add(p, v, AT_MO); break;                                              \
            case WH_OPI_BAND: o = __atomic_fetch_and(p, v, AT_MO); break;                                             \
            case WH_OPI_BOR: o = __atomic_fetch_or(p, v, AT_MO); break;                                               \
            case WH_OPI_BXOR: o = __atomic_fetch_xor(p, v, AT_MO); break;                                             \
            default:                                                                                                  \
                o = __atomic_load_n(p, __ATOMIC_RELAXED);                                                             \
                while (!__atomic_compare_exchange_n(p, &o, comb_##T(opi, o, v, sgn), 1, AT_MO, __ATOMIC_RELAXED))    \
                    ;                                                                                                 \
            }                                                                                                         \
            if (old)                                                                                                  \
                memcpy(old + i * sizeof(T), &o, sizeof(T));                                                           \
        }                                                                                                             \
    }

#define AT_CAS(T)                                                                                                     \
    static void cas_##T(char *a, const void *nv, const void *cmp, void *old)                                         \
    {                                                                                                                 \
        T c, n;                                                                                                       \
        memcpy(&c, cmp, sizeof c);                                                                                    \
        memcpy(&n, nv, sizeof n);                                                                                     \
        __atomic_compare_exchange_n((T *)(void *)a, &c, n, 0, AT_MO, AT_MO); /* c: the value found */                 \
        memcpy(old, &c, sizeof c);                                                                                    \
    }

AT_COMBINE(uint8_t, int8_t)
AT_COMBINE(uint16_t, int16_t)
AT_COMBINE(uint32_t, int32_t)
AT_COMBINE(uint64_t, int64_t)
AT_APPLY(uint8_t)
AT_APPLY(uint16_t)
AT_APPLY(uint32_t)
AT_APPLY(uint64_t)
AT_CAS(uint8_t)
AT_CAS(uint16_t)
AT_CAS(uint32_t)
AT_CAS(uint64_t)

int wh_rma_atomic_class(const wh_win_t *w, const wh_dtype_t *et, int *sgn)
{
    if (!w->acc_atomic || !et)
        return 0;
    int b = wh_op_int_bytes(et, sgn);
    return b && et->extent == b && et->true_lb == 0 ? b : 0;
}

void wh_rma_atomic_apply(char *a, size_t n, int bytes, int sgn, const char *data, char *old, int opi)
{
    switch (bytes) {
    case 1: apply_uint8_t(a, n, 1, data, old, opi, sgn); break;
    case 2: apply_uint16_t(a, n, 2, data, old, opi, sgn); break;
    case 4: apply_uint32_t(a, n, 4, data, old, opi, sgn); break;
    default: apply_uint64_t(a, n, 8, data, old, opi, sgn); break;
    }
}

void wh_rma_atomic_cas(char *a, int bytes, const void *nv, const void *cmp, void *old)
{
    switch (bytes) {
    case 1: cas_uint8_t(a, nv, cmp, old); break;
    case 2: cas_uint16_t(a, nv, cmp, old); break;
    case 4: cas_uint32_t(a, nv, cmp, old); break;
    default: cas_uint64_t(a, nv, cmp, old); break;
    }
}

int wh_rma_acc_bulk(const uint32_t *lk, size_t bytes)
{
    return lk && wh_tun.rma_acc_bulk && bytes >= wh_tun.rma_acc_bulk;
}

/* ---------- the bulk gate (docs/RMA.md, "Atomicity") ----------
 *
 * CPU atomics and plain (bulk) passes over integer elements must not overlap
 * in time.  The lock word does that (atomics hold it shared, plain passes
 * exclusively), but then every 8-byte accumulate pays two more locked
 * instructions on a cache line every co-resident origin writes.  On windows
 * where acc_fast holds (agreed at creation, win.c), an atomic update instead
 *
 *     A1  stores an odd value into this process's slot (plain store, a line of
 *         the node region only this process writes),
 *     A2  reads the gate word (lk[1]); if it is 0, applies its CPU atomics
 *         without touching the lock word,
 *     A3  and stores the next even value into its slot (release);
 *     if the gate was raised it makes its slot even again and takes the lock
 *     word shared, as without acc_fast.
 *
 * A bulk pass
 *
 *     B1  raises the gate (atomic increment),
 *     B2  calls membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED),
 *     B3  waits, for every co-resident rank of the window, until its slot is
 *         even or has changed,
 *     B4  takes the lock word exclusively (shared holders drain), applies the
 *         plain pass, releases it and lowers the gate.
 *
 * Why no atomic update overlaps the pass: membarrier returns only after every
 * CPU running a registered process (every rank of an acc_fast window
 * registered) executed a full memory barrier, and a process not running
 * passes one when it is switched in.  Take an atomic update A in flight
 * during the pass.  If A2's read of the gate came before that barrier on A's
 * CPU, A1 (earlier in program order; the compiler fence keeps it there) is
 * visible after the barrier, so B3 sees the odd slot and waits for A3, which
 * follows A's atomics.  If A2's read came after the barrier, it also came
 * after B1 (which precedes the system call), so A saw the gate raised and
 * took the lock word shared, which B4's exclusive hold excludes.  Either way
 * A does not overlap the pass.  The slot may be odd for an atomic on another
 * window (one slot per process): B3 then waits a few instructions longer.
 * A slot changes only inside the process's MPI critical section, so one
 * process never has two atomic updates in flight.  The lock word is only
 * written when a bulk pass or a non-integer element is involved, so
 * the gate read of A2 hits a line that stays in every core's cache. */
static uint64_t *my_slot;    /* this process's slot in the node region */
static uint64_t my_slot_off = UINT64_MAX;
static int gate_state;       /* 0 not tried, 1 available, -1 not available */

static long membar(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

uint64_t wh_rma_gate_local(void)
{
    if (!gate_state) {
        gate_state = -1;
        long q = membar(MEMBARRIER_CMD_QUERY);
        int want = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
        if (wh_tun.rma_acc_gate && q >= 0 && (q & want) == want &&
            !membar(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) && (my_slot = wh_node_alloc(64, &my_slot_off))) {
            __atomic_store_n(my_slot, 0, __ATOMIC_RELEASE);
            gate_state = 1;
        } else
            WH_DEBUG("rma", "bulk gate not available (membarrier query %ld): atomics hold the lock word", q);
    }
    return gate_state > 0 ? my_slot_off : UINT64_MAX;
}

/* A1/A2: 1 when the gate is open (atomics may go), else the lock word is held shared (0 without one) */
static int atom_enter(const wh_win_t *w, uint32_t *lk)
{
    if (!lk)
        return 0;
    if (w->acc_fast) {
        uint64_t s = *my_slot; /* only this process writes it */
        __atomic_store_n(my_slot, s + 1, __ATOMIC_RELAXED);
        __atomic_signal_fence(__ATOMIC_SEQ_CST); /* B2's membarrier is the other half of the fence */
        if (!__atomic_load_n(&lk[1], __ATOMIC_ACQUIRE))
            return 1;
        __atomic_store_n(my_slot, s + 2, __ATOMIC_RELEASE);
    }
    wh_rma_acc_share(lk);
    return 0;
}

/* A3 */
static void atom_exit(uint32_t *lk, int fast)
{
    if (fast)
        __atomic_store_n(my_slot, *my_slot + 1, __ATOMIC_RELEASE);
    else if (lk)
        wh_rma_acc_unshare(lk);
}

/* B1-B4 up to the plain pass (bulk: it updates integer elements atomics may touch) */
static void plain_enter(const wh_win_t *w, uint32_t *lk, int bulk)
{
    if (bulk && w->acc_fast) {
        __atomic_fetch_add(&lk[1], 1u, __ATOMIC_SEQ_CST);
        if (membar(MEMBARRIER_CMD_GLOBAL_EXPEDITED))
            wh_job_abort(1, "wharf: membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) failed after registration");
        for (int i = 0; i < w->nslots; i++) {
            uint64_t s = __atomic_load_n(w->slots[i], __ATOMIC_ACQUIRE);
            unsigned spins = 0;
            while ((s & 1) && __atomic_load_n(w->slots[i], __ATOMIC_ACQUIRE) == s)
                wh_rma_relax(&spins);
        }
    }
    wh_rma_acc_lock(lk);
}

static void plain_exit(const wh_win_t *w, uint32_t *lk, int bulk)
{
    wh_rma_acc_unlock(lk);
    if (bulk && w->acc_fast)
        __atomic_fetch_sub(&lk[1], 1u, __ATOMIC_RELEASE);
}

void wh_rma_atomic_cas_lk(const wh_win_t *w, uint32_t *lk, char *a, int bytes, const void *nv, const void *cmp,
                          void *old)
{
    int fast = atom_enter(w, lk);
    wh_rma_atomic_cas(a, bytes, nv, cmp, old);
    atom_exit(lk, fast);
}

void wh_rma_plain_lock(const wh_win_t *w, uint32_t *lk)
{
    if (lk)
        plain_enter(w, lk, 0);
}

void wh_rma_plain_unlock(const wh_win_t *w, uint32_t *lk)
{
    if (lk)
        plain_exit(w, lk, 0);
}

/* hold lock word lk in mode want (0 none, 1 atomic, 2 plain, 3 plain bulk), from mode *held;
 * *fast: the atomic mode went through the open gate */
static void hold(const wh_win_t *w, uint32_t *lk, int *held, int *fast, int want)
{
    if (!lk || *held == want)
        return;
    if (*held == 1)
        atom_exit(lk, *fast);
    else if (*held >= 2)
        plain_exit(w, lk, *held == 3);
    if (want == 1)
        *fast = atom_enter(w, lk);
    else if (want >= 2)
        plain_enter(w, lk, want == 3);
    *held = want;
}

void wh_rma_acc_runs(const wh_win_t *w, uint32_t *lk, int abytes, int sgn, char *base, const wh_rma_run_t *runs,
                     size_t nruns, const char *data, char *old, wh_op_t *op, MPI_Datatype eh, const wh_dtype_t *et)
{
    size_t esz = et->size, total = 0;
    int noop = !data || op->builtin == WH_OPI_NO_OP, bulk = 0;
    for (size_t i = 0; i < nruns; i++)
        total += runs[i].n * esz;
    if (abytes && wh_rma_acc_bulk(lk, total)) {
        abytes = 0; /* one plain pass under the exclusive lock beats an atomic per element */
        bulk = 1;
    }
    int held = 0, fast = 0;
    for (size_t i = 0; i < nruns; i++) {
        char *a = base + runs[i].off;
        size_t n = runs[i].n;
        if (abytes && !((uintptr_t)a & (uintptr_t)(abytes - 1))) {
            hold(w, lk, &held, &fast, 1);
            wh_rma_atomic_apply(a, n, abytes, sgn, noop ? NULL : data, old, op->builtin);
        } else {
            hold(w, lk, &held, &fast, bulk ? 3 : 2);
            wh_rma_run_t r = {.off = 0, .n = n};
            wh_rma_apply_runs(a, &r, 1, noop ? NULL : data, old, op, eh, et);
        }
        if (old)
            old += n * esz;
        if (!noop)
            data += n * esz;
    }
    hold(w, lk, &held, &fast, 0);
}
