/* Single copy by both ranks at once (WH_PROTO_SPLIT): a large rendezvous
 * between co-resident ranks where the receiver can read the sender's buffer
 * and the sender write the receiver's, each by CMA or, for a buffer in the
 * node-shared heap (MPI_Alloc_mem), by its region offset (the shm channel's
 * WH_SHM_KEY_HEAP: so also between containers without a shared PID
 * namespace).
 *
 * A plain single-copy get leaves the whole copy to the receiver, at the speed
 * one cpu copies out of cache, while the sender's cpu waits idle in its send
 * (2 ranks, 1-4 MiB: 4.6-5.5 GB/s streamed, where the two-copy pipeline
 * through the slots, both cpus copying, streams 9-10 GB/s).  Here the
 * receiver takes one of its split lines (shm.h), sends the CTS naming it and
 * its buffer, and both sides claim chunks of half the message (at least 32 KiB, at most
 * WHARF_CMA_SPLIT_CHUNK) at a time from the line's counter: the receiver reads them from the sender
 * (process_vm_readv, or loads from the heap), the sender writes them into the receiver
 * (process_vm_writev, or stores), each adding what it copied to the line's `done`.
 * Still one copy per byte, so no cpu time is added where both ranks are busy
 * (a rank exchanging in both directions copies half of each message); a
 * sender that is not in MPI claims nothing and the receiver copies it all,
 * as before.  The receiver completes when `done` reaches the length and
 * sends FIN, which completes the send.  Not where the node runs more ranks
 * than cpus (a sender descheduled inside its chunk would hold the receiver). */
#include <string.h>

#include "chan/shm/shm.h"
#include "locality/nodeheap.h"
#include "proto/proto.h"
#include "util/log.h"
#include "util/tunables.h"

#define OFF_MASK ((UINT64_C(1) << 40) - 1)
#define SPLIT_HEAP 0x80u /* in a CTS's aux, beside the line: its token is a node-heap offset */

static wh_req_t *waiting; /* receives whose sender still copies, linked by next */
static int nwaiting;

