/* One-sided data movement of the network channel (docs/RMA.md, "libfabric
 * RMA"): registration of window memory (mem_reg / mem_dereg) and put_zcopy /
 * get_zcopy as fi_write / fi_read into memory a peer registered, when the
 * provider offers FI_RMA (tcp;ofi_rxm does; virtual or offset addressing).  Puts ask
 * for delivery completion, so a completed put is in the target's memory (what
 * the one-sided layer's flush relies on); a provider that refuses the flag
 * makes put_zcopy answer WH_FALLBACK and the caller uses active messages.
 * Every transfer is cut into chunks of the provider's message size, each one
 * posted libfabric operation (WH_NET_OP_RMA) completed through the shared
 * completion queue (net_io.c). */
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"
#include "core/core.h"
#include "pmi/auth.h"
#include "op/op.h"
#include "util/log.h"

/* one transfer: its chunk operations follow */
typedef struct net_rma {
    wh_comp_t *comp;
    int inflight;
    int err;
    size_t nops;
    wh_net_op_t ops[];
} net_rma_t;

int wh_net_mem_reg(void *base, size_t len, uint64_t *rkey, uint64_t *rbase, void **handle)
{
    if (!wh_net.open || !wh_net.rma || !len)
        return WH_FALLBACK;
    /* Requested keys (without FI_MR_PROV_KEY) are random: a key is the only
     * thing between a process that reaches our endpoint and the window's
     * memory (tcp;ofi_rxm checks nothing else), so it must not be guessable;
     * peers learn it only through the window's creation exchange. */
    size_t ksz = wh_net.info->domain_attr->mr_key_size;
    struct fid_mr *mr = NULL;
    int rc = -FI_ENOKEY;
    for (int tries = 0; tries < 8 && rc == -FI_ENOKEY; tries++) {
        char hex[17];
        if (wh_pmi_random_hex(hex, 8))
            return WH_FALLBACK;
        uint64_t key = strtoull(hex, NULL, 16);
        if (ksz && ksz < 8)
            key &= (1ULL << (8 * ksz)) - 1;
        rc = fi_mr_reg(wh_net.domain, base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, key, 0, &mr, NULL);
    }
    if (rc) {
        WH_DEBUG("net", "registering %zu bytes of window memory: %s (one-sided traffic uses active messages)", len,
                 fi_strerror(-rc));
        return WH_FALLBACK;
    }
    *rkey = fi_mr_key(mr);
    if (!*rkey) { /* 0 means "not registered memory" to put_zcopy/get_zcopy (chan.h) */
        fi_close(&mr->fid);
        return WH_FALLBACK;
    }
    *rbase = wh_net.rma_virt ? (uint64_t)(uintptr_t)base : 0;
    *handle = mr;
    return MPI_SUCCESS;
}

void wh_net_mem_dereg(void *handle)
{
    if (handle && wh_net.domain)
        fi_close(&((struct fid_mr *)handle)->fid);
}

static void rma_finish(net_rma_t *t)
{
    wh_comp_t *c = t->comp;
    int err = t->err ? MPI_ERR_OTHER : MPI_SUCCESS;
    free(t);
    c->done(c, err);
}

void wh_net_rma_done(wh_net_op_t *op, int err)
{
    net_rma_t *t = (net_rma_t *)(void *)op->x;
    if (err && !t->err) {
        t->err = err;
        WH_ERRLOG("net", "one-sided %s with rank %d failed: %s",
                  op->staged == 2 ? "atomic" : op->staged ? "put" : "get", op->peer,
                  fi_strerror(err < 0 ? -err : err));
    }
    if (--t->inflight == 0)
        rma_finish(t);
}

