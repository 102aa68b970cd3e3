/* The device-buffer pipeline between co-resident ranks (WH_PROTO_PIPE).
 *
 * The receiver of a matched rendezvous owns one ring per sending peer, taken
 * once from the node heap: a header (chunk size, depth, two counters) and
 * `depth` chunks.  Its CTS names the ring (region offset); both sides then
 * move the message chunk by chunk through it:
 *
 *   sender    copy chunk k device -> ring slot k % depth (cuMemcpyDtoHAsync on
 *             wharf's stream, an event recorded after it); when the event has
 *             fired, publish `posted` = k + 1.  A slot is refilled only once
 *             the receiver's `consumed` says it was emptied.
 *   receiver  once `posted` > k, copy slot k % depth -> device
 *             (cuMemcpyHtoDAsync, an event); when it fired, publish
 *             `consumed` = k + 1.
 *
 * So the device-to-host copy of chunk k+1 overlaps the host-to-device copy of
 * chunk k, and up to `depth` chunks are in flight.  The counters grow for the
 * ring's lifetime, so no slot is ever reset.  Transfers with a peer follow
 * each other through the ring: the receiver sends the CTS of every matched
 * transfer at once, naming the ring chunk its first chunk will be (the end of
 * the one announced before), and the sender takes CTSs in order, so it fills
 * the slots of transfer i+1 while the receiver still empties those of
 * transfer i (no drain and refill, no CTS round trip, between messages).  A side whose buffer is host memory, non-contiguous, or in another
 * context copies synchronously (wh_data_out/in) and publishes at once.
 * Ring memory is registered with the driver (cuMemHostRegister) in each
 * process that copies asynchronously, as DMA needs page-locked memory. */
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "locality/nodeheap.h"
#include "proto/proto.h"
#include "util/log.h"
#include "util/tunables.h"

#define RING_MAGIC 0x70697065u /* "pipe" */
#define DATA_OFF ((size_t)4096)
#define MAX_DEPTH 64

typedef struct ring {
    uint32_t magic, chunk, depth, pad;
    _Alignas(64) uint64_t posted;   /* chunks the sender filled (ever) */
    _Alignas(64) uint64_t consumed; /* chunks the receiver emptied (ever) */
} ring_t;

typedef struct side {
    ring_t *ring;
    unsigned char *data;
    uint64_t off;
    size_t chunk;
    uint32_t depth;
    int is_recv, chan, wpeer;
    int evstate;                   /* 0 not tried, 1 events made, -1 synchronous copies only */
    int pinned;
    wh_CUevent ev[MAX_DEPTH];
    unsigned char async[MAX_DEPTH];
    wh_req_t *cur, *qhead, *qtail; /* transfer in progress; the ones after it (CTS sent or received) */
    uint64_t base;                 /* ring chunk index of cur's first chunk */
    uint64_t next;                 /* receiver: ring chunk index of the next transfer it announces */
    size_t nchunks, issued, done;
    int warned;
} side_t;

static side_t **rx, **tx; /* per world rank */
int wh_pipe_active;       /* sides with a transfer in progress */
static int hooked;

static int pipe_progress(void);

static side_t *side_of(side_t ***tab, int wpeer)
{
    if (!*tab && !(*tab = calloc((size_t)wh_peers_cap, sizeof **tab)))
        return NULL;
    if (!(*tab)[wpeer])
        (*tab)[wpeer] = calloc(1, sizeof(side_t));
    if (!hooked && wh_progress_hook_add(pipe_progress, &wh_pipe_active) == MPI_SUCCESS)
        hooked = 1;
    return (*tab)[wpeer];
}

/* Events and page-locked ring memory for asynchronous copies (in the context
 * of device memory dev); 1 if usable. */
static int async_ready(side_t *x, const void *dev)
{
    if (x->evstate)
        return x->evstate > 0;
    x->evstate = -1;
    if (!wh_cuda_async_on() || wh_cuda_ctx_for(dev) != WH_CUDA_SUCCESS)
        return 0;
    for (uint32_t i = 0; i < x->depth; i++)
        if (wh_cuda_event_new(&x->ev[i]) != WH_CUDA_SUCCESS) {
            while (i--)
                wh_cu.cuEventDestroy(x->ev[i]);
            WH_DEBUG("pipe", "no CUDA events: synchronous copies with rank %d", x->wpeer);
            return 0;
        }
    wh_CUresult rc = wh_cu.cuMemHostRegister ? wh_cu.cuMemHostRegister(x->data, (size_t)x->depth * x->chunk, 0)
                                             : WH_CUDA_ERROR_NOT_SUPPORTED;
    x->pinned = rc == WH_CUDA_SUCCESS;
    if (!x->pinned)
        WH_DEBUG("pipe", "ring with rank %d not page-locked (%s): the driver stages its copies", x->wpeer,
                 wh_cuda_errname(rc));
    x->evstate = 1;
    return 1;
}

