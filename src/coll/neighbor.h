/* Neighbourhood exchange (src/coll/neighbor.c): the one algorithm behind
 * every blocking neighbourhood collective.  The collective layer knows no
 * topology: the MPI layer resolves the neighbour lists (src/comm/topo.h)
 * and the per-neighbour buffers, and passes one block per message. */
#ifndef WH_COLL_NEIGHBOR_H
#define WH_COLL_NEIGHBOR_H
#include "core/core.h"
#include "dtype/dtype.h"

typedef struct wh_nbr_blk {
    void *buf;          /* typed buffer (send blocks are only read) */
    MPI_Count count;
    wh_dtype_t *dt;
    int peer;           /* comm rank or MPI_PROC_NULL (nothing moves) */
    int tag;            /* small offset telling apart messages between one pair (0..63) */
} wh_nbr_blk_t;

/* Post every receive, then every send, and wait for all of them.
 * Messages between one pair with one tag offset match in list order. */
int wh_neighbor_exchange(int nsend, const wh_nbr_blk_t *send, int nrecv, const wh_nbr_blk_t *recv, wh_comm_t *c);
#endif
