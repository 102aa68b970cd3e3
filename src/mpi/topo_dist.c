/* MPI entry points of distributed graph topologies.  Weights as in MPICH:
 * MPI_UNWEIGHTED makes an unweighted graph (and must then be given for
 * both directions of the adjacent variant), MPI_WEIGHTS_EMPTY is a weighted
 * empty list (only valid where there are no edges). */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/topo.h"
#include "mpi/reqapi.h"

static int fail(wh_comm_t *c, const char *fname, int code)
{
    return wh_raise_comm(c, fname, code);
}

static int chk_ranks(const char *fname, wh_comm_t *c, int n, const int *r, const char *name)
{
    if (n > 0)
        WH_CHK_PTR(fname, c, r, name);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= c->size)
            return fail(c, fname, wh_error(MPI_ERR_RANK, "%s[%d] = %d is not a rank of the communicator (size %d)", name, i,
                                           r[i], c->size));
    return MPI_SUCCESS;
}

/* weights of n edges: *w NULL when unweighted */
static int chk_weights(const char *fname, wh_comm_t *c, int n, const int *weights, const char *name, const int **w)
{
    *w = NULL;
    if (weights == MPI_UNWEIGHTED)
        return MPI_SUCCESS;
    if (weights == MPI_WEIGHTS_EMPTY) {
        if (n > 0)
            return fail(c, fname, wh_error(MPI_ERR_ARG, "%s is MPI_WEIGHTS_EMPTY but there are %d edges", name, n));
        *w = weights;
        return MPI_SUCCESS;
    }
    if (n > 0 && !weights)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "%s is NULL (use MPI_UNWEIGHTED for an unweighted graph)", name));
    for (int i = 0; i < n; i++)
        if (weights[i] < 0)
            return fail(c, fname, wh_error(MPI_ERR_ARG, "%s[%d] = %d is negative", name, i, weights[i]));
    *w = weights ? weights : MPI_WEIGHTS_EMPTY;
    return MPI_SUCCESS;
}

static int chk_comm(const char *fname, MPI_Comm comm, MPI_Info info, wh_comm_t **c)
{
    int rc = wh_chk_comm(fname, comm, c);
    if (rc)
        return rc;
    if ((*c)->is_inter)
        return fail(*c, fname, wh_error(MPI_ERR_COMM, "comm_old is an intercommunicator (topologies need an intracommunicator)"));
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return fail(*c, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    return MPI_SUCCESS;
}

static int body_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                           int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fname[] = "MPI_Dist_graph_create_adjacent";
    (void)reorder;
    wh_comm_t *c, *n;
    const int *sw, *dw;
    int rc = chk_comm(fname, comm_old, info, &c);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, comm_dist_graph, "comm_dist_graph");
    if (indegree < 0 || outdegree < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "indegree %d or outdegree %d is negative", indegree, outdegree));
    if ((rc = chk_ranks(fname, c, indegree, sources, "sources")) ||
        (rc = chk_ranks(fname, c, outdegree, destinations, "destinations")) ||
        (rc = chk_weights(fname, c, indegree, sourceweights, "sourceweights", &sw)) ||
        (rc = chk_weights(fname, c, outdegree, destweights, "destweights", &dw)))
        return rc;
    if ((sourceweights == MPI_UNWEIGHTED) != (destweights == MPI_UNWEIGHTED))
        return fail(c, fname, wh_error(MPI_ERR_ARG, "only one of sourceweights and destweights is MPI_UNWEIGHTED"));
    if ((rc = wh_dist_graph_adjacent(c, indegree, sources, sw, outdegree, destinations, dw, &n)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *comm_dist_graph = n->obj.handle;
    return MPI_SUCCESS;
}

static int body_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                  const int destinations[], const int weights[], MPI_Info info, int reorder,
                                  MPI_Comm *comm_dist_graph)
{
    static const char fname[] = "MPI_Dist_graph_create";
    (void)reorder;
    wh_comm_t *c, *nc;
    const int *w;
    int rc = chk_comm(fname, comm_old, info, &c);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, comm_dist_graph, "comm_dist_graph");
    if (n < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "n is negative (%d)", n));
    if ((rc = chk_ranks(fname, c, n, sources, "sources")))
        return rc;
    if (n > 0)
        WH_CHK_PTR(fname, c, degrees, "degrees");
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return fail(c, fname, wh_error(MPI_ERR_ARG, "degrees[%d] is negative (%d)", i, degrees[i]));
        nedges += degrees[i];
    }
    if (nedges > (1 << 28))
        return fail(c, fname, wh_error(MPI_ERR_ARG, "%lld edges given on one rank (at most 2^28)", nedges));
    if ((rc = chk_ranks(fname, c, (int)nedges, destinations, "destinations")) ||
        (rc = chk_weights(fname, c, (int)nedges, weights, "weights", &w)))
        return rc;
    if ((rc = wh_dist_graph_create(c, n, sources, degrees, destinations, w, &nc)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *comm_dist_graph = nc->obj.handle;
    return MPI_SUCCESS;
}

static int chk_dist(const char *fname, MPI_Comm comm, wh_comm_t **c, const wh_topo_t **t)
{
    int rc = wh_chk_comm(fname, comm, c);
    if (rc)
        return rc;
    *t = wh_topo_of(*c);
    if (!*t || (*t)->kind != MPI_DIST_GRAPH)
        return fail(*c, fname, wh_error(MPI_ERR_TOPOLOGY, "comm has no distributed graph topology"));
    return MPI_SUCCESS;
}

static int body_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fname[] = "MPI_Dist_graph_neighbors_count";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_dist(fname, comm, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, indegree, "indegree");
    WH_CHK_PTR(fname, c, outdegree, "outdegree");
    WH_CHK_PTR(fname, c, weighted, "weighted");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

static void copy_out(int *dst, const int *src, int n)
{
    if (n > 0 && dst && dst != MPI_UNWEIGHTED && dst != MPI_WEIGHTS_EMPTY)
        memcpy(dst, src, (size_t)n * sizeof(int));
}

static int body_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                     int maxoutdegree, int destinations[], int destweights[])
{
    static const char fname[] = "MPI_Dist_graph_neighbors";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_dist(fname, comm, &c, &t);
    if (rc)
        return rc;
    if (maxindegree < 0 || maxoutdegree < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "maxindegree %d or maxoutdegree %d is negative", maxindegree,
                                       maxoutdegree));
    int ni = maxindegree < t->indeg ? maxindegree : t->indeg, no = maxoutdegree < t->outdeg ? maxoutdegree : t->outdeg;
    if (ni > 0)
        WH_CHK_PTR(fname, c, sources, "sources");
    if (no > 0)
        WH_CHK_PTR(fname, c, destinations, "destinations");
    copy_out(sources, WH_TOPO_ARR(t, o_src), ni);
    copy_out(destinations, WH_TOPO_ARR(t, o_dst), no);
    if (t->weighted) {
        copy_out(sourceweights, WH_TOPO_ARR(t, o_srcw), ni);
        copy_out(destweights, WH_TOPO_ARR(t, o_dstw), no);
    }
    return MPI_SUCCESS;
}

#include "entry/topo_dist.h"