static void side_release(side_t *x)
{
    if (x->evstate > 0) {
        for (uint32_t i = 0; i < x->depth; i++)
            wh_cu.cuEventDestroy(x->ev[i]);
        if (x->pinned)
            wh_cu.cuMemHostUnregister(x->data);
    }
    x->evstate = 0;
    x->pinned = 0;
    if (x->is_recv && x->ring)
        wh_node_free(x->off);
    x->ring = NULL;
    x->data = NULL;
}

static void ring_geometry(size_t *chunk, uint32_t *depth)
{
    size_t c = wh_tun.cuda_pipe_chunk;
    c = c < 4096 ? 4096 : (c + 4095) & ~(size_t)4095; /* whole pages: DMA-friendly */
    if (c > ((size_t)1 << 30))
        c = (size_t)1 << 30;
    int d = wh_tun.cuda_pipe_depth;
    *chunk = c;
    *depth = (uint32_t)(d < 2 ? 2 : d > MAX_DEPTH ? MAX_DEPTH : d);
}

/* ---------- receiver ---------- */

static size_t nchunks_of(const side_t *x, size_t len)
{
    return (len + x->chunk - 1) / x->chunk;
}

/* make the head of the queue the current transfer, starting at ring chunk base */
static void start_next(side_t *x, uint64_t base)
{
    wh_req_t *r = x->qhead;
    x->qhead = r->next;
    if (!x->qhead)
        x->qtail = NULL;
    r->next = NULL;
    x->cur = r;
    x->base = base;
    x->nchunks = r->err ? 0 : nchunks_of(x, r->xfer_len); /* a failed CTS: nothing will come */
    x->issued = x->done = 0;
    wh_pipe_active++;
}

/* CTS for r, whose first chunk will be ring chunk x->next (kept in
 * r->xfer_off until r is current) */
static void rx_announce(side_t *x, wh_req_t *r)
{
    r->xfer_off = x->next;
    wh_cts_t cts = {.rreq = wh_req_id(r), .token = x->off, .proto = WH_PROTO_PIPE};
    wh_hdr_t c = {.type = wh_p2p_am.cts, .len = r->xfer_len, .sreq = r->remote};
    int rc = wh_send_ctrl(x->chan, x->wpeer, &c, &cts, sizeof cts);
    if (rc != MPI_SUCCESS)
        r->err = rc; /* the sender will not fill chunks for it */
    else
        x->next += nchunks_of(x, r->xfer_len);
}

int wh_pipe_recv(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, size_t n)
{
    side_t *x = side_of(&rx, wpeer);
    if (!x || (!x->ring && x->warned))
        return WH_FALLBACK; /* no ring could be had for this peer: not asked again */
    if (!x->ring) {
        size_t chunk;
        uint32_t depth;
        ring_geometry(&chunk, &depth);
        uint64_t off = 0;
        ring_t *g = wh_node_alloc(DATA_OFF + (size_t)depth * chunk, &off);
        if (!g) {
            if (!x->warned++)
                WH_WARN("pipe", "no node-heap memory for a %zu-byte device pipeline ring with rank %d "
                        "(WHARF_NODE_HEAP): its device buffers use staged fragments", DATA_OFF + depth * chunk, wpeer);
            return WH_FALLBACK;
        }
        g->chunk = (uint32_t)chunk;
        g->depth = depth;
        g->posted = g->consumed = 0;
        x->next = 0;
        __atomic_store_n(&g->magic, RING_MAGIC, __ATOMIC_RELEASE);
        x->ring = g;
        x->data = (unsigned char *)g + DATA_OFF;
        x->off = off;
        x->chunk = chunk;
        x->depth = depth;
        x->is_recv = 1;
        x->chan = chan;
        x->wpeer = wpeer;
    }
    r->rproto = WH_PROTO_PIPE;
    r->remote = h->sreq;
    r->xfer_len = n;
    r->next = NULL;
    if (x->qtail)
        x->qtail->next = r;
    else
        x->qhead = r;
    x->qtail = r;
    rx_announce(x, r);
    if (!x->cur)
        start_next(x, r->xfer_off);
    return MPI_SUCCESS;
}

/* ---------- sender ---------- */

int wh_pipe_send(wh_req_t *s, int chan, int wpeer, uint64_t off)
{
    side_t *x = side_of(&tx, wpeer);
    ring_t *g = NULL;
    if (x && (!x->ring || x->off != off)) {
        if (x->ring)
            side_release(x);
        g = wh_node_attach(off, DATA_OFF);
        if (g && __atomic_load_n(&g->magic, __ATOMIC_ACQUIRE) == RING_MAGIC && g->depth >= 2 &&
            g->depth <= MAX_DEPTH)
            g = wh_node_attach(off, DATA_OFF + (size_t)g->depth * g->chunk);
        else
            g = NULL;
        if (g) {
            x->ring = g;
            x->data = (unsigned char *)g + DATA_OFF;
            x->off = off;
            x->chunk = g->chunk;
            x->depth = g->depth;
            x->chan = chan;
            x->wpeer = wpeer;
        }
    }
    if (!x || !x->ring) {
        s->err = wh_error(MPI_ERR_OTHER, "device pipeline: rank %d named a ring (offset %llu) this rank cannot "
                          "attach", wpeer, (unsigned long long)off);
        s->sync_pending = 0;
        wh_req_send_done(s);
        return s->err;
    }
    s->rproto = WH_PROTO_PIPE;
    s->next = NULL;
    if (x->qtail)
        x->qtail->next = s;
    else
        x->qhead = s;
    x->qtail = s;
    if (!x->cur) /* this side alone posts: its count is where the receiver expects the transfer */
        start_next(x, __atomic_load_n(&x->ring->posted, __ATOMIC_ACQUIRE));
    pipe_progress();
    return MPI_SUCCESS;
}

