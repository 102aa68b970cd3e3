/* Channel conformance, written once and run over every channel (self, shm
 * with and without CMA, net under several providers): after MPI_Init (which
 * sets the channels up) two ranks drive one channel's ops table directly with
 * an active-message handler of their own.  Checked: the capability query is
 * consistent; active messages of every size class (empty, inline, eager, the
 * largest) arrive intact, from contiguous and from packed (callback) sources;
 * 3000 messages keep their order under back-pressure (WH_AGAIN is seen on a
 * channel with finite queues and retrying works); zero-copy get/put and bulk
 * streams move contiguous and iovec/packed layouts where the pair has the
 * capability, and are refused (WH_FALLBACK) where it has not; the shm
 * channel's node-heap key moves data with and without CMA.
 *   test_chan CHANNEL        (run by wharfrun -n 2, or -n 1 for self) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chan/am.h"
#include "chan/chan.h"
#include "chan/shm/shm.h"
#include "coord/coord.h"
#include "core/core.h"
#include "locality/nodeheap.h"

static int me, peer, ch, nfail, npass;
static const wh_chan_ops_t *ops;
static uint8_t am_id;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (cond)                                                                                 \
            npass++;                                                                              \
        else {                                                                                    \
            nfail++;                                                                              \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", me, __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
        }                                                                                         \
    } while (0)

/* ---- inbound: messages of the test handler, kept in arrival order ---- */
typedef struct msg {
    wh_hdr_t h;
    size_t len;
    unsigned char *data;
} msg_t;
#define QMAX 4096
static msg_t q[QMAX];
static int qn, qtake;

static void on_am(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    CHECK(chan == ch && wpeer == peer, "message on channel %d from rank %d", chan, wpeer);
    if (qn == QMAX) {
        CHECK(0, "queue full");
        return;
    }
    msg_t *m = &q[qn++];
    m->h = *h;
    m->len = plen;
    m->data = plen ? malloc(plen) : NULL;
    if (plen)
        memcpy(m->data, payload, plen);
}

static void poll_once(void)
{
    wh_chans_progress();
}

/* next message (waits, bounded) */
static msg_t *next_msg(void)
{
    double end = MPI_Wtime() + 60;
    while (qtake == qn && MPI_Wtime() < end)
        poll_once();
    if (qtake == qn) {
        CHECK(0, "no message within 60 s");
        return NULL;
    }
    return &q[qtake++];
}

/* forget the messages already taken; unread ones move to the front */
static void drop_all(void)
{
    for (int i = 0; i < qtake; i++)
        free(q[i].data);
    memmove(q, q + qtake, (size_t)(qn - qtake) * sizeof q[0]);
    qn -= qtake;
    qtake = 0;
}

static int send_am(uint32_t tag, uint64_t val, const wh_data_t *d, int *agains)
{
    wh_hdr_t h = {.type = am_id, .tag = (int32_t)tag, .sreq = val, .len = d ? d->len : 0};
    for (;;) {
        int rc = ops->am_send(peer, &h, d);
        if (rc != WH_AGAIN)
            return rc;
        if (agains)
            ++*agains;
        poll_once();
    }
}

/* a rendezvous between the two ranks through the channel itself */
static void sync_peers(uint32_t tag)
{
    CHECK(send_am(tag, 0, NULL, NULL) == MPI_SUCCESS, "sync send");
    msg_t *m = next_msg();
    CHECK(m && m->h.tag == (int32_t)tag, "sync tag %d", m ? m->h.tag : -1);
}

static unsigned char pat(size_t i, uint64_t seed) { return (unsigned char)((i * 131u + seed * 7u) ^ (i >> 8)); }

/* ---- a strided layout through the callbacks: element k of the stream is
 * byte k of block k / 64, blocks 128 bytes apart (half of each is a gap) ---- */
