/* Process topologies: building cartesian, graph and distributed-graph
 * communicators, rank/coordinate arithmetic, and the neighbour lists of the
 * neighbourhood collectives.  Arguments are checked by src/mpi/topo*.c.
 * Ranks are never reordered (reorder is a hint; MPICH ignores it too). */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "comm/topo.h"

wh_topo_t *wh_topo_alloc(int kind, size_t nints)
{
    size_t bytes = sizeof(wh_topo_t) + (nints ? nints : 1) * sizeof(int);
    wh_topo_t *t = calloc(1, bytes);
    if (t) {
        t->bytes = bytes;
        t->kind = kind;
    }
    return t;
}

static int no_mem(const char *what)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory creating %s", what);
}

/* ---------- cartesian ---------- */

int wh_cart_rank_of(const wh_topo_t *t, const int *coords)
{
    const int *dims = WH_TOPO_ARR(t, o_dims);
    int r = 0;
    for (int i = 0; i < t->ndims; i++)
        r = r * dims[i] + coords[i];
    return r;
}

void wh_cart_coords_of(const wh_topo_t *t, int rank, int *coords)
{
    const int *dims = WH_TOPO_ARR(t, o_dims);
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % dims[i];
        rank /= dims[i];
    }
}

static wh_topo_t *cart_topo(int ndims, const int *dims, const int *periods, int rank)
{
    wh_topo_t *t = wh_topo_alloc(MPI_CART, 3 * (size_t)ndims);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->o_dims = 0;
    t->o_periods = ndims;
    t->o_coords = 2 * ndims;
    for (int i = 0; i < ndims; i++) {
        WH_TOPO_ARR(t, o_dims)[i] = dims[i];
        WH_TOPO_ARR(t, o_periods)[i] = periods[i] != 0;
    }
    wh_cart_coords_of(t, rank, WH_TOPO_ARR(t, o_coords));
    return t;
}

static long long prod(int n, const int *v)
{
    long long p = 1;
    for (int i = 0; i < n; i++)
        p *= v[i];
    return p;
}

int wh_cart_create(wh_comm_t *c, int ndims, const int *dims, const int *periods, wh_comm_t **out)
{
    wh_comm_t *n;
    int rc = wh_comm_create_prefix(c, (int)prod(ndims, dims), &n);
    *out = NULL;
    if (rc != MPI_SUCCESS || !n)
        return rc;
    if (!(n->topo = cart_topo(ndims, dims, periods, n->rank))) {
        wh_comm_release(n);
        return no_mem("a cartesian topology");
    }
    *out = n;
    return MPI_SUCCESS;
}

int wh_cart_sub(wh_comm_t *c, const int *remain, wh_comm_t **out)
{
    const wh_topo_t *t = wh_topo_of(c);
    const int *dims = WH_TOPO_ARR(t, o_dims), *per = WH_TOPO_ARR(t, o_periods), *co = WH_TOPO_ARR(t, o_coords);
    int nd = 0, ndims[t->ndims + 1], nper[t->ndims + 1];
    int color = 0, key = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain[i]) {
            ndims[nd] = dims[i];
            nper[nd++] = per[i];
            key = key * dims[i] + co[i];
        } else {
            color = color * dims[i] + co[i];
        }
    }
    wh_comm_t *n;
    *out = NULL;
    int rc = wh_comm_split(c, color, key, 0, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(n->topo = cart_topo(nd, ndims, nper, n->rank))) {
        wh_comm_release(n);
        return no_mem("a cartesian topology");
    }
    *out = n;
    return MPI_SUCCESS;
}

/* ---------- graph ---------- */

int wh_graph_create(wh_comm_t *c, int nnodes, const int *index, const int *edges, wh_comm_t **out)
{
    wh_comm_t *n;
    *out = NULL;
    if (nnodes == 0) /* MPICH: the empty graph gives MPI_COMM_NULL everywhere */
        return MPI_SUCCESS;
    int rc = wh_comm_create_prefix(c, nnodes, &n);
    if (rc != MPI_SUCCESS || !n)
        return rc;
    int nedges = index[nnodes - 1];
    wh_topo_t *t = wh_topo_alloc(MPI_GRAPH, (size_t)nnodes + (size_t)nedges);
    if (!t) {
        wh_comm_release(n);
        return no_mem("a graph topology");
    }
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->o_index = 0;
    t->o_edges = nnodes;
    memcpy(WH_TOPO_ARR(t, o_index), index, (size_t)nnodes * sizeof(int));
    memcpy(WH_TOPO_ARR(t, o_edges), edges, (size_t)nedges * sizeof(int));
    n->topo = t;
    *out = n;
    return MPI_SUCCESS;
}

