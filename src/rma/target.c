/* Target side: the handlers of rma.op (apply puts and accumulates, answer
 * gets) and rma.ctl (locks, flushes, post/complete), and the origin's view of
 * acknowledgements.  Handlers never block: replies go out through
 * wh_rma_send, which queues them when the channel is busy. */
#include <stdlib.h>
#include <string.h>

#include "mem/mem.h"
#include "rma/rma.h"
#include "util/log.h"

static wh_win_t *win_of(const wh_hdr_t *h)
{
    wh_win_t *w = wh_win_get(WH_HMAKE(WH_HK_INDIRECT, WH_H_WIN, h->ctx));
    if (!w)
        WH_WARN("rma", "one-sided message for window id %u, which does not exist here (dropped)", (unsigned)h->ctx);
    return w;
}

/* Address of span bytes at tbase + off of my window, NULL if outside it;
 * *dev: the memory is device memory (an access across attached regions of
 * both kinds is refused as out of range). */
static char *target_addr(wh_win_t *w, uint64_t tbase, int64_t off, size_t span, int *dev)
{
    *dev = w->dev && w->flavor != MPI_WIN_FLAVOR_DYNAMIC;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* inside attached memory: one region, or regions attached back to back (MPICH accepts
         * an access across adjacent regions; its rma/win_dynamic_rma_flush_get does that) */
        char *a = (char *)(uintptr_t)(tbase + (uint64_t)off), *at = a;
        size_t left = span;
        int kind = -1;
        for (int found = 1; found;) {
            found = 0;
            for (wh_win_region_t *r = w->regions; r; r = r->next)
                if (at >= r->base && at - r->base < (ptrdiff_t)r->size + (left == 0)) {
                    if (kind >= 0 && kind != r->dev)
                        return NULL;
                    *dev = kind = r->dev;
                    size_t in = r->size - (size_t)(at - r->base);
                    if (left <= in)
                        return a;
                    left -= in;
                    at += in;
                    found = 1;
                    break;
                }
        }
        return NULL;
    }
    int64_t lo = (int64_t)tbase + off;
    if (lo < 0 || (uint64_t)lo > (uint64_t)w->size || span > (uint64_t)w->size - (uint64_t)lo)
        return NULL;
    return (char *)w->base + lo;
}

/* handlers' temporaries: grown as needed, kept (handlers run one at a time) */
typedef struct tbuf {
    unsigned char *mem;
    size_t cap;
} tbuf_t;

static char *tbuf_get(tbuf_t *b, size_t n, const char *oom)
{
    if (b->cap < n || !b->mem) {
        free(b->mem);
        if (!(b->mem = malloc(n ? n : 1)))
            wh_job_abort(1, oom);
        b->cap = n;
    }
    return (char *)b->mem;
}

static tbuf_t dev_buf, old_buf, tmp_buf, reply_buf;

/* ---------- device memory ----------
 * Window memory on a device is never mapped, registered or copied into by
 * an origin: every operation comes here, and the handler works on a host copy
 * of the span it touches (copied in unless the operation overwrites all of
 * it, copied back if it changed).  Handlers run one at a time, so accumulates
 * stay atomic per element. */

#define DEV_PIECE ((size_t)1 << 20) /* a get stages at most this much at a time */
/* host view of span bytes of device memory at a (load: with its contents), NULL on failure */
static char *dev_in(char *a, size_t span, int load)
{
    char *h = tbuf_get(&dev_buf, span, "wharf: out of memory staging device window memory");
    if (load && span && wh_mem_copy(h, WH_MEM_HOST, a, wh_mem_query(a), span) != MPI_SUCCESS) {
        WH_WARN("rma", "copy of %zu bytes out of the device window memory at %p failed", span, (void *)a);
        return NULL;
    }
    return h;
}