static size_t at(size_t k) { return (k / 64) * 128 + k % 64; }
static int s_pack(const wh_data_t *d, size_t off, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)dst)[i] = ((unsigned char *)d->ctx)[at(d->skip + off + i)];
    return MPI_SUCCESS;
}
static int s_unpack(const wh_data_t *d, size_t off, const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)d->ctx)[at(d->skip + off + i)] = ((const unsigned char *)src)[i];
    return MPI_SUCCESS;
}
static int s_iov(const wh_data_t *d, size_t off, size_t n, struct iovec *iov, int max, size_t *covered)
{
    int k = 0;
    size_t done = 0;
    while (done < n && k < max) {
        size_t s = d->skip + off + done, room = 64 - s % 64, len = n - done < room ? n - done : room;
        iov[k].iov_base = (unsigned char *)d->ctx + at(s);
        iov[k].iov_len = len;
        k++;
        done += len;
    }
    *covered = done;
    return k;
}
static wh_data_t strided(unsigned char *buf, size_t len)
{
    wh_data_t d = {.base = NULL, .len = len, .mem = WH_MEM_HOST, .pack = s_pack, .unpack = s_unpack,
                   .iov = s_iov, .ctx = buf};
    return d;
}
static wh_data_t contig(unsigned char *buf, size_t len)
{
    wh_data_t d = {.base = (char *)buf, .len = len, .mem = WH_MEM_HOST};
    return d;
}

static void test_caps(wh_chan_caps_t *k, uint32_t *pc)
{
    CHECK(k->flags & WH_CAP_AM, "no active messages");
    CHECK(k->max_am >= k->eager_max && k->max_am > 0, "max_am %zu < eager_max %zu", k->max_am, k->eager_max);
    CHECK(k->max_inline <= k->max_am, "inline %zu > max_am %zu", k->max_inline, k->max_am);
    CHECK(k->mem_kinds & (1u << WH_MEM_HOST), "host memory not supported");
    CHECK(k->max_frag > 0, "no fragment size");
    int why = 0, cwhy = 0;
    CHECK(ops->reaches(peer, &why, pc, &cwhy) == 1, "does not reach rank %d (why %d)", peer, why);
    CHECK((*pc & ~k->flags) == 0, "pair capabilities %#x beyond the channel's %#x", *pc, k->flags);
    CHECK(ops->am_send && ops->get_zcopy && ops->put_zcopy && ops->bulk_recv && ops->bulk_send,
          "an ops entry is NULL");
}

/* sizes of every class, contiguous and packed; the receiver checks */
static void test_sizes(const wh_chan_caps_t *k)
{
    size_t top = k->max_am < ((size_t)1 << 20) ? k->max_am : ((size_t)1 << 20);
    size_t sizes[] = {0, 1, k->max_inline < top ? k->max_inline : top, k->eager_max < top ? k->eager_max : top, top};
    int ns = (int)(sizeof sizes / sizeof sizes[0]);
    unsigned char *buf = malloc(2 * top + 128);
    for (int pass = 0; pass < 2; pass++) { /* 0: contiguous, 1: packed through callbacks */
        for (int i = 0; i < ns; i++) {
            size_t n = sizes[i];
            for (size_t j = 0; j < n; j++)
                buf[pass ? at(j) : j] = pat(j, (uint64_t)(i + 10 * pass));
            wh_data_t d = pass ? strided(buf, n) : contig(buf, n);
            if (me == 0 || peer == me)
                CHECK(send_am(1000 + (uint32_t)i, (uint64_t)pass, n ? &d : NULL, NULL) == MPI_SUCCESS, "send %zu", n);
            if (me == 1 || peer == me) {
                msg_t *m = next_msg();
                if (!m)
                    break;
                size_t bad = 0;
                for (size_t j = 0; j < m->len; j++)
                    bad += m->data[j] != pat(j, (uint64_t)(i + 10 * pass));
                CHECK(m->h.tag == 1000 + i && m->len == n && m->h.len == n && !bad,
                      "size class %d (%zu B, %s): got tag %d, %zu B, %zu wrong", i, n, pass ? "packed" : "contig",
                      m->h.tag, m->len, bad);
            }
        }
    }
    free(buf);
    drop_all();
    sync_peers(1999);
    drop_all();
}

