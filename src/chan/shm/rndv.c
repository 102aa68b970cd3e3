/* Shared-memory rendezvous.  The receiver, on matching an RTS, either reads
 * the sender's buffer in one copy with CMA (then sends FIN), or sends CTS and
 * the sender streams DATA cells (a pipelined copy through the queue). */
#include <stdlib.h>
#include <string.h>

#include "chan/shm/shm.h"
#include "core/core.h"
#include "util/log.h"
#include "util/tunables.h"

int wh_shm_rndv_send(wh_req_t *sreq, const wh_hdr_t *h)
{
    wh_shm_rts_t rts = {0};
    const char *start;
    if (wh_dtype_is_contig(sreq->dt, (size_t)sreq->count, sreq->buf, &start))
        rts.addr = (uint64_t)(uintptr_t)start;
    return wh_chan_shm_ops.send_ctrl(sreq->wpeer, h, &rts, sizeof rts);
}

static void stream_add(int lp, wh_req_t *s)
{
    s->next = NULL;
    if (wh_shm.stream_tail[lp])
        wh_shm.stream_tail[lp]->next = s;
    else
        wh_shm.stream_head[lp] = s;
    wh_shm.stream_tail[lp] = s;
    wh_shm.nstreams++;
}

int wh_shm_rndv_recv(wh_req_t *rreq, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_shm_rts_t rts = {0};
    if (plen >= sizeof rts)
        memcpy(&rts, payload, sizeof rts);
    int lp = wh_job.local_index[rreq->wpeer];
    size_t want = h->len < rreq->bytes ? h->len : rreq->bytes;
    rreq->xfer_off = 0;
    if (rts.addr && wh_shm.cma_ok && wh_shm.cma_ok[lp] && h->len >= wh_tun.cma_min) {
        if (wh_shm_cma_read(lp, wh_shm.pid[lp], rts.addr, rreq, want) == MPI_SUCCESS) {
            wh_hdr_t fin = {.type = WH_SHM_FIN, .ctx = h->ctx, .src = h->src, .tag = h->tag, .sreq = h->sreq};
            wh_stats.msgs[WH_CHAN_SHM][2]++;
            wh_stats.bytes[WH_CHAN_SHM][2] += want;
            wh_req_recv_done(rreq);
            return wh_send_ctrl(WH_CHAN_SHM, rreq->wpeer, &fin, NULL, 0);
        }
        /* the probe passed but the read failed: fall back for this pair */
    }
    if (h->len == 0) {
        wh_hdr_t fin = {.type = WH_SHM_FIN, .ctx = h->ctx, .src = h->src, .tag = h->tag, .sreq = h->sreq};
        wh_req_recv_done(rreq);
        return wh_send_ctrl(WH_CHAN_SHM, rreq->wpeer, &fin, NULL, 0);
    }
    wh_hdr_t cts = {.type = WH_SHM_CTS, .ctx = h->ctx, .src = h->src, .tag = h->tag, .sreq = h->sreq};
    uint64_t rid = wh_req_id(rreq);
    return wh_send_ctrl(WH_CHAN_SHM, rreq->wpeer, &cts, &rid, sizeof rid);
}

/* Push DATA cells of active rendezvous sends while cells are free. */
int wh_shm_stream_push(void)
{
    int n = 0;
    for (int i = 0; i < wh_shm.npeers; i++) {
        int lp = wh_shm.peers[i];
        wh_req_t *s;
        while ((s = wh_shm.stream_head[lp])) {
            wh_shm_cell_t *c = wh_shm_cell(wh_shm.txq[lp], wh_shm.tx_idx[lp]);
            if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != 0)
                break;
            size_t left = s->bytes - s->xfer_off;
            size_t len = left < wh_shm.cell_payload ? left : wh_shm.cell_payload;
            if (s->dt->contig)
                memcpy(c->payload, (const char *)s->buf + s->dt->true_lb + s->xfer_off, len);
            else
                wh_dtype_pack(s->buf, (size_t)s->count, s->dt, s->xfer_off, c->payload, len);
            c->hdr.type = WH_SHM_DATA;
            c->hdr.sreq = s->remote;
            c->hdr.len = s->bytes;
            c->aux = s->xfer_off;
            c->plen = (uint32_t)len;
            __atomic_store_n(&c->state, 1, __ATOMIC_RELEASE);
            wh_shm.tx_idx[lp]++;
            s->xfer_off += len;
            n++;
            if (s->xfer_off == s->bytes) {
                wh_shm.stream_head[lp] = s->next;
                if (!s->next)
                    wh_shm.stream_tail[lp] = NULL;
                s->next = NULL;
                wh_shm.nstreams--;
                wh_req_send_done(s);
            }
        }
    }
    return n;
}

int wh_shm_handle_chan(int lp, wh_shm_cell_t *c)
{
    switch (c->hdr.type) {
    case WH_SHM_CTS: {
        wh_req_t *s = wh_req_from_id(c->hdr.sreq);
        uint64_t rid;
        if (!s || c->plen < sizeof rid) {
            WH_ERRLOG("shm", "CTS for unknown request %llu", (unsigned long long)c->hdr.sreq);
            return 0;
        }
        memcpy(&rid, c->payload, sizeof rid);
        s->remote = rid;
        s->xfer_off = 0;
        stream_add(lp, s);
        return 1;
    }
    case WH_SHM_DATA: {
        wh_req_t *r = wh_req_from_id(c->hdr.sreq);
        if (!r) {
            WH_ERRLOG("shm", "DATA for unknown request %llu", (unsigned long long)c->hdr.sreq);
            return 0;
        }
        size_t off = c->aux, len = c->plen;
        if (off < r->bytes) {
            size_t n = len < r->bytes - off ? len : r->bytes - off;
            if (r->dt->contig)
                memcpy((char *)r->buf + r->dt->true_lb + off, c->payload, n);
            else
                wh_dtype_unpack(r->buf, (size_t)r->count, r->dt, off, c->payload, n);
        }
        r->xfer_off += len;
        if (r->xfer_off >= r->msg_len)
            wh_req_recv_done(r);
        return 1;
    }
    case WH_SHM_FIN: {
        wh_req_t *s = wh_req_from_id(c->hdr.sreq);
        if (s)
            wh_req_send_done(s);
        return 1;
    }
    default:
        WH_ERRLOG("shm", "unknown cell type %u from local rank %d", c->hdr.type, lp);
        return 0;
    }
}
