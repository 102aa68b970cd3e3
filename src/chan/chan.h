/* The channel interface.  Every channel (self, shm, cma, net; later device
 * channels) is one directory with one ops table.  The protocol layer matches
 * messages; a channel moves headers and bytes, and owns its rendezvous
 * protocol (how bulk data moves after the receiver matched an RTS). */
#ifndef WH_CHAN_CHAN_H
#define WH_CHAN_CHAN_H
#include <stddef.h>
#include <stdint.h>
#include "proto/request.h"

/* Wire header of every message the protocol layer sends (32 bytes). */
typedef struct wh_hdr {
    uint8_t type;     /* wh_msg_type */
    uint8_t flags;    /* WH_HF_* */
    uint16_t cid;     /* channel-private */
    uint32_t ctx;     /* context id (communicator + p2p/coll offset) */
    int32_t src;      /* sender's rank in that communicator */
    int32_t tag;
    uint64_t len;     /* message length in bytes (packed stream) */
    uint64_t sreq;    /* sender's request id (RTS, sync sends) */
} wh_hdr_t;

enum wh_msg_type {
    WH_MSG_EAGER = 1,  /* header + len payload bytes */
    WH_MSG_RTS = 2,    /* rendezvous request; payload is channel-defined (<= 64 bytes) */
    WH_MSG_SACK = 3,   /* receiver matched a sync-mode eager message (sreq) */
    WH_MSG_CHAN = 16,  /* first channel-private type (CTS, FIN, DATA, ...) */
};
#define WH_HF_SYNC 0x1

#define WH_AGAIN 0x7fff0001  /* not an MPI error: resources busy, retry after progress */

enum wh_chan_id { WH_CHAN_SELF = 0, WH_CHAN_SHM = 1, WH_CHAN_NET = 2, WH_CHAN_MAX = 4 };

typedef struct wh_chan_ops {
    const char *name;
    int id;
    /* Init in phases with a PMI barrier between them: phase 0 publishes
     * (wh_pmi_put), phase 1 reads peers and connects, phase 2 finishes (e.g.
     * unlinks names).  Return MPI_SUCCESS or an error code; a channel that
     * cannot serve sets *usable = 0 (with a logged reason) instead of failing. */
    int (*init)(int phase, int *usable);
    int (*finalize)(void);
    /* Poll inbound, push queued outbound.  Returns events handled (>0 = progress). */
    int (*progress)(void);
    /* Send header h plus payload = bytes [0, h->len) of the packed stream of
     * (buf,count,dt), or no payload for h->len == 0 / non-EAGER types with
     * payload given raw in (raw, rawlen).  Returns MPI_SUCCESS once the payload
     * is copied out of the user buffer, WH_AGAIN if out of resources.  */
    int (*send_eager)(int wpeer, const wh_hdr_t *h, const void *buf, MPI_Count count, const wh_dtype_t *dt);
    int (*send_ctrl)(int wpeer, const wh_hdr_t *h, const void *raw, size_t rawlen);
    /* Rendezvous, sender side: send the RTS for sreq (header filled by the
     * caller) and later complete sreq with wh_req_send_done(). */
    int (*rndv_send)(wh_req_t *sreq, const wh_hdr_t *h);
    /* Rendezvous, receiver side: rreq matched an RTS (its header and payload);
     * move the data into rreq and call wh_req_recv_done(rreq). */
    int (*rndv_recv)(wh_req_t *rreq, const wh_hdr_t *h, const void *payload, size_t plen);
    size_t eager_max;   /* largest eager payload */
    int blocking_fd;    /* fd that becomes readable on inbound traffic, or -1 */
    /* Optional: the eager limit known only after init (e.g. cell size); NULL = eager_max. */
    size_t (*eager_cap)(void);
    /* Optional: call right before blocking in poll() on blocking_fd (after a
     * progress() that returned 0).  Returns 0 if blocking is safe, nonzero if
     * events are pending (poll progress() again).  A libfabric wait fd stays
     * readable until re-armed this way (fi_trywait).  NULL = always safe. */
    int (*wait_arm)(void);
    /* Optional: can this channel reach world rank wpeer?  Returns 1, or 0 with
     * *why set to a WH_WHY_* reason (locality/locality.h).  *single_copy (may be
     * NULL) tells whether large messages from wpeer move in one copy (CMA), else
     * *sc_why says why not.  NULL = reaches every peer. */
    int (*reaches)(int wpeer, int *why, int *single_copy, int *sc_why);
} wh_chan_ops_t;

extern const wh_chan_ops_t *wh_chans[WH_CHAN_MAX];
extern const wh_chan_ops_t wh_chan_self_ops, wh_chan_shm_ops;
/* not const: its init sets eager_max (WHARF_NET_EAGER_MAX) and blocking_fd (provider) */
extern wh_chan_ops_t wh_chan_net_ops;

/* Inbound entry point of the protocol layer: a channel received header h
 * (types EAGER, RTS, SACK) from world rank wpeer; payload points at plen bytes
 * valid only during the call. */
void wh_proto_incoming(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);

/* Send a control message (raw payload <= 64 bytes) through channel chan,
 * queueing it behind earlier traffic to that peer if the channel is busy.
 * Channels use it for their private rendezvous messages too. */
int wh_send_ctrl(int chan, int wpeer, const wh_hdr_t *h, const void *raw, size_t len);

/* Per-channel, per-protocol counters for WHARF_REPORT=channels. */
typedef struct wh_chan_stats {
    uint64_t msgs[WH_CHAN_MAX][3];  /* [chan][0=eager,1=rndv,2=single-copy] */
    uint64_t bytes[WH_CHAN_MAX][3];
} wh_chan_stats_t;
extern wh_chan_stats_t wh_stats;
#endif
