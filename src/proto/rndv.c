/* The rendezvous protocol, once for every channel (see proto.h): RTS from the
 * sender; on the match the coordinator picks how the data moves (zero-copy
 * get, a channel's bulk stream, or fragments through active messages); FIN or
 * the last byte completes each side. */
#include <stdlib.h>
#include <string.h>

#include "chan/shm/shm.h"
#include "core/peers.h"
#include "locality/nodeheap.h"
#include "proto/proto.h"
#include "util/log.h"
#include "util/tunables.h"

/* FRAG senders with fragments left to push (linked through r->next). */
static wh_req_t *streams;
int wh_rndv_nstreams;

int wh_rndv_start(wh_req_t *r, int chan, const wh_hdr_t *eh)
{
    (void)chan; /* r->chan */
    wh_hdr_t h = *eh;
    h.type = wh_p2p_am.rts;
    h.flags = 0;
    wh_rts_ipc_t x;
    memset(&x, 0, sizeof x);
    x.rts.mem = (uint32_t)r->mem;
    size_t plen = sizeof x.rts;
    const char *start;
    int contig = r->bytes && wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start);
    /* a zero-copy get reads host memory only: device buffers expose no address */
    if (contig && r->mem == WH_MEM_HOST) {
        x.rts.addr = (uint64_t)(uintptr_t)start;
        /* in the node-shared heap: a receiver without CMA may still copy it once */
        if (r->chan == WH_CHAN_SHM && wh_tun.region_copy && wh_node_locate(start, r->bytes, &x.rts.rkey))
            x.rts.flags |= WH_RTS_REGION;
    }
    /* a co-resident receiver may map a device buffer (CUDA IPC) */
    if (contig && r->mem == WH_MEM_CUDA && r->chan == WH_CHAN_SHM && wh_tun.cuda_ipc &&
        wh_cuda_ipc_export(start, &x.ipc) == MPI_SUCCESS) {
        x.rts.flags |= WH_RTS_CUDA_IPC;
        plen = sizeof x;
    }
    r->xfer_off = 0;
    r->rproto = WH_PROTO_EAGER; /* until a CTS says how the data moves (none: CUDA IPC or nothing to move) */
    int rc = wh_send_rts(r, &h, &x, plen);
    if (rc != MPI_SUCCESS) {
        r->err = rc;
        wh_req_send_done(r);
    }
    return MPI_SUCCESS;
}

static void send_fin(wh_req_t *r, int chan, uint64_t sreq)
{
    wh_hdr_t fin = {.type = wh_p2p_am.fin, .sreq = sreq};
    int rc = wh_send_ctrl(chan, r->wpeer, &fin, NULL, 0);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc;
}

/* completion of a zero-copy get (receiver) */
static void get_done(wh_comp_t *c, int err)
{
    wh_req_t *r = (wh_req_t *)((char *)c - offsetof(wh_req_t, comp));
    if (err && !r->err)
        r->err = err;
    send_fin(r, r->chan, r->remote);
    wh_req_recv_done(r);
}

/* completion of a bulk stream (either side) */
static void bulk_done(wh_comp_t *c, int err)
{
    wh_req_t *r = (wh_req_t *)((char *)c - offsetof(wh_req_t, comp));
    if (err && !r->err)
        r->err = err;
    if (r->kind == WH_REQ_SEND) {
        r->sync_pending = 0; /* the CTS proved the match */
        wh_req_send_done(r);
    } else {
        wh_req_recv_done(r);
    }
}

/* peers whose CUDA IPC handles could not be opened here (other PID
 * namespace, GPU not visible, socket unreachable, injected failure), one bit
 * per scheme (1 << WH_CUDA_IPC_*): staged from then on */
static unsigned char *ipc_refused;

/* Move a matched rendezvous by CUDA IPC: map the sender's device buffer and
 * copy from it.  0 if done (the request completes), else a CUresult. */
