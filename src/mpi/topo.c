/* MPI entry points of cartesian and graph topologies, MPI_Dims_create and
 * MPI_Topo_test.  Error classes follow MPICH: a communicator without the
 * right topology is MPI_ERR_TOPOLOGY, bad dimensions MPI_ERR_DIMS (Dims_create)
 * or MPI_ERR_ARG, ranks MPI_ERR_RANK. */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/topo.h"
#include "mpi/reqapi.h"

static int fail(wh_comm_t *c, const char *fname, int code)
{
    return wh_raise_comm(c, fname, code);
}

/* valid communicator, intracommunicator for constructors */
static int chk_intra(const char *fname, MPI_Comm comm, wh_comm_t **c)
{
    int rc = wh_chk_comm(fname, comm, c);
    if (rc)
        return rc;
    if ((*c)->is_inter)
        return fail(*c, fname, wh_error(MPI_ERR_COMM, "comm is an intercommunicator (topologies need an intracommunicator)"));
    return MPI_SUCCESS;
}

/* communicator with a topology of kind (0: any) */
static int chk_topo(const char *fname, MPI_Comm comm, int kind, wh_comm_t **c, const wh_topo_t **t)
{
    int rc = wh_chk_comm(fname, comm, c);
    if (rc)
        return rc;
    *t = wh_topo_of(*c);
    if (!*t || (kind && (*t)->kind != kind))
        return fail(*c, fname, wh_error(MPI_ERR_TOPOLOGY, "comm has %s topology", !*t ? "no" : (*t)->kind == MPI_CART ? "a cartesian"
                                        : (*t)->kind == MPI_GRAPH ? "a graph" : "a distributed graph"));
    return MPI_SUCCESS;
}

static int body_Topo_test(MPI_Comm comm, int *status)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Topo_test", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Topo_test", c, status, "status");
    *status = c->topo ? wh_topo_of(c)->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------- MPI_Dims_create ---------- */

/* The decomposition MPICH's MPI_Dims_create returns: of the factorisations of
 * n into k non-increasing factors, the one with the smallest spread (largest -
 * smallest); among equal spreads the one whose factors, compared from the
 * smallest up, are largest (5616 in 4-d is 13x9x8x6, not 13x12x6x6).  A
 * branch-and-bound over the divisors of n: a branch is cut when its largest
 * factor minus the largest smallest factor it can still reach exceeds the best
 * spread, which starts at that of a greedy factorisation. */
typedef struct {
    const int *div; /* divisors of the top n, descending */
    int ndiv;
    int *cur, *best, best_spread;
} dims_ctx_t;

