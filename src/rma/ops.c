/* Origin side of one-sided operations: epoch and range checks, the path per
 * target (direct load/store into node-region memory, the channel's zero-copy
 * put/get, or active messages), flattening the target layout into runs, and
 * the operations that wait for replies. */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "chan/chan.h"
#include "coord/coord.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

/* an operation waiting for reply data (GET, GACC, CAS) */
typedef struct rma_pop {
    wh_win_t *win;
    int target;
    void *rbuf;
    size_t rcount;
    wh_dtype_t *rdt;
    size_t expect, got;
    wh_req_t *req;
} rma_pop_t;

static void req_complete(wh_req_t *r)
{
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    if (r->user_freed)
        wh_req_release(r);
    else
        __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
}

static wh_req_t *req_new(void)
{
    wh_req_t *r = wh_req_alloc(WH_REQ_RMA);
    if (!r)
        wh_job_abort(1, "wharf: out of memory creating a one-sided request");
    return r;
}

void wh_rma_origin_reply(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)chan;
    (void)wpeer;
    wh_rma_pfx_t pfx;
    memcpy(&pfx, payload, sizeof pfx);
    rma_pop_t *p = (rma_pop_t *)(uintptr_t)pfx.opid;
    if (h->tag) /* the target refused part of the access: raised by the next flush (sync.c) */
        p->win->remote_err = h->tag;
    size_t n = plen - sizeof pfx;
    if (n && p->rbuf)
        wh_dtype_unpack(p->rbuf, p->rcount, p->rdt, pfx.soff, (const char *)payload + sizeof pfx, n);
    p->got += n;
    if (p->got < p->expect)
        return;
    __atomic_fetch_sub(&p->win->npend[p->target], 1, __ATOMIC_RELEASE);
    if (p->req)
        req_complete(p->req);
    wh_dtype_release(p->rdt);
    free(p);
}

/* ---------- flattening the target layout ---------- */

/* Runs of (count, t) as (byte offset incl. true_lb, elements) for elements of
 * esz packed bytes, ext apart in memory.  Bytes (esz = ext = 1): one run per
 * contiguous block.  Pair types whose packed element is split in memory: one
 * element per iovec group. */
/* the layout is walked at a fake base (never dereferenced; not NULL, whose
 * offsets the sanitizers reject), offsets are taken relative to it */
#define FAKE_BASE ((intptr_t)1 << 40)

static int flatten(size_t count, const wh_dtype_t *t, size_t esz, size_t ext, int split_elems, wh_rma_run_t **out,
                   size_t *nout)
{
    size_t bytes = t->size * count;
    const char *start;
    const void *fb = (const void *)FAKE_BASE;
    if (wh_dtype_is_contig(t, count, fb, &start) && !split_elems) {
        wh_rma_run_t *r = malloc(sizeof *r);
        if (!r)
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        r->off = (int64_t)((intptr_t)start - FAKE_BASE);
        r->n = bytes / esz;
        *out = r;
        *nout = 1;
        return MPI_SUCCESS;
    }
    size_t cap = 16, n = 0;
    wh_rma_run_t *runs = malloc(cap * sizeof *runs);
    if (!runs)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    struct iovec iov[64];
    size_t off = 0;
    while (off < bytes) {
        size_t covered, want = split_elems ? esz : bytes - off;
        int k = wh_dtype_iov(fb, count, t, off, want, iov, split_elems ? 1 : 64, &covered);
        if (k <= 0 || !covered) {
            free(runs);
            return wh_error(MPI_ERR_INTERN, "cannot flatten the target datatype at byte %zu", off);
        }
        if (split_elems)
            covered = esz; /* the element starts at its first block */
        for (int i = 0; i < k; i++) {
            int64_t o = (int64_t)((intptr_t)iov[i].iov_base - FAKE_BASE);
            uint64_t ne = split_elems ? 1 : iov[i].iov_len / esz;
            if (n && runs[n - 1].off + (int64_t)(runs[n - 1].n * ext) == o) {
                runs[n - 1].n += ne;
                continue;
            }
            if (n == cap) {
                wh_rma_run_t *nr = realloc(runs, 2 * cap * sizeof *runs);
                if (!nr) {
                    free(runs);
                    return wh_error(MPI_ERR_NO_MEM, "out of memory");
                }
                runs = nr;
                cap *= 2;
            }
            runs[n].off = o;
            runs[n++].n = ne;
        }
        off += covered;
    }
    *out = runs;
    *nout = n;
    return MPI_SUCCESS;
}

