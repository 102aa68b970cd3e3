/* The channel contract.  A channel (self, shm, net; later device channels) is
 * one directory with one ops table, listed once in chan/registry.c.  A channel
 * is a byte mover: it sends active messages (a 32-byte header whose first byte
 * names the handler, plus a payload), and, where it can, moves bulk data by a
 * zero-copy get, a receiver-posted bulk stream, or (later) put and atomics.
 * It never sees an MPI request, communicator or datatype: user data reaches it
 * as a wh_data_t (a contiguous range, or callbacks that pack, unpack or list
 * iovecs), and completions as a wh_comp_t callback.  Every message protocol
 * (eager, rendezvous handshakes, sync acks) lives in src/proto, once. */
#ifndef WH_CHAN_CHAN_H
#define WH_CHAN_CHAN_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "mem/mem.h"

/* Active-message header (32 bytes).  Channels copy it opaquely and dispatch on
 * `type` (the handler id, see chan/am.h); the other fields belong to the
 * protocol of that handler (point-to-point: context, source, tag, length,
 * request ids). */
typedef struct wh_hdr {
    uint8_t type;     /* active-message handler id */
    uint8_t flags;    /* protocol-defined */
    uint16_t cid;     /* protocol-defined */
    uint32_t ctx;
    int32_t src;
    int32_t tag;
    uint64_t len;
    uint64_t sreq;
} wh_hdr_t;
_Static_assert(sizeof(wh_hdr_t) == 32, "wh_hdr_t is 32 bytes on the wire");

/* Internal status, outside the MPI error-code space (MPI codes are >= 0). */
#define WH_AGAIN (-11)    /* resources busy: retry after progress */
#define WH_FALLBACK (-12) /* zero-copy path refused before moving a byte: use another protocol */

/* A user buffer as a channel sees it: bytes [0, len) of a packed stream,
 * starting `skip` bytes into the stream the callbacks describe. */
typedef struct wh_data wh_data_t;
struct wh_data {
    char *base;  /* contiguous: the bytes are base[0..len); NULL: use the callbacks */
    size_t len;
    size_t skip; /* offset of this view in the callbacks' stream */
    int mem;     /* wh_mem_kind of the user buffer */
    /* non-contiguous layouts (filled by the protocol layer); off is relative to the view */
    int (*pack)(const wh_data_t *d, size_t off, void *dst, size_t n);
    int (*unpack)(const wh_data_t *d, size_t off, const void *src, size_t n);
    /* up to max iovecs covering [off, off+n): returns their number (<= 0 on error), *covered bytes */
    int (*iov)(const wh_data_t *d, size_t off, size_t n, struct iovec *iov, int max, size_t *covered);
    void *ctx;   /* the callbacks' object */
};

/* Copy bytes [off, off+n) of d out to host memory dst / in from host memory src. */
int wh_data_out_slow(const wh_data_t *d, size_t off, void *dst, size_t n);
static inline int wh_data_out(const wh_data_t *d, size_t off, void *dst, size_t n)
{
    if (__builtin_expect(d->base != NULL && d->mem == WH_MEM_HOST, 1)) {
        memcpy(dst, d->base + off, n);
        return 0;
    }
    return wh_data_out_slow(d, off, dst, n);
}
static inline int wh_data_in(const wh_data_t *d, size_t off, const void *src, size_t n)
{
    if (__builtin_expect(d->base != NULL, 1))
        return wh_mem_copy(d->base + off, d->mem, src, WH_MEM_HOST, n);
    return d->unpack(d, off, src, n);
}
/* iovecs of [off, off+n) of d (contiguous or through the callback) */
int wh_data_iov(const wh_data_t *d, size_t off, size_t n, struct iovec *iov, int max, size_t *covered);

/* Completion of a get/bulk operation: done(c, err) once, err an MPI code. */
typedef struct wh_comp wh_comp_t;
struct wh_comp {
    void (*done)(wh_comp_t *c, int err);
};

/* Capability flags (wh_chan_caps_t.flags, and per peer from reaches()). */
enum {
    WH_CAP_AM = 1u << 0,        /* active messages (every channel) */
    WH_CAP_GET_ZCOPY = 1u << 1, /* get_zcopy: read the peer's buffer in place (CMA, RDMA read) */
    WH_CAP_PUT_ZCOPY = 1u << 2, /* put_zcopy: write the peer's memory in place */
    WH_CAP_BULK = 1u << 3,      /* bulk_recv/bulk_send: receiver-posted streams into the user buffer */
    WH_CAP_ATOMIC = 1u << 4,    /* remote atomics */
    WH_CAP_FALLBACK = 1u << 5,  /* opened only when a peer is not reached by another channel */
    WH_CAP_RMA_REG = 1u << 6,   /* put_zcopy/get_zcopy into memory the peer registered with mem_reg (its rkey) */
};