static ssize_t post(wh_net_op_t *op, int put, char *buf, uint64_t raddr, uint64_t rkey)
{
    struct iovec iov = {.iov_base = buf, .iov_len = op->len};
    struct fi_rma_iov riov = {.addr = raddr, .len = op->len, .key = rkey};
    struct fi_msg_rma msg = {.msg_iov = &iov, .iov_count = 1, .addr = wh_net.peers[op->peer].addr,
                             .rma_iov = &riov, .rma_iov_count = 1, .context = &op->fctx};
    return put ? fi_writemsg(wh_net.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
               : fi_readmsg(wh_net.ep, &msg, FI_COMPLETION);
}

static int xfer(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *d, wh_comp_t *c, int put)
{
    if (!rkey || !wh_net.open || !wh_net.rma || (put && wh_net.rma_no_dc) || !d->base || d->mem != WH_MEM_HOST ||
        wpeer < 0 || wpeer >= wh_net_npeers() || wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL)
        return WH_FALLBACK;
    size_t cs = wh_net.rma_max ? wh_net.rma_max : d->len, n = d->len ? (d->len + cs - 1) / cs : 1;
    net_rma_t *t = calloc(1, sizeof *t + n * sizeof(wh_net_op_t));
    if (!t)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    t->comp = c;
    t->nops = n;
    t->inflight = 1; /* held while posting */
    for (size_t k = 0; k < n; k++) {
        wh_net_op_t *op = &t->ops[k];
        op->kind = WH_NET_OP_RMA;
        op->peer = wpeer;
        op->staged = (uint8_t)put;
        op->x = (struct wh_net_xfer *)(void *)t;
        size_t off = k * cs;
        op->len = d->len - off < cs ? d->len - off : cs;
        ssize_t rc;
        unsigned tries = 0;
        while ((rc = post(op, put, d->base + off, raddr + off, rkey)) == -FI_EAGAIN && tries++ < 10000000u)
            wh_net_progress();
        if (rc) {
            if (k == 0 && put && (rc == -FI_EBADFLAGS || rc == -FI_EOPNOTSUPP || rc == -FI_ENOSYS)) {
                wh_net.rma_no_dc = 1;
                WH_INFO("net", "provider %s refuses delivery-complete writes (%s): one-sided puts over the "
                               "network use active messages", wh_net.prov, fi_strerror((int)-rc));
                free(t);
                return WH_FALLBACK;
            }
            if (k == 0) {
                free(t);
                return wh_error(MPI_ERR_OTHER, "libfabric %s of %zu bytes with rank %d failed: %s",
                                put ? "fi_write" : "fi_read", d->len, wpeer, fi_strerror((int)-rc));
            }
            t->err = (int)rc; /* the chunks already posted still complete */
            break;
        }
        op->posted = 1;
        t->inflight++;
    }
    if (--t->inflight == 0)
        rma_finish(t);
    return MPI_SUCCESS;
}

int wh_net_put_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c)
{
    return xfer(wpeer, raddr, rkey, src, c, 1);
}

int wh_net_get_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c)
{
    return xfer(wpeer, raddr, rkey, dst, c, 0);
}

/* ---------- atomics (fi_atomic / fi_fetch_atomic / fi_compare_atomic) ---------- */

static int fi_dt(int ekind, int ebytes, enum fi_datatype *dt)
{
    switch (ekind) {
    case WH_AEK_INT:
    case WH_AEK_UINT: {
        static const enum fi_datatype s[] = {FI_INT8, FI_INT16, FI_INT32, FI_INT64};
        static const enum fi_datatype u[] = {FI_UINT8, FI_UINT16, FI_UINT32, FI_UINT64};
        int k = ebytes == 1 ? 0 : ebytes == 2 ? 1 : ebytes == 4 ? 2 : ebytes == 8 ? 3 : -1;
        if (k < 0)
            return -1;
        *dt = ekind == WH_AEK_INT ? s[k] : u[k];
        return 0;
    }
    case WH_AEK_FLOAT:
        if (ebytes != 4 && ebytes != 8)
            return -1;
        *dt = ebytes == 4 ? FI_FLOAT : FI_DOUBLE;
        return 0;
    case WH_AEK_COMPLEX:
        if (ebytes != 8 && ebytes != 16)
            return -1;
        *dt = ebytes == 8 ? FI_FLOAT_COMPLEX : FI_DOUBLE_COMPLEX;
        return 0;
    }
    return -1;
}

static int fi_opcode(int opi, int cas, enum fi_op *op)
{
    if (cas) {
        *op = FI_CSWAP;
        return 0;
    }
    switch (opi) {
    case WH_OPI_MAX: *op = FI_MAX; return 0;
    case WH_OPI_MIN: *op = FI_MIN; return 0;
    case WH_OPI_SUM: *op = FI_SUM; return 0;
    case WH_OPI_PROD: *op = FI_PROD; return 0;
    case WH_OPI_LAND: *op = FI_LAND; return 0;
    case WH_OPI_BAND: *op = FI_BAND; return 0;
    case WH_OPI_LOR: *op = FI_LOR; return 0;
    case WH_OPI_BOR: *op = FI_BOR; return 0;
    case WH_OPI_LXOR: *op = FI_LXOR; return 0;
    case WH_OPI_BXOR: *op = FI_BXOR; return 0;
    case WH_OPI_REPLACE: *op = FI_ATOMIC_WRITE; return 0;
    case WH_OPI_NO_OP: *op = FI_ATOMIC_READ; return 0;
    }
    return -1;
}