/* ---------- distributed graph ---------- */

static wh_topo_t *dist_topo(int indeg, const int *src, const int *srcw, int outdeg, const int *dst, const int *dstw)
{
    wh_topo_t *t = wh_topo_alloc(MPI_DIST_GRAPH, 2 * ((size_t)indeg + (size_t)outdeg));
    if (!t)
        return NULL;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = srcw != NULL;
    t->o_src = 0;
    t->o_srcw = indeg;
    t->o_dst = 2 * indeg;
    t->o_dstw = 2 * indeg + outdeg;
    for (int i = 0; i < indeg; i++) {
        WH_TOPO_ARR(t, o_src)[i] = src[i];
        WH_TOPO_ARR(t, o_srcw)[i] = srcw ? srcw[i] : 1;
    }
    for (int i = 0; i < outdeg; i++) {
        WH_TOPO_ARR(t, o_dst)[i] = dst[i];
        WH_TOPO_ARR(t, o_dstw)[i] = dstw ? dstw[i] : 1;
    }
    return t;
}

int wh_dist_graph_adjacent(wh_comm_t *c, int indeg, const int *src, const int *srcw, int outdeg, const int *dst,
                           const int *dstw, wh_comm_t **out)
{
    wh_comm_t *n;
    *out = NULL;
    int rc = wh_comm_create_prefix(c, c->size, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(n->topo = dist_topo(indeg, src, srcw, outdeg, dst, dstw))) {
        wh_comm_release(n);
        return no_mem("a distributed graph topology");
    }
    *out = n;
    return MPI_SUCCESS;
}

/* Every edge (s, d, w) given anywhere goes to s as an out-edge and to d as an
 * in-edge: two all-to-all exchanges of (peer, weight) pairs.  Neighbours are
 * ordered by the rank that gave the edge, then in the order it gave them. */
int wh_dist_graph_create(wh_comm_t *c, int n, const int *sources, const int *degrees, const int *dests,
                         const int *weights, wh_comm_t **out)
{
    int p = c->size, rc = MPI_SUCCESS;
    *out = NULL;
    long long nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += degrees[i];
    /* per target: [in-edges for it..., out-edges for it...] as (peer, weight, dir) triples */
    MPI_Count *scnt = calloc((size_t)p, sizeof(MPI_Count)), *rcnt = calloc((size_t)p, sizeof(MPI_Count));
    MPI_Aint *sdsp = calloc((size_t)p + 1, sizeof(MPI_Aint)), *rdsp = calloc((size_t)p + 1, sizeof(MPI_Aint));
    int *sbuf = malloc((size_t)(nedges * 6 + 1) * sizeof(int)), *rbuf = NULL;
    int *fill = calloc((size_t)p, sizeof(int));
    if (!scnt || !rcnt || !sdsp || !rdsp || !sbuf || !fill) {
        rc = no_mem("a distributed graph topology");
        goto done;
    }
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scnt[sources[i]] += 3;
            scnt[dests[e]] += 3;
        }
    for (int r = 0; r < p; r++)
        sdsp[r + 1] = sdsp[r] + (MPI_Aint)scnt[r];
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = dests[e], w = weights ? weights[e] : 1;
            int *a = sbuf + sdsp[s] + fill[s];
            a[0] = d, a[1] = w, a[2] = 1; /* out-edge of s */
            fill[s] += 3;
            a = sbuf + sdsp[d] + fill[d];
            a[0] = s, a[1] = w, a[2] = 0; /* in-edge of d */
            fill[d] += 3;
        }
    wh_dtype_t *idt = wh_dtype_get(MPI_COUNT);
    if ((rc = wh_alltoall(scnt, 1, idt, rcnt, 1, idt, c)) != MPI_SUCCESS)
        goto done;
    for (int r = 0; r < p; r++)
        rdsp[r + 1] = rdsp[r] + (MPI_Aint)rcnt[r];
    if (!(rbuf = malloc((size_t)(rdsp[p] + 1) * sizeof(int)))) {
        rc = no_mem("a distributed graph topology");
        goto done;
    }
    idt = wh_dtype_get(MPI_INT);
    if ((rc = wh_alltoallv(sbuf, scnt, sdsp, idt, rbuf, rcnt, rdsp, idt, c)) != MPI_SUCCESS)
        goto done;
    int ntr = (int)(rdsp[p] / 3), indeg = 0, outdeg = 0;
    for (int k = 0; k < ntr; k++)
        *(rbuf[3 * k + 2] ? &outdeg : &indeg) += 1;
    int *lst = malloc((size_t)(2 * (indeg + outdeg) + 1) * sizeof(int));
    if (!lst) {
        rc = no_mem("a distributed graph topology");
        goto done;
    }
    int *src = lst, *srcw = lst + indeg, *dst = lst + 2 * indeg, *dstw = dst + outdeg, ni = 0, no = 0;
    for (int k = 0; k < ntr; k++) {
        const int *a = rbuf + 3 * k;
        if (a[2]) {
            dst[no] = a[0];
            dstw[no++] = a[1];
        } else {
            src[ni] = a[0];
            srcw[ni++] = a[1];
        }
    }
    wh_comm_t *nc;
    if ((rc = wh_comm_create_prefix(c, c->size, &nc)) == MPI_SUCCESS) {
        if (!(nc->topo = dist_topo(indeg, src, weights ? srcw : NULL, outdeg, dst, weights ? dstw : NULL))) {
            wh_comm_release(nc);
            rc = no_mem("a distributed graph topology");
        } else {
            *out = nc;
        }
    }
    free(lst);
