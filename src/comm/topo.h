/* Process topologies attached to a communicator (wh_comm_t.topo): one
 * allocation, arrays addressed by offsets into data[] so a copy is a memcpy
 * and src/core frees it with free(). */
#ifndef WH_COMM_TOPO_H
#define WH_COMM_TOPO_H
#include <stddef.h>
#include "core/core.h"

typedef struct wh_topo {
    size_t bytes;        /* the whole allocation */
    int kind;            /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* cart: ndims, dims[ndims], periods[ndims], coords[ndims] (mine) */
    int ndims, o_dims, o_periods, o_coords;
    /* graph: nnodes, index[nnodes], edges[nedges] */
    int nnodes, nedges, o_index, o_edges;
    /* dist graph: my in/out neighbours and weights (weights all 1 when unweighted) */
    int indeg, outdeg, weighted, o_src, o_srcw, o_dst, o_dstw;
    int data[];
} wh_topo_t;

#define WH_TOPO_ARR(t, field) ((t)->data + (t)->field)

static inline wh_topo_t *wh_topo_of(const wh_comm_t *c)
{
    return (wh_topo_t *)c->topo;
}

/* an empty topology with room for nints ints of arrays (zeroed); NULL if out of memory */
wh_topo_t *wh_topo_alloc(int kind, size_t nints);

/* rank of coords (already reduced into range for periodic dims) */
int wh_cart_rank_of(const wh_topo_t *t, const int *coords);
void wh_cart_coords_of(const wh_topo_t *t, int rank, int *coords);

/* Neighbours of the calling rank for the neighbourhood collectives:
 * sources in receive order, destinations in send order, MPI_PROC_NULL
 * entries (non-periodic cartesian borders) included, and the tag offset
 * of each message.  A cartesian dimension of size 1 or 2 (periodic) has the
 * same process on both sides: the tag tells the directions apart. */
typedef struct wh_nbrs {
    int nin, nout;
    int *in, *intag, *out, *outtag; /* in one allocation: free(in) */
} wh_nbrs_t;
int wh_topo_neighbors(const wh_comm_t *c, wh_nbrs_t *nb);

/* ---------- constructors (topo.c); reorder is accepted and ignored ---------- */
int wh_cart_create(wh_comm_t *c, int ndims, const int *dims, const int *periods, wh_comm_t **out);
int wh_cart_sub(wh_comm_t *c, const int *remain, wh_comm_t **out);
int wh_graph_create(wh_comm_t *c, int nnodes, const int *index, const int *edges, wh_comm_t **out);
/* weights NULL: unweighted */
int wh_dist_graph_adjacent(wh_comm_t *c, int indeg, const int *src, const int *srcw, int outdeg, const int *dst,
                           const int *dstw, wh_comm_t **out);
int wh_dist_graph_create(wh_comm_t *c, int n, const int *sources, const int *degrees, const int *dests,
                         const int *weights, wh_comm_t **out);
#endif
