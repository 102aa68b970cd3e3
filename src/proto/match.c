/* Tag matching: the posted-receive queue and the unexpected-message queue.
 * Both are FIFO, so MPI's non-overtaking rule holds given per-pair FIFO
 * delivery of headers by the channels. */
#include <stdio.h>
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
        const char *start;
        int rc;
        if (__builtin_expect(r->mem != WH_MEM_HOST, 0))
            wh_coord_dev_recv(r->wpeer, n, r->trace); /* the tracer; GDRCopy limits of the peer's class */
        if (__builtin_expect(wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start), 1)) {
            rc = wh_mem_copy((char *)start, r->mem, payload, WH_MEM_HOST, n);
        } else {
            wh_data_t d;
            wh_req_data(r, 0, n, &d);
            rc = wh_data_in(&d, 0, payload, n);
        }
        if (rc != MPI_SUCCESS && !r->err)
            r->err = rc;
    }
    wh_req_recv_done(r);
}

static void start_recv(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    r->wpeer = wpeer;
    r->chan = chan;
    r->msg_len = h->len;
    r->status.MPI_SOURCE = h->src;
    r->status.MPI_TAG = h->tag;
    if (h->type == wh_p2p_am.eager || h->type == wh_p2p_am.push) {
        if (h->flags & WH_HF_SYNC) {
            wh_hdr_t a = {.type = wh_p2p_am.sack, .ctx = h->ctx, .src = h->src, .tag = h->tag, .sreq = h->sreq};
            wh_send_ctrl(chan, wpeer, &a, NULL, 0);
        }
        if (h->type == wh_p2p_am.eager)
            deliver_eager(r, payload, plen);
        else
            wh_push_matched(r, wpeer, h, payload, plen);
    } else {
        wh_rndv_matched(r, chan, wpeer, h, payload, plen);
    }
}

static _Noreturn void out_of_memory(int wpeer, size_t bytes)
{
    char msg[160];
    snprintf(msg, sizeof msg, "out of memory buffering an unexpected message of %zu bytes from rank %d", bytes, wpeer);
    WH_ERRLOG("proto", "%s", msg);
    wh_job_abort(1, msg); /* it cannot be dropped: the job cannot go on correctly */
}

/* An EAGER or RTS message arrived: match it or keep it as unexpected. */
static void incoming(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    for (wh_req_t *r = posted_head; r; r = r->next) {
        if (matches(r->rank, r->tag, r->ctx, h)) {
            posted_remove(r);
            start_recv(r, chan, wpeer, h, payload, plen);
            return;
        }
    }
    wh_uq_t *u = malloc(sizeof *u);
    if (!u)
        out_of_memory(wpeer, plen);
    u->hdr = *h;
    u->wpeer = wpeer;
    u->chan = chan;
    u->plen = plen;
    u->next = NULL;
    size_t cap = h->type == wh_p2p_am.push ? (size_t)h->len : plen; /* PUSH: the fragments follow */
    if (cap <= sizeof u->small)
        u->data = u->small;
    else if (!(u->data = malloc(cap)))
        out_of_memory(wpeer, cap);
    if (plen)
        memcpy(u->data, payload, plen);
    if (plen < cap && !wh_push_track(u))
        out_of_memory(wpeer, cap);
    u->prev = uq_tail;
    if (uq_tail)
        uq_tail->next = u;
    else
        uq_head = u;
    uq_tail = u;
}

void wh_am_eager(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    if (__builtin_expect(plen != h->len, 0)) {
        WH_ERRLOG("proto", "eager message from rank %d carries %zu bytes, its header says %llu; dropped", wpeer, plen,
                  (unsigned long long)h->len);
        return;
    }
    incoming(chan, wpeer, h, payload, plen);
}

