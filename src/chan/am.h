/* The active-message registry.  Whoever needs messages of its own (point-to-
 * point and its rendezvous handshake, collectives' control traffic, one-sided,
 * later the device and remote-GPU services) registers a handler once, at
 * MPI_Init, and gets the id to put in wh_hdr_t.type.  Every rank registers in
 * the same order, so ids agree across the job.  Channels hand every inbound
 * message to wh_am_dispatch; the payload is valid only during the call. */
#ifndef WH_CHAN_AM_H
#define WH_CHAN_AM_H
#include <stddef.h>
#include "chan/chan.h"

typedef void (*wh_am_handler_t)(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);

#define WH_AM_MAX 64
extern wh_am_handler_t wh_am_table[WH_AM_MAX];

/* Register fn under a name (for logs); returns its id (>= 1) or an MPI error (< 0 never). */
int wh_am_register(const char *name, wh_am_handler_t fn, uint8_t *id);
const char *wh_am_name(unsigned id);
void wh_am_reset(void); /* MPI_Finalize */
void wh_am_unknown(int chan, int wpeer, const wh_hdr_t *h);

static inline void wh_am_dispatch(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen)
{
    wh_am_handler_t f = h->type < WH_AM_MAX ? wh_am_table[h->type] : NULL;
    if (__builtin_expect(f != NULL, 1))
        f(chan, wpeer, h, payload, plen);
    else
        wh_am_unknown(chan, wpeer, h);
}
#endif
