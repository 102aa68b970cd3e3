/* Peers: the processes this one addresses, by index.  Indexes
 * 0..wh_job.size-1 are the ranks of MPI_COMM_WORLD; processes of other
 * groups of the same launcher (spawned by MPI_Comm_spawn, or the parents of
 * a spawned group) get the indexes from wh_job.size on, as they become known
 * (docs/DYNAMIC.md).  Every per-peer array is sized wh_peers_cap.
 *
 * A process's global id (gid) names it across the groups of one launcher:
 * (group << WH_GID_RANK_BITS) | rank, group 0 being the ranks the launcher
 * started first.  Channels carry gids on the wire where a peer of another
 * group may send. */
#ifndef WH_CORE_PEERS_H
#define WH_CORE_PEERS_H
#include <stdint.h>

#define WH_GID_RANK_BITS 20
#define WH_GID_GROUPS 1024          /* groups a gid can name (30 bits in all) */
#define WH_PEERS_FOREIGN_MAX 1024   /* processes of other groups one process can address */

extern int wh_peers_cap;   /* wh_job.size + WH_PEERS_FOREIGN_MAX (set at init) */
extern int wh_peers_n;     /* indexes in use */
extern uint32_t wh_my_group;

/* After PMI init: the group (WHARF_PMI_GROUP), the capacity, and the
 * foreign entries of wh_job.host_of/local_index (arrays of wh_peers_cap). */
void wh_peers_init(void);
void wh_peers_finalize(void);
static inline uint32_t wh_gid_make(uint32_t group, uint32_t rank)
{
    return group << WH_GID_RANK_BITS | rank;
}
/* gid of peer idx (idx in [0, wh_peers_n)) */
uint32_t wh_peer_gid(int idx);
/* index of gid, or -1 if not known yet */
int wh_peer_find(uint32_t gid);
/* a new index for gid (not known yet), or -1 if the table is full */
int wh_peer_new(uint32_t gid);
/* Called by the channel that learned a new foreign peer (set by the
 * coordinator: chooses its channel).  Returns 0 or an MPI error code. */
extern int (*wh_peer_added_hook)(int idx);
#endif
