/* Blocking neighbourhood collectives over cartesian (periodic, including
 * dimensions of size 1 and 2 where both neighbours are one process, and
 * non-periodic with MPI_PROC_NULL borders), graph and distributed graph
 * communicators: allgather(v), alltoall(v,w) and their _c variants.  Each
 * received block is checked against who sent it and which of the sender's
 * send blocks it was. */
#include "p2p_check.h"

#define MAXN 64

/* the neighbourhood of the calling rank as the standard orders it */
typedef struct {
    int nin, nout, in[MAXN], out[MAXN];
    int from_slot[MAXN]; /* in[i] sent me its send block number from_slot[i] */
} nbhd_t;

static void cart_nbhd(MPI_Comm c, nbhd_t *h)
{
    int nd;
    MPI_OK(MPI_Cartdim_get(c, &nd));
    h->nin = h->nout = 2 * nd;
    for (int d = 0; d < nd; d++) {
        int s, t;
        MPI_OK(MPI_Cart_shift(c, d, 1, &s, &t));
        h->in[2 * d] = h->out[2 * d] = s;
        h->in[2 * d + 1] = h->out[2 * d + 1] = t;
        /* my -1 neighbour sent towards its +1 side (block 2d+1), and vice versa */
        h->from_slot[2 * d] = 2 * d + 1;
        h->from_slot[2 * d + 1] = 2 * d;
    }
}

/* graph or dist graph whose out list of rank s is known: dests(s, j) */
static void list_nbhd(int r, int n, int nin, const int *in, int nout, const int *out, int (*dest)(int s, int j, int n),
                      int (*deg)(int s, int n), nbhd_t *h)
{
    h->nin = nin;
    h->nout = nout;
    memcpy(h->in, in, sizeof(int) * (size_t)nin);
    memcpy(h->out, out, sizeof(int) * (size_t)nout);
    /* the k-th message from s to me is s's k-th send block addressed to me */
    for (int i = 0; i < nin; i++) {
        int s = in[i], k = 0;
        for (int j = 0; j < i; j++)
            k += in[j] == s;
        int slot = -1;
        for (int j = 0; j < deg(s, n) && slot < 0; j++)
            if (dest(s, j, n) == r && k-- == 0)
                slot = j;
        CHECK(slot >= 0, "no send block of %d is addressed to me", s);
        h->from_slot[i] = slot;
    }
}

static int val(int sender, int slot, int elem)
{
    return sender * 10000 + slot * 100 + elem;
}

static void run_all(MPI_Comm c, const nbhd_t *h, const char *what)
{
    int r, sbuf[MAXN * 8], rbuf[MAXN * 8], rcnt[MAXN], rdsp[MAXN], scnt[MAXN], sdsp[MAXN];
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &r));

    p2p_setstep("%s: Neighbor_allgather", what);
    int mine[2] = {val(r, 0, 0), val(r, 0, 1)};
    for (int i = 0; i < MAXN * 2; i++)
        rbuf[i] = -1;
    MPI_OK(MPI_Neighbor_allgather(mine, 2, MPI_INT, rbuf, 2, MPI_INT, c));
    for (int i = 0; i < h->nin; i++)
        for (int e = 0; e < 2; e++) {
            int want = h->in[i] == MPI_PROC_NULL ? -1 : val(h->in[i], 0, e);
            CHECK(rbuf[2 * i + e] == want, "block %d elem %d = %d, expected %d", i, e, rbuf[2 * i + e], want);
        }

    p2p_setstep("%s: Neighbor_alltoall(_c)", what);
    for (int j = 0; j < h->nout; j++)
        for (int e = 0; e < 3; e++)
            sbuf[3 * j + e] = val(r, j, e);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < MAXN * 3; i++)
            rbuf[i] = -1;
        if (pass)
            MPI_OK(MPI_Neighbor_alltoall_c(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, c));
        else
            MPI_OK(MPI_Neighbor_alltoall(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, c));
        for (int i = 0; i < h->nin; i++)
            for (int e = 0; e < 3; e++) {
                int want = h->in[i] == MPI_PROC_NULL ? -1 : val(h->in[i], h->from_slot[i], e);
                CHECK(rbuf[3 * i + e] == want, "block %d elem %d = %d, expected %d", i, e, rbuf[3 * i + e], want);
            }
    }

    p2p_setstep("%s: Neighbor_allgatherv (blocks reversed)", what);
    int tot = 0;
    for (int i = h->nin - 1; i >= 0; i--) {
        rdsp[i] = tot;
        tot += 2; /* one element and a gap */
    }
    for (int i = 0; i < tot; i++)
        rbuf[i] = -1;
    for (int i = 0; i < h->nin; i++)
        rcnt[i] = 1;
    MPI_OK(MPI_Neighbor_allgatherv(mine, 1, MPI_INT, rbuf, rcnt, rdsp, MPI_INT, c));
    for (int i = 0; i < h->nin; i++) {
        int want = h->in[i] == MPI_PROC_NULL ? -1 : val(h->in[i], 0, 0);
        CHECK(rbuf[rdsp[i]] == want && rbuf[rdsp[i] + 1] == -1, "v block %d = %d, expected %d", i, rbuf[rdsp[i]], want);
    }

    p2p_setstep("%s: Neighbor_alltoallv(_c) with per-neighbour counts", what);
    /* send block j has j % 3 + 1 elements, so the block from in[i] has
       from_slot[i] % 3 + 1 */
    int so = 0;
    for (int j = 0; j < h->nout; j++) {
        scnt[j] = j % 3 + 1;
        sdsp[j] = so;
        for (int e = 0; e < scnt[j]; e++)
            sbuf[so + e] = val(r, j, e);
        so += scnt[j];
    }
    int ro = 0;
    for (int i = h->nin - 1; i >= 0; i--) {
        rcnt[i] = h->from_slot[i] % 3 + 1;
        rdsp[i] = ro;
        ro += rcnt[i];
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ro; i++)
            rbuf[i] = -1;
        if (pass) {
            MPI_Count cs[MAXN], cr[MAXN];
            MPI_Aint ds[MAXN], dr[MAXN];
            for (int j = 0; j < h->nout; j++)
                cs[j] = scnt[j], ds[j] = sdsp[j];
            for (int i = 0; i < h->nin; i++)
                cr[i] = rcnt[i], dr[i] = rdsp[i];
            MPI_OK(MPI_Neighbor_alltoallv_c(sbuf, cs, ds, MPI_INT, rbuf, cr, dr, MPI_INT, c));
        } else {
            MPI_OK(MPI_Neighbor_alltoallv(sbuf, scnt, sdsp, MPI_INT, rbuf, rcnt, rdsp, MPI_INT, c));
        }
        for (int i = 0; i < h->nin; i++)
            for (int e = 0; e < rcnt[i]; e++) {
                int want = h->in[i] == MPI_PROC_NULL ? -1 : val(h->in[i], h->from_slot[i], e);
                CHECK(rbuf[rdsp[i] + e] == want, "v block %d elem %d = %d, expected %d", i, e, rbuf[rdsp[i] + e], want);
            }
    }

    p2p_setstep("%s: Neighbor_alltoallw(_c) with byte displacements", what);
    MPI_Aint sb[MAXN], rb[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    for (int j = 0; j < h->nout; j++) {
        sb[j] = (MPI_Aint)sizeof(int) * sdsp[j];
        st[j] = MPI_INT;
    }
    for (int i = 0; i < h->nin; i++) {
        rb[i] = (MPI_Aint)sizeof(int) * rdsp[i];
        rt[i] = MPI_INT;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < ro; i++)
            rbuf[i] = -1;
        if (pass) {
            MPI_Count cs[MAXN], cr[MAXN];
            for (int j = 0; j < h->nout; j++)
                cs[j] = scnt[j];
            for (int i = 0; i < h->nin; i++)
                cr[i] = rcnt[i];
            MPI_OK(MPI_Neighbor_alltoallw_c(sbuf, cs, sb, st, rbuf, cr, rb, rt, c));
        } else {
            MPI_OK(MPI_Neighbor_alltoallw(sbuf, scnt, sb, st, rbuf, rcnt, rb, rt, c));
        }
        for (int i = 0; i < h->nin; i++)
            for (int e = 0; e < rcnt[i]; e++) {
                int want = h->in[i] == MPI_PROC_NULL ? -1 : val(h->in[i], h->from_slot[i], e);
                CHECK(rbuf[rdsp[i] + e] == want, "w block %d elem %d = %d, expected %d", i, e, rbuf[rdsp[i] + e], want);
            }
    }
}

