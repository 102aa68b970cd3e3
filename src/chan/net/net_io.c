/* Network channel, control path: send bounce buffers, the send queue for
 * operations the provider refused with -FI_EAGAIN, pre-posted receive buffers,
 * completion handling and the in-order hand-up of inbound headers. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chan/net/net.h"
#include "core/core.h"
#include "chan/am.h"
#include "util/log.h"
#include "util/tunables.h"

#define TX_SLAB 16     /* small send buffers allocated at a time */
#define TX_SLAB_BIG 4  /* large ones */
#define RX_BIG_MIN 4   /* posted large receive buffers: WHARF_NET_RX_BUFS / 8, at least this many */
#define CQ_BATCH 16
#define CQ_ROUNDS 4    /* batches read per progress call at most */

typedef struct tx_slab {
    struct tx_slab *next;
    char *mem;
    wh_net_op_t ops[TX_SLAB];
} tx_slab_t;

/* Control messages come in two classes, each with its own tag, posted receive buffers and
 * send buffers: small ones (the whole message within WH_NET_SMALL_BUF bytes: every protocol
 * message and small eager data) and large eager messages up to ctrl_cap, so that the
 * memory posted for the many small buffers does not grow with the eager limit. */
static size_t bufsize(int big)
{
    return (WH_NET_PL_OFF + (big ? wh_net.ctrl_cap : wh_net.small_cap) + 63) & ~(size_t)63;
}

#define CTRL_TAG(big) ((uint64_t)(big)) /* matched exactly (bulk tags have the bulk bit set) */

/* ---------- send bounce buffers ---------- */

static int tx_grow(int big)
{
    tx_slab_t *s = calloc(1, sizeof *s);
    size_t bs = bufsize(big);
    int n = big ? TX_SLAB_BIG : TX_SLAB;
    if (!s)
        return -1;
    if (posix_memalign((void **)&s->mem, 64, bs * (size_t)n)) {
        free(s);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        wh_net_op_t *op = &s->ops[i];
        op->kind = WH_NET_OP_TX;
        op->big = (uint8_t)big;
        op->buf = s->mem + (size_t)i * bs;
        op->next = wh_net.tx_free[big];
        wh_net.tx_free[big] = op;
    }
    s->next = wh_net.tx_slabs;
    wh_net.tx_slabs = s;
    wh_net.tx_count += n;
    return 0;
}

/* internal = 1: may exceed the pool limit (never WH_AGAIN) */
static wh_net_op_t *tx_get(int big, int internal)
{
    if (!wh_net.tx_free[big] && ((wh_net.tx_count >= wh_net.tx_max && !internal) || tx_grow(big)))
        return NULL;
    wh_net_op_t *op = wh_net.tx_free[big];
    wh_net.tx_free[big] = op->next;
    wh_net.tx_busy++;
    return op;
}

static void tx_put(wh_net_op_t *op)
{
    op->posted = 0;
    op->next = wh_net.tx_free[op->big];
    wh_net.tx_free[op->big] = op;
    wh_net.tx_busy--;
}

/* ---------- posting and the send queue ---------- */

/* 0 when posted (or done: an injected send is released at once). */
static ssize_t post_op(wh_net_op_t *op)
{
    ssize_t rc;
    switch (op->kind) {
    case WH_NET_OP_RX:
        rc = fi_trecv(wh_net.ep, op->buf, bufsize(op->big), NULL, FI_ADDR_UNSPEC, CTRL_TAG(op->big), 0, &op->fctx);
        break;
    case WH_NET_OP_TX: {
        fi_addr_t a = wh_net.peers[op->peer].addr;
        if (op->len <= wh_net.inject_max) {
            rc = fi_tinject(wh_net.ep, op->buf, op->len, a, CTRL_TAG(op->big));
            if (rc == 0)
                tx_put(op);
            return rc;
        }
        rc = fi_tsend(wh_net.ep, op->buf, op->len, NULL, a, CTRL_TAG(op->big), &op->fctx);
        break;
    }
    default:
        rc = wh_net_bulk_post(op);
        break;
    }
    if (rc == 0)
        op->posted = 1;
    return rc;
}

