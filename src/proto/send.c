/* Starting operations: sends ask the coordinator for channel and protocol
 * (eager or rendezvous); receives go to matching.  Messages that find their
 * channel busy wait in a per-peer FIFO so order is kept. */
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "locality/nodeheap.h"
#include "proto/proto.h"
#include "util/log.h"
#include "util/tunables.h"

struct wh_pend {
    struct wh_pend *next;
    int wpeer, chan;
    wh_req_t *r;            /* the send request of an EAGER or RTS (payload of EAGER from it); NULL for ctrl */
    wh_hdr_t h;
    size_t rawlen;
    unsigned char raw[128]; /* the largest control payload: a device RTS */
};
_Static_assert(sizeof(wh_rts_ipc_t) <= 128, "a device RTS fits a queued send");

static wh_pend_t *pend_tail;
wh_pend_t *wh_pend_head; /* read inline by the progress engine */
#define pend_head wh_pend_head
static int *pend_count; /* per world rank */

static int pend_add(int chan, int wpeer, wh_req_t *r, const wh_hdr_t *h, const void *raw, size_t rawlen)
{
    if (!pend_count && !(pend_count = calloc((size_t)wh_peers_cap, sizeof(int))))
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    wh_pend_t *p = malloc(sizeof *p);
    if (!p)
        return wh_error(MPI_ERR_NO_MEM, "out of memory queueing a send");
    p->next = NULL;
    p->wpeer = wpeer;
    p->chan = chan;
    p->r = r;
    p->h = *h;
    p->rawlen = rawlen;
    if (rawlen)
        memcpy(p->raw, raw, rawlen);
    if (pend_tail)
        pend_tail->next = p;
    else
        pend_head = p;
    pend_tail = p;
    pend_count[wpeer]++;
    return MPI_SUCCESS;
}

/* Try to hand one message to its channel: MPI_SUCCESS, WH_AGAIN, or an error. */
static int try_send(int chan, int wpeer, wh_req_t *r, const wh_hdr_t *h, const void *raw, size_t rawlen)
{
    const wh_chan_ops_t *ops = wh_chans[chan];
    if (r && h->type == wh_p2p_am.eager) {
        wh_data_t d;
        wh_req_data(r, 0, r->bytes, &d);
        int rc = ops->am_send(wpeer, h, &d);
        if (rc == MPI_SUCCESS) {
            wh_coord_note(chan, WH_PROTO_EAGER, h->len);
            wh_req_send_done(r);
        }
        return rc;
    }
    if (r && h->type == wh_p2p_am.push) { /* the header with the first fragment; the rest streams */
        size_t first = r->bytes < wh_coord_lim.max_am[chan] ? r->bytes : wh_coord_lim.max_am[chan];
        wh_data_t d;
        wh_req_data(r, 0, first, &d);
        int rc = ops->am_send(wpeer, h, &d);
        if (rc == MPI_SUCCESS) {
            wh_coord_note(chan, WH_PROTO_PUSH, h->len);
            wh_rndv_stream(r, first);
        }
        return rc;
    }
    wh_data_t d = {.base = (char *)raw, .len = rawlen, .mem = WH_MEM_HOST};
    return ops->am_send(wpeer, h, rawlen ? &d : NULL);
}

int wh_send_ctrl(int chan, int wpeer, const wh_hdr_t *h, const void *raw, size_t len)
{
    if (!pend_count || !pend_count[wpeer]) {
        int rc = try_send(chan, wpeer, NULL, h, raw, len);
        if (rc != WH_AGAIN)
            return rc;
    }
    return pend_add(chan, wpeer, NULL, h, raw, len);
}

int wh_pending_count(void)
{
    return pend_head != NULL;
}

int wh_pending_push(void)
{
    int n = 0;
    wh_pend_t **pp = &pend_head, *last = NULL;
    /* a peer whose head entry is blocked keeps all its later entries queued */
    static unsigned char *blocked;
    if (!pend_head)
        return 0;
    if (!blocked && !(blocked = calloc((size_t)wh_peers_cap, 1)))
        return 0;
    while (*pp) {
        wh_pend_t *p = *pp;
        int rc = WH_AGAIN;
        if (!blocked[p->wpeer])
            rc = try_send(p->chan, p->wpeer, p->r, &p->h, p->raw, p->rawlen);
        if (rc == WH_AGAIN) {
            blocked[p->wpeer] = 1;
            last = p;
            pp = &p->next;
            continue;
        }
        if (rc != MPI_SUCCESS && p->r) {
            p->r->err = rc;
            p->r->sync_pending = 0;
            wh_req_send_done(p->r);
        }
        *pp = p->next;
        pend_count[p->wpeer]--;
        free(p);
        n++;
    }
    pend_tail = last;
    for (wh_pend_t *p = pend_head; p; p = p->next)
        blocked[p->wpeer] = 0;
    return n;
}

