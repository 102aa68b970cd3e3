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
#include <rdma/fi_rma.h>
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"
#include "core/core.h"
#include "pmi/auth.h"
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
        WH_ERRLOG("net", "one-sided %s with rank %d failed: %s", op->staged ? "put" : "get", op->peer,
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
        wpeer < 0 || wpeer >= wh_net.size || wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL)
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