static void op_failed(wh_net_op_t *op, int rc)
{
    switch (op->kind) {
    case WH_NET_OP_RX:
        WH_ERRLOG("net", "cannot post a receive buffer: %s", fi_strerror(-rc));
        break;
    case WH_NET_OP_TX: {
        const wh_hdr_t *h = (const wh_hdr_t *)(op->buf + WH_NET_HDR_OFF);
        WH_ERRLOG("net", "send of a type %d message (%zu bytes) to rank %d failed: %s", h->type, op->len, op->peer,
                  fi_strerror(-rc));
        tx_put(op);
        break;
    }
    default:
        op->posted = 0;
        wh_net_bulk_done(op, rc);
        break;
    }
}

static void enqueue(wh_net_op_t *op)
{
    op->next = NULL;
    if (wh_net.q_tail)
        wh_net.q_tail->next = op;
    else
        wh_net.q_head = op;
    wh_net.q_tail = op;
    wh_net.queued++;
}

/* Everything goes through one FIFO once anything waits, so operations to a
 * peer leave in the order they were submitted. */
void wh_net_submit(wh_net_op_t *op)
{
    if (!wh_net.q_head) {
        ssize_t rc = post_op(op);
        if (rc == 0)
            return;
        if (rc != -FI_EAGAIN) {
            op_failed(op, (int)rc);
            return;
        }
        wh_net.n_eagain++;
    }
    enqueue(op);
}

static int queue_push(void)
{
    int n = 0;
    while (wh_net.q_head) {
        wh_net_op_t *op = wh_net.q_head;
        wh_net.q_head = op->next;
        if (!wh_net.q_head)
            wh_net.q_tail = NULL;
        wh_net.queued--;
        ssize_t rc = post_op(op);
        if (rc == -FI_EAGAIN) {
            op->next = wh_net.q_head;
            wh_net.q_head = op;
            if (!wh_net.q_tail)
                wh_net.q_tail = op;
            wh_net.queued++;
            break;
        }
        if (rc)
            op_failed(op, (int)rc);
        n++;
    }
    return n;
}

/* ---------- outbound control messages ---------- */

int wh_net_ctrl_take(int wpeer, size_t plen, int internal, wh_net_op_t **out)
{
    if (!wh_net.open)
        return wh_error(MPI_ERR_OTHER, "network channel is not open");
    if (wpeer < 0 || wpeer >= wh_net_npeers() || wh_net.peers[wpeer].addr == FI_ADDR_NOTAVAIL)
        return wh_error(MPI_ERR_OTHER, "network channel: rank %d has no network endpoint", wpeer);
    if (plen > wh_net.ctrl_cap)
        return wh_error(MPI_ERR_INTERN, "network channel: message of %zu bytes exceeds the eager limit %zu", plen,
                        wh_net.ctrl_cap);
    wh_net_op_t *op = tx_get(plen > wh_net.small_cap, internal);
    if (!op)
        return internal ? wh_error(MPI_ERR_NO_MEM, "network channel: out of memory for a send buffer") : WH_AGAIN;
    op->peer = wpeer;
    op->len = WH_NET_PL_OFF + plen;
    *out = op;
    return MPI_SUCCESS;
}

/* Header copy with the pair's sequence number, then post or queue. */
void wh_net_ctrl_commit(wh_net_op_t *op, const wh_hdr_t *h)
{
    wh_net_peer_t *p = &wh_net.peers[op->peer];
    wh_net_pre_t pre = {.rank = wh_net.gid, .seq = p->tx_seq++, .token = p->token};
    memcpy(op->buf, &pre, sizeof pre);
    memcpy(op->buf + WH_NET_HDR_OFF, h, sizeof *h);
    wh_net_submit(op);
}

