/* One-sided operations by the network channel's libfabric paths beyond a
 * contiguous put/get (docs/RMA.md, "libfabric atomics" and "libfabric RMA"):
 *
 * - accumulates, get-accumulates, fetch-and-op and compare-and-swap as
 *   fi_atomic / fi_fetch_atomic / fi_compare_atomic on windows where every
 *   accumulate to an element can take that path (the window's "fabric
 *   classes", agreed at creation: no rank's memory is mapped by another, every
 *   pair of ranks talks over the network channel, every rank registered its
 *   memory); per element class (integer, float, complex of a size) only when
 *   the provider offers every op valid on it, so the choice never depends on
 *   the op and all accumulates to an element — from any origin, the target
 *   itself included — are applied by one mechanism;
 * - puts and gets whose origin or target layout is not contiguous: one
 *   fi_write / fi_read per contiguous target run, from / into a packed copy.
 *
 * Both wait for their completions before returning (like the contiguous
 * path): a completed atomic or write is in the target's memory, so flush,
 * unlock and complete need nothing more, and operations from one origin to
 * one target stay in order (accumulate_ordering's default) without asking
 * the provider for atomic ordering. */
#include <stdlib.h>
#include <string.h>

#include "chan/chan.h"
#include "coord/coord.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

/* ---------- element classes ---------- */

enum { FC_INT = 0, FC_UINT = 4, FC_FLOAT = 8, FC_COMPLEX = 10, FC_N = 12 };

static int log2_bytes(int b)
{
    return b == 1 ? 0 : b == 2 ? 1 : b == 4 ? 2 : b == 8 ? 3 : -1;
}

int wh_rma_fab_class(const wh_dtype_t *et, int *ekind, int *ebytes)
{
    int sgn = 0, b = wh_op_int_bytes(et, &sgn);
    if (b) {
        *ekind = sgn ? WH_AEK_INT : WH_AEK_UINT;
        *ebytes = b;
        return (sgn ? FC_INT : FC_UINT) + log2_bytes(b);
    }
    switch (et->basic) {
    case WH_BT_FLOAT:
    case WH_BT_DOUBLE:
        if (et->size != 4 && et->size != 8)
            return -1;
        *ekind = WH_AEK_FLOAT;
        *ebytes = (int)et->size;
        return FC_FLOAT + (et->size == 8);
    case WH_BT_CFLOAT:
    case WH_BT_CDOUBLE:
        if (et->size != 8 && et->size != 16)
            return -1;
        *ekind = WH_AEK_COMPLEX;
        *ebytes = (int)et->size;
        return FC_COMPLEX + (et->size == 16);
    default:
        return -1;
    }
}

/* Classes whose every valid op the network channel applies atomically
 * (plain and fetching, NO_OP as a fetching read, compare-and-swap for
 * integers): a bit per class, computed once. */
uint32_t wh_rma_fab_classes_local(void)
{
    static int done;
    static uint32_t bits;
    if (done)
        return bits;
    done = 1;
    const wh_chan_ops_t *net = wh_chans[WH_CHAN_NET];
    if (!wh_tun.net_atomics || !wh_chan_usable[WH_CHAN_NET] || !net->atomic_query || !net->atomic ||
        !(wh_chan_caps[WH_CHAN_NET].flags & WH_CAP_ATOMIC))
        return bits;
    static const int int_ops[] = {WH_OPI_MAX, WH_OPI_MIN, WH_OPI_SUM, WH_OPI_PROD, WH_OPI_LAND, WH_OPI_BAND,
                                  WH_OPI_LOR, WH_OPI_BOR, WH_OPI_LXOR, WH_OPI_BXOR, WH_OPI_REPLACE};
    static const int flt_ops[] = {WH_OPI_MAX, WH_OPI_MIN, WH_OPI_SUM, WH_OPI_PROD, WH_OPI_REPLACE};
    static const int cpx_ops[] = {WH_OPI_SUM, WH_OPI_PROD, WH_OPI_REPLACE};
    for (int c = 0; c < FC_N; c++) {
        int ek, eb;
        const int *ops;
        size_t nops;
        if (c < FC_FLOAT) {
            ek = c < FC_UINT ? WH_AEK_INT : WH_AEK_UINT;
            eb = 1 << (c & 3);
            ops = int_ops;
            nops = sizeof int_ops / sizeof *int_ops;
        } else if (c < FC_COMPLEX) {
            ek = WH_AEK_FLOAT;
            eb = c == FC_FLOAT ? 4 : 8;
            ops = flt_ops;
            nops = sizeof flt_ops / sizeof *flt_ops;
        } else {
            ek = WH_AEK_COMPLEX;
            eb = c == FC_COMPLEX ? 8 : 16;
            ops = cpx_ops;
            nops = sizeof cpx_ops / sizeof *cpx_ops;
        }
        int ok = net->atomic_query(ek, eb, WH_OPI_NO_OP, 1, 0);
        for (size_t i = 0; i < nops && ok; i++)
            ok = net->atomic_query(ek, eb, ops[i], 0, 0) && net->atomic_query(ek, eb, ops[i], 1, 0);
        if (ok && c < FC_FLOAT)
            ok = net->atomic_query(ek, eb, WH_OPI_REPLACE, 1, 1);
        if (ok)
            bits |= 1u << c;
    }
    WH_DEBUG("rma", "libfabric atomics for element classes 0x%03x (int1..8 uint1..8 float4,8 complex8,16)",
             (unsigned)bits);
    return bits;
}

