/* The push protocol, receiver side (see proto.h): a message between two
 * co-resident ranks that no single copy serves, up to WHARF_SHM_PUSH_MAX,
 * comes as a PUSH header with its first fragment followed by PDATA fragments
 * (header: the sender's request id and the fragment's offset), sent at once,
 * without waiting for a clear-to-send.  A matched message is copied straight
 * into the receive buffer; an unexpected one into a buffer of its full size,
 * handed over to the receive when it matches (the fragments still on their
 * way then go to the receive buffer).
 *
 * The messages still missing fragments are kept in a short list keyed by
 * (sender, sender's request id).  The key is unique while a message is in
 * flight: the sender completes its request only once the last fragment is in
 * the pair's FIFO, so a reuse of the id comes behind every fragment of the
 * earlier message. */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "util/log.h"

typedef struct pin {
    struct pin *next;
    int wpeer;
    uint64_t sreq;
    size_t len, got; /* message bytes, bytes arrived */
    wh_req_t *r;     /* matched: the receive */
    wh_uq_t *u;      /* unexpected: its buffer (u->plen = got) */
} pin_t;

static pin_t *pins;

static pin_t *pin_find(int wpeer, uint64_t sreq)
{
    for (pin_t *p = pins; p; p = p->next)
        if (p->wpeer == wpeer && p->sreq == sreq)
            return p;
    return NULL;
}

static void pin_drop(pin_t *x)
{
    for (pin_t **pp = &pins; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            free(x);
            return;
        }
}

static pin_t *pin_new(int wpeer, const wh_hdr_t *h, size_t got)
{
    pin_t *p = calloc(1, sizeof *p);
    if (!p) {
        wh_job_abort(1, "out of memory tracking a pushed message");
        return NULL;
    }
    p->wpeer = wpeer;
    p->sreq = h->sreq;
    p->len = (size_t)h->len;
    p->got = got;
    p->next = pins;
    pins = p;
    return p;
}

/* bytes [off, off + n) of the message into receive r (what fits its buffer) */
static void to_req(wh_req_t *r, size_t off, const void *src, size_t n)
{
    if (off >= r->bytes || !n)
        return;
    if (n > r->bytes - off)
        n = r->bytes - off;
    wh_data_t d;
    wh_req_data(r, off, n, &d);
    int rc = wh_data_in(&d, 0, src, n);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc;
}

void wh_am_push(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    if (plen > h->len) {
        WH_ERRLOG("proto", "pushed message from rank %d carries %zu bytes, its header says %llu; dropped", wpeer, plen,
                  (unsigned long long)h->len);
        return;
    }
    wh_am_rts(chan, wpeer, h, payload, plen); /* matching: wh_push_matched or an unexpected entry */
}

int wh_push_track(wh_uq_t *u)
{
    pin_t *p = pin_new(u->wpeer, &u->hdr, u->plen);
    if (!p)
        return 0;
    p->u = u;
    return 1;
}

int wh_push_partial(const wh_uq_t *u)
{
    return u->hdr.type == wh_p2p_am.push && u->plen < u->hdr.len;
}

void wh_push_matched(wh_req_t *r, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    r->rproto = WH_PROTO_PUSH;
    r->remote = h->sreq;
    r->msg_len = (size_t)h->len;
    r->xfer_len = (size_t)h->len < r->bytes ? (size_t)h->len : r->bytes;
    to_req(r, 0, payload, plen);
    pin_t *p = pin_find(wpeer, h->sreq); /* an unexpected message handed over */
    if (plen == h->len) {
        if (p)
            pin_drop(p);
        wh_req_recv_done(r);
        return;
    }
    if (!p && !(p = pin_new(wpeer, h, plen)))
        return;
    p->u = NULL;
    p->r = r;
    p->got = plen;
}

void wh_am_pdata(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan;
    pin_t *p = pin_find(wpeer, h->sreq);
    size_t off = (size_t)h->len;
    if (!p || off > p->len || plen > p->len - off || plen > p->len - p->got) {
        WH_ERRLOG("proto", "pushed fragment from rank %d for unknown message %#llx (offset %zu, %zu bytes) dropped",
                  wpeer, (unsigned long long)h->sreq, off, plen);
        return;
    }
    if (p->r)
        to_req(p->r, off, payload, plen);
    else if (p->u)
        memcpy((char *)p->u->data + off, payload, plen);
    p->got += plen;
    if (p->u)
        p->u->plen = p->got;
    if (p->got < p->len)
        return;
    wh_req_t *r = p->r;
    pin_drop(p);
    if (r)
        wh_req_recv_done(r);
}

void wh_push_finalize(void)
{
    while (pins) {
        pin_t *p = pins;
        pins = p->next;
        free(p);
    }
}