/* the predefined type every element of t is made of */
static MPI_Datatype elem_type(const wh_dtype_t *t)
{
    while (t && !t->predefined) {
        const wh_dtype_contents_t *c = wh_dtype_contents(t);
        if (!c || c->nd < 1)
            return MPI_DATATYPE_NULL;
        MPI_Datatype h = c->types[0];
        t = wh_dtype_get(h);
        if (!t)
            t = wh_dtype_get_derived_any(h);
    }
    return t ? t->obj.handle : MPI_DATATYPE_NULL;
}

/* ---------- sending runs with their data ---------- */

static unsigned char *sbuf;
static size_t sbuf_len;

typedef struct rma_send {
    wh_win_t *w;
    int target, wt, kind, hasdata;
    const void *obuf;
    size_t ocount;
    const wh_dtype_t *odt;
    const char *ocontig; /* contiguous origin data, or NULL */
    wh_rma_pfx_t pfx;
    size_t esz, ext;
} rma_send_t;

static int send_runs(rma_send_t *s, const wh_rma_run_t *runs, size_t nruns)
{
    size_t chunk = wh_rma_max_payload(s->wt);
    if (sbuf_len < chunk) {
        free(sbuf);
        if (!(sbuf = malloc(chunk)))
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        sbuf_len = chunk;
    }
    wh_hdr_t h = {.type = wh_rma_am.op, .flags = (uint8_t)s->kind, .ctx = s->w->peers[s->target].id,
                  .src = s->w->rank, .sreq = WH_HINDEX(s->w->obj.handle)};
    int answered = s->kind == WH_RMA_GET || s->kind == WH_RMA_GACC;
    size_t i = 0, e = 0, soff = 0;
    while (i < nruns) {
        size_t pos = sizeof(wh_rma_pfx_t), room = chunk - pos;
        wh_rma_pfx_t pfx = s->pfx;
        pfx.soff = soff;
        unsigned nr = 0;
        /* runs first, data after them: count what fits */
        size_t ri = i, re = e, dbytes = 0;
        while (ri < nruns && nr < 65535 && room >= sizeof(wh_rma_run_t) + (s->hasdata ? s->esz : 0)) {
            size_t take = runs[ri].n - re;
            if (s->hasdata) {
                size_t maxe = (room - sizeof(wh_rma_run_t)) / s->esz;
                if (take > maxe)
                    take = maxe;
            }
            wh_rma_run_t r = {.off = runs[ri].off + (int64_t)(re * s->ext), .n = take};
            memcpy(sbuf + pos + nr * sizeof r, &r, sizeof r);
            nr++;
            room -= sizeof r + (s->hasdata ? take * s->esz : 0);
            dbytes += take * s->esz;
            re += take;
            if (re == runs[ri].n) {
                ri++;
                re = 0;
            }
        }
        pos += nr * sizeof(wh_rma_run_t);
        if (s->hasdata && dbytes) {
            if (s->ocontig)
                memcpy(sbuf + pos, s->ocontig + soff, dbytes);
            else
                WH_CHECK(wh_dtype_pack(s->obuf, s->ocount, s->odt, soff, sbuf + pos, dbytes));
            pos += dbytes;
        }
        pfx.nruns = (uint16_t)nr;
        memcpy(sbuf, &pfx, sizeof pfx);
        h.len = pos;
        /* the last message of a put or accumulate may wait for the flush to ride on it */
        if (ri == nruns && !answered)
            WH_CHECK(wh_rma_hold(s->wt, &h, sbuf, pos));
        else
            WH_CHECK(wh_rma_send_wait(s->wt, &h, sbuf, pos));
        soff += dbytes;
        i = ri;
        e = re;
    }
    return MPI_SUCCESS;
}

/* ---------- checks ---------- */