/* largest r with r^k <= n (k >= 1, n >= 1) */
static int iroot(int n, int k)
{
    int lo = 1, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        long long p = 1;
        for (int i = 0; i < k && p <= n; i++)
            p *= mid;
        if (p <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* cur[] beats best[] on a tie of spread: compared from the last (smallest)
 * factor, the first difference is larger */
static int dims_better(const int *cur, const int *best, int n)
{
    for (int i = n - 1; i >= 0; i--)
        if (cur[i] != best[i])
            return cur[i] > best[i];
    return 0;
}

static void dims_search(dims_ctx_t *x, int n, int k, int maxd, int depth)
{
    if (k == 0) {
        int spread = x->cur[0] - x->cur[depth - 1];
        if (spread < x->best_spread || (spread == x->best_spread && dims_better(x->cur, x->best, depth))) {
            x->best_spread = spread;
            memcpy(x->best, x->cur, (size_t)depth * sizeof(int));
        }
        return;
    }
    if (k == 1) {
        if (n <= maxd && (depth ? x->cur[0] : n) - n <= x->best_spread) {
            x->cur[depth] = n;
            dims_search(x, 1, 0, n, depth + 1);
        }
        return;
    }
    for (int i = 0; i < x->ndiv; i++) {
        int d = x->div[i];
        if (d > maxd || n % d)
            continue;
        long long p = 1; /* d^k >= n is needed to reach n with k factors <= d */
        for (int j = 0; j < k && p < n; j++)
            p *= d;
        if (p < n)
            break;
        int lo = iroot(n / d, k - 1); /* the smallest factor is at most this */
        if (lo > d)
            lo = d;
        if ((depth ? x->cur[0] : d) - lo > x->best_spread)
            continue;
        x->cur[depth] = d;
        dims_search(x, n / d, k - 1, d, depth + 1);
    }
}

/* spread of the factorisation that gives each prime factor, largest first,
 * to the currently smallest factor */
static int dims_greedy_spread(int n, int k, int *f)
{
    for (int i = 0; i < k; i++)
        f[i] = 1;
    int primes[32], np = 0;
    for (int p = 2; (long long)p * p <= n; p++)
        while (n % p == 0) {
            primes[np++] = p;
            n /= p;
        }
    if (n > 1)
        primes[np++] = n;
    for (int i = np - 1; i >= 0; i--) {
        int m = 0;
        for (int j = 1; j < k; j++)
            if (f[j] < f[m])
                m = j;
        f[m] *= primes[i];
    }
    int hi = f[0], lo = f[0];
    for (int j = 1; j < k; j++) {
        hi = f[j] > hi ? f[j] : hi;
        lo = f[j] < lo ? f[j] : lo;
    }
    return hi - lo;
}

/* best[] (k entries) gets the decomposition of n; 0 or MPI_ERR_NO_MEM */
static int dims_decompose(int n, int k, int *best)
{
    int ndiv = 0;
    for (int i = 1; (long long)i * i <= n; i++)
        if (n % i == 0)
            ndiv += (long long)i * i == n ? 1 : 2;
    int *mem = malloc(((size_t)ndiv + 2 * (size_t)k) * sizeof(int));
    if (!mem)
        return MPI_ERR_NO_MEM;
    dims_ctx_t x = {.div = mem, .ndiv = ndiv, .cur = mem + ndiv, .best = best};
    int *div = mem, nlo = 0; /* small divisors at the end, their cofactors at the front */
    for (int i = 1; (long long)i * i <= n; i++)
        if (n % i == 0) {
            div[ndiv - 1 - nlo++] = i;
            if ((long long)i * i != n)
                div[nlo - 1] = n / i;
        }
    for (int i = 0; i < k; i++)
        best[i] = 0;
    x.best_spread = dims_greedy_spread(n, k, x.cur);
    dims_search(&x, n, k, n, 0);
    free(mem);
    return 0;
}

static int body_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fname[] = "MPI_Dims_create";
    if (nnodes <= 0)
        return fail(NULL, fname, wh_error(MPI_ERR_ARG, "nnodes is %d (must be positive)", nnodes));
    if (ndims < 0)
        return fail(NULL, fname, wh_error(MPI_ERR_DIMS, "ndims is negative (%d)", ndims));
    if (ndims == 0)
        return nnodes == 1 ? MPI_SUCCESS
                           : fail(NULL, fname, wh_error(MPI_ERR_DIMS, "ndims is 0 but nnodes is %d", nnodes));
    WH_CHK_PTR(fname, NULL, dims, "dims");
    int fixed = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return fail(NULL, fname, wh_error(MPI_ERR_DIMS, "dims[%d] is negative (%d)", i, dims[i]));
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nnodes % fixed)
        return fail(NULL, fname, wh_error(MPI_ERR_DIMS, "nnodes %d is not a multiple of the product %d of the nonzero dims",
                                          nnodes, fixed));
    if (!nfree)
        return fixed == nnodes ? MPI_SUCCESS
                               : fail(NULL, fname, wh_error(MPI_ERR_DIMS, "the product %d of dims is not nnodes %d", fixed, nnodes));
    int *best = malloc((size_t)nfree * sizeof(int));
    if (!best || dims_decompose(nnodes / fixed, nfree, best)) {
        free(best);
        return fail(NULL, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    }
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = best[k++];
    free(best);
    return MPI_SUCCESS;
}

/* ---------- cartesian ---------- */

static int chk_dims(const char *fname, wh_comm_t *c, int ndims, const int dims[], const int periods[], long long *prod)
{
    if (ndims < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "ndims is negative (%d)", ndims));
    if (ndims > 0) {
        WH_CHK_PTR(fname, c, dims, "dims");
        WH_CHK_PTR(fname, c, periods, "periods");
    }
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return fail(c, fname, wh_error(MPI_ERR_DIMS, "dims[%d] is %d (must be positive)", i, dims[i]));
        p *= dims[i];
        if (p > c->size)
            return fail(c, fname, wh_error(MPI_ERR_ARG, "the grid has more than the communicator's %d ranks", c->size));
    }
    *prod = p;
    return MPI_SUCCESS;
}