static int rndv_cuda_ipc(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const wh_cuda_ipc_t *ipc, size_t n)
{
    void *src = NULL;
    const char *start = NULL;
    wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start);
    wh_CUresult cr = wh_cuda_ipc_import(wpeer, ipc, &src);
    if (cr != WH_CUDA_SUCCESS) {
        if (!ipc_refused)
            ipc_refused = calloc((size_t)wh_peers_cap, 1);
        if (ipc_refused)
            ipc_refused[wpeer] |= (unsigned char)(1u << ipc->scheme);
        if (ipc->scheme == WH_CUDA_IPC_VMM)
            WH_WARN("proto", "CUDA IPC (VMM file descriptor) with rank %d failed (%s): its device buffers from "
                    "cuMemCreate memory are staged through host memory", wpeer, wh_cuda_errname(cr));
        else
            WH_WARN("proto", "CUDA IPC with rank %d failed (%s): its device buffers are staged through host memory",
                    wpeer, wh_cuda_errname(cr));
        return cr;
    }
    int proto = ipc->scheme == WH_CUDA_IPC_VMM ? WH_PROTO_CUDA_VMM : WH_PROTO_CUDA_IPC;
    r->rproto = (uint8_t)proto;
    int rc = wh_mem_copy((char *)start, r->mem, src, WH_MEM_CUDA, n);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc;
    wh_coord_note(chan, proto, n);
    send_fin(r, chan, h->sreq);
    wh_req_recv_done(r);
    return 0;
}

/* a pair whose transfer may go through the node-shared heap: the shm
 * channel, host memory on both sides, WHARF_REGION_COPY */
static int region_pair(const wh_req_t *r, int chan, const wh_rts_t *rts)
{
    return chan == WH_CHAN_SHM && r->mem == WH_MEM_HOST && (int)rts->mem == WH_MEM_HOST && wh_tun.region_copy;
}

/* Single copy through the node-shared heap (MPI_Alloc_mem memory): the shm
 * channel's get_zcopy/put_zcopy with the key WH_SHM_KEY_HEAP address a
 * buffer there by its region offset, and copy with plain loads and stores
 * on this rank's mapping, no system call and no page pinning: it serves
 * pairs CMA cannot (private PID namespaces, a shared volume, VMs sharing a
 * region) and beats CMA's process_vm_readv/writev.  A sender's RTS names its
 * offset (WH_RTS_REGION); a receiver gets from it, or splits the copy with
 * the sender (split.c).
 *
 * A receiver that asked for a put (a gather root: its senders copy in
 * parallel) and whose buffer lies in the heap names it by its offset in a
 * CTS WH_PROTO_REGION; the sender puts into it.  0: asked, -1: not. */
static int rndv_region_cts(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const wh_rts_t *rts, size_t n,
                           const char *pstart)
{
    uint64_t off;
    if (!pstart || !region_pair(r, chan, rts) || !wh_node_locate(pstart, n, &off))
        return -1;
    r->rproto = WH_PROTO_PUT; /* the sender's FIN (WH_FIN_RECV) completes it, or its DATA fragments */
    wh_coord_note(chan, WH_PROTO_REGION, n);
    wh_cts_t cts = {.rreq = wh_req_id(r), .token = off, .proto = WH_PROTO_REGION};
    wh_hdr_t c = {.type = wh_p2p_am.cts, .len = n, .sreq = h->sreq};
    int rc = wh_send_ctrl(chan, wpeer, &c, &cts, sizeof cts);
    if (rc != MPI_SUCCESS) {
        r->err = rc;
        wh_req_recv_done(r);
    }
    return 0;
}