int wh_net_am_send(int wpeer, const wh_hdr_t *h, const wh_data_t *d)
{
    size_t len = d ? d->len : 0;
    wh_net_op_t *op = NULL;
    int rc = wh_net_ctrl_take(wpeer, len, 0, &op);
    if (rc)
        return rc;
    if (len && (rc = wh_data_out(d, 0, op->buf + WH_NET_PL_OFF, len))) {
        tx_put(op);
        return rc;
    }
    wh_net_ctrl_commit(op, h);
    return MPI_SUCCESS;
}

/* ---------- inbound control messages ---------- */

/* data: a whole control message (prefix, header, payload) of len bytes */
static void dispatch(int peer, const char *data, size_t len)
{
    const wh_hdr_t *h = (const wh_hdr_t *)(data + WH_NET_HDR_OFF);
    const char *pl = data + WH_NET_PL_OFF;
    size_t plen = len - WH_NET_PL_OFF;
    wh_net.peers[peer].rx_seq++;
    wh_am_dispatch(WH_CHAN_NET, peer, h, pl, plen);
}

/* Keep a message that overtook an earlier one (list sorted by seq).  Holding
 * its buffer is free, and safe while most buffers stay posted (with rxm the
 * late message already has its buffer: only its completion is late); past
 * half of them, copy and repost. */
static void stash(wh_net_peer_t *p, uint16_t seq, wh_net_op_t *op, size_t len)
{
    int hold = wh_net.rx_held[op->big] < wh_net.nrx[op->big] / 2;
    wh_net_stash_t *s = malloc(sizeof *s + (hold ? 0 : len));
    if (!s) {
        /* cannot keep it: the pair's order would break, so the job cannot go on */
        WH_ERRLOG("net", "out of memory holding an out-of-order message from rank %d", (int)(p - wh_net.peers));
        wh_job_abort(1, "network channel: out of memory holding an out-of-order message");
    }
    s->seq = seq;
    s->len = len;
    if (hold) {
        s->op = op;
        s->data = op->buf;
        wh_net.rx_held[op->big]++;
    } else {
        s->op = NULL;
        s->data = s->copy;
        memcpy(s->copy, op->buf, len);
        wh_net_submit(op);
    }
    int16_t d = (int16_t)(seq - p->rx_seq);
    wh_net_stash_t **pp = &p->stash;
    while (*pp && (int16_t)((*pp)->seq - p->rx_seq) < d)
        pp = &(*pp)->next;
    s->next = *pp;
    *pp = s;
    wh_net.n_reordered++;
}

static double now(void);

/* An inbound message that does not carry this endpoint's token, or is too
 * short to: someone outside the job (or a stale endpoint) reached us.  Drop
 * it without reading further; warn about the first 3, then at most one
 * summary every 10 s (and one at close). */
static void rx_drop(wh_net_op_t *op, size_t len)
{
    uint64_t n = ++wh_net.n_dropped;
    if (n <= 3) {
        WH_WARN("net", "dropped a %zu-byte message without this job's endpoint token (not from a rank of the job)",
                len);
        wh_net.n_dropped_logged = n;
        wh_net.drop_warned = now();
    } else {
        double t = now();
        if (t - wh_net.drop_warned >= 10.0) {
            WH_WARN("net", "dropped %llu more messages without this job's endpoint token (%llu in all)",
                    (unsigned long long)(n - wh_net.n_dropped_logged), (unsigned long long)n);
            wh_net.n_dropped_logged = n;
            wh_net.drop_warned = t;
        }
    }
    wh_net_submit(op);
}