static int chk_epoch(const wh_win_t *w, int t)
{
    if (w->fence_open || w->lock_all || w->lock_mode[t] || w->in_start[t])
        return MPI_SUCCESS;
    return wh_error(MPI_ERR_RMA_SYNC, "no access epoch to rank %d is open on this window (call MPI_Win_fence, "
                                      "MPI_Win_lock(_all) or MPI_Win_start first)", t);
}

static int chk_range(const wh_win_t *w, int t, MPI_Aint disp, size_t tcount, const wh_dtype_t *tdt)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !tcount || !tdt->size)
        return MPI_SUCCESS;
    const wh_win_peer_t *p = &w->peers[t];
    int64_t lo = (int64_t)disp * p->disp_unit + tdt->true_lb;
    int64_t hi = lo + (int64_t)(tcount - 1) * tdt->extent + tdt->true_extent;
    if (disp < 0 || lo < 0 || hi > (int64_t)p->size)
        return wh_error(MPI_ERR_RMA_RANGE, "target bytes [%lld, %lld) lie outside rank %d's window of %llu bytes "
                                           "(disp %ld, disp_unit %lld)", (long long)lo, (long long)hi, t,
                        (unsigned long long)p->size, (long)disp, (long long)p->disp_unit);
    return MPI_SUCCESS;
}

/* ---------- zero-copy paths ---------- */

typedef struct rma_zc {
    wh_comp_t c;
    volatile int done, err;
} rma_zc_t;

static void zc_done(wh_comp_t *c, int err)
{
    rma_zc_t *z = (rma_zc_t *)c;
    z->err = err;
    z->done = 1;
}

/* channel put/get of a contiguous target range; WH_FALLBACK when refused */
static int zcopy(wh_win_t *w, const wh_rma_args_t *a, int wt, uint64_t raddr, uint64_t rkey, size_t bytes)
{
    int chan = wh_coord_peers[wt].chan;
    wh_data_t d = {.len = bytes, .mem = WH_MEM_HOST};
    const char *oc;
    int put = a->kind == WH_RMA_PUT;
    const wh_dtype_t *dt = put ? a->odt : a->rdt;
    const void *buf = put ? a->obuf : a->rbuf;
    if (!wh_dtype_is_contig(dt, (size_t)(put ? a->ocount : a->rcount), buf, &oc))
        return WH_FALLBACK;
    d.base = (char *)oc;
    rma_zc_t z = {.c = {.done = zc_done}};
    int rc = put ? wh_chans[chan]->put_zcopy(wt, raddr, rkey, &d, &z.c) : wh_chans[chan]->get_zcopy(wt, raddr, rkey, &d, &z.c);
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned idle = 0;
    while (!z.done)
        if (!wh_progress())
            wh_progress_idle(&idle);
    (void)w;
    return z.err;
}

/* ---------- large copies into or out of node-region memory ---------- */

/* A put or get of megabytes into a window mostly lands outside the caches
 * (benchmarks cycle through many slots; applications move data that the
 * other rank reads).  memcpy (glibc: rep movsb up to its non-temporal
 * threshold, about 20 MB here) reads every destination line into the cache
 * before overwriting it: three memory transfers per line where streaming
 * stores need two.  From WHARF_RMA_STREAM_MIN bytes the copy uses
 * non-temporal stores, then an sfence so they are globally visible before
 * anything this rank stores next (a flush, an unlock) is.
 *
 * One sequential stream leaves the core waiting on memory: it keeps too few
 * line fills in flight.  The body is cut into WHARF_RMA_STREAM_WAYS equal
 * parts copied a line of each in turn, so that many independent streams
 * (source reads, destination writes) run at once: 4 MiB cold copies on the
 * development host, best of 320, 1 way 8.3-8.9 GB/s, 2 ways 10.5-10.6,
 * 3 ways 11.4-11.8, 4 ways 10.8-10.9, 8 ways 10.3-10.5 (glibc memcpy 6.5-6.7). */
#if defined(__x86_64__)
static inline void stream_line(char *d, const char *s)
{
    __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + 32));
    __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + 48));
    _mm_stream_si128((__m128i *)(void *)d, a);
    _mm_stream_si128((__m128i *)(void *)(d + 16), b);
    _mm_stream_si128((__m128i *)(void *)(d + 32), c);
    _mm_stream_si128((__m128i *)(void *)(d + 48), e);
}

