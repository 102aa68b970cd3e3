/* Nonblocking (MPI_Ineighbor_*) and, with argument "persist", persistent
 * (MPI_Neighbor_*_init + MPI_Start) neighbourhood collectives: allgather(v),
 * alltoall(v,w) and their _c variants over periodic cartesian grids
 * (dimensions of size 1 and 2, where both neighbours of a dimension are one
 * process and only the tags tell the directions apart), a non-periodic grid
 * with MPI_PROC_NULL borders, a graph and a weighted distributed graph.
 * Every received element is checked against its sender, the sender's send
 * block and the round (persistent requests run three times, the send data
 * changing between rounds); several requests are outstanding at once. */
#include "p2p_check.h"

#define MAXN 64
#define ROUNDS 3

static int PERSIST;

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
        h->from_slot[2 * d] = 2 * d + 1;
        h->from_slot[2 * d + 1] = 2 * d;
    }
}

/* graph or dist graph: dest(s, j) is the j-th out neighbour of s */
static void list_nbhd(int r, int n, int nin, const int *in, int nout, const int *out, int (*dest)(int, int, int),
                      int deg, nbhd_t *h)
{
    h->nin = nin;
    h->nout = nout;
    memcpy(h->in, in, sizeof(int) * (size_t)nin);
    memcpy(h->out, out, sizeof(int) * (size_t)nout);
    for (int i = 0; i < nin; i++) {
        int s = in[i], k = 0, slot = -1;
        for (int j = 0; j < i; j++)
            k += in[j] == s;
        for (int j = 0; j < deg && slot < 0; j++)
            if (dest(s, j, n) == r && k-- == 0)
                slot = j;
        CHECK(slot >= 0, "no send block of %d is addressed to me", s);
        h->from_slot[i] = slot;
    }
}

static int val(int round, int sender, int slot, int elem)
{
    return round * 1000000 + sender * 10000 + slot * 100 + elem;
}

enum { OP_AG, OP_A2A, OP_AGV, OP_A2AV, OP_A2AW, NOPS };
static const char *opname[NOPS] = {"allgather", "alltoall", "allgatherv", "alltoallv", "alltoallw"};