static int body_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                            MPI_Comm *comm_cart)
{
    static const char fname[] = "MPI_Cart_create";
    (void)reorder;
    wh_comm_t *c, *n;
    long long p;
    if (comm_cart) /* a failed call leaves MPI_COMM_NULL (as MPICH) */
        *comm_cart = MPI_COMM_NULL;
    int rc = chk_intra(fname, comm_old, &c);
    if (rc || (rc = chk_dims(fname, c, ndims, dims, periods, &p)))
        return rc;
    WH_CHK_PTR(fname, c, comm_cart, "comm_cart");
    if ((rc = wh_cart_create(c, ndims, dims, periods, &n)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *comm_cart = n ? n->obj.handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int body_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fname[] = "MPI_Cart_map";
    wh_comm_t *c;
    long long p;
    int rc = chk_intra(fname, comm, &c);
    if (rc || (rc = chk_dims(fname, c, ndims, dims, periods, &p)))
        return rc;
    WH_CHK_PTR(fname, c, newrank, "newrank");
    *newrank = c->rank < p ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int body_Cartdim_get(MPI_Comm comm, int *ndims)
{
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo("MPI_Cartdim_get", comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Cartdim_get", c, ndims, "ndims");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

static int body_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fname[] = "MPI_Cart_get";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    if (maxdims < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "maxdims is negative (%d)", maxdims));
    int n = maxdims < t->ndims ? maxdims : t->ndims;
    if (n > 0) {
        WH_CHK_PTR(fname, c, dims, "dims");
        WH_CHK_PTR(fname, c, periods, "periods");
        WH_CHK_PTR(fname, c, coords, "coords");
    }
    for (int i = 0; i < n; i++) {
        dims[i] = WH_TOPO_ARR(t, o_dims)[i];
        periods[i] = WH_TOPO_ARR(t, o_periods)[i];
        coords[i] = WH_TOPO_ARR(t, o_coords)[i];
    }
    return MPI_SUCCESS;
}

static int body_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fname[] = "MPI_Cart_rank";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, rank, "rank");
    if (t->ndims > 0)
        WH_CHK_PTR(fname, c, coords, "coords");
    int co[t->ndims + 1];
    const int *dims = WH_TOPO_ARR(t, o_dims), *per = WH_TOPO_ARR(t, o_periods);
    for (int i = 0; i < t->ndims; i++) {
        co[i] = coords[i];
        if (per[i])
            co[i] = ((co[i] % dims[i]) + dims[i]) % dims[i];
        else if (co[i] < 0 || co[i] >= dims[i])
            return fail(c, fname, wh_error(MPI_ERR_ARG, "coords[%d] = %d is outside the non-periodic dimension 0..%d", i,
                                           coords[i], dims[i] - 1));
    }
    *rank = wh_cart_rank_of(t, co);
    return MPI_SUCCESS;
}

static int body_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fname[] = "MPI_Cart_coords";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    if (rank < 0 || rank >= c->size)
        return fail(c, fname, wh_error(MPI_ERR_RANK, "rank %d is not in the communicator (size %d)", rank, c->size));
    if (maxdims < t->ndims)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "maxdims %d is smaller than the %d dimensions", maxdims, t->ndims));
    if (t->ndims > 0)
        WH_CHK_PTR(fname, c, coords, "coords");
    wh_cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

static int body_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fname[] = "MPI_Cart_shift";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, rank_source, "rank_source");
    WH_CHK_PTR(fname, c, rank_dest, "rank_dest");
    if (direction < 0 || direction >= t->ndims)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "direction %d is not a dimension (0..%d)", direction, t->ndims - 1));
    int co[t->ndims + 1], dim = WH_TOPO_ARR(t, o_dims)[direction], per = WH_TOPO_ARR(t, o_periods)[direction];
    int *out[2] = {rank_source, rank_dest};
    for (int k = 0; k < 2; k++) {
        memcpy(co, WH_TOPO_ARR(t, o_coords), (size_t)t->ndims * sizeof(int));
        long long x = (long long)co[direction] + (k ? disp : -(long long)disp);
        if (per)
            x = ((x % dim) + dim) % dim;
        if (x < 0 || x >= dim) {
            *out[k] = MPI_PROC_NULL;
        } else {
            co[direction] = (int)x;
            *out[k] = wh_cart_rank_of(t, co);
        }
    }
    return MPI_SUCCESS;
}

