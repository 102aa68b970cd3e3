/* Tag matching: the posted-receive queue and the unexpected-message queue.
 * Both are FIFO, so MPI's non-overtaking rule holds given per-pair FIFO
 * delivery of headers by the channels. */
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "util/log.h"

static wh_req_t *posted_head, *posted_tail;
static wh_uq_t *uq_head, *uq_tail;

static inline int matches(int rsrc, int rtag, uint32_t rctx, const wh_hdr_t *h)
{
    return rctx == h->ctx && (rsrc == MPI_ANY_SOURCE || rsrc == h->src) &&
           (rtag == MPI_ANY_TAG || rtag == h->tag);
}

static void posted_remove(wh_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        posted_tail = r->prev;
    r->next = r->prev = NULL;
}

static void uq_remove(wh_uq_t *u)
{
    if (u->prev)
        u->prev->next = u->next;
    else
        uq_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        uq_tail = u->prev;
}

static void uq_free(wh_uq_t *u)
{
    if (u->data && u->data != u->small)
        free(u->data);
    free(u);
}

/* Copy an eager payload into the receive request and complete it. */
static void deliver_eager(wh_req_t *r, const void *payload, size_t len)
{
    size_t n = len < r->bytes ? len : r->bytes;
    if (n) {
        const wh_dtype_t *dt = r->dt;
        if (dt->contig)
            memcpy((char *)r->buf + dt->true_lb, payload, n);
        else
            wh_dtype_unpack(r->buf, (size_t)r->count, dt, 0, payload, n);
    }
    wh_req_recv_done(r);
}

static void send_sack(int chan, int wpeer, const wh_hdr_t *h)
{
    wh_hdr_t a = {.type = WH_MSG_SACK, .ctx = h->ctx, .src = h->src, .tag = h->tag, .sreq = h->sreq};
    wh_send_ctrl(chan, wpeer, &a, NULL, 0);
}

static void start_recv(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    r->wpeer = wpeer;
    r->chan = chan;
    r->msg_len = h->len;
    r->status.MPI_SOURCE = h->src;
    r->status.MPI_TAG = h->tag;
    if (h->type == WH_MSG_EAGER) {
        if (h->flags & WH_HF_SYNC)
            send_sack(chan, wpeer, h);
        deliver_eager(r, payload, plen);
    } else {
        wh_stats.msgs[chan][1]++;
        wh_stats.bytes[chan][1] += h->len;
        int rc = wh_chans[chan]->rndv_recv(r, h, payload, plen);
        if (rc != MPI_SUCCESS) {
            r->err = rc;
            wh_req_recv_done(r);
        }
    }
}

void wh_proto_incoming(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    if (h->type == WH_MSG_SACK) {
        wh_req_t *s = wh_req_from_id(h->sreq);
        if (s) {
            s->sync_pending = 0;
            if (!s->data_pending)
                wh_req_send_done(s);
        }
        return;
    }
    for (wh_req_t *r = posted_head; r; r = r->next) {
        if (matches(r->rank, r->tag, r->ctx, h)) {
            posted_remove(r);
            start_recv(r, chan, wpeer, h, payload, plen);
            return;
        }
    }
    wh_uq_t *u = malloc(sizeof *u);
    if (!u) {
        WH_ERRLOG("proto", "out of memory queueing an unexpected message of %llu bytes", (unsigned long long)h->len);
        abort();
    }
    u->hdr = *h;
    u->wpeer = wpeer;
    u->chan = chan;
    u->plen = plen;
    u->next = NULL;
    if (plen <= sizeof u->small) {
        u->data = u->small;
    } else if (!(u->data = malloc(plen))) {
        WH_ERRLOG("proto", "out of memory buffering an unexpected message of %zu bytes", plen);
        abort();
    }
    if (plen)
        memcpy(u->data, payload, plen);
    u->prev = uq_tail;
    if (uq_tail)
        uq_tail->next = u;
    else
        uq_head = u;
    uq_tail = u;
}

void wh_match_deliver(wh_req_t *r, wh_uq_t *u)
{
    start_recv(r, u->chan, u->wpeer, &u->hdr, u->data, u->plen);
    uq_free(u);
}

int wh_match_post(wh_req_t *r)
{
    for (wh_uq_t *u = uq_head; u; u = u->next) {
        if (matches(r->rank, r->tag, r->ctx, &u->hdr)) {
            uq_remove(u);
            wh_match_deliver(r, u);
            return 1;
        }
    }
    r->next = NULL;
    r->prev = posted_tail;
    if (posted_tail)
        posted_tail->next = r;
    else
        posted_head = r;
    posted_tail = r;
    return 0;
}

int wh_iprobe(int src, int tag, wh_comm_t *c, int ctxoff, int *flag, MPI_Status *status, wh_req_t **msg)
{
    uint32_t ctx = c->ctx | (uint32_t)ctxoff;
    if (src == MPI_PROC_NULL) {
        *flag = 1;
        if (status && status != MPI_STATUS_IGNORE)
            wh_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        if (msg)
            *msg = NULL;
        return MPI_SUCCESS;
    }
    wh_progress();
    for (wh_uq_t *u = uq_head; u; u = u->next) {
        if (matches(src, tag, ctx, &u->hdr)) {
            *flag = 1;
            if (status && status != MPI_STATUS_IGNORE)
                wh_status_set(status, u->hdr.src, u->hdr.tag, MPI_SUCCESS, (MPI_Count)u->hdr.len, 0);
            if (msg) {
                wh_req_t *m = wh_req_alloc(WH_REQ_RECV);
                if (!m)
                    return wh_error(MPI_ERR_NO_MEM, "out of memory creating a message handle");
                uq_remove(u);
                m->extra = u;
                m->comm = c;
                c->obj.refs++;
                *msg = m;
            }
            return MPI_SUCCESS;
        }
    }
    *flag = 0;
    return MPI_SUCCESS;
}

int wh_imrecv(void *buf, MPI_Count count, wh_dtype_t *dt, wh_req_t *m, wh_req_t **req)
{
    wh_uq_t *u = m->extra;
    m->extra = NULL;
    m->buf = buf;
    m->count = count;
    m->dt = dt;
    wh_dtype_addref(dt);
    m->bytes = wh_dtype_bytes(dt, (size_t)count);
    m->ctx = u->hdr.ctx;
    m->rank = u->hdr.src;
    m->tag = u->hdr.tag;
    *req = m;
    wh_match_deliver(m, u);
    return MPI_SUCCESS;
}

int wh_cancel_recv(wh_req_t *r)
{
    for (wh_req_t *p = posted_head; p; p = p->next) {
        if (p == r) {
            posted_remove(r);
            r->cancelled = 1;
            wh_status_set(&r->status, r->rank, r->tag, MPI_SUCCESS, 0, 1);
            __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
            return 1;
        }
    }
    return 0;
}

void wh_match_finalize(void)
{
    int n = 0;
    while (uq_head) {
        wh_uq_t *u = uq_head;
        uq_remove(u);
        uq_free(u);
        n++;
    }
    if (n)
        WH_DEBUG("proto", "%d unexpected messages were never received", n);
    posted_head = posted_tail = NULL;
}