void wh_am_rts(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    incoming(chan, wpeer, h, payload, plen);
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

/* ---------- send cancellation ---------- */

/* The CANCEL header names the message by the id of the request that sent it
 * (sreq, as its EAGER or RTS header did) and the asking request in len: they
 * differ for a buffered send, whose user request is not the one that carries
 * the message.  CANCEL_ACK returns both (sreq = asker, len = message). */
int wh_cancel_send(wh_req_t *r)
{
    /* no message behind it (a request made complete, a send to MPI_PROC_NULL),
       already asked or answered, or failed */
    if (r->kind != WH_REQ_SEND || r->rank == MPI_PROC_NULL || r->cancel_pending || r->cancelled || r->err)
        return MPI_SUCCESS;
    if (!r->linked && (!r->comm || r->mode == WH_MODE_BUFFERED))
        return MPI_SUCCESS;
    if (r->data_pending && r->rproto == WH_PROTO_PUSH)
        return MPI_SUCCESS; /* fragments still going out: it completes as sent */
    uint64_t msg = r->linked ? r->linked : wh_req_id(r);
    wh_hdr_t h = {.type = wh_p2p_am.cancel, .ctx = r->ctx, .tag = r->tag, .len = wh_req_id(r), .sreq = msg};
    int was_done = r->complete;
    r->cancel_pending = 1;
    __atomic_store_n(&r->complete, 0, __ATOMIC_RELEASE); /* until the answer: cancelled or not */
    /* behind the message itself in the peer's FIFO; to self the answer may
       be in before this returns */
    int rc = wh_send_ctrl(r->chan, r->wpeer, &h, NULL, 0);
    if (rc != MPI_SUCCESS) {
        r->cancel_pending = 0;
        if (was_done)
            __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    }
    return rc;
}

void wh_am_cancel(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)payload, (void)plen;
    int found = 0;
    for (wh_uq_t *u = uq_head; u; u = u->next) {
        if (u->wpeer == wpeer && u->hdr.sreq == h->sreq && u->hdr.ctx == h->ctx && u->hdr.tag == h->tag) {
            if (wh_push_partial(u)) /* fragments on their way (the sender cancels only after the last) */
                break;
            uq_remove(u); /* an EAGER payload, an RTS or a whole PUSH: nothing else refers to it */
            uq_free(u);
            found = 1;
            break;
        }
    }
    wh_hdr_t a = {.type = wh_p2p_am.cancel_ack, .flags = found ? WH_HF_CANCELLED : 0, .ctx = h->ctx, .tag = h->tag,
                  .len = h->sreq, .sreq = h->len};
    int rc = wh_send_ctrl(chan, wpeer, &a, NULL, 0);
    if (rc != MPI_SUCCESS)
        WH_ERRLOG("proto", "cannot answer the cancel request of rank %d (error %d)", wpeer, rc);
}

/* a send request whose message was withdrawn: no SACK, CTS or FIN will come */
static void send_cancelled(wh_req_t *s)
{
    s->cancelled = 1;
    s->sync_pending = 0;
    s->status.count_hi_and_cancelled |= 1;
    wh_req_send_done(s);
}

void wh_am_cancel_ack(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan, (void)payload, (void)plen;
    wh_req_t *s = wh_req_from_id(h->sreq);
    if (!s || s->kind != WH_REQ_SEND || !s->cancel_pending || s->wpeer != wpeer) {
        WH_ERRLOG("proto", "cancel answer from rank %d for unknown request %#llx dropped", wpeer,
                  (unsigned long long)h->sreq);
        return;
    }
    s->cancel_pending = 0;
    if (h->flags & WH_HF_CANCELLED) {
        wh_req_t *m = h->len != h->sreq ? wh_req_from_id(h->len) : NULL; /* a buffered send's carrier */
        if (m && m->kind == WH_REQ_SEND && !m->complete && m->wpeer == wpeer)
            send_cancelled(m);
        send_cancelled(s);
    } else if (!s->data_pending && !s->sync_pending) {
        wh_req_send_done(s);
    }
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
    wh_push_finalize();
    if (n)
        WH_DEBUG("proto", "%d unexpected messages were never received", n);
    posted_head = posted_tail = NULL;
}