#define WH_STREAM_WAYS_MAX 16

static void stream_copy(char *d, const char *s, size_t n)
{
    size_t head = (size_t)(-(uintptr_t)d & 63);
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t lines = n / 64;
    int ways = wh_tun.rma_stream_ways;
    if (ways < 1)
        ways = 1;
    if (ways > WH_STREAM_WAYS_MAX)
        ways = WH_STREAM_WAYS_MAX;
    size_t per = lines / (size_t)ways, done = 0; /* lines per part */
    if (ways > 1 && per) {
        size_t part = per * 64;
        for (size_t off = 0; off < part; off += 64)
            for (int k = 0; k < ways; k++)
                stream_line(d + (size_t)k * part + off, s + (size_t)k * part + off);
        done = per * (size_t)ways;
    }
    for (size_t l = done; l < lines; l++) /* the rest (less than a line per part) in one stream */
        stream_line(d + l * 64, s + l * 64);
    _mm_sfence();
    memcpy(d + lines * 64, s + lines * 64, n - lines * 64);
}
#else
static void stream_copy(char *d, const char *s, size_t n)
{
    memcpy(d, s, n);
}
#endif

/* copy (scount, st) at s to (dcount, dt) at d, streaming when both are contiguous and large */
static int ldst_copy(const void *s, size_t scount, const wh_dtype_t *st, void *d, size_t dcount, const wh_dtype_t *dt,
                     size_t bytes)
{
    const char *sc, *dc;
    if (wh_tun.rma_stream_min && bytes >= wh_tun.rma_stream_min && st->size * scount == bytes &&
        dt->size * dcount == bytes && wh_dtype_is_contig(st, scount, s, &sc) && wh_dtype_is_contig(dt, dcount, d, &dc) &&
        (dc + bytes <= sc || sc + bytes <= dc)) {
        stream_copy((char *)dc, sc, bytes);
        return MPI_SUCCESS;
    }
    return wh_dtype_copy(s, scount, st, d, dcount, dt);
}

/* ---------- accumulates applied here, into node-region memory ---------- */

static int acc_direct(wh_win_t *w, const wh_rma_args_t *a, char *tb, uint32_t *lk, MPI_Datatype eh,
                      const wh_dtype_t *et, int split)
{
    size_t esz = et->size;
    int sgn = 0, abytes = wh_rma_atomic_class(w, et, &sgn);
    if (abytes && ((uintptr_t)tb & (uintptr_t)(abytes - 1)))
        abytes = 0; /* misaligned: this element always goes under the lock word */
    size_t nbytes = a->kind == WH_RMA_CAS ? esz : a->tdt->size * (size_t)a->tcount;
    int bulk = a->kind != WH_RMA_CAS && wh_rma_acc_bulk(lk, nbytes); /* plain, lock held exclusively */
    wh_coord_note(a->target == w->rank ? WH_CHAN_SELF : WH_CHAN_SHM,
                  abytes && !bulk ? WH_PROTO_ATOMIC : WH_PROTO_ACCLOCK, nbytes);
    if (a->kind == WH_RMA_CAS) {
        if (abytes) {
            wh_rma_atomic_cas_lk(w, lk, tb, abytes, a->obuf, a->cbuf, a->rbuf);
            return MPI_SUCCESS;
        }
        wh_rma_plain_lock(w, lk); /* an element no atomic touches (misaligned, not an integer) */
        memcpy(a->rbuf, tb, esz);
        if (!memcmp(tb, a->cbuf, esz))
            memcpy(tb, a->obuf, esz);
        wh_rma_plain_unlock(w, lk);
        return MPI_SUCCESS;
    }
    abytes = wh_rma_atomic_class(w, et, &sgn); /* per run from here */
    size_t tcount = (size_t)a->tcount, tbytes = a->tdt->size * tcount;
    int noop = a->op->builtin == WH_OPI_NO_OP;
    /* small operations (fetch-and-op, 8-byte accumulates) allocate nothing: a
     * contiguous target is one run on the stack, results go through the stack */
    wh_rma_run_t one, *runs = NULL;
    size_t nruns = 0;
    const char *tc;
    if (!split && wh_dtype_is_contig(a->tdt, tcount, tb, &tc)) {
        one.off = (int64_t)(tc - tb);
        one.n = tbytes / esz;
        nruns = 1;
    } else
        WH_CHECK(flatten(tcount, a->tdt, esz, (size_t)et->extent, split, &runs, &nruns));
    char *data = NULL, *old = NULL, small[256];
    const char *oc = NULL;
    int rc = MPI_SUCCESS;
    if (!noop && !wh_dtype_is_contig(a->odt, (size_t)a->ocount, a->obuf, &oc)) {
        if (!(data = malloc(tbytes)))
            rc = wh_error(MPI_ERR_NO_MEM, "out of memory");
        else
            rc = wh_dtype_pack(a->obuf, (size_t)a->ocount, a->odt, 0, data, tbytes);
        oc = data;
    }
    if (rc == MPI_SUCCESS && a->kind == WH_RMA_GACC && !(old = tbytes <= sizeof small ? small : malloc(tbytes)))
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS) {
        wh_rma_acc_runs(w, lk, abytes, sgn, tb, runs ? runs : &one, nruns, noop ? NULL : oc, old, a->op, eh, et);
        const char *rcont;
        if (old && wh_dtype_is_contig(a->rdt, (size_t)a->rcount, a->rbuf, &rcont))
            memcpy((char *)rcont, old, tbytes);
        else if (old)
            rc = wh_dtype_unpack(a->rbuf, (size_t)a->rcount, a->rdt, 0, old, tbytes);
    }
    if (old != small)
        free(old);
    free(runs);
    free(data);
    return rc;
}