/* ---------- waiting for several channel operations ---------- */

typedef struct fab_wait {
    wh_comp_t c;
    int left, err;
} fab_wait_t;

static void fab_done(wh_comp_t *c, int err)
{
    fab_wait_t *f = (fab_wait_t *)c;
    if (err && !f->err)
        f->err = err;
    f->left--;
}

static void fab_wait(fab_wait_t *f)
{
    unsigned idle = 0;
    while (f->left > 0)
        if (!wh_progress())
            wh_progress_idle(&idle);
}

/* ---------- atomics ---------- */

int wh_rma_fab_acc(wh_win_t *w, const wh_rma_args_t *a, uint64_t tbase, const wh_dtype_t *et,
                   const wh_rma_run_t *runs, size_t nruns)
{
    int ek, eb;
    int cls = wh_rma_fab_class(et, &ek, &eb);
    wh_win_peer_t *p = &w->peers[a->target];
    if (cls < 0 || !(w->fab_classes & (1u << cls)) || !p->has_rkey || (size_t)eb != et->size ||
        (size_t)et->extent != et->size)
        return WH_FALLBACK;
    int noop = a->op && a->op->builtin == WH_OPI_NO_OP;
    if (a->kind == WH_RMA_ACC && noop)
        return MPI_SUCCESS; /* changes nothing */
    WH_CHECK(wh_rma_drain(w, a->target));
    size_t tbytes = a->kind == WH_RMA_CAS ? (size_t)eb : a->tdt->size * (size_t)a->tcount;
    const char *src = NULL;
    char *packed = NULL, *res = NULL;
    int rc = MPI_SUCCESS;
    if (a->kind == WH_RMA_CAS) {
        src = a->obuf;
        res = a->rbuf;
    } else {
        if (!noop && !wh_dtype_is_contig(a->odt, (size_t)a->ocount, a->obuf, &src)) {
            if (!(packed = malloc(tbytes)))
                return wh_error(MPI_ERR_NO_MEM, "out of memory");
            if ((rc = wh_dtype_pack(a->obuf, (size_t)a->ocount, a->odt, 0, packed, tbytes))) {
                free(packed);
                return rc;
            }
            src = packed;
        }
        if (a->kind == WH_RMA_GACC && !(res = malloc(tbytes))) {
            free(packed);
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        }
    }
    fab_wait_t f = {.c = {.done = fab_done}};
    const wh_chan_ops_t *net = wh_chans[WH_CHAN_NET];
    size_t soff = 0;
    size_t nr = a->kind == WH_RMA_CAS ? 1 : nruns;
    for (size_t i = 0; i < nr && rc == MPI_SUCCESS; i++) {
        uint64_t off = a->kind == WH_RMA_CAS ? 0 : (uint64_t)runs[i].off;
        size_t n = a->kind == WH_RMA_CAS ? 1 : (size_t)runs[i].n;
        wh_chan_atomic_t at = {.ekind = ek, .ebytes = eb, .cas = a->kind == WH_RMA_CAS,
                               .opi = a->kind == WH_RMA_CAS ? WH_OPI_REPLACE : a->op->builtin,
                               .src = noop ? NULL : src + soff, .cmp = a->cbuf,
                               .res = res ? res + soff : NULL, .count = n};
        f.left++;
        rc = net->atomic(p->wrank, p->rbase + tbase + off, p->rkey, &at, &f.c);
        if (rc != MPI_SUCCESS) {
            f.left--;
            if (rc == WH_FALLBACK) /* the class was agreed: every origin must take this path */
                rc = wh_error(MPI_ERR_INTERN, "libfabric refused an atomic it offered (%d-byte elements)", eb);
        }
        soff += n * (size_t)eb;
    }
    fab_wait(&f);
    if (rc == MPI_SUCCESS && f.err)
        rc = f.err;
    if (rc == MPI_SUCCESS && a->kind == WH_RMA_GACC)
        rc = wh_dtype_unpack(a->rbuf, (size_t)a->rcount, a->rdt, 0, res, tbytes);
    if (a->kind != WH_RMA_CAS)
        free(res);
    free(packed);
    if (rc == MPI_SUCCESS)
        wh_coord_note(WH_CHAN_NET, WH_PROTO_FATOMIC, tbytes);
    return rc;
}

