/* Single-copy collectives between co-resident ranks: every rank publishes
 * where its data is (a 32-byte record through the node-shared-memory
 * allgather), then readers copy what they need straight out of the owners'
 * buffers, and a second exchange tells the owners their buffers were read.
 * Each byte is copied once (the cells of shmcoll.c copy it in and out:
 * twice; an allgather there copies each block into a cell and out of it n
 * times).  A peer's buffer is reached one of two ways:
 *  - in the node-shared heap (MPI_Alloc_mem memory, WHARF_REGION_COPY):
 *    every co-resident maps it, so plain loads and stores, no system call
 *    and no page pinning; it crosses PID namespaces (containers sharing only
 *    the region) and is the faster where both work;
 *  - by its address with the shm channel's zero-copy get/put (Cross Memory
 *    Attach: the locality probe's verdict for the pair, the same PID
 *    namespace and kernel).
 *
 * Used only when every member reaches every other one of these ways and
 * every member's buffer is contiguous: each rank states in its record what
 * it can do, so all ranks agree to go single-copy or all fall back
 * (WH_FALLBACK) to the cell algorithms, with every buffer untouched.  A read
 * that fails (the probe passed, so: a peer going away) is reported in the
 * second exchange and every rank falls back as well. */
#include <stdint.h>
#include <string.h>

#include "chan/chan.h"
#include "chan/shm/shm.h"
#include "coll/algo.h"
#include "coll/shmcoll.h"
#include "coord/coord.h"
#include "core/err.h"
#include "locality/nodeheap.h"
#include "util/log.h"
#include "util/scratch.h"
#include "util/tunables.h"

enum {
    PUB_OK = 1,    /* takes part: contiguous buffers, counts as expected */
    PUB_CMA = 2,   /* reaches every member by CMA */
    PUB_WRITE = 4  /* bcast root of two: may write the other rank by CMA */
};

typedef struct {
    uint64_t addr;  /* start of the rank's exposed bytes */
    uint64_t bytes; /* how many (all ranks check the counts agree) */
    uint64_t roff;  /* their node-heap offset + 1, 0 when not in the heap */
    uint32_t ok;    /* PUB_* */
    uint32_t helps; /* bcast root of two: it offers to write the upper half itself */
} cma_pub_t;

/* the node-heap offset + 1 of [p, p + len), 0 when not all of it is there */
static uint64_t region_of(const void *p, size_t len)
{
    uint64_t off;
    return p && len && wh_tun.region_copy && wh_node_locate(p, len, &off) ? off + 1 : 0;
}

typedef struct {
    wh_comp_t comp;
    int done, err;
} cma_rd_t;

static void rd_done(wh_comp_t *c, int err)
{
    cma_rd_t *r = (cma_rd_t *)c;
    r->done = 1;
    r->err = err;
}

/* CMA is worth a system call here: MPI_Init's calibration did not find it
 * slower than the cells' copies (WHARF_CMA_SLOW_RATIO); else only buffers in
 * the node heap are read in place, and the others make every rank fall back */
static int cma_fast(void)
{
    return !wh_coord_cma_slow;
}

/* 1 if this rank can read every other member of c in place, by CMA */
static int can_read_all(const wh_comm_t *c)
{
    if (!wh_chans[WH_CHAN_SHM] || !wh_chans[WH_CHAN_SHM]->get_zcopy || !cma_fast())
        return 0;
    for (int r = 0; r < c->size; r++) {
        int w = wh_comm_wrank(c, r);
        if (w != wh_job.rank && (wh_coord_peers[w].chan != WH_CHAN_SHM || !(wh_shm_cma(w) & WH_CMA_CAN_READ)))
            return 0;
    }
    return 1;
}

/* copy len bytes between buf and member r's memory at raddr (rkey 0: its
 * address, by CMA; WH_SHM_KEY_HEAP: a node-heap offset), synchronous on the
 * shm channel: read them into buf, or write buf there */
static int zc_xfer(const wh_comm_t *c, int r, uint64_t raddr, uint64_t rkey, void *buf, size_t len, int write)
{
    if (!len)
        return MPI_SUCCESS;
    wh_data_t d = {.base = buf, .len = len, .mem = WH_MEM_HOST};
    cma_rd_t rd = {.comp.done = rd_done};
    int rc = (write ? wh_chans[WH_CHAN_SHM]->put_zcopy : wh_chans[WH_CHAN_SHM]->get_zcopy)(wh_comm_wrank(c, r), raddr,
                                                                                          rkey, &d, &rd.comp);
    if (rc != MPI_SUCCESS)
        return rc;
    return rd.done ? rd.err
                   : wh_error(MPI_ERR_INTERN, "single-copy %s rank %d did not complete", write ? "write to" : "read from",
                              r);
}