static void rx_done(wh_net_op_t *op, size_t len)
{
    wh_net_pre_t pre;
    memcpy(&pre, op->buf, sizeof pre);
    /* the token first: nothing of an unauthenticated message is looked at */
    if (__builtin_expect(len < WH_NET_PL_OFF || pre.token != wh_net.token, 0)) {
        rx_drop(op, len);
        return;
    }
    int peer = (int)(pre.rank - (wh_net.gid - (uint32_t)wh_net.rank)); /* same group: the world rank */
    if (__builtin_expect(pre.rank - (wh_net.gid - (uint32_t)wh_net.rank) >= (uint32_t)wh_net.size, 0) &&
        (peer = wh_net_peer_of_gid(pre.rank)) < 0) { /* a process of another group */
        rx_drop(op, len);
        return;
    }
    wh_net_peer_t *p = &wh_net.peers[peer];
    uint16_t seq = pre.seq;
    if (seq != p->rx_seq) {
        WH_TRACE("net", "message %u (%zu bytes) from rank %d arrived while expecting %u", seq, len, peer, p->rx_seq);
        stash(p, seq, op, len);
        return;
    }
    if (p->stash)
        WH_TRACE("net", "late message %u (%zu bytes) from rank %d", seq, len, peer);
    dispatch(peer, op->buf, len);
    wh_net_submit(op); /* repost only now: the payload was in this buffer */
    while (p->stash && p->stash->seq == p->rx_seq) {
        wh_net_stash_t *s = p->stash;
        p->stash = s->next;
        dispatch(peer, s->data, s->len);
        if (s->op) {
            wh_net.rx_held[s->op->big]--;
            wh_net_submit(s->op);
        }
        free(s);
    }
}

/* ---------- completions ---------- */

static void on_completion(const struct fi_cq_tagged_entry *e)
{
    wh_net_op_t *op = e->op_context;
    if (!op)
        return;
    op->posted = 0;
    switch (op->kind) {
    case WH_NET_OP_RX:
        rx_done(op, e->len);
        break;
    case WH_NET_OP_TX:
        tx_put(op);
        break;
    case WH_NET_OP_BRECV:
        wh_net_bulk_done(op, e->len == op->len ? 0 : -FI_ETRUNC);
        break;
    case WH_NET_OP_RMA:
        wh_net_rma_done(op, 0);
        break;
    default:
        wh_net_bulk_done(op, 0);
        break;
    }
}

static void on_error(void)
{
    struct fi_cq_err_entry err;
    memset(&err, 0, sizeof err);
    if (fi_cq_readerr(wh_net.cq, &err, 0) != 1)
        return;
    wh_net_op_t *op = err.op_context;
    if (!op)
        return;
    op->posted = 0;
    if (err.err == FI_ECANCELED)
        return;
    if (op->kind == WH_NET_OP_RX) { /* e.g. truncated: no rank of the job sends more than a buffer */
        rx_drop(op, err.len);
        return;
    }
    if (op->kind == WH_NET_OP_RMA) {
        wh_net_rma_done(op, -(int)err.err); /* it logs */
        return;
    }
    char pe[256];
    const char *pes = fi_cq_strerror(wh_net.cq, err.prov_errno, err.err_data, pe, sizeof pe);
    static const char *const kinds[] = {"?", "control receive", "control send", "bulk send", "bulk receive"};
    WH_ERRLOG("net", "%s (rank %d) failed: %s (%s)", kinds[op->kind <= 4 ? op->kind : 0],
              op->kind == WH_NET_OP_RX ? -1 : op->x ? op->x->peer : op->peer, fi_strerror(err.err),
              pes ? pes : "");
    switch (op->kind) {
    case WH_NET_OP_RX:
        wh_net_submit(op);
        break;
    case WH_NET_OP_TX:
        tx_put(op);
        break;
    default:
        wh_net_bulk_done(op, -(int)err.err);
        break;
    }
}

static int read_cq(void)
{
    struct fi_cq_tagged_entry ev[CQ_BATCH];
    int n = 0;
    for (int round = 0; round < CQ_ROUNDS; round++) {
        ssize_t k = fi_cq_read(wh_net.cq, ev, CQ_BATCH);
        if (k > 0) {
            for (ssize_t i = 0; i < k; i++)
                on_completion(&ev[i]);
            n += (int)k;
            if (k < CQ_BATCH)
                break;
        } else if (k == -FI_EAVAIL) {
            on_error();
            n++;
        } else {
            if (k != -FI_EAGAIN) {
                static int logged;
                if (!logged++)
                    WH_ERRLOG("net", "fi_cq_read: %s", fi_strerror((int)-k));
            }
            break;
        }
    }
    return n;
}

