/* The coordinator: picks the channel for every peer (and, through each
 * channel's eager limit and rendezvous policy, the protocol per message size).
 * Co-residence comes from the locality layer (the node registry); each channel
 * says through its reaches() op whether it can serve a peer, and why not.
 * Every decision is recorded with its reasons for WHARF_REPORT=locality. */
#include <stdlib.h>
#include <string.h>

#include "locality/locality.h"
#include "proto/proto.h"
#include "util/log.h"
#include "util/tunables.h"

const wh_chan_ops_t *wh_chans[WH_CHAN_MAX] = {
    [WH_CHAN_SELF] = &wh_chan_self_ops,
    [WH_CHAN_SHM] = &wh_chan_shm_ops,
    [WH_CHAN_NET] = &wh_chan_net_ops,
};

uint8_t *wh_peer_chan;
int wh_chan_active[WH_CHAN_MAX];
wh_chan_stats_t wh_stats;
int wh_chan_usable[WH_CHAN_MAX] = {1, 1, 1, 0};
size_t wh_eager_limit[WH_CHAN_MAX];

/* The choice for one peer, as a pure function of what we know (testable). */
int wh_coord_pick(int me, int peer, int same_host, int shm_usable, int net_usable, const char *force)
{
    if (peer == me)
        return WH_CHAN_SELF;
    if (!strcmp(force, "net") && net_usable)
        return WH_CHAN_NET;
    if (same_host && shm_usable)
        return WH_CHAN_SHM;
    return WH_CHAN_NET;
}

int wh_coord_init(void)
{
    const char *force = wh_tun.channel;
    if (strcmp(force, "auto") && strcmp(force, "shm") && strcmp(force, "net"))
        return wh_error(MPI_ERR_OTHER, "WHARF_CHANNEL=%s: expected auto, shm or net", force);
    wh_peer_chan = malloc((size_t)wh_job.size);
    if (!wh_peer_chan)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    memset(wh_chan_active, 0, sizeof wh_chan_active);
    size_t want[WH_CHAN_MAX] = {SIZE_MAX, wh_tun.shm_eager_max, wh_tun.net_eager_max, 0};
    for (int c = 0; c < WH_CHAN_MAX; c++) {
        if (!wh_chans[c])
            continue;
        size_t cap = wh_chans[c]->eager_cap && wh_chan_usable[c] ? wh_chans[c]->eager_cap() : wh_chans[c]->eager_max;
        wh_eager_limit[c] = want[c] < cap ? want[c] : cap;
    }
    const wh_chan_ops_t *shm = wh_chans[WH_CHAN_SHM];
    for (int p = 0; p < wh_job.size; p++) {
        int shm_why = WH_WHY_NOT_LOCAL, sc = 0, sc_why = WH_WHY_NA;
        int shm_ok = p != wh_job.rank && wh_chan_usable[WH_CHAN_SHM] && shm->reaches &&
                     shm->reaches(p, &shm_why, &sc, &sc_why);
        if (p != wh_job.rank && ((!wh_chan_usable[WH_CHAN_SHM] && wh_job.local_index[p] >= 0) || wh_loc_failed()))
            shm_why = WH_WHY_NO_REGION;
        int c = wh_coord_pick(wh_job.rank, p, shm_ok, shm_ok, wh_chan_usable[WH_CHAN_NET], force);
        if (c == WH_CHAN_NET && !wh_chan_usable[WH_CHAN_NET])
            return wh_error(MPI_ERR_OTHER, "no channel reaches rank %d: %s, and the network channel is unavailable",
                            p, wh_loc_why_text(shm_why));
        if (c == WH_CHAN_NET && shm_ok)
            shm_why = WH_WHY_FORCED_NET;
        wh_peer_chan[p] = (uint8_t)c;
        wh_chan_active[c] = 1;
        char code = c == WH_CHAN_SELF ? '.' : c == WH_CHAN_NET ? 'N' : sc ? 'C' : 'S';
        wh_loc_set_choice(p, code, c == WH_CHAN_NET ? shm_why : WH_WHY_OK, c == WH_CHAN_SHM && !sc ? sc_why : WH_WHY_OK);
        if (c == WH_CHAN_NET && p != wh_job.rank)
            WH_DEBUG("coord", "peer %d: net (shm rejected: %s)", p, wh_loc_why_text(shm_why));
        else if (c == WH_CHAN_SHM)
            WH_DEBUG("coord", "peer %d: shm, %s", p, sc ? "cma single-copy" : wh_loc_why_text(sc_why));
    }
    return MPI_SUCCESS;
}

void wh_coord_finalize(void)
{
    free(wh_peer_chan);
    wh_peer_chan = NULL;
}
