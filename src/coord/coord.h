/* The coordinator: one function (peer, bytes, memory kind, operation) ->
 * (channel, protocol).  The channel serving each peer is chosen once at init
 * from what every channel says it can do for that pair (reaches(), caps);
 * the protocol per message from the thresholds in the tunable table.  Every
 * decision is counted for WHARF_REPORT=channels and explained (with the
 * reasons for rejected channels) for WHARF_REPORT=locality. */
#ifndef WH_COORD_COORD_H
#define WH_COORD_COORD_H
#include <stddef.h>
#include <stdint.h>

#include "chan/chan.h"

/* operations the coordinator decides for */
enum wh_opk {
    WH_OPK_SEND = 0, /* two-sided message, sender side: eager or rendezvous */
    WH_OPK_RNDV,     /* rendezvous, receiver side: how the bulk data moves */
    WH_OPK_PUT,      /* one-sided (later) */
    WH_OPK_GET,
    WH_OPK_ATOMIC,
    WH_OPK_MAX
};

/* protocols */
enum wh_proto_id {
    WH_PROTO_EAGER = 0, /* header + payload in one active message */
    WH_PROTO_RNDV,      /* sender: request-to-send, the receiver decides how the data moves */
    WH_PROTO_GET,       /* receiver pulls with the channel's zero-copy get (CMA, RDMA read) */
    WH_PROTO_BULK,      /* receiver posts a channel bulk stream, clear-to-send carries its token */
    WH_PROTO_FRAG,      /* clear-to-send, then pipelined fragments as active messages */
    WH_PROTO_PUT,       /* zero-copy put (one-sided, later) */
    WH_PROTO_AM,        /* emulated through active messages (one-sided, later) */
    WH_PROTO_CUDA_IPC,  /* receiver maps the sender's device buffer (CUDA IPC) and copies */
    /* one-sided paths (src/rma, WHARF_REPORT=channels) */
    WH_PROTO_LDST,      /* load/store into a node-region window */
    WH_PROTO_ATOMIC,    /* accumulate with CPU atomics on a node-region window */
    WH_PROTO_ACCLOCK,   /* accumulate under a node-region window's lock word */
    WH_PROTO_CMA,       /* put/get by the shm channel's zero-copy (process_vm_readv/writev) */
    WH_PROTO_FABRIC,    /* put/get by the net channel's zero-copy (libfabric RMA) */
    WH_PROTO_CUDA_VMM,  /* receiver maps the sender's device buffer from a VMM file descriptor (CUDA IPC, vmm.c) */
    WH_PROTO_FATOMIC,   /* accumulate, fetch-and-op, compare-and-swap by libfabric atomics */
    WH_PROTO_PIPE,      /* device buffers: chunks through a node-region ring, async copies on both sides */
    WH_PROTO_PUSH,      /* sender pushes header + fragments at once, no handshake (eager through several slots) */
    WH_PROTO_RMA_SYNC,  /* one-sided flush/unlock/complete request sent as a message of its own */
    WH_PROTO_RMA_SYNC_MERGED, /* the same request carried by the origin's last operation message (msg.c) */
    WH_PROTO_SPLIT,     /* co-resident rendezvous copied by both ranks at once, single copy each (split.c) */
    WH_PROTO_REGION,    /* co-resident rendezvous from the node-shared heap, copied out of the region by the receiver */
    WH_PROTO_MAX
};
extern const char *const wh_proto_names[WH_PROTO_MAX];

typedef struct wh_coord_choice {
    uint8_t chan, proto;
} wh_coord_choice_t;

/* What the coordinator knows of one peer (filled at init). */
typedef struct wh_coord_peer {
    uint8_t chan;       /* channel serving it */
    uint32_t caps;      /* WH_CAP_* that hold for this pair on that channel */
    size_t eager_max;   /* largest host message sent eagerly to it (wh_coord_peer_eager) */
} wh_coord_peer_t;

/* Thresholds (from the tunable table and the channels' caps). */
typedef struct wh_coord_limits {
    size_t eager_max[WH_CHAN_MAX]; /* largest eager message per channel */
    size_t max_am[WH_CHAN_MAX];    /* largest active-message payload per channel */
    uint32_t mem_kinds[WH_CHAN_MAX];
    size_t zcopy_min;              /* smallest rendezvous moved by a zero-copy get (WHARF_CMA_MIN) */
    size_t dev_eager_max;          /* largest device-buffer message sent eagerly, staged (WHARF_CUDA_EAGER_MAX) */
    size_t push_max[WH_CHAN_MAX];  /* largest host message pushed without a handshake (WHARF_SHM_PUSH_MAX; 0: never) */
} wh_coord_limits_t;

/* What the sender of a rendezvous exposed (bits of `remote` below). */
enum {
    WH_REMOTE_ADDR = 1,     /* a contiguous host address a zero-copy get can read */
    WH_REMOTE_CUDA_IPC = 2, /* a CUDA IPC handle (legacy or VMM) of its device buffer (co-resident peers) */
    WH_REMOTE_CUDA_VMM = 4, /* with CUDA_IPC: the handle is a VMM file descriptor (works across PID namespaces) */
    /* not the sender's but the receiver's: it asked the sender to write (a
     * contiguous host buffer whose owner has other copies to make: a gather's root) */
    WH_RECV_WANTS_PUT = 8,
};
/* The decision as a pure function (unit-tested); mem is the memory kind
 * that constrains the transfer (either side's non-host kind). */