static void req_fill(wh_req_t *r, void *buf, MPI_Count count, wh_dtype_t *dt, int rank, int tag, wh_comm_t *c,
                     int ctxoff)
{
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    wh_dtype_addref(dt);
    r->bytes = wh_dtype_bytes(dt, (size_t)count);
    r->mem = wh_mem_query(buf);
    r->rank = rank;
    r->tag = tag;
    r->comm = c;
    c->obj.refs++;
    r->ctx = c->ctx | (uint32_t)ctxoff;
    r->trace = WH_TRACE_NB;
}

/* A push (two copies, no handshake) whose buffer lies in the node-shared
 * heap goes by rendezvous instead: the receiver copies it once, out of the
 * region (rndv.c) */
static int region_send(const wh_req_t *r, int chan)
{
    const char *start;
    uint64_t off;
    return chan == WH_CHAN_SHM && wh_tun.region_copy && wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start) &&
           wh_node_locate(start, r->bytes, &off);
}

static int start_send(wh_req_t *r)
{
    r->complete = 0;
    r->err = MPI_SUCCESS;
    r->cancelled = 0;
    r->cancel_pending = 0;
    r->status.count_hi_and_cancelled &= ~1; /* a restarted persistent send that was cancelled before */
    if (r->rank == MPI_PROC_NULL) {
        wh_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        r->complete = 1;
        return MPI_SUCCESS;
    }
    wh_comm_t *c = r->comm;
    int wpeer = wh_comm_wrank(c, r->rank);
    wh_coord_choice_t ch = wh_coord_send(wpeer, r->bytes, r->mem, r->trace);
    r->wpeer = wpeer;
    r->chan = ch.chan;
    wh_hdr_t h = {.type = wh_p2p_am.eager, .ctx = r->ctx, .src = c->rank, .tag = r->tag, .len = r->bytes,
                  .sreq = wh_req_id(r)};
    r->data_pending = 1;
    r->sync_pending = 0;
    if (ch.proto == WH_PROTO_PUSH && region_send(r, ch.chan))
        ch.proto = WH_PROTO_RNDV;
    if (ch.proto == WH_PROTO_RNDV) /* completes only after the match: synchronous by nature */
        return wh_rndv_start(r, ch.chan, &h);
    r->rproto = ch.proto == WH_PROTO_PUSH ? WH_PROTO_PUSH : WH_PROTO_EAGER;
    if (ch.proto == WH_PROTO_PUSH)
        h.type = wh_p2p_am.push;
    if (r->mode == WH_MODE_SYNC) {
        h.flags = WH_HF_SYNC;
        r->sync_pending = 1;
    }
    if (__builtin_expect(!pend_count || !pend_count[wpeer], 1)) {
        int rc = try_send(ch.chan, wpeer, r, &h, NULL, 0);
        if (rc == MPI_SUCCESS)
            return rc;
        if (rc != WH_AGAIN) { /* reported by the wait on this request */
            r->err = rc;
            r->sync_pending = 0;
            wh_req_send_done(r);
            return MPI_SUCCESS;
        }
    }
    return pend_add(ch.chan, wpeer, r, &h, NULL, 0);
}

/* Queue or send the RTS of rendezvous request r (raw: its payload). */
int wh_send_rts(wh_req_t *r, const wh_hdr_t *h, const void *raw, size_t len)
{
    if (!pend_count || !pend_count[r->wpeer]) {
        int rc = try_send(r->chan, r->wpeer, NULL, h, raw, len);
        if (rc != WH_AGAIN)
            return rc;
    }
    return pend_add(r->chan, r->wpeer, r, h, raw, len);
}

static int start_recv(wh_req_t *r)
{
    r->complete = 0;
    r->err = MPI_SUCCESS;
    r->cancelled = 0;
    r->msg_len = 0;
    r->xfer_off = 0;
    if (r->rank == MPI_PROC_NULL) {
        wh_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        r->complete = 1;
        return MPI_SUCCESS;
    }
    wh_match_post(r);
    return MPI_SUCCESS;
}

int wh_isend_x(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int ctxoff,
               int mode, int trace, wh_req_t **req)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_SEND);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory allocating a send request");
    req_fill(r, (void *)buf, count, dt, dest, tag, c, ctxoff);
    r->mode = (uint8_t)mode;
    r->trace = (uint8_t)trace;
    int rc = start_send(r);
    if (rc != MPI_SUCCESS) { /* the caller gets no request to wait on */
        wh_req_release(r);
        return rc;
    }
    *req = r;
    return MPI_SUCCESS;
}