/* 3000 messages of mixed sizes: order kept, back-pressure handled */
static void test_order(const wh_chan_caps_t *k)
{
    enum { N = 3000 };
    size_t cap = k->max_am < 4096 ? k->max_am : 4096;
    unsigned char buf[4096];
    int agains = 0;
    if (me == 0 || peer == me) {
        if (peer != me)
            usleep(1000);
        for (int i = 0; i < N; i++) {
            size_t n = (size_t)(i * 37) % (cap + 1);
            for (size_t j = 0; j < n; j++)
                buf[j] = pat(j, (uint64_t)i);
            wh_data_t d = contig(buf, n);
            CHECK(send_am(2000, (uint64_t)i, &d, &agains) == MPI_SUCCESS, "ordered send %d", i);
        }
    }
    if (me == 1 || peer == me) {
        if (peer != me)
            usleep(200000); /* let the sender fill the queues */
        int bad = 0;
        for (int i = 0; i < N; i++) {
            msg_t *m = next_msg();
            if (!m)
                break;
            size_t n = (size_t)(i * 37) % (cap + 1);
            int ok = m->h.sreq == (uint64_t)i && m->len == n;
            for (size_t j = 0; ok && j < n; j++)
                ok = m->data[j] == pat(j, (uint64_t)i);
            bad += !ok;
            if (qtake > 1024) {
                drop_all();
            }
        }
        CHECK(bad == 0, "%d of %d messages out of order or damaged", bad, N);
    }
    if (me == 0 && ch == WH_CHAN_SHM)
        CHECK(agains > 0, "finite shared-memory queues never pushed back (%d)", agains);
    drop_all();
    sync_peers(2999);
    drop_all();
}

typedef struct comp {
    wh_comp_t c;
    int done, err;
} comp_t;
static void on_done(wh_comp_t *c, int err)
{
    comp_t *x = (comp_t *)c;
    x->done++;
    x->err = err;
}
static void wait_comp(comp_t *x)
{
    double end = MPI_Wtime() + 60;
    while (!x->done && MPI_Wtime() < end)
        poll_once();
    CHECK(x->done == 1 && x->err == MPI_SUCCESS, "completion %d err %d", x->done, x->err);
}

/* zero-copy get and put: rank 0 exposes a buffer, rank 1 reads and writes it */
static void test_zcopy(uint32_t pc)
{
    size_t n = (size_t)3 << 20;
    unsigned char *exp = calloc(1, n), *loc = calloc(1, 2 * n + 128);
    for (size_t j = 0; j < n; j++)
        exp[j] = pat(j, 5);
    if (peer == me)
        return (void)(free(exp), free(loc));
    if (me == 0)
        CHECK(send_am(3000, (uint64_t)(uintptr_t)exp, NULL, NULL) == MPI_SUCCESS, "address");
    if (me == 1) {
        msg_t *m = next_msg();
        uint64_t raddr = m ? m->h.sreq : 0;
        for (int layout = 0; layout < 2; layout++) {
            comp_t x = {.c = {on_done}};
            wh_data_t d = layout ? strided(loc, n) : contig(loc, n);
            int rc = ops->get_zcopy(peer, raddr, 0, &d, &x.c);
            if (!(pc & WH_CAP_GET_ZCOPY)) {
                CHECK(rc == WH_FALLBACK && !x.done, "get without the capability: %d", rc);
                continue;
            }
            CHECK(rc == MPI_SUCCESS, "get_zcopy: %d", rc);
            wait_comp(&x);
            size_t bad = 0;
            for (size_t j = 0; j < n; j++)
                bad += loc[layout ? at(j) : j] != pat(j, 5);
            CHECK(!bad, "get (%s): %zu wrong bytes", layout ? "iovec" : "contig", bad);
        }
        for (size_t j = 0; j < n; j++)
            loc[j] = pat(j, 6);
        comp_t x = {.c = {on_done}};
        wh_data_t d = contig(loc, n);
        int rc = ops->put_zcopy(peer, raddr, 0, &d, &x.c);
        if (pc & WH_CAP_PUT_ZCOPY) {
            CHECK(rc == MPI_SUCCESS, "put_zcopy: %d", rc);
            wait_comp(&x);
        } else {
            CHECK(rc == WH_FALLBACK, "put without the capability: %d", rc);
        }
        CHECK(send_am(3001, (pc & WH_CAP_PUT_ZCOPY) != 0, NULL, NULL) == MPI_SUCCESS, "put done");
    }
    if (me == 0) {
        msg_t *m = next_msg();
        if (m && m->h.sreq) {
            size_t bad = 0;
            for (size_t j = 0; j < n; j++)
                bad += exp[j] != pat(j, 6);
            CHECK(!bad, "put: %zu wrong bytes", bad);
        }
    }
    free(exp);
    free(loc);
    drop_all();
    sync_peers(3999);
    drop_all();
}

