/* Protocol-layer internals shared by the files of src/proto. */
#ifndef WH_PROTO_PROTO_H
#define WH_PROTO_PROTO_H
#include "chan/chan.h"
#include "proto/request.h"

/* An unexpected message: header arrived before a matching receive was posted. */
typedef struct wh_uq {
    struct wh_uq *next, *prev;
    wh_hdr_t hdr;
    int wpeer;
    int chan;
    size_t plen;
    void *data;            /* EAGER: the payload copy; RTS: channel payload copy */
    unsigned char small[64];
} wh_uq_t;

extern wh_tab_t wh_req_tab;

/* posted-receive and unexpected queues */
int wh_match_post(wh_req_t *r);             /* match against unexpected or post */
void wh_match_deliver(wh_req_t *r, wh_uq_t *u); /* deliver an unexpected message into r */
void wh_match_finalize(void);

/* messages waiting for channel resources (per-peer FIFO preserved) */
int wh_pending_push(void);
int wh_send_ctrl(int chan, int wpeer, const wh_hdr_t *h, const void *raw, size_t len);

/* the channel table and the per-peer choice (src/coord) */
extern uint8_t *wh_peer_chan;               /* world rank -> channel id */
extern int wh_chan_active[WH_CHAN_MAX];     /* channel has at least one peer */
extern int wh_chan_usable[WH_CHAN_MAX];     /* channel initialized and can serve peers */
extern size_t wh_eager_limit[WH_CHAN_MAX];  /* largest eager message per channel */
int wh_coord_init(void);
void wh_coord_finalize(void);
void wh_progress_init(void);
#endif