void wh_rndv_matched(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_rts_ipc_t x;
    memset(&x, 0, sizeof x);
    if (plen >= sizeof x.rts)
        memcpy(&x.rts, payload, sizeof x.rts);
    int has_ipc = (x.rts.flags & WH_RTS_CUDA_IPC) && plen >= sizeof x;
    if (has_ipc)
        memcpy(&x, payload, sizeof x);
    wh_rts_t rts = x.rts;
    size_t n = h->len < r->bytes ? (size_t)h->len : r->bytes;
    r->msg_len = (size_t)h->len;
    r->remote = h->sreq;
    r->xfer_len = n;
    r->xfer_off = 0;
    r->chan = chan;
    r->wpeer = wpeer;
    if (n == 0) { /* nothing to move (empty message or zero-capacity receive) */
        send_fin(r, chan, h->sreq);
        wh_req_recv_done(r);
        return;
    }
    /* the memory kind that constrains the transfer: either side's non-host kind */
    int mem = r->mem != WH_MEM_HOST ? r->mem : (int)rts.mem;
    if (mem < 0 || mem >= WH_MEM_KINDS)
        mem = WH_MEM_HOST;
    const char *rstart;
    int remote = rts.addr ? WH_REMOTE_ADDR : 0;
    const char *pstart = NULL;
    if (r->want_put && r->mem == WH_MEM_HOST && wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &pstart))
        remote |= WH_RECV_WANTS_PUT;
    if (has_ipc && wh_cuda_on && wh_tun.cuda_ipc && x.ipc.scheme <= WH_CUDA_IPC_VMM &&
        !(ipc_refused && (ipc_refused[wpeer] >> x.ipc.scheme & 1)) &&
        wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &rstart))
        remote |= WH_REMOTE_CUDA_IPC | (x.ipc.scheme == WH_CUDA_IPC_VMM ? WH_REMOTE_CUDA_VMM : 0);
    int dev = mem == WH_MEM_CUDA;
    wh_coord_choice_t ch = dev ? wh_coord_dev_rndv(wpeer, n, mem, remote, r->trace) : wh_coord_rndv(wpeer, n, mem, remote);
    if (ch.proto == WH_PROTO_CUDA_IPC) {
        if (rndv_cuda_ipc(r, chan, wpeer, h, &x.ipc, n) == 0) {
            wh_gpu_note(wpeer, WH_DS_IPC);
            return;
        }
        ch = wh_coord_dev_rndv(wpeer, n, mem, remote & ~WH_REMOTE_CUDA_IPC, WH_TRACE_NONE); /* pipeline or staged */
    }
    if (ch.proto == WH_PROTO_PIPE) {
        if (wh_pipe_recv(r, chan, wpeer, h, n) == MPI_SUCCESS) {
            wh_coord_note(chan, WH_PROTO_PIPE, n);
            wh_gpu_note(wpeer, WH_DS_PIPE);
            return;
        }
        ch = wh_coord_rndv(wpeer, n, mem, remote & ~WH_REMOTE_CUDA_IPC); /* no ring: staged */
    }
    if (dev)
        wh_gpu_note(wpeer, WH_DS_STAGED);
    if (rndv_region_cts(r, chan, wpeer, h, &rts, n, pstart) == 0)
        return;
    wh_data_t d;
    wh_req_data(r, 0, n, &d);
    int rc;
    const char *dstart;
    /* Where a get reads: a sender's buffer in the node heap by its offset
     * (loads and stores on this rank's mapping of the region: no system
     * call, and it serves pairs CMA cannot, in private PID namespaces, on
     * a shared volume, in VMs sharing a region), else its address by CMA. */
    int heap_src = (rts.flags & WH_RTS_REGION) && region_pair(r, chan, &rts);
    uint64_t gaddr = heap_src ? rts.rkey : rts.addr;
    uint64_t gkey = heap_src ? WH_SHM_KEY_HEAP : (rts.flags & WH_RTS_REGION) ? 0 : rts.rkey;
    int get = ch.proto == WH_PROTO_GET || (heap_src && ch.proto != WH_PROTO_PUT);
    if (get && chan == WH_CHAN_SHM && r->mem == WH_MEM_HOST &&
        wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &dstart) &&
        wh_split_recv(r, wpeer, gaddr, gkey, dstart, n) == 0) { /* (its size and pair rules: split.c) */
        wh_coord_note(chan, WH_PROTO_SPLIT, n);
        return;
    }
    if (get || heap_src) {
        r->rproto = WH_PROTO_GET;
        r->comp.done = get_done;
        rc = wh_chans[chan]->get_zcopy(wpeer, gaddr, gkey, &d, &r->comp);
        if (rc == MPI_SUCCESS) {
            wh_coord_note(chan, heap_src ? WH_PROTO_REGION : WH_PROTO_GET, n);
            return;
        }
        if (rc != WH_FALLBACK)
            goto fail;
        /* refused before moving a byte (the probe passed but the read failed, or
         * a heap offset that names no allocation here): the next protocol (a
         * put the receive asked for stays one) */
        if (ch.proto != WH_PROTO_PUT)
            ch.proto = (wh_coord_peers[wpeer].caps & WH_CAP_BULK) ? WH_PROTO_BULK : WH_PROTO_FRAG;
    }
    wh_cts_t cts = {.rreq = wh_req_id(r), .proto = ch.proto};
    if (ch.proto == WH_PROTO_PUT) {
        r->rproto = WH_PROTO_PUT; /* FIN (WH_FIN_RECV) completes it, or DATA fragments if the put is refused */
        cts.token = (uint64_t)(uintptr_t)pstart;
    }
    if (ch.proto == WH_PROTO_BULK) {
        r->rproto = WH_PROTO_BULK;
        r->comp.done = bulk_done;
        rc = wh_chans[chan]->bulk_recv(wpeer, &d, &cts.token, &r->comp);
        if (rc == WH_FALLBACK) {
            ch.proto = WH_PROTO_FRAG;
            cts.proto = WH_PROTO_FRAG;
        } else if (rc != MPI_SUCCESS) {
            goto fail;
        }
    }
    if (ch.proto == WH_PROTO_FRAG)
        r->rproto = WH_PROTO_FRAG;
    wh_coord_note(chan, ch.proto, n);
    wh_hdr_t c = {.type = wh_p2p_am.cts, .len = n, .sreq = h->sreq};
    rc = wh_send_ctrl(chan, wpeer, &c, &cts, sizeof cts);
    if (rc == MPI_SUCCESS)
        return;