/* ---------- non-contiguous puts and gets ---------- */

int wh_rma_fab_rma(wh_win_t *w, const wh_rma_args_t *a, uint64_t tbase, const wh_rma_run_t *runs, size_t nruns)
{
    wh_win_peer_t *p = &w->peers[a->target];
    int put = a->kind == WH_RMA_PUT;
    size_t tbytes = a->tdt->size * (size_t)a->tcount;
    const wh_chan_ops_t *net = wh_chans[WH_CHAN_NET];
    const void *ubuf = put ? a->obuf : a->rbuf;
    size_t ucount = (size_t)(put ? a->ocount : a->rcount);
    const wh_dtype_t *udt = put ? a->odt : a->rdt;
    const char *contig = NULL;
    char *tmp = NULL;
    if (!wh_dtype_is_contig(udt, ucount, ubuf, &contig)) {
        if (!(tmp = malloc(tbytes ? tbytes : 1)))
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        if (put) {
            int rc = wh_dtype_pack(ubuf, ucount, udt, 0, tmp, tbytes);
            if (rc) {
                free(tmp);
                return rc;
            }
        }
        contig = tmp;
    }
    fab_wait_t f = {.c = {.done = fab_done}};
    int rc = MPI_SUCCESS;
    size_t soff = 0;
    for (size_t i = 0; i < nruns && rc == MPI_SUCCESS; i++) {
        wh_data_t d = {.base = (char *)(uintptr_t)contig + soff, .len = (size_t)runs[i].n, .mem = WH_MEM_HOST};
        uint64_t raddr = p->rbase + tbase + (uint64_t)runs[i].off;
        f.left++;
        rc = put ? net->put_zcopy(p->wrank, raddr, p->rkey, &d, &f.c) : net->get_zcopy(p->wrank, raddr, p->rkey, &d, &f.c);
        if (rc != MPI_SUCCESS) {
            f.left--;
            if (rc == WH_FALLBACK && i == 0)
                break; /* nothing moved yet: active messages */
            if (rc == WH_FALLBACK)
                rc = wh_error(MPI_ERR_INTERN, "libfabric refused part of a non-contiguous %s", put ? "put" : "get");
        }
        soff += (size_t)runs[i].n;
    }
    fab_wait(&f);
    if (rc == MPI_SUCCESS && f.err)
        rc = f.err;
    if (rc == MPI_SUCCESS && soff < tbytes) { /* refused at the first run */
        free(tmp);
        return WH_FALLBACK;
    }
    if (rc == MPI_SUCCESS && !put && tmp)
        rc = wh_dtype_unpack(a->rbuf, ucount, udt, 0, tmp, tbytes);
    free(tmp);
    if (rc == MPI_SUCCESS)
        wh_coord_note(WH_CHAN_NET, WH_PROTO_FABRIC, tbytes);
    return rc;
}
