/* Peer indexes and global ids (core/peers.h). */
#include "core/peers.h"

#include <stdlib.h>

#include "core/job.h"

int wh_peers_cap, wh_peers_n;
uint32_t wh_my_group;
int (*wh_peer_added_hook)(int idx);

static uint32_t *foreign_gid; /* gid of index wh_job.size + i */

void wh_peers_init(void)
{
    const char *g = getenv("WHARF_PMI_GROUP");
    long v = g ? strtol(g, NULL, 10) : 0;
    wh_my_group = v > 0 && v < WH_GID_GROUPS ? (uint32_t)v : 0;
    wh_peers_cap = wh_job.size + WH_PEERS_FOREIGN_MAX;
    wh_peers_n = wh_job.size;
}

void wh_peers_finalize(void)
{
    free(foreign_gid);
    foreign_gid = NULL;
    wh_peers_n = wh_job.size;
}

uint32_t wh_peer_gid(int idx)
{
    if (idx < wh_job.size)
        return wh_gid_make(wh_my_group, (uint32_t)idx);
    return foreign_gid[idx - wh_job.size];
}

int wh_peer_find(uint32_t gid)
{
    if (gid >> WH_GID_RANK_BITS == wh_my_group)
        return (int)(gid & ((1u << WH_GID_RANK_BITS) - 1)) < wh_job.size ? (int)(gid & ((1u << WH_GID_RANK_BITS) - 1))
                                                                         : -1;
    for (int i = wh_peers_n - wh_job.size; i-- > 0;)
        if (foreign_gid[i] == gid)
            return wh_job.size + i;
    return -1;
}

int wh_peer_new(uint32_t gid)
{
    if (wh_peers_n >= wh_peers_cap)
        return -1;
    if (!foreign_gid && !(foreign_gid = calloc(WH_PEERS_FOREIGN_MAX, sizeof *foreign_gid)))
        return -1;
    int idx = wh_peers_n++;
    foreign_gid[idx - wh_job.size] = gid;
    if (wh_job.host_of)
        wh_job.host_of[idx] = wh_job.nhosts + (idx - wh_job.size); /* a host of its own: never co-resident */
    if (wh_job.local_index)
        wh_job.local_index[idx] = -1;
    return idx;
}