/* ---------- the operation ---------- */

int wh_rma_op(wh_win_t *w, const wh_rma_args_t *a, wh_req_t **req)
{
    int t = a->target, rc;
    if (req)
        *req = NULL;
    if (t == MPI_PROC_NULL)
        goto done_now;
    WH_CHECK(chk_epoch(w, t));
    size_t tcount = (size_t)a->tcount, tbytes = a->tdt->size * tcount;
    WH_CHECK(chk_range(w, t, a->disp, tcount, a->tdt));
    size_t obytes = a->odt ? a->odt->size * (size_t)a->ocount : tbytes;
    size_t rbytes = a->rdt ? a->rdt->size * (size_t)a->rcount : tbytes;
    int noop = a->op && a->op->builtin == WH_OPI_NO_OP;
    if (a->kind != WH_RMA_GET && !(a->kind == WH_RMA_GACC && noop) && obytes != tbytes)
        return wh_error(MPI_ERR_TYPE, "origin (%zu bytes) and target (%zu bytes) descriptions do not match", obytes,
                        tbytes);
    if ((a->kind == WH_RMA_GET || a->kind == WH_RMA_GACC) && rbytes != tbytes)
        return wh_error(MPI_ERR_TYPE, "result (%zu bytes) and target (%zu bytes) descriptions do not match", rbytes,
                        tbytes);
    /* accumulates: one predefined element type on both sides */
    MPI_Datatype eh = MPI_BYTE;
    const wh_dtype_t *et = wh_dtype_get(MPI_BYTE);
    if (a->kind >= WH_RMA_ACC && !tbytes) { /* nothing moves: any types, as MPICH (its rma/badrma) */
        if (a->op && (!a->op->builtin || a->op->builtin < 0))
            return wh_error(MPI_ERR_OP, "one-sided accumulates take predefined operations only");
        goto done_now;
    }
    if (a->kind >= WH_RMA_ACC) {
        eh = elem_type(a->tdt);
        et = wh_dtype_get(eh);
        if (!et || a->tdt->basic == WH_BT_NONE)
            return wh_error(MPI_ERR_TYPE, "accumulate target datatype is not made of one predefined type");
        if (a->odt && !noop && a->odt->basic != a->tdt->basic)
            return wh_error(MPI_ERR_TYPE, "accumulate origin and target datatypes have different basic types");
        if (a->op) {
            if (!a->op->builtin || a->op->builtin < 0)
                return wh_error(MPI_ERR_OP, "one-sided accumulates take predefined operations only");
            if (tbytes) /* nothing to combine: accepted whatever the type, as MPICH and Open MPI do */
                WH_CHECK(wh_op_check(a->op, et));
        }
    }
    if (!tbytes || (a->kind == WH_RMA_GACC && !a->rdt)) /* MPI_Accumulate with MPI_NO_OP changes nothing */
        goto done_now;
    wh_win_peer_t *p = &w->peers[t];
    int wt = p->wrank;
    uint64_t tbase = (uint64_t)((int64_t)a->disp * (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : p->disp_unit));
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        tbase = (uint64_t)a->disp;
    /* paths that do not need the target (device memory: only its handlers touch it) */
    if ((a->kind == WH_RMA_PUT || a->kind == WH_RMA_GET) && w->flavor != MPI_WIN_FLAVOR_DYNAMIC && !p->dev) {
        int put = a->kind == WH_RMA_PUT;
        if (p->ptr) {
            WH_CHECK(wh_rma_drain(w, t)); /* (self, on a window whose accumulates go through libfabric) */
            char *tp = p->ptr + tbase;
            rc = put ? ldst_copy(a->obuf, (size_t)a->ocount, a->odt, tp, tcount, a->tdt, tbytes)
                     : ldst_copy(tp, tcount, a->tdt, a->rbuf, (size_t)a->rcount, a->rdt, tbytes);
            WH_CHECK(rc);
            /* node-region load/store counts as shm (self for my own memory) */
            wh_coord_note(t == w->rank ? WH_CHAN_SELF : WH_CHAN_SHM, WH_PROTO_LDST, tbytes);
            goto done_now;
        }
        const char *tc;
        wh_coord_choice_t ch = wh_coord_decide_pure(&wh_coord_peers[wt], &wh_coord_lim, tbytes, WH_MEM_HOST,
                                                    put ? WH_OPK_PUT : WH_OPK_GET, 1);
        /* libfabric RMA into the target's registered memory (net channel) */
        int fab = p->has_rkey && (wh_coord_peers[wt].caps & WH_CAP_RMA_REG) && tbytes >= wh_tun.net_rma_min;
        if (((ch.proto != WH_PROTO_AM && wh_coord_peers[wt].chan != WH_CHAN_NET) || fab) &&
            wh_dtype_is_contig(a->tdt, tcount, (void *)(uintptr_t)(p->base + tbase), &tc)) {
            WH_CHECK(wh_rma_drain(w, t)); /* an accumulate, then a get of its result */
            uint64_t raddr = (uint64_t)(uintptr_t)tc;
            if (fab)
                raddr = p->rbase + (raddr - p->base);
            rc = zcopy(w, a, wt, raddr, fab ? p->rkey : 0, tbytes);
            if (rc != WH_FALLBACK) {
                WH_CHECK(rc);
                wh_coord_note(ch.chan, ch.chan == WH_CHAN_NET ? WH_PROTO_FABRIC : WH_PROTO_CMA, tbytes);
                goto done_now;
            }
        }
        if (fab) { /* a layout that is not contiguous: one fi_write/fi_read per target run (fabric.c) */
            wh_rma_run_t *fr = NULL;
            size_t fn = 0;
            WH_CHECK(flatten(tcount, a->tdt, 1, 1, 0, &fr, &fn));
            rc = fn && tbytes / fn >= wh_tun.net_rma_min / 16 ? wh_rma_fab_rma(w, a, tbase, fr, fn) : WH_FALLBACK;
            free(fr);
            if (rc != WH_FALLBACK) {
                WH_CHECK(rc);
                goto done_now;
            }
        }
    }
    /* active messages */
    size_t esz = a->kind >= WH_RMA_ACC ? et->size : 1, ext = a->kind >= WH_RMA_ACC ? (size_t)et->extent : 1;
    int split = a->kind >= WH_RMA_ACC && !et->contig;
    /* in the node region (the lock word orders co-resident origins), or my
     * own private memory: no other process applies accumulates to it, and the
     * messages that bring others' are applied by my progress engine inside
     * the MPI critical section I hold.  Applied now, a get or a load that
     * follows sees it, as it does the puts (BAGEL's Raccumulate then Rget of
     * its own tiles, single rank: wrong energies when it went as a message) */
    if (a->kind >= WH_RMA_ACC && p->ptr && (p->lockp || (t == w->rank && !w->fab_classes)) &&
        w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        WH_CHECK(acc_direct(w, a, p->ptr + tbase, p->lockp, eh, et, split));
        goto done_now;
    }
    if (a->kind >= WH_RMA_ACC && w->fab_classes && !split) { /* libfabric atomics (fabric.c) */
        wh_rma_run_t *fr = NULL;
        size_t fn = 0;
        if (a->kind != WH_RMA_CAS)
            WH_CHECK(flatten(tcount, a->tdt, esz, ext, 0, &fr, &fn));
        rc = wh_rma_fab_acc(w, a, tbase, et, fr, fn);
        free(fr);
        if (rc != WH_FALLBACK) {
            WH_CHECK(rc);
            goto done_now;
        }
    }
    rma_send_t s = {.w = w, .target = t, .wt = wt, .kind = a->kind, .obuf = a->obuf, .ocount = (size_t)a->ocount,
                    .odt = a->odt, .esz = esz, .ext = ext};
    s.hasdata = a->kind != WH_RMA_GET && !(a->kind == WH_RMA_GACC && noop);
    s.pfx.tbase = tbase;
    s.pfx.dtype = eh;
    s.pfx.op = (uint16_t)(a->op ? a->op->builtin : 0);
    if (s.hasdata && a->kind != WH_RMA_CAS && !wh_dtype_is_contig(a->odt, s.ocount, a->obuf, &s.ocontig))
        s.ocontig = NULL;
    wh_rma_run_t *runs = NULL;
    size_t nruns = 0;
    if (a->kind == WH_RMA_CAS && esz > 32)
        return wh_error(MPI_ERR_TYPE, "MPI_Compare_and_swap on a %zu-byte type", esz);
    if (a->kind != WH_RMA_CAS)
        WH_CHECK(flatten(tcount, a->tdt, esz, ext, split, &runs, &nruns));
    rma_pop_t *pop = NULL;
    if (a->kind == WH_RMA_GET || a->kind == WH_RMA_GACC || a->kind == WH_RMA_CAS) {
        if (!(pop = calloc(1, sizeof *pop))) {
            free(runs);
            return wh_error(MPI_ERR_NO_MEM, "out of memory");
        }
        pop->win = w;
        pop->target = t;
        pop->rbuf = a->rbuf;
        pop->rcount = a->kind == WH_RMA_CAS ? 1 : (size_t)a->rcount;
        pop->rdt = a->kind == WH_RMA_CAS ? a->odt : a->rdt;
        wh_dtype_addref(pop->rdt);
        pop->expect = a->kind == WH_RMA_CAS ? esz : tbytes;
        if (req)
            pop->req = *req = req_new();
        s.pfx.opid = (uint64_t)(uintptr_t)pop;
        w->npend[t]++;
    } else {
        /* only operations without an answer need a flush request: an answered
         * one is complete at both ends when its reply is in (errors ride on it) */
        w->dirty[t] = 1;
    }
    wh_coord_note(wh_coord_peers[wt].chan, WH_PROTO_AM, tbytes);
    if (a->kind == WH_RMA_CAS) {
        unsigned char msg[sizeof(wh_rma_pfx_t) + 2 * 32];
        s.pfx.nruns = 0;
        memcpy(msg, &s.pfx, sizeof s.pfx);
        memcpy(msg + sizeof s.pfx, a->obuf, esz);
        memcpy(msg + sizeof s.pfx + esz, a->cbuf, esz);
        wh_hdr_t h = {.type = wh_rma_am.op, .flags = WH_RMA_CAS, .ctx = p->id, .src = w->rank,
                      .len = sizeof s.pfx + 2 * esz, .sreq = WH_HINDEX(w->obj.handle)};
        return wh_rma_send_wait(wt, &h, msg, (size_t)h.len);
    }
    rc = send_runs(&s, runs, nruns);
    free(runs);
    if (rc == MPI_SUCCESS && req && !pop)
        req_complete(*req = req_new());
    return rc;
done_now:
    if (req)
        req_complete(*req = req_new());
    return MPI_SUCCESS;
}
