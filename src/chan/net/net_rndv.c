/* Network channel, rendezvous: the sender's RTS carries a cookie; the matched
 * receiver posts tagged receives for the bulk chunks (tag = bulk bit | sender
 * rank | cookie + chunk), then answers with a CTS naming the bytes it takes
 * (min(message, capacity)); the sender then sends exactly those bytes.
 * Chunks are at most wh_net.csize bytes, WH_NET_WINDOW of them in flight per
 * side; each side moves a chunk straight from/to the user buffer (contiguous,
 * or up to maxiov iovecs of the datatype) or through a staging buffer. */
#include <stdlib.h>
#include <string.h>

#include "chan/net/net.h"
#include "core/core.h"
#include "dtype/dtype.h"
#include "util/log.h"

typedef struct rts_payload {
    uint32_t cookie;
    uint32_t flags;
    uint64_t csize;
} rts_payload_t;

typedef struct cts_payload {
    uint32_t cookie;
    uint32_t reserved;
} cts_payload_t;

_Static_assert(sizeof(rts_payload_t) == WH_NET_RTS_PLEN, "RTS payload size");
_Static_assert(sizeof(cts_payload_t) == WH_NET_CTS_PLEN, "CTS payload size");

static wh_net_xfer_t *xfer_new(wh_req_t *r, int peer, int is_send)
{
    wh_net_xfer_t *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->req = r;
    x->peer = peer;
    x->is_send = is_send;
    const char *start;
    if (!r->dt || wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start))
        x->contig = r->dt ? start : r->buf;
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
    wh_req_t *r = x->req;
    if (x->err) {
        r->err = wh_error(MPI_ERR_OTHER, "network rendezvous %s rank %d failed: %s",
                          x->is_send ? "send to" : "receive from", x->peer, fi_strerror(-x->err));
    } else {
        r->xfer_off = x->total;
    }
    int is_send = x->is_send;
    if (is_send)
        r->tmp = NULL;
    xfer_free(x);
    if (is_send) {
        r->sync_pending = 0; /* the CTS proved the match */
        wh_req_send_done(r);
    } else {
        wh_req_recv_done(r);
    }
}

ssize_t wh_net_bulk_post(wh_net_op_t *op)
{
    wh_net_xfer_t *x = op->x;
    wh_req_t *r = x->req;
    size_t off = op->chunk * x->csize;
    struct iovec iov[WH_NET_MAXIOV];
    size_t niov = 1;
    if (x->contig) {
        iov[0].iov_base = (void *)(x->contig + off);
        iov[0].iov_len = op->len;
    } else if (op->staged) {
        iov[0].iov_base = op->buf;
        iov[0].iov_len = op->len;
    } else {
        size_t covered = 0;
        int n = wh_dtype_iov(r->buf, (size_t)r->count, r->dt, off, op->len, iov, wh_net.maxiov, &covered);
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
            if (x->is_send && wh_dtype_pack(r->buf, (size_t)r->count, r->dt, off, op->buf, op->len))
                return -FI_EINVAL;
            op->staged = 1;
            iov[0].iov_base = op->buf;
            iov[0].iov_len = op->len;
        }
    }
    uint64_t tag = x->tagbase | (uint32_t)(x->cookie + (uint32_t)op->chunk);
    if (x->is_send)
        return fi_tsendv(wh_net.ep, iov, NULL, niov, wh_net.peers[x->peer].addr, tag, &op->fctx);
    return fi_trecvv(wh_net.ep, iov, NULL, niov, FI_ADDR_UNSPEC, tag, 0, &op->fctx);
}

void wh_net_bulk_done(wh_net_op_t *op, int err)
{
    wh_net_xfer_t *x = op->x;
    wh_req_t *r = x->req;
    x->inflight--;
    if (err && !x->err)
        x->err = err;
    if (!err && !x->is_send && op->staged &&
        wh_dtype_unpack(r->buf, (size_t)r->count, r->dt, op->chunk * x->csize, op->buf, op->len) && !x->err)
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
    for (int i = 0; i < WH_NET_WINDOW && x->next < x->nchunks && !x->err; i++)
        chunk_start(x, &x->ops[i]);
    x->starting = 0;
    if (x->inflight == 0)
        xfer_finish(x);
}

