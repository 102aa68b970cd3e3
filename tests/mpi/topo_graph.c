/* Graph and distributed graph topologies: Graph_create and its queries,
 * Graph_map, a graph smaller than the communicator, Dist_graph_create_adjacent
 * (weighted, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY), Dist_graph_create with edges
 * given by other ranks, Topo_test and the topology kept by Comm_dup. */
#include "p2p_check.h"

/* symmetric ring graph over n nodes: index[], edges[] */
static int ring_graph(int n, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < n; i++) {
        if (n >= 3) {
            edges[e++] = (i + 1) % n;
            edges[e++] = (i + n - 1) % n;
        } else if (n == 2) {
            edges[e++] = 1 - i;
        }
        index[i] = e;
    }
    return e;
}

static void check_graph(MPI_Comm g, int n, const int *index, const int *edges, int nedges)
{
    int st, nn, ne;
    MPI_OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "Topo_test %d", st);
    MPI_OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == n && ne == nedges, "Graphdims_get %d %d", nn, ne);
    int gi[64], ge[128];
    MPI_OK(MPI_Graph_get(g, n, nedges, gi, ge));
    for (int i = 0; i < n; i++)
        CHECK(gi[i] == index[i], "index[%d] = %d", i, gi[i]);
    for (int i = 0; i < nedges; i++)
        CHECK(ge[i] == edges[i], "edges[%d] = %d", i, ge[i]);
    for (int r = 0; r < n; r++) {
        int cnt, nb[8], first = r ? index[r - 1] : 0;
        MPI_OK(MPI_Graph_neighbors_count(g, r, &cnt));
        CHECK(cnt == index[r] - first, "neighbors_count(%d) = %d", r, cnt);
        MPI_OK(MPI_Graph_neighbors(g, r, 8, nb));
        for (int k = 0; k < cnt; k++)
            CHECK(nb[k] == edges[first + k], "neighbor %d of %d = %d", k, r, nb[k]);
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int n = p2p_size, r = p2p_rank;

    p2p_setstep("Graph_create: ring");
    int index[64], edges[128];
    int ne = ring_graph(n, index, edges);
    MPI_Comm g, gd;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    check_graph(g, n, index, edges, ne);
    int newrank;
    MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &newrank));
    CHECK(newrank == r, "Graph_map %d", newrank);
    MPI_OK(MPI_Comm_dup(g, &gd));
    check_graph(gd, n, index, edges, ne);
    MPI_OK(MPI_Comm_free(&gd));

    p2p_setstep("a graph on fewer nodes than ranks");
    if (n > 1) {
        int si[64], se[128], sne = ring_graph(n - 1, si, se);
        MPI_Comm s;
        MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n - 1, si, se, 1, &s));
        MPI_OK(MPI_Graph_map(MPI_COMM_WORLD, n - 1, si, se, &newrank));
        if (r == n - 1) {
            CHECK(s == MPI_COMM_NULL && newrank == MPI_UNDEFINED, "the rank outside got %d / %d", (int)s, newrank);
        } else {
            check_graph(s, n - 1, si, se, sne);
            MPI_OK(MPI_Comm_free(&s));
        }
    }

    p2p_setstep("Dist_graph_create_adjacent, weighted");
    int src[2] = {(r + n - 1) % n, (r + n - 2 * (n > 1)) % n}, dst[2] = {(r + 1) % n, (r + 2 * (n > 1)) % n};
    int sw[2] = {10 * src[0] + 1, 10 * src[1] + 2}, dw[2] = {10 * r + 1, 10 * r + 2};
    MPI_Comm dg, dgd;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Comm c = dg;
        if (pass) {
            MPI_OK(MPI_Comm_dup(dg, &dgd));
            c = dgd;
        }
        int st, indeg, outdeg, weighted, s2[2], sw2[2], d2[2], dw2[2];
        MPI_OK(MPI_Topo_test(c, &st));
        CHECK(st == MPI_DIST_GRAPH, "Topo_test %d", st);
        MPI_OK(MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &weighted));
        CHECK(indeg == 2 && outdeg == 2 && weighted, "counts %d %d weighted %d", indeg, outdeg, weighted);
        MPI_OK(MPI_Dist_graph_neighbors(c, 2, s2, sw2, 2, d2, dw2));
        for (int i = 0; i < 2; i++)
            CHECK(s2[i] == src[i] && sw2[i] == sw[i] && d2[i] == dst[i] && dw2[i] == dw[i], "neighbour %d: %d/%d %d/%d", i,
                  s2[i], sw2[i], d2[i], dw2[i]);
    }
    MPI_OK(MPI_Comm_free(&dgd));
    MPI_OK(MPI_Comm_free(&dg));

    p2p_setstep("Dist_graph_create_adjacent, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY");
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                          &dg));
    int indeg, outdeg, weighted, s1 = -1, d1 = -1;
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "unweighted counts %d %d weighted %d", indeg, outdeg, weighted);
    MPI_OK(MPI_Dist_graph_neighbors(dg, 1, &s1, MPI_UNWEIGHTED, 1, &d1, MPI_UNWEIGHTED));
    CHECK(s1 == src[0] && d1 == dst[0], "unweighted neighbours %d %d", s1, d1);
    MPI_OK(MPI_Comm_free(&dg));
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY,
                                          MPI_INFO_NULL, 0, &dg));
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 0 && outdeg == 0 && weighted, "empty: %d %d weighted %d", indeg, outdeg, weighted);
    MPI_OK(MPI_Comm_free(&dg));

    p2p_setstep("Dist_graph_create: each rank gives the edge (r+1) -> (r+2) of its neighbours");
    int gs = (r + 1) % n, gdeg = 1, gdst = (r + 2) % n, gw = 100 + r;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &gs, &gdeg, &gdst, &gw, MPI_INFO_NULL, 0, &dg));
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted, "counts %d %d weighted %d", indeg, outdeg, weighted);
    int is, iw, os, ow;
    MPI_OK(MPI_Dist_graph_neighbors(dg, 1, &is, &iw, 1, &os, &ow));
    /* my in-edge came from r-1 (given by r-2), my out-edge goes to r+1 (given by r-1) */
    CHECK(is == (r + n - 1) % n && iw == 100 + (r + 2 * n - 2) % n, "in-edge %d weight %d", is, iw);
    CHECK(os == (r + 1) % n && ow == 100 + (r + n - 1) % n, "out-edge %d weight %d", os, ow);
    MPI_OK(MPI_Comm_free(&dg));

    p2p_setstep("Dist_graph_create: rank 0 gives every edge of a star, unweighted");
    int *ss = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n), sdeg = n;
    for (int i = 0; i < n; i++)
        sd[i] = i;
    ss[0] = 0;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, r == 0, ss, &sdeg, sd, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == (r == 0 ? n : 0) && !weighted, "star counts %d %d weighted %d", indeg, outdeg, weighted);
    int od[64];
    MPI_OK(MPI_Dist_graph_neighbors(dg, 1, &is, MPI_UNWEIGHTED, 64, od, MPI_UNWEIGHTED));
    CHECK(is == 0, "star source %d", is);
    for (int i = 0; i < outdeg; i++)
        CHECK(od[i] == i, "star destination %d = %d", i, od[i]);
    MPI_OK(MPI_Comm_free(&dg));
    free(ss);
    free(sd);

    p2p_setstep("errors");
    int x;
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Graphdims_get(MPI_COMM_WORLD, &x, &x));
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &x, &x));
    MPI_OK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(g, &x));
    MPI_FAILS(MPI_ERR_RANK, MPI_Graph_neighbors_count(g, n, &x));
    int bad = n;
    MPI_FAILS(MPI_ERR_RANK, MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &bad, MPI_UNWEIGHTED, 0, NULL,
                                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    MPI_OK(MPI_Comm_free(&g));
    MPI_Finalize();
    return 0;
}
