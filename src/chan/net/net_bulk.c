/* Network channel, bulk streams: the receiver posts tagged receives for the
 * chunks of a transfer (tag = bulk bit | sender rank | cookie + chunk) under a
 * cookie it allocates, and returns the token (cookie, chunk size) that the
 * protocol layer carries to the sender in its clear-to-send; the sender then
 * sends exactly the posted bytes.  Chunks are at most wh_net.csize bytes
 * (wh_net.csmall for a transfer that starts while this rank receives no
 * other: net_init.c), WH_NET_WINDOW of them in flight per side
 * (WH_NET_WINDOW_BIG when ofi_rxm cannot send them eagerly); each side moves a chunk straight
 * from/to the user buffer (contiguous, or up to maxiov iovecs of its layout)
 * or through a staging buffer. */
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"
#include "core/peers.h"
#include "core/core.h"
#include "util/log.h"

static wh_net_xfer_t *xfer_new(const wh_data_t *d, wh_comp_t *comp, int peer, int is_send, size_t csize)
{
    wh_net_xfer_t *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->data = *d;
    x->comp = comp;
    x->peer = peer;
    x->is_send = is_send;
    x->total = d->len;
    x->csize = csize;
    x->nchunks = d->len ? (d->len + csize - 1) / csize : 0;
    x->window = csize <= wh_net.rxm_eager ? WH_NET_WINDOW : WH_NET_WINDOW_BIG;
    wh_net.bulk_rx += !is_send;
    for (int i = 0; i < WH_NET_WINDOW; i++) {
        x->ops[i].kind = (uint8_t)(is_send ? WH_NET_OP_BSEND : WH_NET_OP_BRECV);
        x->ops[i].x = x;
        x->ops[i].peer = peer;
    }
    x->lnext = wh_net.xfers;
    if (wh_net.xfers)
        wh_net.xfers->lprev = x;
    wh_net.xfers = x;
    return x;
}

static void xfer_free(wh_net_xfer_t *x)
{
    wh_net.bulk_rx -= !x->is_send;
    if (x->lprev)
        x->lprev->lnext = x->lnext;
    else
        wh_net.xfers = x->lnext;
    if (x->lnext)
        x->lnext->lprev = x->lprev;
    for (int i = 0; i < WH_NET_WINDOW; i++)
        free(x->ops[i].buf);
    free(x);
}

/* Start the next chunk on op (posted now or queued). */
static void chunk_start(wh_net_xfer_t *x, wh_net_op_t *op)
{
    op->chunk = x->next++;
    size_t off = op->chunk * x->csize;
    op->len = x->total - off < x->csize ? x->total - off : x->csize;
    op->staged = 0;
    x->inflight++;
    wh_net_submit(op);
}

static void xfer_finish(wh_net_xfer_t *x)
{
    int err = MPI_SUCCESS;
    if (x->err)
        err = wh_error(MPI_ERR_OTHER, "network bulk %s rank %d failed: %s", x->is_send ? "send to" : "receive from",
                       x->peer, fi_strerror(-x->err));
    wh_comp_t *c = x->comp;
    xfer_free(x);
    c->done(c, err);
}

ssize_t wh_net_bulk_post(wh_net_op_t *op)
{
    wh_net_xfer_t *x = op->x;
    const wh_data_t *d = &x->data;
    size_t off = op->chunk * x->csize;
    struct iovec iov[WH_NET_MAXIOV];
    size_t niov = 1;
    if (d->base && d->mem == WH_MEM_HOST) {
        iov[0].iov_base = d->base + off;
        iov[0].iov_len = op->len;
    } else if (op->staged) {
        iov[0].iov_base = op->buf;
        iov[0].iov_len = op->len;
    } else {
        size_t covered = 0;
        /* scatter/gather straight from host memory only: other kinds are staged */
        int n = d->base || d->mem != WH_MEM_HOST ? 0 : wh_data_iov(d, off, op->len, iov, wh_net.maxiov, &covered);
        if (n > 0 && covered == op->len) {
            niov = (size_t)n;
        } else {
            if (op->bufcap < op->len) {
                free(op->buf);
                op->bufcap = 0;
                if (!(op->buf = malloc(op->len)))
                    return -FI_ENOMEM;
                op->bufcap = op->len;
            }
            if (x->is_send && wh_data_out(d, off, op->buf, op->len))
                return -FI_EINVAL;
            op->staged = 1;
            iov[0].iov_base = op->buf;
            iov[0].iov_len = op->len;
        }
    }
    uint64_t tag = x->tagbase | (uint32_t)(x->cookie + (uint32_t)op->chunk);
    if (x->is_send)
        return fi_tsendv(wh_net.ep, iov, NULL, niov, wh_net.peers[x->peer].addr, tag, &op->fctx);
    /* directed where the provider can: a chunk matches only its sender's address */
    return fi_trecvv(wh_net.ep, iov, NULL, niov, wh_net.directed ? wh_net.peers[x->peer].addr : FI_ADDR_UNSPEC, tag,
                     0, &op->fctx);
}