static int body_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Cart_sub";
    wh_comm_t *c, *n;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_CART, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, newcomm, "newcomm");
    if (t->ndims > 0)
        WH_CHK_PTR(fname, c, remain_dims, "remain_dims");
    if ((rc = wh_cart_sub(c, remain_dims, &n)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *newcomm = n->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- graph ---------- */

static int chk_graph(const char *fname, wh_comm_t *c, int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0 || nnodes > c->size)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "nnodes %d is out of range 0..%d (the communicator's size)", nnodes, c->size));
    if (nnodes == 0)
        return MPI_SUCCESS;
    WH_CHK_PTR(fname, c, index, "index");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return fail(c, fname, wh_error(MPI_ERR_ARG, "index[%d] = %d is smaller than the previous entry", i, index[i]));
    if (index[nnodes - 1] > 0)
        WH_CHK_PTR(fname, c, edges, "edges");
    for (int i = 0; i < index[nnodes - 1]; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return fail(c, fname, wh_error(MPI_ERR_ARG, "edges[%d] = %d is not a node (0..%d)", i, edges[i], nnodes - 1));
    return MPI_SUCCESS;
}

static int body_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                             MPI_Comm *comm_graph)
{
    static const char fname[] = "MPI_Graph_create";
    (void)reorder;
    wh_comm_t *c, *n;
    if (comm_graph) /* a failed call leaves MPI_COMM_NULL (as MPICH) */
        *comm_graph = MPI_COMM_NULL;
    int rc = chk_intra(fname, comm_old, &c);
    if (rc || (rc = chk_graph(fname, c, nnodes, index, edges)))
        return rc;
    WH_CHK_PTR(fname, c, comm_graph, "comm_graph");
    if ((rc = wh_graph_create(c, nnodes, index, edges, &n)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *comm_graph = n ? n->obj.handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int body_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fname[] = "MPI_Graph_map";
    wh_comm_t *c;
    int rc = chk_intra(fname, comm, &c);
    if (rc || (rc = chk_graph(fname, c, nnodes, index, edges)))
        return rc;
    WH_CHK_PTR(fname, c, newrank, "newrank");
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int body_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo("MPI_Graphdims_get", comm, MPI_GRAPH, &c, &t);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Graphdims_get", c, nnodes, "nnodes");
    WH_CHK_PTR("MPI_Graphdims_get", c, nedges, "nedges");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

static int body_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fname[] = "MPI_Graph_get";
    wh_comm_t *c;
    const wh_topo_t *t;
    int rc = chk_topo(fname, comm, MPI_GRAPH, &c, &t);
    if (rc)
        return rc;
    if (maxindex < 0 || maxedges < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "maxindex %d or maxedges %d is negative", maxindex, maxedges));
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes, ne = maxedges < t->nedges ? maxedges : t->nedges;
    if (ni > 0)
        WH_CHK_PTR(fname, c, index, "index");
    if (ne > 0)
        WH_CHK_PTR(fname, c, edges, "edges");
    if (ni)
        memcpy(index, WH_TOPO_ARR(t, o_index), (size_t)ni * sizeof(int));
    if (ne)
        memcpy(edges, WH_TOPO_ARR(t, o_edges), (size_t)ne * sizeof(int));
    return MPI_SUCCESS;
}

static int graph_node(const char *fname, MPI_Comm comm, int rank, wh_comm_t **c, const wh_topo_t **t, int *first,
                      int *count)
{
    int rc = chk_topo(fname, comm, MPI_GRAPH, c, t);
    if (rc)
        return rc;
    if (rank < 0 || rank >= (*t)->nnodes)
        return fail(*c, fname, wh_error(MPI_ERR_RANK, "rank %d is not a node of the graph (0..%d)", rank, (*t)->nnodes - 1));
    const int *idx = WH_TOPO_ARR(*t, o_index);
    *first = rank ? idx[rank - 1] : 0;
    *count = idx[rank] - *first;
    return MPI_SUCCESS;
}

static int body_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    wh_comm_t *c;
    const wh_topo_t *t;
    int first = 0, count = 0;
    int rc = graph_node("MPI_Graph_neighbors_count", comm, rank, &c, &t, &first, &count);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Graph_neighbors_count", c, nneighbors, "nneighbors");
    *nneighbors = count;
    return MPI_SUCCESS;
}

static int body_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fname[] = "MPI_Graph_neighbors";
    wh_comm_t *c;
    const wh_topo_t *t;
    int first = 0, count = 0;
    int rc = graph_node(fname, comm, rank, &c, &t, &first, &count);
    if (rc)
        return rc;
    if (maxneighbors < 0)
        return fail(c, fname, wh_error(MPI_ERR_ARG, "maxneighbors is negative (%d)", maxneighbors));
    int n = maxneighbors < count ? maxneighbors : count;
    if (n > 0)
        WH_CHK_PTR(fname, c, neighbors, "neighbors");
    if (n)
        memcpy(neighbors, WH_TOPO_ARR(t, o_edges) + first, (size_t)n * sizeof(int));
    return MPI_SUCCESS;
}

#include "entry/topo.h"