fail:
    r->err = rc;
    wh_req_recv_done(r);
}

/* ---------- sender side ---------- */

static void fin_to_receiver(wh_req_t *s, int chan, int err)
{
    wh_hdr_t fin = {.type = wh_p2p_am.fin, .flags = WH_FIN_RECV | (err ? WH_FIN_ERR : 0), .sreq = s->remote};
    int rc = wh_send_ctrl(chan, s->wpeer, &fin, NULL, 0);
    if (rc != MPI_SUCCESS && !s->err)
        s->err = rc;
}

/* completion of the zero-copy put of a PUT rendezvous (sender) */
static void put_done(wh_comp_t *c, int err)
{
    wh_req_t *s = (wh_req_t *)((char *)c - offsetof(wh_req_t, comp));
    if (err && !s->err)
        s->err = err;
    fin_to_receiver(s, s->chan, err);
    s->sync_pending = 0; /* the CTS proved the match */
    wh_req_send_done(s);
}

/* The receiver asked for a PUT: write its buffer at raddr.  0 when done or
 * failed for good (the request completes, the receiver is told), else
 * the channel refused before moving a byte: stream fragments instead. */
static int rndv_put(wh_req_t *s, int chan, int wpeer, uint64_t raddr, uint64_t rkey)
{
    wh_data_t d;
    wh_req_data(s, 0, s->xfer_len, &d);
    s->rproto = WH_PROTO_PUT;
    s->comp.done = put_done;
    int rc = raddr || rkey ? wh_chans[chan]->put_zcopy(wpeer, raddr, rkey, &d, &s->comp) : WH_FALLBACK;
    if (rc == MPI_SUCCESS)
        return 0;
    if (rc == WH_FALLBACK)
        return 1;
    s->err = rc;
    fin_to_receiver(s, chan, 1);
    s->sync_pending = 0;
    wh_req_send_done(s);
    return 0;
}