/* What a channel offers (query, after init). */
typedef struct wh_chan_caps {
    uint32_t flags;     /* WH_CAP_* this channel may offer (per peer: reaches()) */
    uint32_t mem_kinds; /* bit (1 << kind) for every memory kind it moves */
    size_t max_inline;  /* payload bytes that travel in the header's own unit (one cache line, inject) */
    size_t max_am;      /* largest active-message payload */
    size_t eager_max;   /* its configured eager threshold (<= max_am; tunable) */
    size_t max_frag;    /* preferred fragment payload of pipelined streams */
    double lat_us;      /* declared small-message latency */
    double bw_mbs;      /* declared bandwidth */
} wh_chan_caps_t;

/* element kinds of channel atomics */
enum { WH_AEK_INT = 1, WH_AEK_UINT, WH_AEK_FLOAT, WH_AEK_COMPLEX };
/* one channel atomic (atomic in wh_chan_ops_t) */
typedef struct wh_chan_atomic {
    int ekind, ebytes;   /* element kind (WH_AEK_*) and bytes */
    int opi;             /* WH_OPI_* */
    int cas;             /* compare-and-swap: cmp holds the compare values */
    const void *src;     /* origin values (ignored by NO_OP) */
    const void *cmp;
    void *res;           /* previous values (count elements), NULL: not fetched */
    size_t count;        /* contiguous elements at the target */
} wh_chan_atomic_t;

typedef struct wh_chan_ops {
    const char *name;
    /* Init in phases with a PMI barrier between them: phase 0 publishes,
     * phase 1 reads peers and connects, phase 2 finishes.  A channel that
     * cannot serve sets *usable = 0 (logged reason) instead of failing. */
    int (*init)(int phase, int *usable);
    int (*finalize)(void);
    /* Poll inbound (dispatching active messages), push outbound; returns
     * events.  NULL: nothing to poll (self). */
    int (*progress)(void);
    void (*query)(wh_chan_caps_t *caps);
    /* Before init phase 0 of later channels: could this channel reach world
     * rank wpeer (used to decide whether fallback channels are opened)? */
    int (*may_reach)(int wpeer);
    /* After init: 1 if it reaches wpeer (*peer_caps = the WH_CAP_* that hold
     * for this pair, *cap_why = WH_WHY_* of the first capability that does not),
     * else 0 with *why = WH_WHY_* reason. */
    int (*reaches)(int wpeer, int *why, uint32_t *peer_caps, int *cap_why);
    /* Send header h and payload d (NULL: none; d->len <= max_am).  Returns
     * MPI_SUCCESS once d's bytes are copied out, WH_AGAIN when out of
     * resources (call again later, order is the caller's business). */
    int (*am_send)(int wpeer, const wh_hdr_t *h, const wh_data_t *d);
    /* Read len bytes at the peer's address raddr (key rkey) into dst; c->done
     * runs when they are in place (maybe before return).  WH_FALLBACK: not
     * possible for this transfer, nothing moved. */
    int (*get_zcopy)(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c);
    /* Write src to the peer's address raddr (key rkey). */
    int (*put_zcopy)(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c);
    /* Receiver-posted bulk stream: bulk_recv posts dst (its len bytes) for
     * data from wpeer and returns a token the peer passes to bulk_send. */
    int (*bulk_recv)(int wpeer, const wh_data_t *dst, uint64_t *token, wh_comp_t *c);
    int (*bulk_send)(int wpeer, uint64_t token, const wh_data_t *src, wh_comp_t *c);
    /* One-sided windows (WH_CAP_RMA_REG; NULL where not offered): make len
     * bytes at base writable and readable by peers' put_zcopy/get_zcopy with
     * the key *rkey; peers address byte k of it as *rbase + k (the virtual
     * address or an offset, as the provider wants); WH_FALLBACK if refused.
     * Keys are never 0: put_zcopy/get_zcopy with rkey 0 target memory the
     * peer did not register, which such a channel refuses (WH_FALLBACK).
     * A put_zcopy into such memory completes once the bytes are in it. */
    int (*mem_reg)(void *base, size_t len, uint64_t *rkey, uint64_t *rbase, void **handle);
    void (*mem_dereg)(void *handle);
    /* One-sided atomics into registered memory (WH_CAP_ATOMIC; NULL where not
     * offered).  atomic_query: 1 if the channel applies predefined op opi
     * (WH_OPI_*; REPLACE writes, NO_OP reads) to elements of kind ekind
     * (WH_AEK_*) and ebytes bytes, plain (fetch 0) or returning the previous
     * values (fetch 1), or compare-and-swap (cas 1).  atomic: apply it to
     * a->count elements at the peer's raddr (key rkey); c->done runs when the
     * result is in a->res (fetching) or the update is in the target's memory
     * (plain), maybe before return; WH_FALLBACK: not possible, nothing done. */
    int (*atomic_query)(int ekind, int ebytes, int opi, int fetch, int cas);
    int (*atomic)(int wpeer, uint64_t raddr, uint64_t rkey, const struct wh_chan_atomic *a, wh_comp_t *c);
    /* Slow path of waits (may be NULL): end the job, naming the peer, if a
     * peer this channel serves died (shm: co-resident ranks). */
    void (*check_peers)(void);
    /* Sleep (may be NULL: cannot): wait at most timeout_us for a peer's
     * message — the peer rings this rank's doorbell after every message it
     * puts in its queues, and after freeing room in them if want_space.
     * recheck() runs once the doorbell is armed (a message that arrived just
     * before is not missed): no sleep if it finds work.  Returns 1 rung, 0
     * timed out or work found, -1 not possible here (never call again). */
    int (*nap)(long timeout_us, int want_space, int (*recheck)(void));
} wh_chan_ops_t;