int wh_net_progress(void)
{
    if (!wh_net.open || wh_net.in_progress)
        return 0;
    wh_net.in_progress = 1;
    int n = read_cq();
    if (wh_net.q_head)
        n += queue_push();
    if (n)
        wh_net.idle = 0;
    else if (++wh_net.idle > 16 && wh_net.auto_progress)
        sched_yield(); /* waiting: leave the cpu to the provider's progress thread */
    wh_net.in_progress = 0;
    return n;
}

/* ---------- setup, drain, teardown ---------- */

int wh_net_io_init(void)
{
    wh_net.small_cap = WH_NET_PL_OFF + wh_net.ctrl_cap <= WH_NET_SMALL_BUF ? wh_net.ctrl_cap
                                                                          : WH_NET_SMALL_BUF - WH_NET_PL_OFF;
    size_t bs0 = bufsize(0), bs1 = bufsize(1);
    wh_net.tx_max = wh_tun.net_tx_bufs > TX_SLAB ? wh_tun.net_tx_bufs : TX_SLAB;
    int n0 = wh_net.nrx[0] = wh_tun.net_rx_bufs > 0 ? wh_tun.net_rx_bufs : 1;
    int n1 = wh_net.nrx[1] = wh_net.ctrl_cap > wh_net.small_cap ? (n0 / 8 > RX_BIG_MIN ? n0 / 8 : RX_BIG_MIN) : 0;
    wh_net.rx = calloc((size_t)(n0 + n1), sizeof *wh_net.rx);
    if (!wh_net.rx || posix_memalign((void **)&wh_net.rxmem, 64, bs0 * (size_t)n0 + bs1 * (size_t)n1))
        return -FI_ENOMEM;
    for (int i = 0; i < n0 + n1; i++) {
        wh_net_op_t *op = &wh_net.rx[i];
        op->kind = WH_NET_OP_RX;
        op->big = i >= n0;
        op->buf = wh_net.rxmem + (i < n0 ? (size_t)i * bs0 : (size_t)n0 * bs0 + (size_t)(i - n0) * bs1);
        ssize_t rc = post_op(op);
        if (rc == -FI_EAGAIN)
            enqueue(op);
        else if (rc)
            return (int)rc;
    }
    return 0;
}

void wh_net_io_finalize(void)
{
    free(wh_net.rx);
    free(wh_net.rxmem);
    wh_net.rx = NULL;
    wh_net.rxmem = NULL;
    for (tx_slab_t *s = wh_net.tx_slabs, *nx; s; s = nx) {
        nx = s->next;
        free(s->mem);
        free(s);
    }
    wh_net.tx_slabs = NULL;
    wh_net.tx_free[0] = wh_net.tx_free[1] = NULL;
    for (int r = 0; wh_net.peers && r < wh_net.npeers_cap; r++) {
        for (wh_net_stash_t *s = wh_net.peers[r].stash, *nx; s; s = nx) {
            nx = s->next;
            free(s);
        }
        wh_net.peers[r].stash = NULL;
    }
    wh_net.q_head = wh_net.q_tail = NULL;
}

/* The last word on dropped messages (close). */
void wh_net_drop_summary(void)
{
    if (wh_net.n_dropped > wh_net.n_dropped_logged)
        WH_WARN("net", "dropped %llu messages without this job's endpoint token in all",
                (unsigned long long)wh_net.n_dropped);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Push out queued and in-flight sends (finalize): eager sends completed for
 * the user when they were copied, so they may still sit here. */
int wh_net_drain(double seconds)
{
    double end = now() + seconds;
    while ((wh_net.q_head || wh_net.tx_busy) && now() < end) {
        if (!wh_net_progress())
            sched_yield();
    }
    if (wh_net.q_head || wh_net.tx_busy) {
        WH_WARN("net", "%d sends still pending after %.0f s at finalize", wh_net.queued + wh_net.tx_busy, seconds);
        return -1;
    }
    return 0;
}