void wh_net_bulk_done(wh_net_op_t *op, int err)
{
    wh_net_xfer_t *x = op->x;
    x->inflight--;
    if (err && !x->err)
        x->err = err;
    if (!err && !x->is_send && op->staged && wh_data_in(&x->data, op->chunk * x->csize, op->buf, op->len) &&
        !x->err)
        x->err = -FI_EINVAL;
    op->staged = 0;
    if (!x->err && x->next < x->nchunks)
        chunk_start(x, op);
    else if (x->inflight == 0 && !x->starting)
        xfer_finish(x);
}

/* Post the first window; a post failing at once must not free x under us. */
static void window_start(wh_net_xfer_t *x)
{
    x->starting = 1;
    for (int i = 0; i < x->window && x->next < x->nchunks && !x->err; i++)
        chunk_start(x, &x->ops[i]);
    x->starting = 0;
    if (x->inflight == 0)
        xfer_finish(x);
}

/* token: cookie in the low 32 bits, log2 of the chunk size above */
static int csize_log(size_t c)
{
    int l = 0;
    while (((size_t)1 << (l + 1)) <= c)
        l++;
    return l;
}

int wh_net_bulk_recv(int wpeer, const wh_data_t *dst, uint64_t *token, wh_comp_t *c)
{
    if (!wh_net.open || wpeer < 0 || wpeer >= wh_net_npeers() || wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL)
        return wh_error(MPI_ERR_OTHER, "network channel: rank %d has no network endpoint", wpeer);
    int lg = csize_log(wh_net.csmall && !wh_net.bulk_rx ? wh_net.csmall : wh_net.csize);
    wh_net_xfer_t *x = xfer_new(dst, c, wpeer, 0, (size_t)1 << lg);
    if (!x)
        return wh_error(MPI_ERR_NO_MEM, "network channel: out of memory receiving a bulk transfer");
    x->cookie = wh_net.next_cookie;
    wh_net.next_cookie += (uint32_t)(x->nchunks ? x->nchunks : 1);
    x->tagbase = wh_net.bulk_bit | ((uint64_t)wh_peer_gid(wpeer) << 32);
    *token = (uint64_t)x->cookie | ((uint64_t)lg << 32);
    window_start(x);
    return MPI_SUCCESS;
}

int wh_net_bulk_send(int wpeer, uint64_t token, const wh_data_t *src, wh_comp_t *c)
{
    int lg = (int)(token >> 32);
    if (lg < 6 || lg > 40 || ((size_t)1 << lg) > wh_net.info->ep_attr->max_msg_size)
        return wh_error(MPI_ERR_OTHER, "network channel: rank %d asks for chunks of 2^%d bytes, provider allows %zu",
                        wpeer, lg, wh_net.info->ep_attr->max_msg_size);
    wh_net_xfer_t *x = xfer_new(src, c, wpeer, 1, (size_t)1 << lg);
    if (!x)
        return wh_error(MPI_ERR_NO_MEM, "network channel: out of memory sending a bulk transfer");
    x->cookie = (uint32_t)token;
    x->tagbase = wh_net.bulk_bit | ((uint64_t)wh_net.gid << 32);
    WH_TRACE("net", "bulk to rank %d: %zu bytes in %zu chunks", wpeer, x->total, x->nchunks);
    window_start(x);
    return MPI_SUCCESS;
}

void wh_net_bulk_finalize(void)
{
    while (wh_net.xfers)
        xfer_free(wh_net.xfers);
}