/* Correctly typed refusals for operations a channel does not offer. */
int wh_chan_nosup_get(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c);
int wh_chan_nosup_put(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c);
int wh_chan_nosup_bulk_recv(int wpeer, const wh_data_t *dst, uint64_t *token, wh_comp_t *c);
int wh_chan_nosup_bulk_send(int wpeer, uint64_t token, const wh_data_t *src, wh_comp_t *c);

/* The registry (chan/registry.c): every channel, in order of preference
 * for equal reach.  Ids are indexes into it. */
enum wh_chan_id { WH_CHAN_SELF = 0, WH_CHAN_SHM = 1, WH_CHAN_NET = 2, WH_CHAN_MAX = 3 };
extern const wh_chan_ops_t *const wh_chans[WH_CHAN_MAX];
extern int wh_chan_usable[WH_CHAN_MAX]; /* initialized and able to serve peers */
/* why a channel is not usable ("" if it is, or none was given): its init records
 * it with wh_chan_set_why for the coordinator's error when no channel reaches a peer */
extern char wh_chan_why[WH_CHAN_MAX][200];
void wh_chan_set_why(int chan, const char *why);
extern wh_chan_caps_t wh_chan_caps[WH_CHAN_MAX]; /* filled by query() after init */
int wh_chan_by_name(const char *name);   /* id, or -1 */
int wh_chans_init(void);                 /* phases + barriers, fallback channels only when needed */
void wh_chans_finalize(void);
void wh_chans_check_peers(void);         /* check_peers of every usable channel */
extern int (*wh_chan_poll_fns[WH_CHAN_MAX])(void);
extern int wh_chan_npoll;
/* Poll the channels with peers once (inline: the engine's hot loop). */
static inline int wh_chans_progress(void)
{
    int n = 0;
    for (int i = 0; i < wh_chan_npoll; i++)
        n += wh_chan_poll_fns[i]();
    return n;
}
extern int wh_chan_polled[WH_CHAN_MAX];  /* channel serves at least one peer (set by the coordinator) */
void wh_chans_poll_set(void);            /* after wh_chan_polled changed */

/* Open the network channel now if it was not opened at init (it connects
 * processes of different groups: MPI_Comm_spawn) and publish this process's
 * endpoint under its global id for the other groups; 0 or an MPI error. */
int wh_chan_net_dyn_open(void);
/* Peer index of a process of another group by its global id (core/peers.h),
 * its endpoint looked up and added on first use; -1 if unknown. */
int wh_net_peer_of_gid(uint32_t gid);

/* channel ops tables (one per directory) */
extern const wh_chan_ops_t wh_chan_self_ops, wh_chan_shm_ops, wh_chan_net_ops;
#endif