/* ---------- both sides ---------- */

/* Start the copy of chunk k of the current transfer: out of the sender's
 * buffer into its slot, or out of the slot into the receiver's buffer. */
static int chunk_copy(side_t *x, size_t k)
{
    wh_req_t *r = x->cur;
    size_t off = k * x->chunk, len = r->xfer_len - off < x->chunk ? r->xfer_len - off : x->chunk;
    uint32_t slot = (uint32_t)((x->base + k) % x->depth);
    unsigned char *ring = x->data + (size_t)slot * x->chunk;
    wh_data_t d;
    wh_req_data(r, off, len, &d);
    x->async[slot] = 0;
    if (d.base && d.mem == WH_MEM_CUDA && async_ready(x, d.base)) {
        wh_CUresult cr = x->is_recv ? wh_cuda_copy_async(d.base, WH_MEM_CUDA, ring, WH_MEM_HOST, len, x->ev[slot])
                                    : wh_cuda_copy_async(ring, WH_MEM_HOST, d.base, WH_MEM_CUDA, len, x->ev[slot]);
        if (cr == WH_CUDA_SUCCESS) {
            x->async[slot] = 1;
            return MPI_SUCCESS;
        }
        WH_DEBUG("pipe", "asynchronous copy refused (%s): synchronous", wh_cuda_errname(cr));
    }
    return x->is_recv ? wh_data_in(&d, 0, ring, len) : wh_data_out(&d, 0, ring, len);
}

static void finish(side_t *x)
{
    wh_req_t *r = x->cur;
    uint64_t end = x->base + x->done;
    x->cur = NULL;
    wh_pipe_active--;
    if (x->is_recv) {
        wh_req_recv_done(r);
        if (x->qhead)
            start_next(x, x->qhead->xfer_off);
    } else {
        r->sync_pending = 0; /* the CTS proved the match */
        wh_req_send_done(r);
        if (x->qhead)
            start_next(x, end);
    }
}

static int side_step(side_t *x)
{
    int n = 0;
    wh_req_t *r = x->cur;
    uint64_t *mine = x->is_recv ? &x->ring->consumed : &x->ring->posted;
    const uint64_t *theirs = x->is_recv ? &x->ring->posted : &x->ring->consumed;
    for (;;) {
        /* publish what completed, in order, before starting more: the peer
         * works on chunk k while this side copies chunk k+1 */
        while (x->done < x->issued) {
            uint32_t slot = (uint32_t)((x->base + x->done) % x->depth);
            if (x->async[slot]) {
                int k = wh_cuda_event_done(x->ev[slot]);
                if (k == 0)
                    break;
                if (k < 0 && !r->err)
                    r->err = wh_error(MPI_ERR_OTHER, "device pipeline copy with rank %d failed: %s", x->wpeer,
                                      wh_cuda_errname(-k));
                x->async[slot] = 0;
            }
            x->done++;
            __atomic_store_n(mine, x->base + x->done, __ATOMIC_RELEASE);
            n++;
        }
        /* sender: a slot is free once consumed; receiver: a chunk is there
         * once posted.  Signed: the peer may still be in the transfer
         * before this one (receiver draining it, sender not there yet). */
        int64_t t = (int64_t)(__atomic_load_n(theirs, __ATOMIC_ACQUIRE) - x->base) + (x->is_recv ? 0 : x->depth);
        if (x->issued >= x->nchunks || (int64_t)x->issued >= t)
            break;
        int rc = chunk_copy(x, x->issued);
        if (rc != MPI_SUCCESS && !r->err)
            r->err = rc;
        x->issued++;
        n++;
    }
    if (x->done == x->nchunks)
        finish(x);
    return n;
}

static int pipe_progress(void)
{
    int n = 0;
    for (int p = 0; p < wh_job.size && wh_pipe_active; p++) {
        if (tx && tx[p] && tx[p]->cur)
            n += side_step(tx[p]);
        if (rx && rx[p] && rx[p]->cur)
            n += side_step(rx[p]);
    }
    return n;
}

void wh_pipe_finalize(void)
{
    for (int p = 0; p < wh_job.size; p++) {
        if (tx && tx[p])
            side_release(tx[p]), free(tx[p]);
        if (rx && rx[p])
            side_release(rx[p]), free(rx[p]);
    }
    free(tx);
    free(rx);
    tx = rx = NULL;
    wh_pipe_active = 0;
}