int wh_net_rndv_send(wh_req_t *sreq, const wh_hdr_t *h)
{
    int peer = sreq->wpeer;
    size_t csize = wh_net.csize;
    size_t nch = h->len ? (size_t)((h->len + csize - 1) / csize) : 1;
    rts_payload_t pl = {.cookie = wh_net.next_cookie, .flags = 0, .csize = csize};
    wh_net_xfer_t *x = xfer_new(sreq, peer, 1);
    if (!x)
        return wh_error(MPI_ERR_NO_MEM, "network channel: out of memory starting a rendezvous");
    x->cookie = pl.cookie;
    x->csize = csize;
    x->tagbase = wh_net.bulk_bit | ((uint64_t)(uint32_t)wh_net.rank << 32);
    sreq->tmp = x;
    sreq->tmp_owned = 0;
    int rc = wh_net_ctrl_out(peer, h, &pl, sizeof pl, 0);
    if (rc) { /* WH_AGAIN: retried later by the protocol layer */
        sreq->tmp = NULL;
        xfer_free(x);
        return rc;
    }
    wh_net.next_cookie += (uint32_t)nch;
    return MPI_SUCCESS;
}

void wh_net_on_cts(int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_req_t *s = wh_req_from_id(h->sreq);
    cts_payload_t pl;
    wh_net_xfer_t *x = s && s->chan == WH_CHAN_NET ? s->tmp : NULL;
    if (plen != sizeof pl || !x) {
        WH_ERRLOG("net", "clear-to-send from rank %d for unknown request %#llx dropped", wpeer,
                  (unsigned long long)h->sreq);
        return;
    }
    memcpy(&pl, payload, sizeof pl);
    if (x->req != s || !x->is_send || x->cookie != pl.cookie || x->peer != wpeer || h->len > s->bytes) {
        WH_ERRLOG("net", "clear-to-send from rank %d does not match its rendezvous (cookie %u/%u, %llu bytes)",
                  wpeer, pl.cookie, x->cookie, (unsigned long long)h->len);
        return;
    }
    x->total = (size_t)h->len;
    x->nchunks = (x->total + x->csize - 1) / x->csize;
    WH_TRACE("net", "CTS from rank %d: sending %zu bytes in %zu chunks", wpeer, x->total, x->nchunks);
    if (!x->nchunks) {
        xfer_finish(x);
        return;
    }
    window_start(x);
}

int wh_net_rndv_recv(wh_req_t *rreq, const wh_hdr_t *h, const void *payload, size_t plen)
{
    rts_payload_t pl;
    int peer = rreq->wpeer;
    if (plen != sizeof pl)
        return wh_error(MPI_ERR_INTERN, "network channel: malformed rendezvous request from rank %d", peer);
    memcpy(&pl, payload, sizeof pl);
    if (!pl.csize || pl.csize > wh_net.info->ep_attr->max_msg_size)
        return wh_error(MPI_ERR_OTHER, "network channel: rank %d uses chunks of %llu bytes, provider allows %zu", peer,
                        (unsigned long long)pl.csize, wh_net.info->ep_attr->max_msg_size);
    size_t n = h->len < rreq->bytes ? (size_t)h->len : rreq->bytes;
    rreq->msg_len = (size_t)h->len;
    rreq->remote = h->sreq;
    rreq->xfer_off = 0;
    wh_hdr_t c = {.type = WH_NET_CTS, .ctx = h->ctx, .src = h->src, .tag = h->tag, .len = n, .sreq = h->sreq};
    cts_payload_t cp = {.cookie = pl.cookie, .reserved = 0};
    if (n == 0) { /* nothing to move (empty or zero-capacity receive) */
        int rc = wh_net_ctrl_out(peer, &c, &cp, sizeof cp, 1);
        if (rc)
            return rc;
        wh_req_recv_done(rreq);
        return MPI_SUCCESS;
    }
    wh_net_xfer_t *x = xfer_new(rreq, peer, 0);
    if (!x)
        return wh_error(MPI_ERR_NO_MEM, "network channel: out of memory receiving a rendezvous");
    x->cookie = pl.cookie;
    x->csize = (size_t)pl.csize;
    x->total = n;
    x->nchunks = (n + x->csize - 1) / x->csize;
    x->tagbase = wh_net.bulk_bit | ((uint64_t)(uint32_t)peer << 32);
    /* Take the CTS buffer first (the only step that can fail), post the
     * receives, then send the CTS: the data finds its receives posted. */
    wh_net_op_t *cts;
    int rc = wh_net_ctrl_take(peer, sizeof cp, 1, &cts);
    if (rc) {
        xfer_free(x);
        return rc;
    }
    memcpy(cts->buf + WH_NET_PL_OFF, &cp, sizeof cp);
    x->starting = 1;
    for (int i = 0; i < WH_NET_WINDOW && x->next < x->nchunks && !x->err; i++)
        chunk_start(x, &x->ops[i]);
    x->starting = 0;
    wh_net_ctrl_commit(cts, &c);
    if (x->inflight == 0)
        xfer_finish(x);
    return MPI_SUCCESS;
}

void wh_net_rndv_finalize(void)
{
    while (wh_net.xfers) {
        wh_net_xfer_t *x = wh_net.xfers;
        if (x->is_send && x->req)
            x->req->tmp = NULL;
        xfer_free(x);
    }
}