/* the shm channel's node-heap key (WH_SHM_KEY_HEAP): rank 0 allocates in
 * the node-shared heap and names its block by offset; rank 1 gets (contiguous
 * and iovec) and puts through its own mapping, with or without CMA; an
 * offset past the heap, or one that wraps, is refused before a byte moves
 * (the heap's range check itself: test_nodeheap) */
static void test_zcopy_heap(void)
{
    size_t n = ((size_t)1 << 20) + 333;
    if (peer == me || ch != WH_CHAN_SHM)
        return;
    uint64_t off = 0;
    unsigned char *blk = me == 0 ? wh_node_alloc(n, &off) : NULL;
    if (me == 0) {
        CHECK(blk != NULL, "no node-heap block of %zu bytes", n);
        for (size_t j = 0; blk && j < n; j++)
            blk[j] = pat(j, 8);
        CHECK(send_am(3100, blk ? off + 1 : 0, NULL, NULL) == MPI_SUCCESS, "offset");
    } else {
        msg_t *m = next_msg();
        uint64_t o = m && m->h.sreq ? m->h.sreq - 1 : 0;
        int have = m && m->h.sreq;
        unsigned char *loc = calloc(1, 2 * n + 128);
        for (int layout = 0; have && layout < 2; layout++) {
            comp_t x = {.c = {on_done}};
            wh_data_t d = layout ? strided(loc, n) : contig(loc, n);
            CHECK(ops->get_zcopy(peer, o, WH_SHM_KEY_HEAP, &d, &x.c) == MPI_SUCCESS, "heap get");
            wait_comp(&x);
            size_t bad = 0;
            for (size_t j = 0; j < n; j++)
                bad += loc[layout ? at(j) : j] != pat(j, 8);
            CHECK(!bad, "heap get (%s): %zu wrong bytes", layout ? "iovec" : "contig", bad);
        }
        if (have) {
            comp_t x = {.c = {on_done}};
            wh_data_t d = contig(loc, 4096);
            CHECK(ops->get_zcopy(peer, (uint64_t)1 << 50, WH_SHM_KEY_HEAP, &d, &x.c) == WH_FALLBACK && !x.done,
                  "an offset past the heap");
            CHECK(ops->put_zcopy(peer, UINT64_MAX - 8, WH_SHM_KEY_HEAP, &d, &x.c) == WH_FALLBACK && !x.done,
                  "an offset that wraps");
            for (size_t j = 0; j < n; j++)
                loc[j] = pat(j, 9);
            d = contig(loc, n);
            CHECK(ops->put_zcopy(peer, o, WH_SHM_KEY_HEAP, &d, &x.c) == MPI_SUCCESS, "heap put");
            wait_comp(&x);
        }
        CHECK(send_am(3101, have, NULL, NULL) == MPI_SUCCESS, "put done");
        free(loc);
    }
    if (me == 0) {
        msg_t *m = next_msg();
        if (blk && m && m->h.sreq) {
            size_t bad = 0;
            for (size_t j = 0; j < n; j++)
                bad += blk[j] != pat(j, 9);
            CHECK(!bad, "heap put: %zu wrong bytes", bad);
        }
        if (blk)
            wh_node_free(off);
    }
    drop_all();
    sync_peers(3199);
    drop_all();
}