wh_coord_choice_t wh_coord_decide_pure(const wh_coord_peer_t *p, const wh_coord_limits_t *lim, size_t bytes,
                                       int mem, int op, int remote);

/* A candidate channel for a peer, at init. */
typedef struct wh_coord_cand {
    int reaches;        /* the channel reaches the peer */
    double lat_us;      /* declared latency */
    const char *name;
} wh_coord_cand_t;
/* Index of the channel to use among n candidates (lowest latency among those
 * that reach; force = a channel name from WHARF_CHANNEL or "auto"), -1 if none. */
int wh_coord_pick_pure(int n, const wh_coord_cand_t *cands, const char *force, int self);

/* ---- the live state ---- */
extern wh_coord_peer_t *wh_coord_peers;     /* per peer index (core/peers.h) */
/* Peer index of a process by global id (core/peers.h): a world rank, or a
 * process of another group reached through the network channel (opened on
 * first use); -1 if it cannot be reached. */
int wh_coord_peer_of_gid(uint32_t gid);
extern wh_coord_limits_t wh_coord_lim;
extern double wh_coord_cma_ratio; /* process_vm_readv / memcpy time on 256 KiB, measured at init (0: not measured) */
extern int wh_coord_cma_slow;     /* that ratio is above WHARF_CMA_SLOW_RATIO: CMA only for node-heap collectives */
extern int wh_coord_cma_p2p_slow; /* and CMA not used for point-to-point and one-sided (not oversubscribed, WHARF_CMA_OVERSUB) */
extern uint64_t wh_coord_count[WH_CHAN_MAX][WH_PROTO_MAX];
extern uint64_t wh_coord_bytes[WH_CHAN_MAX][WH_PROTO_MAX];

int wh_coord_init(void);
/* The eager limit of a peer on channel c with caps: the channel's, but a
 * co-resident pair that CMA serves, on a node with no more ranks than cpus
 * (oversubscribed: 1), takes single copy above WHARF_CMA_MIN. */
size_t wh_coord_peer_eager(const wh_coord_limits_t *lim, int c, uint32_t caps, int oversubscribed);
void wh_coord_finalize(void);
void wh_coord_report_counts(void); /* WHARF_REPORT=channels, at finalize */

static inline void wh_coord_note(int chan, int proto, size_t bytes)
{
    wh_coord_count[chan][proto]++;
    wh_coord_bytes[chan][proto] += bytes;
}

/* How a device-buffer message counts for the workload tracer (coord/gpu.h). */
enum { WH_TRACE_NB = 0, WH_TRACE_BLK = 1, WH_TRACE_NONE = 2 };

/* Device memory: the sender's decision by the switch points of the peer's
 * traced class (out of line; counts the message with the tracer). */
int wh_coord_dev_send(int wpeer, size_t bytes, int how);
/* Device memory: the receiver's decision for a matched rendezvous (CUDA IPC,
 * pipeline or staged by the class's switch points and the GPU locality). */
wh_coord_choice_t wh_coord_dev_rndv(int wpeer, size_t bytes, int mem, int remote, int how);
/* Device memory: an eager message into a device buffer (counted; the GDRCopy limits of the class set). */
void wh_coord_dev_recv(int wpeer, size_t bytes, int how);

/* The sender's decision, inline on the hot path: eager when it fits the
 * channel's threshold; device memory (small enough by its class's switch
 * point) is staged into the eager payload by the channel (wh_mem_copy).
 * Host memory decides on one test of the size and one of the kind, as
 * before device buffers (callgrind: the same instructions per 8-byte send). */
static inline wh_coord_choice_t wh_coord_send(int wpeer, size_t bytes, int mem, int how)
{
    wh_coord_choice_t c;
    c.chan = wh_coord_peers[wpeer].chan;
    if (__builtin_expect(bytes <= wh_coord_peers[wpeer].eager_max && mem == WH_MEM_HOST, 1))
        c.proto = WH_PROTO_EAGER;
    else if (mem != WH_MEM_HOST)
        c.proto = (uint8_t)wh_coord_dev_send(wpeer, bytes, how);
    else /* push where no single copy would serve it (the receiver decides that at the match) */
        c.proto = bytes <= wh_coord_lim.push_max[c.chan] &&
                          (!(wh_coord_peers[wpeer].caps & WH_CAP_GET_ZCOPY) || bytes < wh_coord_lim.zcopy_min)
                      ? WH_PROTO_PUSH
                      : WH_PROTO_RNDV;
    return c;
}

/* The receiver's decision for a matched rendezvous. */
static inline wh_coord_choice_t wh_coord_rndv(int wpeer, size_t bytes, int mem, int remote)
{
    return wh_coord_decide_pure(&wh_coord_peers[wpeer], &wh_coord_lim, bytes, mem, WH_OPK_RNDV, remote);
}
#endif
