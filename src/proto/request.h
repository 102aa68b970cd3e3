/* Requests: the state of one point-to-point operation, shared by the protocol
 * layer and the channels (which move its bytes). */
#ifndef WH_PROTO_REQUEST_H
#define WH_PROTO_REQUEST_H
#include <stdint.h>
#include "chan/chan.h"
#include "proto/p2p.h"

enum wh_req_kind { WH_REQ_SEND = 1, WH_REQ_RECV, WH_REQ_GREQ, WH_REQ_NBC };

struct wh_req {
    wh_obj_t obj;                /* handle = the MPI_Request */
    uint8_t kind;                /* wh_req_kind */
    uint8_t mode;                /* wh_send_mode */
    uint8_t persistent;          /* created by *_init; survives completion */
    uint8_t user_freed;          /* MPI_Request_free before completion */
    volatile int complete;       /* set last, after status is filled */
    int active;                  /* persistent: started and not yet completed by a wait/test */
    int cancelled;
    int err;                     /* error code to report */
    MPI_Status status;

    /* the message */
    void *buf;
    MPI_Count count;
    wh_dtype_t *dt;
    size_t bytes;                /* send: message bytes; recv: buffer capacity in bytes */
    int rank, tag;               /* as given (comm ranks; recv may hold wildcards) */
    wh_comm_t *comm;
    uint32_t ctx;                /* context id incl. offset */
    int wpeer;                   /* world rank of the peer (recv: once matched) */
    int chan;                    /* channel moving it (index into wh_chans) */

    /* protocol state (src/proto; channels never see requests) */
    int mem;                     /* wh_mem_kind of buf */
    uint8_t rproto;              /* rendezvous: wh_proto_id moving the data */
    uint8_t trace;               /* device buffers: how the workload tracer counts it (WH_TRACE_*) */
    uint8_t want_put;            /* recv: ask the sender of a rendezvous to write (WH_RECV_WANTS_PUT) */
    size_t msg_len;              /* recv: incoming message length (may exceed bytes) */
    size_t xfer_len;             /* rendezvous: bytes the receiver takes (min(len, capacity)) */
    size_t xfer_off;             /* rendezvous: bytes moved so far (device pipeline receiver: ring chunk index of its first chunk) */
    uint64_t remote;             /* rendezvous: the peer's request id */
    wh_comp_t comp;              /* completion of a channel get/bulk operation on this request */
    int sync_pending;            /* sync send: waiting for the match acknowledgement */
    int data_pending;            /* send: payload not yet fully out */
    int cancel_pending;          /* send: MPI_Cancel asked the receiver, no answer yet */
    uint64_t linked;             /* buffered send's user request: id of the internal send carrying the message */

    /* queue links (posted queue, pending send queue, channel lists) */
    struct wh_req *next, *prev;

    /* generalized / nonblocking-collective hook */
    int (*poll_fn)(struct wh_req *);
    void *extra;
    uint64_t seq;                /* arrival order for wildcard matching */
};

/* ids carried in headers */
static inline uint64_t wh_req_id(const wh_req_t *r) { return (uint64_t)(uint32_t)r->obj.handle; }
wh_req_t *wh_req_from_id(uint64_t id);   /* NULL if not a live request */
wh_req_t *wh_req_get(MPI_Request h);     /* user handle -> request, NULL if invalid */

wh_req_t *wh_req_alloc(int kind);
/* The request's buffer as channels see it: bytes [skip, skip+len) of its packed stream. */
void wh_req_data(wh_req_t *r, size_t skip, size_t len, wh_data_t *d);
/* Block until r is complete: its poll_fn (if any), the progress engine and
 * the waiting policy.  The only wait loop of the library. */
void wh_req_block(wh_req_t *r);
/* Mark complete (the protocol layer calls these when bytes have moved). */
void wh_req_send_done(wh_req_t *r);
void wh_req_recv_done(wh_req_t *r);
#endif