/* bulk streams: rank 1 posts, rank 0 sends, three transfers at once */
static void test_bulk(uint32_t pc)
{
    enum { T = 3 };
    size_t len[T] = {1, (size_t)5 << 20, 100000};
    unsigned char *b[T];
    comp_t x[T];
    for (int t = 0; t < T; t++) {
        b[t] = calloc(1, 2 * len[t] + 128);
        x[t] = (comp_t){.c = {on_done}};
    }
    if (peer == me) {
        uint64_t tok;
        wh_data_t d = contig(b[0], 1);
        CHECK(ops->bulk_recv(peer, &d, &tok, &x[0].c) == WH_FALLBACK, "self has no bulk streams");
    } else if (me == 1) {
        for (int t = 0; t < T; t++) {
            uint64_t tok = 0;
            wh_data_t d = t == 2 ? strided(b[t], len[t]) : contig(b[t], len[t]);
            int rc = ops->bulk_recv(peer, &d, &tok, &x[t].c);
            if (!(pc & WH_CAP_BULK)) {
                CHECK(rc == WH_FALLBACK, "bulk_recv without the capability: %d", rc);
                tok = 0;
            } else {
                CHECK(rc == MPI_SUCCESS, "bulk_recv: %d", rc);
            }
            CHECK(send_am(4000 + (uint32_t)t, tok, NULL, NULL) == MPI_SUCCESS, "token");
        }
        if (pc & WH_CAP_BULK)
            for (int t = 0; t < T; t++) {
                wait_comp(&x[t]);
                size_t bad = 0;
                for (size_t j = 0; j < len[t]; j++)
                    bad += b[t][t == 2 ? at(j) : j] != pat(j, (uint64_t)(40 + t));
                CHECK(!bad, "bulk %d (%zu B): %zu wrong bytes", t, len[t], bad);
            }
    } else {
        for (int t = 0; t < T; t++) {
            msg_t *m = next_msg();
            for (size_t j = 0; j < len[t]; j++)
                b[t][t == 1 ? at(j) : j] = pat(j, (uint64_t)(40 + t));
            if (!m || !(pc & WH_CAP_BULK))
                continue;
            wh_data_t d = t == 1 ? strided(b[t], len[t]) : contig(b[t], len[t]);
            CHECK(ops->bulk_send(peer, m->h.sreq, &d, &x[t].c) == MPI_SUCCESS, "bulk_send %d", t);
        }
        if (pc & WH_CAP_BULK)
            for (int t = 0; t < T; t++)
                wait_comp(&x[t]);
    }
    for (int t = 0; t < T; t++)
        free(b[t]);
    drop_all();
    sync_peers(4999);
    drop_all();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *name = argc > 1 ? argv[1] : "shm";
    ch = wh_chan_by_name(name);
    peer = np == 1 ? 0 : 1 - me;
    if (ch < 0 || np > 2 || !wh_chan_usable[ch] || wh_coord_peers[peer].chan != ch) {
        fprintf(stderr, "rank %d: channel %s does not serve rank %d here (usable %d)\n", me, name, peer,
                ch >= 0 ? wh_chan_usable[ch] : -1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ops = wh_chans[ch];
    CHECK(wh_am_register("test.chan", on_am, &am_id) == MPI_SUCCESS, "register");
    wh_chan_caps_t k = wh_chan_caps[ch];
    uint32_t pc = 0;
    test_caps(&k, &pc);
    test_sizes(&k);
    test_order(&k);
    test_zcopy(pc);
    test_zcopy_heap();
    test_bulk(pc);
    printf("rank %d: channel %s (caps %#x, pair %#x, max_am %zu, eager %zu, inline %zu): %d passed, %d failed\n", me,
           name, k.flags, pc, k.max_am, k.eager_max, k.max_inline, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
