/* The network channel over libfabric (FI_EP_RDM, tagged messages): state
 * shared by the files of src/chan/net.  See docs/NET.md for the wire format.
 *
 *   net_init.c   provider choice, endpoint setup, address exchange, finalize
 *   net_io.c     active messages: bounce pools, send queue, progress, inbound dispatch
 *   net_bulk.c   bulk streams: receiver-posted tagged chunks
 *   net_rma.c    window registration, fi_write/fi_read for one-sided puts and gets
 *
 * Tags (B = usable tag bits of the provider, 64 for tcp;ofi_rxm):
 *   control  0 (small: the whole message fits WH_NET_SMALL_BUF bytes) or 1 (larger eager
 *            messages), each matched exactly (no ignore mask, which the 1.17 shm provider
 *            mishandles for unexpected messages): each class has its own posted buffers
 *   bulk     bit B-1 = 1, bits B-2..32 = sender's world rank, bits 31..0 = cookie + chunk
 * An active message is a wh_net_pre_t (sender's world rank, per-pair sequence
 * number) + wh_hdr_t + payload and lands in a pre-posted receive buffer; the
 * sequence number hands inbound messages up in send order even when a
 * provider completes receives out of order.  Bulk streams (bulk_recv/send):
 * the receiver posts tagged receives for the chunks under a cookie of its
 * own and hands the token (cookie, chunk size) to the protocol layer, which
 * carries it to the sender. */
#ifndef WH_CHAN_NET_NET_H
#define WH_CHAN_NET_NET_H
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "chan/chan.h"


/* Channel prefix of every control message.  token is the receiver's
 * endpoint token (docs/NET.md, "Who may send"): a random 64-bit value each
 * rank draws at open and publishes only with its endpoint name through PMI,
 * so a process outside the job that reaches the endpoint cannot produce it;
 * a message without it is dropped before anything reads its header. */
typedef struct wh_net_pre {
    uint32_t rank;   /* sender's global id (core/peers.h): its world rank in a job without spawning */
    uint16_t seq;    /* per directed pair */
    uint16_t zero;
    uint64_t token;  /* the receiver's endpoint token */
} wh_net_pre_t;
_Static_assert(sizeof(wh_net_pre_t) == 16, "wh_net_pre_t is 16 bytes on the wire");
#define WH_NET_TOKEN_HEX 16          /* hex digits of a token in the published name ("ADDRHEX/TOKENHEX") */
#define WH_NET_HDR_OFF sizeof(wh_net_pre_t)                    /* wh_hdr_t */
#define WH_NET_PL_OFF (sizeof(wh_net_pre_t) + sizeof(wh_hdr_t)) /* payload */
#define WH_NET_WINDOW 8              /* bulk chunks in flight per transfer and side, at most */
#define WH_NET_WINDOW_BIG 4          /* ... when chunks are larger than ofi_rxm's eager limit */
#define WH_NET_MAXIOV 8              /* iovecs per bulk chunk before falling back to a bounce */
#define WH_NET_CHUNK_MAX ((size_t)8 << 20)
#define WH_NET_SMALL_BUF 16384       /* bytes of a small control buffer (prefix, header, payload) */

enum wh_net_op_kind {
    WH_NET_OP_RX = 1,   /* pre-posted control receive buffer */
    WH_NET_OP_TX,       /* control/eager send from a bounce buffer */
    WH_NET_OP_BSEND,    /* one bulk chunk, sender side */
    WH_NET_OP_BRECV,    /* one bulk chunk, receiver side */
    WH_NET_OP_RMA,      /* one chunk of an fi_write/fi_read (net_rma.c; x: its transfer, staged: 1 = write) */
};

struct wh_net_xfer;

/* One posted libfabric operation.  fctx must stay first: the completion's
 * op_context points at it. */
typedef struct wh_net_op {
    struct fi_context2 fctx;
    struct wh_net_op *next;     /* free list or the send queue */
    uint8_t kind;               /* wh_net_op_kind */
    uint8_t posted;             /* handed to the provider, completion outstanding */
    uint8_t staged;             /* BSEND/BRECV: this chunk goes through buf */
    uint8_t big;                /* RX/TX: a buffer of the large class (tag 1) */
    int peer;                   /* world rank */
    size_t len;                 /* TX: bytes in buf; BSEND/BRECV: chunk bytes */
    char *buf;                  /* RX/TX: bounce buffer; BSEND/BRECV: staging or NULL */
    size_t bufcap;              /* BSEND/BRECV: staging capacity */
    struct wh_net_xfer *x;      /* BSEND/BRECV */
    size_t chunk;               /* BSEND/BRECV: chunk index */
} wh_net_op_t;