/* copy len bytes between buf and [at, at + len) of member r's buffer (its
 * address, or its node-heap offset + 1 roff): through the region where it
 * lies there (the owner's heap memory gone: WH_FALLBACK, all fall back),
 * else CMA */
static int peer_xfer(const wh_comm_t *c, int r, uint64_t addr, uint64_t roff, size_t at, void *buf, size_t len,
                     int write)
{
    return roff ? zc_xfer(c, r, roff - 1 + at, WH_SHM_KEY_HEAP, buf, len, write)
                : zc_xfer(c, r, addr + at, 0, buf, len, write);
}

/* every member reaches every other's published buffer: by CMA, or because
 * the other's lies in the node heap */
static int reach_all(const cma_pub_t *all, int n)
{
    for (int i = 0; i < n; i++)
        if (!(all[i].ok & PUB_CMA))
            for (int q = 0; q < n; q++)
                if (q != i && !all[q].roff)
                    return 0;
    return 1;
}

/* Phase 1: publish {addr, bytes, roff, ok} and learn everyone's
 * (all[c->size]).  1 when all can go single-copy, 0 to fall back (*rc: an
 * error of the exchange itself, else MPI_SUCCESS). */
static int publish_any(wh_comm_t *c, const void *addr, size_t bytes, unsigned ok, int helps, cma_pub_t *all, int *rc)
{
    cma_pub_t mine = {.addr = (uint64_t)(uintptr_t)addr, .bytes = bytes, .roff = ok ? region_of(addr, bytes) : 0,
                      .ok = ok ? ok | (can_read_all(c) ? PUB_CMA : 0u) : 0u, .helps = (uint32_t)helps};
    wh_dtype_t *byte = wh_coll_byte();
    *rc = wh_shmc_allgather(&mine, sizeof mine, byte, all, sizeof mine, byte, c);
    if (*rc != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < c->size; r++)
        if (!(all[r].ok & PUB_OK))
            return 0;
    return reach_all(all, c->size);
}

/* the same, all ranks exposing bytes: 0 (fall back) when one exposes another count */
static int publish(wh_comm_t *c, const void *addr, size_t bytes, unsigned ok, int helps, cma_pub_t *all, int *rc)
{
    if (!publish_any(c, addr, bytes, ok, helps, all, rc))
        return 0;
    for (int r = 0; r < c->size; r++)
        if (all[r].bytes != bytes)
            return 0;
    return 1;
}

/* Phase 2: everyone's reads are over (the owners may reuse their buffers);
 * 1 when all succeeded, 0 when someone's failed (all fall back). */
static int all_read(wh_comm_t *c, int myrc, int *rc)
{
    uint32_t mine = myrc == MPI_SUCCESS, all[WH_CMA_MAXN];
    wh_dtype_t *byte = wh_coll_byte();
    *rc = wh_shmc_allgather(&mine, sizeof mine, byte, all, sizeof mine, byte, c);
    int good = *rc == MPI_SUCCESS;
    for (int r = 0; good && r < c->size; r++)
        good = all[r] != 0;
    return good;
}

int wh_cma_usable(wh_comm_t *c, size_t bytes)
{
    return wh_tun.coll_cma && c->size > 1 && c->size <= WH_CMA_MAXN && bytes >= wh_tun.coll_cma_min &&
           wh_shmc_usable(c, sizeof(cma_pub_t));
}

int wh_cma_allgather(const void *src, char *dst, size_t blk, wh_comm_t *c)
{
    size_t off[WH_CMA_MAXN], len[WH_CMA_MAXN];
    for (int r = 0; r < c->size; r++)
        off[r] = (size_t)r * blk, len[r] = blk;
    return wh_cma_allgatherv(src, dst, off, len, c);
}

