/* Protocol-layer internals shared by the files of src/proto.
 *
 * The protocols, each written once over the channel contract (chan/chan.h):
 *   eager     EAGER active message: header + payload (sync sends: SACK back on match)
 *   rendezvous RTS (sender's request id, its contiguous address if any); on the
 *             match the receiver asks the coordinator how the data moves:
 *               GET   zero-copy get from the sender's buffer, then FIN
 *               PUT   (a receiver that asked for it: a gather's root) CTS with the
 *                     receiver's address; the sender writes it (zero-copy put),
 *                     then FIN to the receiver (WH_FIN_RECV)
 *               BULK  the channel's receiver-posted stream; CTS carries its token
 *               FRAG  CTS; the sender pushes DATA fragments through active messages
 *               CUDA_IPC  the receiver maps the sender's device buffer, copies, FIN
 *               PIPE  CTS names a node-region ring; chunks move through it (pipe.c)
 *             (an empty transfer is just a FIN).
 *   push      (co-resident, no single copy, up to WHARF_SHM_PUSH_MAX) PUSH: header +
 *             the first fragment, then PDATA fragments at once, no handshake; the
 *             receiver buffers them while the message is unexpected (push.c).
 * Messages between two ranks on one channel keep their order (the channels'
 * contract), which together with FIFO matching gives MPI's non-overtaking rule. */
#ifndef WH_PROTO_PROTO_H
#define WH_PROTO_PROTO_H
#include "chan/am.h"
#include "mem/cuda/wh_cuda.h"
#include "chan/chan.h"
#include "coord/coord.h"
#include "coord/gpu.h"
#include "proto/request.h"

/* active-message ids of point-to-point (registered by wh_proto_init) */
typedef struct wh_p2p_am {
    uint8_t eager, rts, sack, cts, data, fin, cancel, cancel_ack, push, pdata;
} wh_p2p_am_t;
extern wh_p2p_am_t wh_p2p_am;

#define WH_HF_SYNC 0x1 /* EAGER: the sender waits for a SACK */
#define WH_HF_CANCELLED 0x1 /* CANCEL_ACK: the message was withdrawn before a receive matched it */
#define WH_FIN_RECV 0x1 /* FIN: to the receiver of a PUT rendezvous (sreq = its request id) */
#define WH_FIN_ERR 0x2  /* FIN to the receiver: the sender could not write the data */

/* RTS payload */
typedef struct wh_rts {
    uint64_t addr;  /* sender's contiguous buffer (zero-copy get), 0 if none */
    uint64_t rkey;  /* channel key for addr (0: none needed) */
    uint32_t mem;   /* memory kind of the sender's buffer */
    uint32_t flags; /* WH_RTS_* */
} wh_rts_t;
#define WH_RTS_CUDA_IPC 0x1 /* a wh_cuda_ipc_t follows: the receiver may map the device buffer */
#define WH_RTS_REGION 0x2   /* the buffer lies in the node-shared heap: rkey is its region offset (shm) */

/* RTS of a co-resident device buffer */
typedef struct wh_rts_ipc {
    wh_rts_t rts;
    wh_cuda_ipc_t ipc;
} wh_rts_ipc_t;

/* CTS payload (hdr.sreq = sender's request, hdr.len = bytes the receiver takes) */
typedef struct wh_cts {
    uint64_t rreq;  /* receiver's request id (FRAG: DATA fragments name it) */
    uint64_t token; /* BULK: the channel's token; PUT: the receiver's address */
    uint32_t proto; /* WH_PROTO_BULK, WH_PROTO_FRAG, WH_PROTO_PUT, WH_PROTO_SPLIT or WH_PROTO_REGION (token: a node-heap offset) */
    uint32_t aux;   /* SPLIT: the receiver's split line | 0x80 if the token is a node-heap offset | its generation << 8 (split.c) */
} wh_cts_t;

/* An unexpected message: header arrived before a matching receive was posted. */
typedef struct wh_uq {
    struct wh_uq *next, *prev;
    wh_hdr_t hdr;
    int wpeer;
    int chan;
    size_t plen;           /* PUSH: bytes arrived so far (hdr.len in all) */
    void *data;            /* EAGER: the payload copy; RTS: its payload copy; PUSH: the message */
    unsigned char small[64];
} wh_uq_t;

extern wh_tab_t wh_req_tab;

int wh_proto_init(void);     /* registers the active messages; before the channels */
void wh_proto_finalize(void);

/* posted-receive and unexpected queues (match.c) */
int wh_match_post(wh_req_t *r);             /* match against unexpected or post */
void wh_match_deliver(wh_req_t *r, wh_uq_t *u); /* deliver an unexpected message into r */
void wh_match_finalize(void);
void wh_am_eager(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_am_rts(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
/* send cancellation: the sender asks (CANCEL names its request in sreq), the
   receiver withdraws the message if it is still unexpected and answers */
void wh_am_cancel(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_am_cancel_ack(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);

/* messages waiting for channel resources, per-peer FIFO (send.c) */
typedef struct wh_pend wh_pend_t;
extern wh_pend_t *wh_pend_head;
int wh_pending_push(void);
int wh_pending_count(void);
/* Send a protocol message of rawlen (<= 64) bytes, queued behind earlier
 * traffic to the peer if the channel is busy. */
int wh_send_ctrl(int chan, int wpeer, const wh_hdr_t *h, const void *raw, size_t len);

/* push (push.c): receiver side; the sender's fragments go out through the
   FRAG streams of rndv.c */
void wh_am_push(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_am_pdata(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
/* a PUSH header matched request r (payload: the plen bytes arrived so far) */
void wh_push_matched(wh_req_t *r, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
/* an unexpected PUSH message u is still missing fragments */
int wh_push_partial(const wh_uq_t *u);
/* an unexpected PUSH message (first plen bytes in u->data) waits for its fragments */
int wh_push_track(wh_uq_t *u);
void wh_push_finalize(void);
/* sender: start the stream of request r after its PUSH header took `first` bytes */
void wh_rndv_stream(wh_req_t *r, size_t first);

/* rendezvous (rndv.c) */
int wh_rndv_start(wh_req_t *r, int chan, const wh_hdr_t *h); /* sender: the RTS */
int wh_send_rts(wh_req_t *r, const wh_hdr_t *h, const void *raw, size_t len); /* send.c */
void wh_rndv_matched(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
int wh_rndv_push(void);        /* FRAG senders: push fragments while the channels take them */
extern int wh_rndv_nstreams;
void wh_am_sack(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_am_cts(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
/* Both ranks copy a co-resident rendezvous at once (split.c).  Receiver: 0 if
 * it took the transfer (CTS sent; the request completes), -1 to use another
 * protocol; sender: its part after the CTS (the receiver's FIN completes it). */
int wh_split_recv(wh_req_t *r, int wpeer, uint64_t saddr, uint64_t srkey, const char *dst, size_t n);
void wh_split_send(wh_req_t *s, int wpeer, const wh_cts_t *cts);
void wh_am_data(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_am_fin(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);

/* the device-buffer pipeline between co-resident ranks (pipe.c) */
/* receiver: move matched rendezvous r (n bytes) through the peer's ring; WH_FALLBACK: no ring, use another protocol */
int wh_pipe_recv(wh_req_t *r, int chan, int wpeer, const wh_hdr_t *h, size_t n);
/* sender: its CTS named the ring at node-region offset off */
int wh_pipe_send(wh_req_t *s, int chan, int wpeer, uint64_t off);
void wh_pipe_finalize(void); /* before the node region goes away */
extern int wh_pipe_active;

void wh_progress_init(void);
#endif