void wh_am_cts(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_req_t *s = wh_req_from_id(h->sreq);
    wh_cts_t cts;
    if (plen != sizeof cts || !s || s->kind != WH_REQ_SEND || s->complete || s->wpeer != wpeer || h->len > s->bytes) {
        WH_ERRLOG("proto", "clear-to-send from rank %d for unknown request %#llx dropped", wpeer,
                  (unsigned long long)h->sreq);
        return;
    }
    memcpy(&cts, payload, sizeof cts);
    if (s->mem != WH_MEM_HOST)
        wh_gpu_note(wpeer, cts.proto == WH_PROTO_PIPE ? WH_DS_PIPE : WH_DS_STAGED);
    s->xfer_len = (size_t)h->len;
    s->xfer_off = 0;
    s->remote = cts.rreq;
    if (cts.proto == WH_PROTO_BULK) {
        wh_data_t d;
        wh_req_data(s, 0, s->xfer_len, &d);
        s->rproto = WH_PROTO_BULK;
        s->comp.done = bulk_done;
        int rc = wh_chans[chan]->bulk_send(wpeer, cts.token, &d, &s->comp);
        if (rc != MPI_SUCCESS) {
            s->err = rc;
            s->sync_pending = 0;
            wh_req_send_done(s);
        }
        return;
    }
    if (cts.proto == WH_PROTO_PIPE) {
        wh_pipe_send(s, chan, wpeer, cts.token);
        return;
    }
    if (cts.proto == WH_PROTO_SPLIT) {
        wh_split_send(s, wpeer, &cts);
        return;
    }
    if (cts.proto == WH_PROTO_PUT && rndv_put(s, chan, wpeer, cts.token, 0) == 0)
        return;
    if (cts.proto == WH_PROTO_REGION && chan == WH_CHAN_SHM && rndv_put(s, chan, wpeer, cts.token, WH_SHM_KEY_HEAP) == 0)
        return;
    s->rproto = WH_PROTO_FRAG; /* (a refused put too: the receiver takes DATA fragments) */
    s->next = streams;
    streams = s;
    wh_rndv_nstreams++;
    wh_rndv_push();
}

/* A PUSH sender whose header took the first `first` bytes: stream the rest
 * (complete now if nothing is left). */
void wh_rndv_stream(wh_req_t *s, size_t first)
{
    s->rproto = WH_PROTO_PUSH;
    s->xfer_len = s->bytes;
    s->xfer_off = first;
    if (first >= s->bytes) {
        wh_req_send_done(s); /* a synchronous send still waits for its SACK */
        return;
    }
    s->next = streams;
    streams = s;
    wh_rndv_nstreams++;
}

/* Push the fragments of the FRAG (DATA, named by the receiver's request id)
 * and PUSH (PDATA, named by the sender's) senders while their channels take
 * them. */