/* buffers and layouts of one call, fixed across rounds */
typedef struct {
    const nbhd_t *h;
    int op, wide;
    int sbuf[MAXN * 4], rbuf[MAXN * 4];
    int scnt[MAXN], sdsp[MAXN], rcnt[MAXN], rdsp[MAXN], rlen;
    MPI_Count cs[MAXN], cr[MAXN];
    MPI_Aint ds[MAXN], dr[MAXN], bs[MAXN], br[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
} call_t;

static void layout(call_t *k, const nbhd_t *h, int op, int wide)
{
    memset(k, 0, sizeof *k);
    k->h = h;
    k->op = op;
    k->wide = wide;
    int so = 0, ro = 0;
    for (int j = 0; j < h->nout; j++) {
        k->scnt[j] = op == OP_AG || op == OP_AGV ? 2 : op == OP_A2A ? 3 : j % 3 + 1;
        k->sdsp[j] = op == OP_AG || op == OP_AGV ? 0 : so;
        so += op == OP_AG || op == OP_AGV ? 0 : k->scnt[j];
    }
    /* receive blocks in reverse neighbour order with a one-element gap (v, w) */
    for (int i = 0; i < h->nin; i++) {
        k->rcnt[i] = op == OP_AG || op == OP_AGV ? 2 : op == OP_A2A ? 3 : h->from_slot[i] % 3 + 1;
        if (op == OP_AG || op == OP_A2A)
            k->rdsp[i] = i * k->rcnt[i];
    }
    if (op == OP_AG || op == OP_A2A) {
        ro = h->nin * (op == OP_AG ? 2 : 3);
    } else {
        for (int i = h->nin - 1; i >= 0; i--) {
            k->rdsp[i] = ro;
            ro += k->rcnt[i] + 1;
        }
    }
    k->rlen = ro;
    for (int j = 0; j < h->nout; j++) {
        k->cs[j] = k->scnt[j];
        k->ds[j] = k->sdsp[j];
        k->bs[j] = (MPI_Aint)sizeof(int) * k->sdsp[j];
        k->st[j] = MPI_INT;
    }
    for (int i = 0; i < h->nin; i++) {
        k->cr[i] = k->rcnt[i];
        k->dr[i] = k->rdsp[i];
        k->br[i] = (MPI_Aint)sizeof(int) * k->rdsp[i];
        k->rt[i] = MPI_INT;
    }
}

static void fill(call_t *k, int round)
{
    const nbhd_t *h = k->h;
    int r = p2p_rank;
    if (k->op == OP_AG || k->op == OP_AGV) {
        k->sbuf[0] = val(round, r, 0, 0);
        k->sbuf[1] = val(round, r, 0, 1);
    } else {
        for (int j = 0; j < h->nout; j++)
            for (int e = 0; e < k->scnt[j]; e++)
                k->sbuf[k->sdsp[j] + e] = val(round, r, j, e);
    }
    for (int i = 0; i < MAXN * 4; i++)
        k->rbuf[i] = -1;
}

static void check(const call_t *k, int round, const char *how)
{
    const nbhd_t *h = k->h;
    int gather = k->op == OP_AG || k->op == OP_AGV;
    int covered = 0;
    for (int i = 0; i < h->nin; i++) {
        for (int e = 0; e < k->rcnt[i]; e++) {
            int want = h->in[i] == MPI_PROC_NULL ? -1 : val(round, h->in[i], gather ? 0 : h->from_slot[i], e);
            int got = k->rbuf[k->rdsp[i] + e];
            CHECK(got == want, "%s%s %s round %d: block %d (from %d) elem %d = %d, expected %d", opname[k->op],
                  k->wide ? "_c" : "", how, round, i, h->in[i], e, got, want);
        }
        covered += k->rcnt[i];
    }
    /* gaps and the space after the last block stay untouched */
    int untouched = 0;
    for (int i = 0; i < MAXN * 4; i++)
        untouched += k->rbuf[i] == -1;
    int nullblk = 0;
    for (int i = 0; i < h->nin; i++)
        nullblk += h->in[i] == MPI_PROC_NULL ? k->rcnt[i] : 0;
    CHECK(untouched == MAXN * 4 - covered + nullblk, "%s %s round %d: %d elements written outside the blocks",
          opname[k->op], how, round, MAXN * 4 - covered + nullblk - untouched);
}

/* the nonblocking or persistent call for k */
static void post(call_t *k, MPI_Comm c, MPI_Request *q)
{
    int *s = k->sbuf, *rb = k->rbuf;
    if (!PERSIST) {
        switch (k->op * 2 + k->wide) {
        case 0: MPI_OK(MPI_Ineighbor_allgather(s, 2, MPI_INT, rb, 2, MPI_INT, c, q)); break;
        case 1: MPI_OK(MPI_Ineighbor_allgather_c(s, 2, MPI_INT, rb, 2, MPI_INT, c, q)); break;
        case 2: MPI_OK(MPI_Ineighbor_alltoall(s, 3, MPI_INT, rb, 3, MPI_INT, c, q)); break;
        case 3: MPI_OK(MPI_Ineighbor_alltoall_c(s, 3, MPI_INT, rb, 3, MPI_INT, c, q)); break;
        case 4: MPI_OK(MPI_Ineighbor_allgatherv(s, 2, MPI_INT, rb, k->rcnt, k->rdsp, MPI_INT, c, q)); break;
        case 5: MPI_OK(MPI_Ineighbor_allgatherv_c(s, 2, MPI_INT, rb, k->cr, k->dr, MPI_INT, c, q)); break;
        case 6:
            MPI_OK(MPI_Ineighbor_alltoallv(s, k->scnt, k->sdsp, MPI_INT, rb, k->rcnt, k->rdsp, MPI_INT, c, q));
            break;
        case 7: MPI_OK(MPI_Ineighbor_alltoallv_c(s, k->cs, k->ds, MPI_INT, rb, k->cr, k->dr, MPI_INT, c, q)); break;
        case 8: MPI_OK(MPI_Ineighbor_alltoallw(s, k->scnt, k->bs, k->st, rb, k->rcnt, k->br, k->rt, c, q)); break;
        default: MPI_OK(MPI_Ineighbor_alltoallw_c(s, k->cs, k->bs, k->st, rb, k->cr, k->br, k->rt, c, q)); break;
        }
        return;
    }
    MPI_Info in = MPI_INFO_NULL;
    switch (k->op * 2 + k->wide) {
    case 0: MPI_OK(MPI_Neighbor_allgather_init(s, 2, MPI_INT, rb, 2, MPI_INT, c, in, q)); break;
    case 1: MPI_OK(MPI_Neighbor_allgather_init_c(s, 2, MPI_INT, rb, 2, MPI_INT, c, in, q)); break;
    case 2: MPI_OK(MPI_Neighbor_alltoall_init(s, 3, MPI_INT, rb, 3, MPI_INT, c, in, q)); break;
    case 3: MPI_OK(MPI_Neighbor_alltoall_init_c(s, 3, MPI_INT, rb, 3, MPI_INT, c, in, q)); break;
    case 4: MPI_OK(MPI_Neighbor_allgatherv_init(s, 2, MPI_INT, rb, k->rcnt, k->rdsp, MPI_INT, c, in, q)); break;
    case 5: MPI_OK(MPI_Neighbor_allgatherv_init_c(s, 2, MPI_INT, rb, k->cr, k->dr, MPI_INT, c, in, q)); break;
    case 6:
        MPI_OK(MPI_Neighbor_alltoallv_init(s, k->scnt, k->sdsp, MPI_INT, rb, k->rcnt, k->rdsp, MPI_INT, c, in, q));
        break;
    case 7:
        MPI_OK(MPI_Neighbor_alltoallv_init_c(s, k->cs, k->ds, MPI_INT, rb, k->cr, k->dr, MPI_INT, c, in, q));
        break;
    case 8:
        MPI_OK(MPI_Neighbor_alltoallw_init(s, k->scnt, k->bs, k->st, rb, k->rcnt, k->br, k->rt, c, in, q));
        break;
    default:
        MPI_OK(MPI_Neighbor_alltoallw_init_c(s, k->cs, k->bs, k->st, rb, k->cr, k->br, k->rt, c, in, q));
        break;
    }
}

static call_t calls[2 * NOPS];

/* every operation and width, one at a time, then all ten outstanding at once */
static void run_all(MPI_Comm c, const nbhd_t *h, const char *what)
{
    MPI_Request q[2 * NOPS];
    for (int i = 0; i < 2 * NOPS; i++) {
        call_t *k = &calls[i];
        layout(k, h, i / 2, i % 2);
        p2p_setstep("%s: %s%s alone", what, opname[k->op], k->wide ? "_c" : "");
        int rounds = PERSIST ? ROUNDS : 1;
        if (PERSIST)
            post(k, c, &q[i]);
        for (int g = 0; g < rounds; g++) {
            fill(k, g);
            if (PERSIST)
                MPI_OK(MPI_Start(&q[i]));
            else
                post(k, c, &q[i]);
            MPI_OK(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
            CHECK(PERSIST ? q[i] != MPI_REQUEST_NULL : q[i] == MPI_REQUEST_NULL, "request after wait");
            check(k, g, "alone");
        }
        if (PERSIST)
            MPI_OK(MPI_Request_free(&q[i]));
    }
    p2p_setstep("%s: all outstanding at once", what);
    for (int i = 0; i < 2 * NOPS; i++) {
        fill(&calls[i], 5);
        post(&calls[i], c, &q[i]);
    }
    for (int g = 5; g < (PERSIST ? 7 : 6); g++) {
        if (PERSIST) {
            for (int i = 0; i < 2 * NOPS; i++)
                fill(&calls[i], g);
            MPI_OK(MPI_Startall(2 * NOPS, q));
        }
        /* complete in reverse order of posting */
        for (int i = 2 * NOPS - 1; i >= 0; i--)
            MPI_OK(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * NOPS; i++)
            check(&calls[i], g, "concurrent");
    }
    if (PERSIST)
        for (int i = 0; i < 2 * NOPS; i++)
            MPI_OK(MPI_Request_free(&q[i]));
}

static int ring_dest(int s, int j, int n)
{
    return n == 2 ? 1 - s : j == 0 ? (s + 1) % n : (s + n - 1) % n;
}
static int dg_dest(int s, int j, int n)
{
    return (s + j + 1) % n;
}

static void cart(int nd, const int *dims, const int *per, const char *what)
{
    MPI_Comm c;
    nbhd_t h;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, per, 0, &c));
    cart_nbhd(c, &h);
    run_all(c, &h, what);
    MPI_OK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    PERSIST = argc > 1 && !strcmp(argv[1], "persist");
    int n = p2p_size, r = p2p_rank;
    CHECK(n <= MAXN / 2, "at most %d ranks", MAXN / 2);

    int d[2] = {0, 0}, per[2] = {1, 1};
    MPI_OK(MPI_Dims_create(n, 2, d));
    cart(2, d, per, "periodic 2-d grid");
    /* a periodic dimension of size 1 (I am both my neighbours) and one of
       size 2 (one process on both sides), when n is even */
    if (n % 2 == 0) {
        int d3[3] = {2, 1, n / 2}, p3[3] = {1, 1, 1};
        cart(3, d3, p3, "periodic 2 x 1 x n/2");
    } else {
        int d3[3] = {1, n, 1}, p3[3] = {1, 1, 1};
        cart(3, d3, p3, "periodic 1 x n x 1");
    }
    int d3[3] = {n, 1, 1}, p3[3] = {0, 1, 0};
    cart(3, d3, p3, "non-periodic with borders");

    /* graph: symmetric ring */
    int deg = n >= 3 ? 2 : n - 1, index[MAXN], edges[2 * MAXN], e = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < deg; j++)
            edges[e++] = ring_dest(i, j, n);
        index[i] = e;
    }
    MPI_Comm g;
    nbhd_t h;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int nb[MAXN], nnb;
    MPI_OK(MPI_Graph_neighbors_count(g, r, &nnb));
    MPI_OK(MPI_Graph_neighbors(g, r, MAXN, nb));
    list_nbhd(r, n, nnb, nb, nnb, nb, ring_dest, deg, &h);
    run_all(g, &h, "graph ring");
    MPI_OK(MPI_Comm_free(&g));

    /* weighted distributed graph: s sends to s+1, s+2, s+3 (repeats when n is small) */
    int src[3], dst[3], sw[3], dw[3];
    for (int j = 0; j < 3; j++) {
        dst[j] = dg_dest(r, j, n);
        src[j] = ((r - j - 1) % n + n) % n;
        dw[j] = 10 + j;
        sw[j] = 10 + j;
    }
    MPI_Comm dg;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, sw, 3, dst, dw, MPI_INFO_NULL, 0, &dg));
    list_nbhd(r, n, 3, src, 3, dst, dg_dest, 3, &h);
    run_all(dg, &h, "weighted dist graph");

    p2p_setstep("errors");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(dg, MPI_ERRORS_RETURN));
    int x = 0, y[MAXN], cnt[MAXN] = {0};
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Ineighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &q));
    MPI_FAILS(MPI_ERR_TOPOLOGY,
              MPI_Neighbor_alltoall_init(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Ineighbor_alltoall(&x, -1, MPI_INT, y, 1, MPI_INT, dg, &q));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Neighbor_allgather_init(&x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, dg, MPI_INFO_NULL,
                                                         &q));
    MPI_FAILS(MPI_ERR_ARG, MPI_Ineighbor_alltoallv(&x, cnt, NULL, MPI_INT, y, cnt, cnt, MPI_INT, dg, &q));
    MPI_FAILS(MPI_ERR_ARG, MPI_Ineighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, dg, NULL));
    CHECK(q == MPI_REQUEST_NULL, "a failed call returned a request");
    MPI_OK(MPI_Comm_free(&dg));
    MPI_Finalize();
    return 0;
}