/* claim the next chunk of line L (generation gen, len bytes); 0 when none is left */
static int claim(wh_shm_split_t *L, uint64_t gen, size_t len, size_t *off, size_t *n)
{
    /* half the message, so that two ranks that start together take one each,
     * within [32 KiB, WHARF_CMA_SPLIT_CHUNK] (a process_vm_* call per chunk) */
    size_t chunk = len / 2, cmax = wh_tun.cma_split_chunk > (32u << 10) ? wh_tun.cma_split_chunk : (32u << 10);
    chunk = chunk < (32u << 10) ? (32u << 10) : chunk > cmax ? cmax : chunk;
    uint64_t c = __atomic_load_n(&L->claim, __ATOMIC_ACQUIRE);
    for (;;) {
        uint64_t o = c & OFF_MASK;
        if (c >> 40 != gen || o >= len)
            return 0;
        uint64_t k = len - o < chunk ? len - o : chunk;
        if (__atomic_compare_exchange_n(&L->claim, &c, c + k, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *off = (size_t)o;
            *n = (size_t)k;
            return 1;
        }
    }
}

static void noop_done(wh_comp_t *c, int err) { (void)c, (void)err; }

/* copy the chunks this side can claim: get from (receiver) or put into
 * (sender) the peer's contiguous buffer at raddr.  A sender whose write
 * fails (CMA refused that way: a Yama or seccomp policy may allow only
 * reads) hands the chunk back to the receiver and stops helping; a receiver
 * whose read fails marks the transfer failed (as a plain get would). */
static void copy_chunks(wh_req_t *r, wh_shm_split_t *L, uint64_t gen, size_t len, int wpeer, uint64_t raddr,
                        uint64_t rkey, int put)
{
    wh_comp_t comp = {noop_done};
    size_t off, n;
    while (claim(L, gen, len, &off, &n)) {
        wh_data_t d;
        wh_req_data(r, off, n, &d);
        int rc = put ? wh_chans[WH_CHAN_SHM]->put_zcopy(wpeer, raddr + off, rkey, &d, &comp)
                     : wh_chans[WH_CHAN_SHM]->get_zcopy(wpeer, raddr + off, rkey, &d, &comp);
        if (rc != MPI_SUCCESS && put) {
            WH_DEBUG("proto", "split transfer to rank %d: writing %zu bytes at %zu failed; it reads them", wpeer, n,
                     off);
            L->back_off = off;
            __atomic_store_n(&L->back_len, (uint64_t)n, __ATOMIC_RELEASE);
            return;
        }
        if (rc != MPI_SUCCESS)
            __atomic_store_n(&L->err, 1, __ATOMIC_RELAXED); /* its bytes count as done: the receiver fails it */
        __atomic_add_fetch(&L->done, (uint64_t)n, __ATOMIC_RELEASE);
    }
}

/* receiver: copy a chunk the sender handed back; 1 once every byte is in */
static int recv_done(wh_req_t *r)
{
    wh_shm_split_t *L = r->extra;
    uint64_t n = __atomic_load_n(&L->back_len, __ATOMIC_ACQUIRE);
    if (n) {
        wh_comp_t comp = {noop_done};
        wh_data_t d;
        size_t off = (size_t)L->back_off;
        L->back_len = 0;
        wh_req_data(r, off, (size_t)n, &d);
        if (wh_chans[WH_CHAN_SHM]->get_zcopy(r->wpeer, L->saddr + off, L->srkey, &d, &comp) != MPI_SUCCESS)
            L->err = 1;
        __atomic_add_fetch(&L->done, n, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&L->done, __ATOMIC_ACQUIRE) >= r->xfer_len;
}

static void recv_finish(wh_req_t *r)
{
    wh_shm_split_t *L = r->extra;
    if (__atomic_load_n(&L->err, __ATOMIC_RELAXED) && !r->err)
        r->err = wh_error(MPI_ERR_OTHER, "single-copy transfer of %zu bytes with rank %d failed (CMA refused)",
                          r->xfer_len, r->wpeer);
    L->busy = 0;
    r->extra = NULL;
    wh_hdr_t fin = {.type = wh_p2p_am.fin, .sreq = r->remote};
    int rc = wh_send_ctrl(r->chan, r->wpeer, &fin, NULL, 0);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc;
    wh_req_recv_done(r);
}

static int poll_waiting(void)
{
    int n = 0;
    for (wh_req_t **pp = &waiting; *pp;) {
        wh_req_t *r = *pp;
        if (!recv_done(r)) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        r->next = NULL;
        nwaiting--;
        recv_finish(r);
        n++;
    }
    return n;
}

int wh_split_recv(wh_req_t *r, int wpeer, uint64_t saddr, uint64_t srkey, const char *dst, size_t n)
{
    /* every rule of a split in one place: the size, a node not
     * oversubscribed, a pair where the receiver can read the sender's buffer
     * and the sender write the receiver's (each by CMA, or through the node
     * heap where that buffer lies there: the sender checks its own writes
     * again at the CTS), the lines set up */
    unsigned cma = wh_shm_cma(wpeer);
    uint64_t doff = 0;
    int sheap = srkey == WH_SHM_KEY_HEAP, dheap = wh_tun.region_copy && wh_node_locate(dst, n, &doff);
    if (!wh_tun.cma_split || n < wh_tun.cma_split || n > OFF_MASK || wh_job.oversubscribed || !wh_shm.split ||
        (!sheap && (!saddr || !(cma & WH_CMA_CAN_READ))) || (!dheap && !(cma & WH_CMA_CAN_WRITE)))
        return -1; /* (a read that failed since: the get falls back to the pipelined copy) */
    if (sheap && !wh_node_range(saddr, n))
        return -1; /* (an offset naming no allocated heap memory here: the get refuses it too) */
    if (!sheap && !(cma & WH_CMA_READ_SEEN)) {
        /* The probe read one word at init; a policy (or a fault) may still
         * refuse data reads.  The sender starts writing at the CTS, so a
         * refusal found after it could not fall back: read a few bytes
         * first, once per peer.  Refused: the get finds the pair's reads
         * off and the transfer takes the pipelined copy. */
        unsigned char probe[64];
        wh_data_t pd = {.base = (char *)probe, .len = n < sizeof probe ? n : sizeof probe, .mem = WH_MEM_HOST};
        wh_comp_t pc = {noop_done};
        if (wh_chans[WH_CHAN_SHM]->get_zcopy(wpeer, saddr, srkey, &pd, &pc) != MPI_SUCCESS)
            return -1;
    }
    wh_shm_split_t *L = NULL;
    unsigned i;
    for (i = 0; i < WH_SHM_SPLIT_LINES; i++)
        if (!wh_shm_split_line(wh_shm.me, i)->busy) {
            L = wh_shm_split_line(wh_shm.me, i);
            break;
        }
    if (!L || wh_progress_hook_add(poll_waiting, &nwaiting) != MPI_SUCCESS)
        return -1;
    uint64_t gen = ((__atomic_load_n(&L->claim, __ATOMIC_RELAXED) >> 40) + 1) & 0xffffff;
    L->busy = 1;
    L->done = 0;
    L->err = 0;
    L->saddr = saddr;
    L->srkey = srkey;
    L->back_len = 0;
    __atomic_store_n(&L->claim, gen << 40, __ATOMIC_RELEASE);
    r->rproto = WH_PROTO_SPLIT;
    r->extra = L;
    wh_cts_t cts = {.rreq = wh_req_id(r), .token = dheap ? doff : (uint64_t)(uintptr_t)dst, .proto = WH_PROTO_SPLIT,
                    .aux = i | (dheap ? SPLIT_HEAP : 0u) | (uint32_t)gen << 8};
    wh_hdr_t c = {.type = wh_p2p_am.cts, .len = n, .sreq = r->remote};
    int rc = wh_send_ctrl(r->chan, wpeer, &c, &cts, sizeof cts);
    if (rc != MPI_SUCCESS && !r->err)
        r->err = rc; /* the sender never comes: this side copies it all */
    copy_chunks(r, L, gen, n, wpeer, saddr, srkey, 0);
    if (recv_done(r)) {
        recv_finish(r);
        return 0;
    }
    r->next = waiting;
    waiting = r;
    nwaiting++;
    return 0;
}

void wh_split_send(wh_req_t *s, int wpeer, const wh_cts_t *cts)
{
    int lp = wh_job.local_index[wpeer];
    unsigned i = cts->aux & (SPLIT_HEAP - 1);
    int heap = (cts->aux & SPLIT_HEAP) != 0; /* the token is the receiver's node-heap offset */
    s->rproto = WH_PROTO_SPLIT; /* the receiver's FIN completes it */
    if (lp < 0 || i >= WH_SHM_SPLIT_LINES || !wh_shm.split) {
        WH_ERRLOG("proto", "split transfer from rank %d names line %u of an unknown pool: it copies alone", wpeer, i);
        return;
    }
    if (!heap && !(wh_shm_cma(wpeer) & WH_CMA_CAN_WRITE))
        return; /* this rank may not write into that one (its probe, or a write that failed): it copies alone */
    copy_chunks(s, wh_shm_split_line(lp, i), cts->aux >> 8, s->xfer_len, wpeer, cts->token, heap ? WH_SHM_KEY_HEAP : 0,
                1);
}