int wh_isend(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int ctxoff,
             int mode, wh_req_t **req)
{
    return wh_isend_x(buf, count, dt, dest, tag, c, ctxoff, mode, WH_TRACE_NB, req);
}

int wh_irecv_x(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff, int trace,
               wh_req_t **req)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_RECV);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory allocating a receive request");
    req_fill(r, buf, count, dt, src, tag, c, ctxoff);
    r->trace = (uint8_t)(trace & ~WH_IRECV_PUT);
    r->want_put = (trace & WH_IRECV_PUT) != 0;
    *req = r;
    return start_recv(r); /* cannot fail */
}

int wh_irecv(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff,
             wh_req_t **req)
{
    return wh_irecv_x(buf, count, dt, src, tag, c, ctxoff, WH_TRACE_NB, req);
}

int wh_send_init(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int mode,
                 wh_req_t **req)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_SEND);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory allocating a persistent request");
    req_fill(r, (void *)buf, count, dt, dest, tag, c, WH_CTX_P2P);
    r->mode = (uint8_t)mode;
    r->persistent = 1;
    r->complete = 1; /* inactive */
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    *req = r;
    return MPI_SUCCESS;
}

int wh_recv_init(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, wh_req_t **req)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_RECV);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory allocating a persistent request");
    req_fill(r, buf, count, dt, src, tag, c, WH_CTX_P2P);
    r->persistent = 1;
    r->complete = 1;
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    *req = r;
    return MPI_SUCCESS;
}

int wh_req_start(wh_req_t *r)
{
    r->active = 1;
    return r->kind == WH_REQ_SEND ? start_send(r) : start_recv(r);
}

/* wh_send's slow path: a request (a device buffer was counted by the tracer already) */
static __attribute__((noinline)) int send_slow(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag,
                                               wh_comm_t *c, int ctxoff)
{
    wh_req_t *r = NULL;
    int rc = wh_isend_x(buf, count, dt, dest, tag, c, ctxoff, WH_MODE_STD,
                        dest != MPI_PROC_NULL ? WH_TRACE_NONE : WH_TRACE_BLK, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return wh_wait(r, NULL);
}

int wh_send(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int ctxoff)
{
    /* Fast path: a standard-mode eager message of contiguous data its channel
     * takes at once completes right here, without a request. */
    if (__builtin_expect(dest != MPI_PROC_NULL, 1)) {
        int wpeer = wh_comm_wrank(c, dest);
        size_t bytes = wh_dtype_bytes(dt, (size_t)count);
        const char *start = buf;
        int mem = wh_mem_query(buf);
        wh_coord_choice_t ch = wh_coord_send(wpeer, bytes, mem, WH_TRACE_BLK);
        if (ch.proto == WH_PROTO_EAGER && (!pend_count || !pend_count[wpeer]) &&
            (bytes == 0 || wh_dtype_is_contig(dt, (size_t)count, buf, &start))) {
            wh_hdr_t h = {.type = wh_p2p_am.eager, .ctx = c->ctx | (uint32_t)ctxoff, .src = c->rank, .tag = tag,
                          .len = bytes};
            wh_data_t d; /* contiguous bytes: the callbacks are never read */
            d.base = (char *)start;
            d.len = bytes;
            d.mem = mem; /* device memory: the channel stages it into the eager payload */
            int rc = wh_chans[ch.chan]->am_send(wpeer, &h, bytes ? &d : NULL);
            if (rc == MPI_SUCCESS) {
                wh_coord_note(ch.chan, WH_PROTO_EAGER, bytes);
                return MPI_SUCCESS;
            }
            if (rc != WH_AGAIN)
                return rc;
        }
    }
    return send_slow(buf, count, dt, dest, tag, c, ctxoff);
}

int wh_recv(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff,
            MPI_Status *status)
{
    wh_req_t *r = NULL;
    int rc = wh_irecv_x(buf, count, dt, src, tag, c, ctxoff, WH_TRACE_BLK, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return wh_wait(r, status);
}

int wh_sendrecv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, int dest, int stag, void *rbuf,
                MPI_Count rcount, wh_dtype_t *rdt, int src, int rtag, wh_comm_t *c, int ctxoff,
                MPI_Status *status)
{
    wh_req_t *rr = NULL, *sr = NULL;
    int rc = wh_irecv_x(rbuf, rcount, rdt, src, rtag, c, ctxoff, WH_TRACE_BLK, &rr);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = wh_isend_x(sbuf, scount, sdt, dest, stag, c, ctxoff, WH_MODE_STD, WH_TRACE_BLK, &sr);
    if (rc != MPI_SUCCESS) {
        wh_wait(rr, NULL);
        return rc;
    }
    int e1 = wh_wait(sr, NULL);
    int e2 = wh_wait(rr, status);
    return e2 ? e2 : e1;
}
