/* Private to src/coll: the per-communicator state src/coll keeps in
 * wh_comm_t.coll_data (allocated by the first collective that needs it):
 * the node-shared-memory block (shmcoll.c), the node and leader
 * sub-communicators of the hierarchical algorithms (hier.c), and how often
 * each collective ran each algorithm (WHARF_REPORT=coll, state.c). */
#ifndef WH_COLL_CSTATE_H
#define WH_COLL_CSTATE_H
#include <stdint.h>
#include "coll/coll.h"

/* collectives and algorithms counted for WHARF_REPORT=coll */
enum wh_coll_kind {
    WH_CK_BARRIER, WH_CK_BCAST, WH_CK_REDUCE, WH_CK_ALLREDUCE, WH_CK_ALLGATHER,
    WH_CK_GATHER, WH_CK_SCATTER, WH_CK_ALLTOALL, WH_CK_SCAN, WH_CK_EXSCAN, WH_CK_REDUCE_SCATTER, WH_CK_ALLGATHERV,
    WH_CK_ALLTOALLV, WH_CK_ALLTOALLW, WH_CK_N
};
enum wh_coll_alg {
    WH_CA_P2P,       /* flat point-to-point algorithm over the communicator */
    WH_CA_SHM,       /* node shared memory, inline cells */
    WH_CA_SHM_LARGE, /* node shared memory, chunked / parallel slices */
    WH_CA_HIER,      /* intra-node + leaders over the network + intra-node */
    WH_CA_SCATTERED, /* alltoall: every receive and send posted at once (p2p: pairwise steps) */
    WH_CA_CHAIN,     /* scan, exscan: pipelined chain of ranks (p2p: recursive doubling) */
    WH_CA_CMA,       /* single copy: readers copy out of the owners' buffers (shmcma.c) */
    WH_CA_N
};

struct shmc;
typedef struct wh_coll_hier {
    int state;            /* 0 undecided, 1 ready, -1 not hierarchical */
    int nnodes;           /* node groups among c's ranks */
    int my_node;          /* my node's index (nodes ordered by their lowest c rank) */
    int contiguous;       /* every node's c ranks form one range (rank order = node order) */
    int *node_of;         /* c rank -> node index */
    int *leader;          /* node index -> c rank of its leader (its lowest rank) */
    int *node_rank;       /* c rank -> rank in its node's sub-communicator */
    wh_comm_t *node;      /* my node's ranks of c, in c's order (the leader is rank 0) */
    wh_comm_t *leaders;   /* one rank per node, in node order; NULL on non-leaders */
} wh_coll_hier_t;

typedef struct wh_coll_state {
    struct shmc *shm;     /* NULL until a collective asked for it */
    wh_coll_hier_t hier;
    int internal;         /* a node or leader sub-communicator of another one */
    uint64_t count[WH_CK_N][WH_CA_N];
} wh_coll_state_t;

/* c's state, allocated on first use (NULL when out of memory) */
wh_coll_state_t *wh_coll_state(wh_comm_t *c);
static inline void wh_coll_count(wh_comm_t *c, int kind, int alg)
{
    wh_coll_state_t *s = c->coll_data;
    if (s || (s = wh_coll_state(c)))
        s->count[kind][alg]++;
}

/* shmcoll.c: free c's block (rank 0 waits, bounded, for the readers) */
void wh_shmc_release(wh_comm_t *c, struct shmc *s);

/* Provided by src/comm (create.c): the node and leader sub-communicators of
 * c, collective over c: node_of[c rank] is a node index in 0..nnodes-1,
 * nodes numbered in the order of their lowest rank.  *leaders is NULL on
 * ranks that do not lead their node.  Weak: without src/comm, no hierarchy. */
int wh_comm_node_split(wh_comm_t *c, const int *node_of, int nnodes, wh_comm_t **node, wh_comm_t **leaders)
    __attribute__((weak));
#endif