/* largest count of one operation, 0 if not offered */
static size_t query_count(int ekind, int ebytes, int opi, int fetch, int cas)
{
    enum fi_datatype dt;
    enum fi_op op;
    if (!wh_net.open || !wh_net.atomic || fi_dt(ekind, ebytes, &dt) || fi_opcode(opi, cas, &op))
        return 0;
    if (op == FI_ATOMIC_READ && !fetch)
        return 0;
    struct fi_atomic_attr attr = {0};
    uint64_t flags = cas ? FI_COMPARE_ATOMIC : fetch ? FI_FETCH_ATOMIC : 0;
    if (fi_query_atomic(wh_net.domain, dt, op, &attr, flags) || !attr.count || attr.size != (size_t)ebytes)
        return 0;
    return attr.count;
}

int wh_net_atomic_query(int ekind, int ebytes, int opi, int fetch, int cas)
{
    return query_count(ekind, ebytes, opi, fetch, cas) > 0;
}

static ssize_t post_atomic(wh_net_op_t *op, const wh_chan_atomic_t *a, enum fi_datatype dt, enum fi_op fop,
                           size_t first, uint64_t raddr, uint64_t rkey)
{
    size_t eb = (size_t)a->ebytes, off = first * eb;
    /* FI_ATOMIC_READ ignores the source; it still wants a buffer of count elements */
    void *src = a->src ? (char *)(uintptr_t)a->src + off : (char *)a->res + off;
    struct fi_ioc ioc = {.addr = src, .count = op->len};
    struct fi_rma_ioc rioc = {.addr = raddr + off, .count = op->len, .key = rkey};
    struct fi_msg_atomic msg = {.msg_iov = &ioc, .iov_count = 1, .addr = wh_net.peers[op->peer].addr,
                                .rma_iov = &rioc, .rma_iov_count = 1, .datatype = dt, .op = fop,
                                .context = &op->fctx};
    if (a->cas) {
        struct fi_ioc cmp = {.addr = (char *)(uintptr_t)a->cmp + off, .count = op->len};
        struct fi_ioc res = {.addr = (char *)a->res + off, .count = op->len};
        return fi_compare_atomicmsg(wh_net.ep, &msg, &cmp, NULL, 1, &res, NULL, 1, FI_COMPLETION);
    }
    if (a->res) {
        struct fi_ioc res = {.addr = (char *)a->res + off, .count = op->len};
        return fi_fetch_atomicmsg(wh_net.ep, &msg, &res, NULL, 1, FI_COMPLETION);
    }
    /* delivery complete: a completed accumulate is in the target's memory (flush relies on it) */
    return fi_atomicmsg(wh_net.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
}

int wh_net_atomic(int wpeer, uint64_t raddr, uint64_t rkey, const wh_chan_atomic_t *a, wh_comp_t *c)
{
    enum fi_datatype dt;
    enum fi_op fop;
    if (!rkey || !wh_net.open || !wh_net.atomic || wpeer < 0 || wpeer >= wh_net_npeers() ||
        wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL || fi_dt(a->ekind, a->ebytes, &dt) ||
        fi_opcode(a->opi, a->cas, &fop))
        return WH_FALLBACK;
    size_t cs = query_count(a->ekind, a->ebytes, a->opi, a->res != NULL, a->cas);
    if (!cs)
        return WH_FALLBACK;
    size_t n = a->count ? (a->count + cs - 1) / cs : 1;
    net_rma_t *t = calloc(1, sizeof *t + n * sizeof(wh_net_op_t));
    if (!t)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    t->comp = c;
    t->nops = n;
    t->inflight = 1;
    for (size_t k = 0; k < n; k++) {
        wh_net_op_t *op = &t->ops[k];
        op->kind = WH_NET_OP_RMA;
        op->peer = wpeer;
        op->staged = 2; /* an atomic (for the error message) */
        op->x = (struct wh_net_xfer *)(void *)t;
        size_t first = k * cs;
        op->len = a->count - first < cs ? a->count - first : cs; /* elements */
        ssize_t rc;
        unsigned tries = 0;
        while ((rc = post_atomic(op, a, dt, fop, first, raddr, rkey)) == -FI_EAGAIN && tries++ < 10000000u)
            wh_net_progress();
        if (rc) {
            if (k == 0) {
                free(t);
                return wh_error(MPI_ERR_OTHER, "libfabric atomic (op %d, %d-byte elements) with rank %d failed: %s",
                                a->opi, a->ebytes, wpeer, fi_strerror((int)-rc));
            }
            t->err = (int)rc;
            break;
        }
        op->posted = 1;
        t->inflight++;
    }
    if (--t->inflight == 0)
        rma_finish(t);
    return MPI_SUCCESS;
}