int wh_rndv_push(void)
{
    int n = 0;
    wh_req_t **pp = &streams;
    while (*pp) {
        wh_req_t *s = *pp;
        /* fragments are active messages: no larger than the channel takes in one
         * (the network's preferred fragment is its bulk chunk, larger than that) */
        size_t frag = wh_chan_caps[s->chan].max_frag;
        if (frag > wh_coord_lim.max_am[s->chan])
            frag = wh_coord_lim.max_am[s->chan];
        while (s->xfer_off < s->xfer_len) {
            size_t len = s->xfer_len - s->xfer_off < frag ? s->xfer_len - s->xfer_off : frag;
            int push = s->rproto == WH_PROTO_PUSH;
            wh_hdr_t h = {.type = push ? wh_p2p_am.pdata : wh_p2p_am.data, .len = s->xfer_off,
                          .sreq = push ? wh_req_id(s) : s->remote};
            wh_data_t d;
            wh_req_data(s, s->xfer_off, len, &d);
            int rc = wh_chans[s->chan]->am_send(s->wpeer, &h, &d);
            if (rc == WH_AGAIN)
                break;
            if (rc != MPI_SUCCESS) {
                s->err = rc;
                s->xfer_off = s->xfer_len;
                break;
            }
            s->xfer_off += len;
            n++;
        }
        if (s->xfer_off < s->xfer_len) {
            pp = &s->next;
            continue;
        }
        *pp = s->next;
        s->next = NULL;
        wh_rndv_nstreams--;
        if (s->rproto != WH_PROTO_PUSH)
            s->sync_pending = 0; /* the CTS proved the match; a synchronous PUSH waits for its SACK */
        wh_req_send_done(s);
    }
    return n;
}

void wh_am_fin(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan, (void)payload, (void)plen;
    if (h->flags & WH_FIN_RECV) { /* PUT rendezvous: the sender wrote (or failed to write) our buffer */
        wh_req_t *r = wh_req_from_id(h->sreq);
        if (!r || r->kind != WH_REQ_RECV || r->complete || r->rproto != WH_PROTO_PUT || r->wpeer != wpeer) {
            WH_ERRLOG("proto", "rendezvous finish from rank %d for unknown receive %#llx dropped", wpeer,
                      (unsigned long long)h->sreq);
            return;
        }
        if ((h->flags & WH_FIN_ERR) && !r->err)
            r->err = wh_error(MPI_ERR_OTHER, "rank %d could not write its %zu-byte message into this rank's buffer "
                              "(single-copy put failed)", wpeer, r->xfer_len);
        wh_req_recv_done(r);
        return;
    }
    wh_req_t *s = wh_req_from_id(h->sreq);
    if (!s || s->kind != WH_REQ_SEND || s->complete || s->wpeer != wpeer) {
        WH_ERRLOG("proto", "rendezvous finish from rank %d for unknown request %#llx dropped", wpeer,
                  (unsigned long long)h->sreq);
        return;
    }
    if (s->mem != WH_MEM_HOST && s->rproto == WH_PROTO_EAGER && s->bytes)
        wh_gpu_note(wpeer, WH_DS_IPC); /* no CTS: the receiver mapped the buffer */
    s->sync_pending = 0;
    wh_req_send_done(s);
}

/* ---------- receiver side of FRAG ---------- */

void wh_am_data(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan;
    wh_req_t *r = wh_req_from_id(h->sreq);
    size_t off = (size_t)h->len;
    if (!r || r->kind != WH_REQ_RECV || r->complete || (r->rproto != WH_PROTO_FRAG && r->rproto != WH_PROTO_PUT) ||
        r->wpeer != wpeer ||
        off > r->xfer_len || plen > r->xfer_len - off) {
        WH_ERRLOG("proto", "data fragment from rank %d for unknown request %#llx (offset %zu, %zu bytes) dropped",
                  wpeer, (unsigned long long)h->sreq, off, plen);
        return;
    }
    wh_data_t d;
    wh_req_data(r, off, plen, &d);
    int rc = wh_data_in(&d, 0, payload, plen);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc;
    r->xfer_off += plen;
    if (r->xfer_off >= r->xfer_len)
        wh_req_recv_done(r);
}

void wh_am_sack(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan, (void)wpeer, (void)payload, (void)plen;
    wh_req_t *s = wh_req_from_id(h->sreq);
    if (!s || s->kind != WH_REQ_SEND)
        return;
    s->sync_pending = 0;
    if (!s->data_pending)
        wh_req_send_done(s);
}