/* graph: symmetric ring (n >= 3), single edge (n == 2), none (n == 1) */
static int ring_deg(int s, int n)
{
    (void)s;
    return n >= 3 ? 2 : n - 1;
}
static int ring_dest(int s, int j, int n)
{
    return n == 2 ? 1 - s : j == 0 ? (s + 1) % n : (s + n - 1) % n;
}
/* dist graph: s sends to s+1, s+2, s+3 (mod n; repeats when n is small) */
static int dg_deg(int s, int n)
{
    (void)s;
    (void)n;
    return 3;
}
static int dg_dest(int s, int j, int n)
{
    return (s + j + 1) % n;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int n = p2p_size, r = p2p_rank;
    nbhd_t h;

    /* periodic 2-d grid: with 2 ranks dims are 2 x 1, so both sides of a
       dimension are one process (or me) */
    int d[2] = {0, 0}, per[2] = {1, 1};
    MPI_OK(MPI_Dims_create(n, 2, d));
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 0, &cart));
    cart_nbhd(cart, &h);
    run_all(cart, &h, "periodic cart");
    MPI_OK(MPI_Comm_free(&cart));

    int d3[3] = {n, 1, 1}, p3[3] = {0, 1, 0};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cart));
    cart_nbhd(cart, &h);
    run_all(cart, &h, "non-periodic cart with borders");
    MPI_Comm cdup;
    MPI_OK(MPI_Comm_dup(cart, &cdup));
    run_all(cdup, &h, "dup of the cart");
    MPI_OK(MPI_Comm_free(&cdup));
    MPI_OK(MPI_Comm_free(&cart));

    int index[MAXN], edges[2 * MAXN], e = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < ring_deg(i, n); j++)
            edges[e++] = ring_dest(i, j, n);
        index[i] = e;
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int nb[MAXN], nnb;
    MPI_OK(MPI_Graph_neighbors_count(g, r, &nnb));
    MPI_OK(MPI_Graph_neighbors(g, r, MAXN, nb));
    list_nbhd(r, n, nnb, nb, nnb, nb, ring_dest, ring_deg, &h);
    run_all(g, &h, "graph");
    MPI_OK(MPI_Comm_free(&g));

    int src[3], dst[3];
    for (int j = 0; j < 3; j++) {
        dst[j] = dg_dest(r, j, n);
        src[j] = ((r - j - 1) % n + n) % n;
    }
    MPI_Comm dg;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, MPI_UNWEIGHTED, 3, dst, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                          0, &dg));
    list_nbhd(r, n, 3, src, 3, dst, dg_dest, dg_deg, &h);
    run_all(dg, &h, "dist graph");
    MPI_OK(MPI_Comm_free(&dg));

    p2p_setstep("errors");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0, y[MAXN];
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Neighbor_alltoall(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
