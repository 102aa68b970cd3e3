/* The coordinator: picks the channel for every peer (and, through each
 * channel's eager limit and rendezvous policy, the protocol per message size).
 * Issue 2: co-residence comes from the launcher's host assignment
 * (wh_job.host_of); the locality layer replaces it with real detection. */
#include <stdlib.h>
#include <string.h>

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
    for (int p = 0; p < wh_job.size; p++) {
        int same = wh_job.host_of[p] == wh_job.my_host;
        int c = wh_coord_pick(wh_job.rank, p, same, wh_chan_usable[WH_CHAN_SHM], wh_chan_usable[WH_CHAN_NET], force);
        if (c == WH_CHAN_NET && !wh_chan_usable[WH_CHAN_NET])
            return wh_error(MPI_ERR_OTHER, "no channel reaches rank %d (host %d): the network channel is unavailable",
                            p, wh_job.host_of[p]);
        wh_peer_chan[p] = (uint8_t)c;
        wh_chan_active[c] = 1;
        WH_DEBUG("coord", "peer %d: %s%s", p, wh_chans[c]->name,
                 c == WH_CHAN_NET && same ? " (same host, forced or shm unavailable)" : "");
    }
    return MPI_SUCCESS;
}

void wh_coord_finalize(void)
{
    free(wh_peer_chan);
    wh_peer_chan = NULL;
}