/* write the host view back; MPI_SUCCESS or an error class */
static int dev_out(char *a, const char *h, size_t span)
{
    if (span && wh_mem_copy(a, wh_mem_query(a), h, WH_MEM_HOST, span) != MPI_SUCCESS) {
        WH_WARN("rma", "copy of %zu bytes into the device window memory at %p failed", span, (void *)a);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

/* ---------- replies ---------- */

typedef struct reply {
    int wpeer;
    int err;          /* error class of a refused access, sent with every message of the reply */
    wh_rma_pfx_t pfx;
    unsigned char *buf;
    size_t cap, pos;
} reply_t;

static void reply_flush(reply_t *r)
{
    if (r->pos == sizeof(wh_rma_pfx_t))
        return;
    memcpy(r->buf, &r->pfx, sizeof r->pfx);
    wh_hdr_t h = {.type = wh_rma_am.reply, .tag = r->err, .len = r->pos};
    int rc = wh_rma_send(r->wpeer, &h, r->buf, r->pos);
    if (rc != MPI_SUCCESS)
        WH_WARN("rma", "reply to rank %d failed: error %d", r->wpeer, rc);
    r->pfx.soff += r->pos - sizeof(wh_rma_pfx_t);
    r->pos = sizeof(wh_rma_pfx_t);
}

static int reply_open(reply_t *r, int wpeer, const wh_rma_pfx_t *req)
{
    size_t cap = wh_rma_max_payload(wpeer);
    unsigned char *buf = (unsigned char *)tbuf_get(&reply_buf, cap,
                                                   "wharf: out of memory answering a one-sided operation");
    r->wpeer = wpeer;
    r->err = 0;
    r->pfx = *req;
    r->pfx.nruns = 0;
    r->buf = buf;
    r->cap = cap;
    r->pos = sizeof(wh_rma_pfx_t);
    return MPI_SUCCESS;
}

/* append n elements of et at addr (packed) to the reply; addr NULL: zeros */
static void reply_add(reply_t *r, const char *addr, size_t n, const wh_dtype_t *et)
{
    size_t esz = et->size, done = 0;
    while (done < n) {
        size_t room = (r->cap - r->pos) / esz;
        if (!room) {
            reply_flush(r);
            continue;
        }
        size_t k = n - done < room ? n - done : room;
        if (!addr)
            memset(r->buf + r->pos, 0, k * esz);
        else if (et->contig)
            memcpy(r->buf + r->pos, addr + done * (size_t)et->extent, k * esz);
        else
            wh_dtype_pack(addr + done * (size_t)et->extent, k, et, 0, r->buf + r->pos, k * esz);
        r->pos += k * esz;
        done += k;
    }
}

/* append n packed bytes to the reply */
static void reply_add_packed(reply_t *r, const char *src, size_t n)
{
    while (n) {
        if (r->pos == r->cap)
            reply_flush(r);
        size_t k = r->cap - r->pos < n ? r->cap - r->pos : n;
        memcpy(r->buf + r->pos, src, k);
        r->pos += k;
        src += k;
        n -= k;
    }
}

/* ---------- operations ---------- */

static char *old_get(size_t n)
{
    return tbuf_get(&old_buf, n, "wharf: out of memory answering a get-accumulate");
}

static void *tmp_get(size_t n)
{
    return tbuf_get(&tmp_buf, n, "wharf: out of memory applying an accumulate");
}

/* apply n elements of packed origin data to addr with op */
static void apply(wh_op_t *op, const char *data, char *addr, size_t n, MPI_Datatype eh, const wh_dtype_t *et)
{
    size_t ext = (size_t)et->extent;
    void *tmp = tmp_get(n * ext);
    if (et->contig)
        memcpy(tmp, data, n * et->size);
    else
        wh_dtype_unpack(tmp, n, et, 0, data, n * et->size);
    int rc = wh_op_apply(op, tmp, addr, n, eh, et);
    if (rc != MPI_SUCCESS)
        WH_WARN("rma", "accumulate failed: error %d", rc);
}

void wh_rma_apply_runs(char *base, const wh_rma_run_t *runs, size_t nruns, const char *data, char *old, wh_op_t *op,
                       MPI_Datatype eh, const wh_dtype_t *et)
{
    size_t esz = et->size;
    for (size_t i = 0; i < nruns; i++) {
        char *a = base + runs[i].off;
        size_t n = runs[i].n;
        if (old) {
            if (et->contig)
                memcpy(old, a, n * esz);
            else
                wh_dtype_pack(a, n, et, 0, old, n * esz);
            old += n * esz;
        }
        if (data) {
            apply(op, data, a, n, eh, et);
            data += n * esz;
        }
    }
}

static void do_cas(wh_win_t *w, int wpeer, const wh_rma_pfx_t *pfx, const unsigned char *d)
{
    const wh_dtype_t *et = wh_dtype_get(pfx->dtype);
    size_t esz = et ? et->size : 0;
    int dev = 0;
    char *a = et ? target_addr(w, pfx->tbase, 0, esz, &dev) : NULL;
    reply_t r;
    reply_open(&r, wpeer, pfx);
    if (!a)
        r.err = MPI_ERR_RMA_RANGE;
    char *m = a; /* device memory: a host copy of the element (no lock word, so the plain path below) */
    if (a && dev && !(m = dev_in(a, esz, 1)))
        r.err = MPI_ERR_OTHER;
    int sgn = 0, abytes = w->lockw ? wh_rma_atomic_class(w, et, &sgn) : 0;
    if (a && abytes && !((uintptr_t)a & (uintptr_t)(abytes - 1))) {
        /* the mechanism co-resident origins use on this element (atomic.c) */
        char old[8];
        wh_rma_atomic_cas_lk(w, w->lockw, a, abytes, d, d + esz, old);
        reply_add_packed(&r, old, esz);
        reply_flush(&r);
        return;
    }
    wh_rma_plain_lock(w, w->lockw); /* an element no atomic touches (misaligned, not an integer) */
    if (et)
        reply_add(&r, m, 1, et);
    if (m && !memcmp(m, d + esz, esz)) {
        memcpy(m, d, esz);
        if (m != a && dev_out(a, m, esz))
            r.err = MPI_ERR_OTHER;
    }
    wh_rma_plain_unlock(w, w->lockw);
    reply_flush(&r);
}

/* apply one operation message; answers (get data, old values) carry access
 * errors themselves, the others leave them for the next ACK */
static void op_apply(wh_win_t *w, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    if (plen < sizeof(wh_rma_pfx_t))
        return;
    int origin = h->src, kind = h->flags;
    if (origin < 0 || origin >= w->size_c)
        return;
    wh_rma_pfx_t pfx;
    memcpy(&pfx, payload, sizeof pfx);
    const unsigned char *p = (const unsigned char *)payload + sizeof pfx;
    if (kind == WH_RMA_CAS) {
        do_cas(w, wpeer, &pfx, p);
        return;
    }
    MPI_Datatype eh = kind >= WH_RMA_ACC ? pfx.dtype : MPI_BYTE;
    const wh_dtype_t *et = wh_dtype_get(eh);
    wh_op_t *op = kind >= WH_RMA_ACC ? wh_op_get(WH_HMAKE(WH_HK_BUILTIN, WH_H_OP, pfx.op)) : NULL;
    if (!et || (kind >= WH_RMA_ACC && !op)) {
        w->tgt_err[origin] = MPI_ERR_INTERN;
        return;
    }
    size_t esz = et->size, ext = (size_t)et->extent;
    const unsigned char *data = p + (size_t)pfx.nruns * sizeof(wh_rma_run_t);
    int hasdata = kind == WH_RMA_PUT || kind == WH_RMA_ACC || (kind == WH_RMA_GACC && op->builtin != WH_OPI_NO_OP);
    int answers = kind == WH_RMA_GET || kind == WH_RMA_GACC;
    reply_t r;
    if (answers)
        reply_open(&r, wpeer, &pfx);
    /* co-residents may apply accumulates to this memory directly: use their
     * mechanism per element (atomic.c) */
    uint32_t *lk = kind >= WH_RMA_ACC ? w->lockw : NULL;
    if (lk) {
        int sgn = 0, abytes = wh_rma_atomic_class(w, et, &sgn);
        for (unsigned i = 0; i < pfx.nruns; i++) {
            wh_rma_run_t run;
            memcpy(&run, p + i * sizeof run, sizeof run);
            size_t span = run.n ? (run.n - 1) * ext + (size_t)et->true_extent : 0;
            int dev;
            char *a = target_addr(w, pfx.tbase, run.off, span, &dev);
            char *old = answers && a ? old_get(run.n * esz) : NULL;
            wh_rma_run_t one = {.off = 0, .n = run.n};
            if (!a && answers)
                r.err = MPI_ERR_RMA_RANGE;
            else if (!a)
                w->tgt_err[origin] = MPI_ERR_RMA_RANGE;
            else
                wh_rma_acc_runs(w, lk, abytes, sgn, a, &one, 1, hasdata ? (const char *)data : NULL, old, op, eh, et);
            if (answers && old)
                reply_add_packed(&r, old, run.n * esz);
            else if (answers)
                reply_add(&r, NULL, run.n, et);
            if (hasdata)
                data += run.n * esz;
        }
        if (answers)
            reply_flush(&r);
        return;
    }
    for (unsigned i = 0; i < pfx.nruns; i++) {
        wh_rma_run_t run;
        memcpy(&run, p + i * sizeof run, sizeof run);
        size_t span = run.n ? (run.n - 1) * ext + (size_t)et->true_extent : 0;
        int dev, err = 0;
        char *a = target_addr(w, pfx.tbase, run.off, span, &dev), *m = a;
        if (a && dev && kind == WH_RMA_GET) { /* bytes: staged a piece at a time, not the whole span at once */
            for (size_t o = 0, k; o < span; o += k) { /* a failed piece: zeros, and the error */
                k = span - o < DEV_PIECE ? span - o : DEV_PIECE;
                char *hv = dev_in(a + o, k, 1);
                if (!hv)
                    r.err = MPI_ERR_OTHER;
                reply_add(&r, hv, k, et);
            }
            continue;
        }
        if (!a)
            err = MPI_ERR_RMA_RANGE;
        else if (dev && !(m = dev_in(a, span, kind != WH_RMA_PUT))) /* a put overwrites the whole span */
            err = MPI_ERR_OTHER;
        if (answers)
            reply_add(&r, m, run.n, et);
        if (m && kind == WH_RMA_PUT)
            memcpy(m, data, run.n);
        else if (m && hasdata)
            apply(op, (const char *)data, m, run.n, eh, et);
        if (m && dev && hasdata)
            err = dev_out(a, m, span);
        if (err && answers)
            r.err = err;
        else if (err)
            w->tgt_err[origin] = err;
        if (hasdata)
            data += run.n * esz;
    }
    if (answers)
        reply_flush(&r);
}

void wh_rma_target_op(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_win_t *w = win_of(h);
    if (!w)
        return;
    op_apply(w, wpeer, h, payload, plen);
    if (h->cid) { /* a flush, unlock or complete rode on the operation (msg.c) */
        wh_hdr_t c = *h;
        c.type = wh_rma_am.ctl;
        c.flags = (uint8_t)h->cid;
        c.cid = 0;
        c.len = 0;
        wh_rma_target_ctl(chan, wpeer, &c, NULL, 0);
    }
}

/* ---------- control ---------- */

static void answer(wh_win_t *w, int wpeer, const wh_hdr_t *req, int sub, int32_t tag)
{
    int rc = wh_rma_answer(w, wpeer, req, sub, tag);
    if (rc != MPI_SUCCESS)
        WH_WARN("rma", "control message to rank %d failed: error %d", wpeer, rc);
}

/* grant queued lock requests in order while they are compatible */
static void lock_grant(wh_win_t *w)
{
    while (w->lk_head) {
        wh_win_lockq_t *q = w->lk_head;
        if (q->excl ? (w->lk_excl || w->lk_shared) : w->lk_excl)
            return;
        w->lk_head = q->next;
        if (!w->lk_head)
            w->lk_tail = NULL;
        if (q->excl)
            w->lk_excl = 1;
        else
            w->lk_shared++;
        answer(w, q->wpeer, &q->req, WH_RC_GRANT, 0);
        free(q);
    }
}

static void ack(wh_win_t *w, int origin, int wpeer, const wh_hdr_t *req)
{
    int err = w->tgt_err[origin];
    w->tgt_err[origin] = 0;
    answer(w, wpeer, req, WH_RC_ACK, err);
}

void wh_rma_target_ctl(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan;
    (void)payload;
    (void)plen;
    wh_win_t *w = win_of(h);
    if (!w)
        return;
    int from = h->src;
    if (from < 0 || from >= w->size_c)
        return;
    switch (h->flags) {
    case WH_RC_LOCK: {
        wh_win_lockq_t *q = malloc(sizeof *q);
        if (!q)
            wh_job_abort(1, "wharf: out of memory queueing a lock request");
        q->next = NULL;
        q->origin = from;
        q->wpeer = wpeer;
        q->req = *h;
        q->excl = h->tag == MPI_LOCK_EXCLUSIVE;
        if (w->lk_tail)
            w->lk_tail->next = q;
        else
            w->lk_head = q;
        w->lk_tail = q;
        lock_grant(w);
        break;
    }
    case WH_RC_UNLOCK:
        if (h->tag == MPI_LOCK_EXCLUSIVE)
            w->lk_excl = 0;
        else if (w->lk_shared > 0)
            w->lk_shared--;
        ack(w, from, wpeer, h);
        lock_grant(w);
        break;
    case WH_RC_FLUSH:
        ack(w, from, wpeer, h);
        break;
    case WH_RC_GRANT:
        __atomic_fetch_add(&w->grants[from], 1, __ATOMIC_RELEASE);
        break;
    case WH_RC_ACK:
        if (h->tag)
            w->remote_err = h->tag;
        __atomic_fetch_add(&w->flush_done[from], 1, __ATOMIC_RELEASE);
        break;
    case WH_RC_POST:
        __atomic_fetch_add(&w->posts[from], 1, __ATOMIC_RELEASE);
        break;
    case WH_RC_COMPLETE:
        __atomic_fetch_add(&w->completes[from], 1, __ATOMIC_RELEASE);
        break;
    default:
        WH_WARN("rma", "unknown one-sided control message %u from rank %d", (unsigned)h->flags, from);
    }
}