/* One bulk transfer, either side. */
typedef struct wh_net_xfer {
    wh_data_t data;             /* the user buffer (the protocol keeps its ctx alive) */
    wh_comp_t *comp;
    int peer;                   /* world rank of the other side */
    int is_send;
    uint32_t cookie;            /* chunk k uses cookie + k */
    uint64_t tagbase;           /* bulk bit | sender's rank field */
    size_t total;               /* bytes to move (receiver: min(len, capacity)) */
    size_t csize;               /* chunk size chosen by the receiver */
    int window;                 /* chunks in flight at most (<= WH_NET_WINDOW) */
    size_t nchunks, next;       /* chunks in total, next chunk to start */
    int inflight;               /* chunk operations posted or queued */
    int starting;               /* inside the first window's posts: finish later */
    int err;                    /* first libfabric error (negative), 0 if none */
    struct wh_net_xfer *lnext, *lprev; /* live transfers (freed at close) */
    wh_net_op_t ops[WH_NET_WINDOW];
} wh_net_xfer_t;

/* An inbound control message that arrived ahead of its sequence number:
 * either its receive buffer is held (op != NULL, data points into it) or,
 * when too many buffers are held already, a copy follows the entry. */
typedef struct wh_net_stash {
    struct wh_net_stash *next;
    uint16_t seq;
    size_t len;
    wh_net_op_t *op;
    char *data;                 /* the whole message, prefix first */
    char copy[];
} wh_net_stash_t;

typedef struct wh_net_peer {
    fi_addr_t addr;             /* FI_ADDR_NOTAVAIL: no endpoint published */
    uint64_t token;             /* the peer's endpoint token, sent in every prefix to it */
    uint16_t tx_seq, rx_seq;
    wh_net_stash_t *stash;      /* sorted by seq */
} wh_net_peer_t;

typedef struct wh_net_state {
    int open;                   /* endpoint enabled */
    int rank, size;
    uint32_t gid;               /* this process's global id (core/peers.h): the prefix's rank field */
    int npeers_cap;             /* entries of peers[] (world ranks + processes of other groups) */
    char myname[600];           /* this endpoint's published name */
    int published;              /* myname is under the global PMI key */
    char prov[64];
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_cq *cq;
    struct fid_av *av;
    struct fid_ep *ep;

    wh_net_peer_t *peers;
    uint64_t bulk_bit;          /* tag bit of the bulk space */
    int rank_bits;              /* width of the sender field in bulk tags */
    size_t ctrl_cap;            /* largest active-message payload */
    size_t small_cap;           /* largest payload of a small-class message (tag 0) */
    size_t eager_max;           /* WHARF_NET_EAGER_MAX as the buffers allow */
    size_t inject_max;          /* provider inject size */
    size_t csize;               /* bulk chunk size */
    size_t csmall;              /* chunk size of a transfer that starts alone (0: always csize) */
    int bulk_rx;                /* live receiving bulk transfers */
    int maxiov;

    wh_net_op_t *rx;            /* nrx[0] small then nrx[1] large control receive buffers */
    int nrx[2];
    char *rxmem;

    wh_net_op_t *tx_free[2];    /* bounce buffers per class, grown in slabs up to tx_max in all */
    void *tx_slabs;             /* list of slabs (first word = next) */
    int tx_count, tx_max, tx_busy;
    wh_net_op_t *q_head, *q_tail; /* operations waiting for the provider (FI_EAGAIN) */
    int queued;
    uint32_t next_cookie;
    wh_net_xfer_t *xfers;       /* live bulk transfers */
    int in_progress;
    int rx_held[2];             /* receive buffers of each class held by stashed messages */
    unsigned idle;              /* consecutive progress calls without events */
    int auto_progress;          /* provider progresses data on its own thread */
    uint64_t n_reordered, n_eagain;
    uint64_t token;             /* this endpoint's token: inbound control messages must carry it */
    int directed;               /* FI_DIRECTED_RECV: bulk receives match their peer's address only */
    uint64_t n_dropped;         /* inbound messages without the token (or malformed), dropped */
    uint64_t n_dropped_logged;  /* n_dropped at the last warning */
    double drop_warned;         /* time of the last summary warning */
    int rma;                    /* FI_RMA: windows are registered (WHARF_NET_RMA) */
    int rma_virt;               /* remote addresses are virtual addresses (FI_MR_VIRT_ADDR), else offsets */
    int rma_no_dc;              /* the provider refused a delivery-complete write: puts use active messages */
    int atomic;                 /* the endpoint has FI_ATOMIC (WHARF_NET_ATOMICS): atomic/atomic_query */
    size_t rma_max;             /* largest fi_write/fi_read */
    size_t rxm_eager;           /* ofi_rxm's eager limit in this process (0: not rxm); every rank's must match */
} wh_net_state_t;