done:
    free(scnt);
    free(rcnt);
    free(sdsp);
    free(rdsp);
    free(sbuf);
    free(rbuf);
    free(fill);
    return rc;
}

/* ---------- neighbour lists ---------- */

int wh_topo_neighbors(const wh_comm_t *c, wh_nbrs_t *nb)
{
    const wh_topo_t *t = wh_topo_of(c);
    int nin, nout;
    switch (t->kind) {
    case MPI_CART:
        nin = nout = 2 * t->ndims;
        break;
    case MPI_GRAPH: {
        const int *idx = WH_TOPO_ARR(t, o_index);
        nin = nout = idx[c->rank] - (c->rank ? idx[c->rank - 1] : 0);
        break;
    }
    default:
        nin = t->indeg;
        nout = t->outdeg;
        break;
    }
    int *m = malloc((size_t)(2 * (nin + nout) + 1) * sizeof(int));
    if (!m)
        return no_mem("neighbour lists");
    nb->nin = nin;
    nb->nout = nout;
    nb->in = m;
    nb->intag = m + nin;
    nb->out = m + 2 * nin;
    nb->outtag = nb->out + nout;
    memset(nb->intag, 0, (size_t)nin * sizeof(int));
    memset(nb->outtag, 0, (size_t)nout * sizeof(int));
    if (t->kind == MPI_CART) {
        const int *dims = WH_TOPO_ARR(t, o_dims), *per = WH_TOPO_ARR(t, o_periods);
        int co[t->ndims + 1];
        for (int d = 0; d < t->ndims; d++) {
            for (int k = 0; k < 2; k++) { /* k = 0: coordinate - 1, k = 1: + 1 */
                memcpy(co, WH_TOPO_ARR(t, o_coords), (size_t)t->ndims * sizeof(int));
                co[d] += k ? 1 : -1;
                int peer = MPI_PROC_NULL;
                if (per[d])
                    co[d] = (co[d] + dims[d]) % dims[d];
                if (co[d] >= 0 && co[d] < dims[d])
                    peer = wh_cart_rank_of(t, co);
                nb->in[2 * d + k] = nb->out[2 * d + k] = peer;
                /* a message sent towards +1 arrives from the -1 side */
                nb->outtag[2 * d + k] = 2 * d + k;
                nb->intag[2 * d + k] = 2 * d + 1 - k;
            }
        }
    } else if (t->kind == MPI_GRAPH) {
        const int *idx = WH_TOPO_ARR(t, o_index);
        const int *e = WH_TOPO_ARR(t, o_edges) + (c->rank ? idx[c->rank - 1] : 0);
        memcpy(nb->in, e, (size_t)nin * sizeof(int));
        memcpy(nb->out, e, (size_t)nout * sizeof(int));
    } else {
        memcpy(nb->in, WH_TOPO_ARR(t, o_src), (size_t)nin * sizeof(int));
        memcpy(nb->out, WH_TOPO_ARR(t, o_dst), (size_t)nout * sizeof(int));
    }
    return MPI_SUCCESS;
}