int wh_cma_allgatherv(const void *src, char *dst, const size_t *off, const size_t *len, wh_comm_t *c)
{
    int n = c->size, me = c->rank, rc = MPI_SUCCESS;
    cma_pub_t all[WH_CMA_MAXN];
    if (!publish_any(c, src, len[me], src && dst ? PUB_OK : 0, 0, all, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    for (int r = 0; r < n; r++)
        if (all[r].bytes != len[r])
            return WH_FALLBACK; /* (a count that differs: the fallback reports it) */
    int my = MPI_SUCCESS;
    for (int i = 1; i < n && my == MPI_SUCCESS; i++) { /* start past me: readers spread over the owners */
        int q = (me + i) % n;
        my = peer_xfer(c, q, all[q].addr, all[q].roff, 0, dst + off[q], len[q], 0);
    }
    if (my == MPI_SUCCESS && dst + off[me] != (const char *)src)
        memcpy(dst + off[me], src, len[me]);
    if (!all_read(c, my, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    return MPI_SUCCESS;
}

/* Between two ranks the root, which would only wait, writes the upper half
 * into the other's buffer (stores into the node heap where it lies there,
 * else process_vm_writev) while the other reads the lower half: one copy
 * per byte still, two cpus (as point-to-point's split transfers,
 * src/proto/split.c).  Not where the node is oversubscribed (the two copies
 * would share a cpu).  By CMA only where the root may write to that rank
 * (its probe, no write refused since); a refused write is reported in the
 * second exchange and both fall back. */
int wh_cma_bcast(void *buf, size_t bytes, int root, wh_comm_t *c)
{
    int me = c->rank, rc = MPI_SUCCESS, other = 1 - root;
    cma_pub_t all[WH_CMA_MAXN];
    int helps = me == root && c->size == 2 && wh_tun.cma_split && bytes >= wh_tun.cma_split && !wh_job.oversubscribed;
    unsigned ok = buf ? PUB_OK : 0;
    if (helps && cma_fast() && (wh_shm_cma(wh_comm_wrank(c, other)) & WH_CMA_CAN_WRITE))
        ok |= PUB_WRITE;
    if (!publish(c, buf, bytes, ok, helps, all, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    int split = all[root].helps && (all[other].roff || (all[root].ok & PUB_WRITE));
    size_t half = split ? (bytes / 2 + 4095) & ~(size_t)4095 : bytes;
    if (half > bytes)
        half = bytes;
    int my = MPI_SUCCESS;
    if (me != root)
        my = peer_xfer(c, root, all[root].addr, all[root].roff, 0, buf, half, 0);
    else if (split && half < bytes)
        my = peer_xfer(c, other, all[other].addr, all[other].roff, half, (char *)buf + half, bytes - half, 1);
    if (!all_read(c, my, &rc))
        return rc != MPI_SUCCESS ? rc : WH_FALLBACK;
    return MPI_SUCCESS;
}

/* Reduce to a root in slices: rank r combines slice r of every member's
 * input and leaves the result in the root's buffer; the root combines its
 * slice straight into its buffer.  A peer's input in the node heap is read
 * where it lies (the op runs on the region), else copied in by CMA, chunk by
 * chunk, into a scratch that stays in cache; a root's buffer in the heap is
 * written the same way (the op's result lands there), else the chunk's
 * result goes by process_vm_writev.  Each input byte is read once, by one
 * rank, and nobody copies into or out of the node cells (shmcoll.c's slices
 * copy everything in and the root copies it out).  The root's slice is the
 * larger (weights 2(n-1)+1 against 2(n-1)): the others also write theirs.
 * Commutative ops (slices combine in any order).
 *
 * The offers travel in the first step of the cells' reduce (shmcoll.c), so
 * deciding costs no exchange of its own and counts that differ between
 * ranks still meet there and fail as the cells' reduce does.
 *
 * A CMA transfer refused by a policy (a write, typically) fails before it
 * moves a byte, so with a root not in place every buffer a fallback reads is
 * untouched and all fall back.  A root in place holds its input where the
 * others write: there CMA writes are used only when every writer has seen a
 * write to the root work already, and a failure afterwards (a peer going
 * away) is an error. */
#define RED_CHUNK ((size_t)128 << 10) /* fewer calls cost less than a scratch out of L1 */
enum {
    OFF_OK = 1,        /* can take part */
    OFF_SEEN = 2,      /* a CMA write to the root has worked (or: is the root) */
    OFF_CMA = 4,       /* reaches every member by CMA */
    OFF_CMA_ROOT = 8,  /* may write the root by CMA */
    OFF_IN_HEAP = 16,  /* addr is the input's node-heap offset */
    OFF_OUT_HEAP = 32  /* out is the result buffer's node-heap offset */
};

int wh_cma_reduce_offer(wh_comm_t *c, const char *in, char *out, size_t bytes, const wh_op_t *op, int root,
                        wh_cma_offer_t *o)
{
    /* each rank reads its slice from n - 1 others, a call per chunk, and
     * small reads lose to the cells: from (n - 1)^2 x WHARF_COLL_CMA_MIN
     * (2 ranks 64 KiB: 0.68x the cells' time; 4 ranks on 2 cpus, three
     * runs: 256 KiB 0.79-1.46x, 512 KiB 0.69-1.03x, 1 MiB 0.85-0.88x) */
    int n = c->size, me = c->rank;
    size_t k = (size_t)(n - 1);
    *o = (wh_cma_offer_t){.addr = (uint64_t)(uintptr_t)in, .out = (uint64_t)(uintptr_t)out};
    if (!wh_tun.coll_cma || n < 2 || n > WH_CMA_MAXN || !op->commute || !in || bytes < k * k * wh_tun.coll_cma_min)
        return 0;
    uint32_t w = OFF_OK | (can_read_all(c) ? OFF_CMA : 0u);
    uint64_t r;
    if ((r = region_of(in, bytes)))
        o->addr = r - 1, w |= OFF_IN_HEAP;
    if (root < 0) { /* allreduce: every rank's result buffer is read by all, through the heap only */
        if (!(r = region_of(out, bytes)) || !(w & OFF_IN_HEAP))
            return 0;
        o->out = r - 1, w |= OFF_OUT_HEAP;
    } else if (me == root) {
        w |= OFF_SEEN;
        if ((r = region_of(out, bytes)))
            o->out = r - 1, w |= OFF_OUT_HEAP;
    } else {
        unsigned to_root = wh_shm_cma(wh_comm_wrank(c, root));
        if (to_root & WH_CMA_CAN_WRITE)
            w |= OFF_CMA_ROOT | (to_root & WH_CMA_WRITE_SEEN ? OFF_SEEN : 0u);
    }
    o->want = w;
    return 1;
}

/* rank r in place (both named the same way: heap offsets or addresses) */
static int in_place(const wh_cma_offer_t *o)
{
    return o->addr == o->out && !(o->want & OFF_IN_HEAP) == !(o->want & OFF_OUT_HEAP);
}

/* a failure would leave an input changed: the root in place (an allreduce:
 * any rank in place) */
static int fragile(const wh_cma_offer_t *all, int n, int root)
{
    if (root >= 0)
        return in_place(&all[root]);
    for (int r = 0; r < n; r++)
        if (in_place(&all[r]))
            return 1;
    return 0;
}

int wh_cma_reduce_agree(const wh_cma_offer_t *all, int n, int root)
{
    if (root < 0) { /* allreduce: everything in the heap */
        for (int i = 0; i < n; i++)
            if ((all[i].want & (OFF_OK | OFF_IN_HEAP | OFF_OUT_HEAP)) != (OFF_OK | OFF_IN_HEAP | OFF_OUT_HEAP))
                return 0;
        return 1;
    }
    int out_heap = (all[root].want & OFF_OUT_HEAP) != 0, frag = fragile(all, n, root);
    for (int i = 0; i < n; i++) {
        uint32_t w = all[i].want;
        if (!(w & OFF_OK))
            return 0;
        for (int q = 0; q < n && !(w & OFF_CMA); q++)
            if (q != i && !(all[q].want & OFF_IN_HEAP))
                return 0; /* i cannot read q's input */
        if (i != root && !out_heap && (!(w & OFF_CMA_ROOT) || (frag && !(w & OFF_SEEN))))
            return 0; /* i cannot write the root's result (safely) */
    }
    return 1;
}

static size_t red_lo(size_t count, int n, int root, int r)
{
    if (r >= n)
        return count;
    if (root < 0) /* allreduce: equal slices */
        return (size_t)((double)count * ((double)r / n));
    double w = 2.0 * (n - 1), cw = w * r + (r > root), total = w * n + 1;
    size_t lo = (size_t)((double)count * (cw / total));
    return lo < count ? lo : count;
}

int wh_cma_reduce_run(const wh_cma_offer_t *all, const char *in, char *out, size_t count, MPI_Datatype dth,
                      wh_dtype_t *dt, wh_op_t *op, int root, wh_comm_t *c)
{
    int n = c->size, me = c->rank;
    size_t esz = dt->size, per = RED_CHUNK / esz ? RED_CHUNK / esz : 1;
    int mine = me == root || root < 0; /* this rank's slice result goes to its own buffer */
    int inplace = mine && in == out, out_heap = !mine && (all[root].want & OFF_OUT_HEAP);
    if (inplace)
        WH_DEBUG("coll", "single-copy reduce of %zu bytes to this rank, in place", count * esz);
    /* a scratch only where some transfer goes by CMA: an input read, or
     * the result written to the root */
    int need_tmp = !mine && !out_heap;
    for (int q = 0; q < n && !need_tmp; q++)
        need_tmp = q != me && !(all[q].want & OFF_IN_HEAP);
    char *tmp = need_tmp ? wh_scratch_get(2 * per * esz) : NULL;
    int my = tmp || !need_tmp ? MPI_SUCCESS : wh_coll_nomem("single-copy reduce", 2 * per * esz);
    size_t lo = red_lo(count, n, root, me), hi = red_lo(count, n, root, me + 1);
    for (size_t off = lo; off < hi && my == MPI_SUCCESS; off += per) {
        size_t len = hi - off < per ? hi - off : per, at = off * esz;
        /* the chunk's result: my own buffer (the root), the root's in the
         * heap, or a scratch written to the root by CMA */
        char *acc = mine ? out + at : out_heap ? (char *)(uintptr_t)wh_node_range(all[root].out + at, len * esz)
                                               : tmp + per * esz;
        if (!acc)
            my = WH_FALLBACK;
        int have = inplace; /* acc holds my own input already */
        for (int i = 0; i < n && my == MPI_SUCCESS; i++) {
            /* the root's input first: in place in the heap, it is where this
             * slice's result goes; then the others, from the next rank on */
            int q = i == 0 ? (root < 0 ? me : root) : (me + i) % n;
            if (q == me || (i > 0 && q == root))
                continue;
            const char *x = tmp;
            if (all[q].want & OFF_IN_HEAP) {
                if (!(x = wh_node_range(all[q].addr + at, len * esz)))
                    my = WH_FALLBACK;
            } else {
                my = zc_xfer(c, q, all[q].addr + at, 0, tmp, len * esz, 0);
            }
            if (my != MPI_SUCCESS)
                break;
            if (x == acc) /* (the root's input, in place, is where its result goes) */
                my = have ? MPI_SUCCESS : wh_op_apply(op, in + at, acc, len, dth, dt);
            else
                my = have ? wh_op_apply(op, x, acc, len, dth, dt) : wh_op_apply3(op, in + at, x, acc, len, dth, dt);
            have = 1;
        }
        if (my == MPI_SUCCESS && !mine && !out_heap)
            my = zc_xfer(c, root, all[root].out + at, 0, acc, len * esz, 1);
    }
    wh_scratch_put(tmp);
    return my;
}

int wh_cma_allreduce_collect(const wh_cma_offer_t *all, char *out, size_t count, size_t esz, wh_comm_t *c)
{
    int n = c->size, me = c->rank;
    for (int i = 1; i < n; i++) {
        int q = (me + i) % n;
        size_t lo = red_lo(count, n, -1, q), hi = red_lo(count, n, -1, q + 1);
        if (hi == lo)
            continue;
        const void *p = wh_node_range(all[q].out + lo * esz, (hi - lo) * esz);
        if (!p)
            return WH_FALLBACK;
        memcpy(out + lo * esz, p, (hi - lo) * esz);
    }
    return MPI_SUCCESS;
}

int wh_cma_reduce_settle(const wh_cma_offer_t *all, int n, int my, int worst, int root)
{
    if (worst == 0)
        return MPI_SUCCESS;
    if (!fragile(all, n, root))
        return WH_FALLBACK; /* out is rewritten, no input was touched */
    if (my != MPI_SUCCESS && my != WH_FALLBACK)
        return my;
    return wh_error(MPI_ERR_OTHER, "single-copy %s (in place): a transfer %s", root < 0 ? "allreduce" : "reduce",
                    my == WH_FALLBACK ? "was refused here" : "failed on another rank");
}