extern wh_net_state_t wh_net;

/* The endpoint name published through PMI, "ADDRHEX/TOKENHEX/CAP:RXM" (net_name.c). */
typedef struct wh_net_name {
    unsigned char addr[256];    /* provider address */
    size_t alen;
    uint64_t token;             /* endpoint token */
    unsigned long long cap;     /* largest control payload */
    unsigned long long rxm;     /* ofi_rxm's eager limit (0: not rxm) */
} wh_net_name_t;
/* 0, or -1 when buf (cap bytes) is too small */
int wh_net_name_format(char *buf, size_t cap, const wh_net_name_t *nm);
/* 0, or -1 for anything the formatter does not write */
int wh_net_name_parse(const char *n, wh_net_name_t *nm);

/* control path (net_io.c) */
int wh_net_io_init(void);
void wh_net_io_finalize(void);
int wh_net_progress(void);
int wh_net_am_send(int wpeer, const wh_hdr_t *h, const wh_data_t *d);
/* The same in two steps: take a send buffer (payload goes at buf +
 * WH_NET_PL_OFF), later commit it with its header (never fails). */
int wh_net_ctrl_take(int wpeer, size_t plen, int internal, wh_net_op_t **op);
void wh_net_ctrl_commit(wh_net_op_t *op, const wh_hdr_t *h);
/* Post op now, or queue it behind earlier queued operations. */
void wh_net_submit(wh_net_op_t *op);
int wh_net_drain(double seconds);
void wh_net_drop_summary(void); /* close: how many unauthenticated messages were dropped */

/* bulk streams (net_bulk.c) */
int wh_net_bulk_recv(int wpeer, const wh_data_t *dst, uint64_t *token, wh_comp_t *c);
int wh_net_bulk_send(int wpeer, uint64_t token, const wh_data_t *src, wh_comp_t *c);
/* Post a bulk op (fi_tsendv/fi_trecvv); returns 0, -FI_EAGAIN or another error. */
ssize_t wh_net_bulk_post(wh_net_op_t *op);
void wh_net_bulk_done(wh_net_op_t *op, int err);
void wh_net_bulk_finalize(void); /* frees transfers left at close */

/* one-sided (net_rma.c) */
int wh_net_mem_reg(void *base, size_t len, uint64_t *rkey, uint64_t *rbase, void **handle);
void wh_net_mem_dereg(void *handle);
int wh_net_put_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c);
int wh_net_get_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c);
void wh_net_rma_done(wh_net_op_t *op, int err);
int wh_net_atomic_query(int ekind, int ebytes, int opi, int fetch, int cas);
int wh_net_atomic(int wpeer, uint64_t raddr, uint64_t rkey, const wh_chan_atomic_t *a, wh_comp_t *c);

/* Entry points used by init() and by tests that exchange addresses without
 * PMI.  wh_net_open: choose the provider, open the endpoint and return its
 * name hex-encoded in name (cap bytes).  *usable = 0 (with a logged reason)
 * if no provider works.  wh_net_connect: insert the peers' names (NULL or ""
 * = peer without a network endpoint); names[r] is world rank r. */
int wh_net_open(int rank, int size, char *name, size_t cap, int *usable);
int wh_net_connect(const char *const *names);
int wh_net_close(void);
/* peers known to the channel: world ranks, then processes of other groups */
static inline int wh_net_npeers(void)
{
    extern int wh_peers_n;
    return wh_peers_n > wh_net.size ? wh_peers_n : wh_net.size;
}
/* Peer index of a sender's global id: its world rank, or a process of
 * another group (found, or looked up through PMI and added); -1 if unknown. */
int wh_net_peer_of_gid(uint32_t gid);
/* the provider offers FI_HMEM: 1 yes, 0 no, -1 not asked (no CUDA driver) */
extern int wh_net_hmem;
#endif
