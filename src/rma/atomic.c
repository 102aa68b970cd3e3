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
#include <string.h>

#include "rma/rma.h"
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

/* hold lock word lk in mode want (0 none, 1 shared, 2 exclusive), from mode *held */
static void hold(uint32_t *lk, int *held, int want)
{
    if (!lk || *held == want)
        return;
    if (*held == 1)
        wh_rma_acc_unshare(lk);
    else if (*held == 2)
        wh_rma_acc_unlock(lk);
    if (want == 1)
        wh_rma_acc_share(lk);
    else if (want == 2)
        wh_rma_acc_lock(lk);
    *held = want;
}

void wh_rma_acc_runs(uint32_t *lk, int abytes, int sgn, char *base, const wh_rma_run_t *runs, size_t nruns,
                     const char *data, char *old, wh_op_t *op, MPI_Datatype eh, const wh_dtype_t *et)
{
    size_t esz = et->size, total = 0;
    int noop = !data || op->builtin == WH_OPI_NO_OP;
    for (size_t i = 0; i < nruns; i++)
        total += runs[i].n * esz;
    if (abytes && wh_rma_acc_bulk(lk, total))
        abytes = 0; /* one plain pass under the exclusive lock beats an atomic per element */
    int held = 0;
    for (size_t i = 0; i < nruns; i++) {
        char *a = base + runs[i].off;
        size_t n = runs[i].n;
        if (abytes && !((uintptr_t)a & (uintptr_t)(abytes - 1))) {
            hold(lk, &held, 1);
            wh_rma_atomic_apply(a, n, abytes, sgn, noop ? NULL : data, old, op->builtin);
        } else {
            hold(lk, &held, 2);
            wh_rma_run_t r = {.off = 0, .n = n};
            wh_rma_apply_runs(a, &r, 1, noop ? NULL : data, old, op, eh, et);
        }
        if (old)
            old += n * esz;
        if (!noop)
            data += n * esz;
    }
    hold(lk, &held, 0);
}
