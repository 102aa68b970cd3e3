/* Device buffers in intercommunicator collectives, neighbourhood collectives
 * (cartesian, periodic and not, so some neighbours are MPI_PROC_NULL) and
 * MPI_Pack_external/MPI_Unpack_external, on the emulated driver (device
 * memory the CPU cannot touch: a path that misses the staging dies with
 * SIGSEGV).  Blocking, nonblocking and persistent forms; receive buffers
 * are device memory pre-filled with a marker and every byte is checked
 * after copying them back, holes included. */
#include "gpu_common.h"

#define MARK 0x5a5a5a5a

static int val(int r, int i, int seed)
{
    return r * 100003 + i * 7 + seed;
}

static int *mk(int r, size_t n, int seed)
{
    int *h = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = val(r, (int)i, seed);
    return h;
}

static int *marks(size_t n)
{
    int *h = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        h[i] = MARK;
    return h;
}

static void *dev_marked(size_t n)
{
    int *m = marks(n);
    void *d = dev_from(m, n * sizeof(int));
    free(m);
    return d;
}

/* ---------- intercommunicator: even world ranks against odd ones ---------- */

static MPI_Comm inter;
static int lrank, lsize, rsize, color;
static int rworld[64]; /* world rank of each remote rank */

static void make_inter(void)
{
    MPI_Comm local;
    color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 7, &inter);
    MPI_Comm_free(&local);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    for (int j = 0; j < rsize; j++)
        rworld[j] = 2 * j + !color;
}

static void t_inter(size_t n)
{
    size_t b = n * sizeof(int);
    /* bcast from the even group's rank 0 (persistent too, started twice) */
    for (int rep = 0; rep < 3; rep++) {
        int *h = mk(0, n, 20 + rep);
        int root = color ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
        void *d = color == 0 && lrank == 0 ? dev_from(h, b) : dev_marked(n);
        MPI_Request q;
        if (rep == 0)
            MPI_Bcast(d, (int)n, MPI_INT, root, inter);
        else if (rep == 1) {
            MPI_Ibcast(d, (int)n, MPI_INT, root, inter, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            MPI_Bcast_init(d, (int)n, MPI_INT, root, inter, MPI_INFO_NULL, &q);
            for (int k = 0; k < 2; k++) {
                int *hk = mk(0, n, 40 + k);
                if (color == 0 && lrank == 0)
                    dev_put(d, hk, b);
                MPI_Start(&q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                if (color)
                    check_ints(d, hk, n, "inter bcast_init");
                free(hk);
            }
            MPI_Request_free(&q);
        }
        if (color && rep < 2)
            check_ints(d, h, n, "inter bcast");
        else if (color == 0 && lrank != 0) {
            int *m = marks(n);
            check_ints(d, m, n, "inter bcast: MPI_PROC_NULL untouched");
            free(m);
        }
        dev_free(d);
        free(h);
    }
    /* allreduce: the sum over the remote group; blocking, nonblocking, persistent */
    int *want = calloc(n ? n : 1, sizeof(int));
    for (int j = 0; j < rsize; j++)
        for (size_t i = 0; i < n; i++)
            want[i] += val(rworld[j], (int)i, 3);
    int *h = mk(rank, n, 3);
    void *s = dev_from(h, b), *r = dev_marked(n);
    MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, inter);
    check_ints(r, want, n, "inter allreduce");
    MPI_Request q;
    void *r2 = dev_marked(n);
    MPI_Iallreduce(s, r2, (int)n, MPI_INT, MPI_SUM, inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(r2, want, n, "inter iallreduce");
    MPI_Allreduce_init(s, r2, (int)n, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &q);
    for (int k = 0; k < 2; k++) {
        int *hk = mk(rank, n, 50 + k), *wk = calloc(n ? n : 1, sizeof(int));
        for (int j = 0; j < rsize; j++)
            for (size_t i = 0; i < n; i++)
                wk[i] += val(rworld[j], (int)i, 50 + k);
        dev_put(s, hk, b);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        check_ints(r2, wk, n, "inter allreduce_init");
        free(hk);
        free(wk);
    }
    MPI_Request_free(&q);
    dev_put(s, h, b);
    /* reduce to the odd group's rank 0 */
    int root = color ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    void *rr = dev_marked(n);
    MPI_Reduce(s, rr, (int)n, MPI_INT, MPI_SUM, root, inter);
    if (root == MPI_ROOT)
        check_ints(rr, want, n, "inter reduce");
    /* allgather: the remote group's blocks in remote rank order */
    void *ag = dev_marked(n * (size_t)rsize);
    int *wag = malloc((n * (size_t)rsize + 1) * sizeof(int));
    for (int j = 0; j < rsize; j++)
        for (size_t i = 0; i < n; i++)
            wag[(size_t)j * n + i] = val(rworld[j], (int)i, 3);
    MPI_Iallgather(s, (int)n, MPI_INT, ag, (int)n, MPI_INT, inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(ag, wag, n * (size_t)rsize, "inter iallgather");
    /* gatherv into the even group's rank 0 with a hole after every block */
    int counts[64], displs[64];
    for (int j = 0; j < rsize; j++) {
        counts[j] = (int)n;
        displs[j] = j * (int)(n + 1);
    }
    size_t gn = (n + 1) * (size_t)rsize;
    void *gv = dev_marked(gn);
    root = color ? 0 : (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Gatherv(s, (int)n, MPI_INT, gv, counts, displs, MPI_INT, root, inter);
    if (root == MPI_ROOT) {
        int *wg = marks(gn);
        for (int j = 0; j < rsize; j++)
            for (size_t i = 0; i < n; i++)
                wg[(size_t)displs[j] + i] = val(rworld[j], (int)i, 3);
        check_ints(gv, wg, gn, "inter gatherv (holes kept)");
        free(wg);
    }
    /* scatter from the odd group's rank 0: block j to remote rank j */
    root = color ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int *hs = mk(rank, n * (size_t)rsize, 9);
    void *sd = dev_from(hs, b * (size_t)rsize), *sr = dev_marked(n);
    MPI_Scatter(sd, (int)n, MPI_INT, sr, (int)n, MPI_INT, root, inter);
    if (!color) {
        int *ws = mk(1, n * (size_t)lsize, 9); /* world rank 1 is the odd group's rank 0 */
        check_ints(sr, ws + (size_t)lrank * n, n, "inter scatter");
        free(ws);
    }
    /* alltoall: block j of the send buffer goes to remote rank j */
    int *ha = mk(rank, n * (size_t)rsize, 11);
    void *as = dev_from(ha, b * (size_t)rsize), *ar = dev_marked(n * (size_t)rsize);
    MPI_Alltoall(as, (int)n, MPI_INT, ar, (int)n, MPI_INT, inter);
    int *wa = malloc((n * (size_t)rsize + 1) * sizeof(int));
    for (int j = 0; j < rsize; j++)
        for (size_t i = 0; i < n; i++)
            wa[(size_t)j * n + i] = val(rworld[j], (int)((size_t)lrank * n + i), 11);
    check_ints(ar, wa, n * (size_t)rsize, "inter alltoall");
    /* alltoallw with the same blocks (byte displacements) */
    MPI_Datatype ty[64];
    int ac[64], ad[64];
    for (int j = 0; j < rsize; j++) {
        ty[j] = MPI_INT;
        ac[j] = (int)n;
        ad[j] = j * (int)b;
    }
    void *ar2 = dev_marked(n * (size_t)rsize);
    MPI_Ialltoallw(as, ac, ad, ty, ar2, ac, ad, ty, inter, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(ar2, wa, n * (size_t)rsize, "inter ialltoallw");
    /* reduce-scatter-block: both groups reduce vectors of the same length (lsize * rsize * n),
     * each local rank gets rsize * n of the remote group's sum */
    size_t tot = n * (size_t)lsize * (size_t)rsize, mine = n * (size_t)rsize;
    int *hb = mk(rank, tot, 13);
    void *rs = dev_from(hb, tot * sizeof(int)), *rsr = dev_marked(mine);
    MPI_Reduce_scatter_block(rs, rsr, (int)mine, MPI_INT, MPI_SUM, inter);
    int *wr = calloc(mine ? mine : 1, sizeof(int));
    for (int j = 0; j < rsize; j++)
        for (size_t i = 0; i < mine; i++)
            wr[i] += val(rworld[j], (int)((size_t)lrank * mine + i), 13);
    check_ints(rsr, wr, mine, "inter reduce_scatter_block");
    void *all[] = {s, r, r2, rr, ag, gv, sd, sr, as, ar, ar2, rs, rsr};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dev_free(all[k]);
    free(want);
    free(h);
    free(wag);
    free(hs);
    free(ha);
    free(wa);
    free(hb);
    free(wr);
}

/* ---------- neighbourhood collectives on a 1-D cartesian ring ---------- */

static void t_nbr(size_t n, int periodic)
{
    MPI_Comm cart;
    int dims[1] = {nprocs}, per[1] = {periodic};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart);
    int nb[2]; /* neighbour order: -1 then +1 */
    MPI_Cart_shift(cart, 0, 1, &nb[0], &nb[1]);
    size_t b = n * sizeof(int);
    /* allgather: block k from neighbour k; a MPI_PROC_NULL neighbour's block keeps its marker */
    int *h = mk(rank, n, 30);
    void *s = dev_from(h, b), *r = dev_marked(2 * n);
    int *w = marks(2 * n);
    for (int k = 0; k < 2; k++)
        if (nb[k] != MPI_PROC_NULL)
            for (size_t i = 0; i < n; i++)
                w[(size_t)k * n + i] = val(nb[k], (int)i, 30);
    MPI_Neighbor_allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, cart);
    check_ints(r, w, 2 * n, "neighbor_allgather");
    /* persistent, started twice with new data */
    MPI_Request q;
    void *r2 = dev_marked(2 * n);
    MPI_Neighbor_allgather_init(s, (int)n, MPI_INT, r2, (int)n, MPI_INT, cart, MPI_INFO_NULL, &q);
    for (int rep = 0; rep < 2; rep++) {
        int *hk = mk(rank, n, 60 + rep), *wk = marks(2 * n);
        for (int k = 0; k < 2; k++)
            if (nb[k] != MPI_PROC_NULL)
                for (size_t i = 0; i < n; i++)
                    wk[(size_t)k * n + i] = val(nb[k], (int)i, 60 + rep);
        dev_put(s, hk, b);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        check_ints(r2, wk, 2 * n, "neighbor_allgather_init");
        free(hk);
        free(wk);
    }
    MPI_Request_free(&q);
    /* alltoall: send block k to neighbour k; it arrives as the opposite direction's block */
    int *ha = mk(rank, 2 * n, 31);
    void *as = dev_from(ha, 2 * b), *ar = dev_marked(2 * n);
    int *wa = marks(2 * n);
    for (int k = 0; k < 2; k++)
        if (nb[k] != MPI_PROC_NULL)
            for (size_t i = 0; i < n; i++) /* neighbour k sent me its block 1-k */
                wa[(size_t)k * n + i] = val(nb[k], (int)((size_t)(1 - k) * n + i), 31);
    MPI_Ineighbor_alltoall(as, (int)n, MPI_INT, ar, (int)n, MPI_INT, cart, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    check_ints(ar, wa, 2 * n, "ineighbor_alltoall");
    /* alltoallv with a hole between the receive blocks */
    int sc[2] = {(int)n, (int)n}, sdp[2] = {0, (int)n}, rdp[2] = {0, (int)n + 3};
    void *av = dev_marked(2 * n + 3);
    int *wv = marks(2 * n + 3);
    for (int k = 0; k < 2; k++)
        if (nb[k] != MPI_PROC_NULL)
            for (size_t i = 0; i < n; i++)
                wv[(size_t)rdp[k] + i] = val(nb[k], (int)((size_t)(1 - k) * n + i), 31);
    MPI_Neighbor_alltoallv(as, sc, sdp, MPI_INT, av, sc, rdp, MPI_INT, cart);
    check_ints(av, wv, 2 * n + 3, "neighbor_alltoallv (holes kept)");
    /* alltoallw, persistent */
    MPI_Aint sdw[2] = {0, (MPI_Aint)b}, rdw[2] = {0, (MPI_Aint)b + 3 * (MPI_Aint)sizeof(int)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    void *aw = dev_marked(2 * n + 3);
    MPI_Neighbor_alltoallw_init(as, sc, sdw, ty, aw, sc, rdw, ty, cart, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Request_free(&q);
    check_ints(aw, wv, 2 * n + 3, "neighbor_alltoallw_init");
    void *all[] = {s, r, r2, as, ar, av, aw};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        dev_free(all[k]);
    free(h);
    free(w);
    free(ha);
    free(wa);
    free(wv);
    MPI_Comm_free(&cart);
}

/* a distributed graph: one-way ring (receive from rank-1, send to rank+1), nonblocking allgather */
static void t_graph(size_t n)
{
    MPI_Comm g;
    int src = (rank + nprocs - 1) % nprocs, dst = (rank + 1) % nprocs;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &g);
    int *h = mk(rank, n, 80);
    void *s = dev_from(h, n * sizeof(int)), *r = dev_marked(n);
    MPI_Request q;
    MPI_Ineighbor_allgather(s, (int)n, MPI_INT, r, (int)n, MPI_INT, g, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int *w = mk(src, n, 80);
    check_ints(r, w, n, "dist graph ineighbor_allgather");
    dev_free(s);
    dev_free(r);
    free(h);
    free(w);
    MPI_Comm_free(&g);
}

/* ---------- MPI_Pack_external / MPI_Unpack_external ---------- */

static void t_external(size_t n)
{
    int *h = mk(rank, n, 70);
    MPI_Aint sz = 0;
    MPI_Pack_external_size("external32", (int)n, MPI_INT, &sz);
    CHECK(sz == (MPI_Aint)(4 * n));
    char *want = malloc((size_t)sz + 1);
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", h, (int)n, MPI_INT, want, sz, &pos);
    CHECK(pos == sz);
    /* device input into device output, device input into host output, host into device */
    for (int mode = 0; mode < 3; mode++) {
        void *in = mode == 2 ? (void *)h : dev_from(h, n * sizeof(int));
        char *hout = malloc((size_t)sz + 1);
        void *out = mode == 1 ? (void *)hout : dev_from(NULL, (size_t)sz);
        pos = 0;
        MPI_Pack_external("external32", in, (int)n, MPI_INT, out, sz, &pos);
        CHECK(pos == sz);
        char *got = mode == 1 ? hout : dev_get(out, (size_t)sz);
        CHECK(!memcmp(got, want, (size_t)sz));
        /* and back: unpack the external32 bytes into device memory */
        void *back = dev_marked(n);
        pos = 0;
        MPI_Unpack_external("external32", out, sz, &pos, back, (int)n, MPI_INT);
        CHECK(pos == sz);
        check_ints(back, h, n, "unpack_external");
        dev_free(back);
        if (mode != 1) {
            free(got);
            dev_free(out);
        }
        if (mode != 2)
            dev_free(in);
        free(hout);
    }
    free(want);
    free(h);
}

int main(int argc, char **argv)
{
    gpu_init(&argc, &argv);
    if (nprocs < 2) {
        printf("gpu coll topo: needs 2 ranks or more\n");
        MPI_Finalize();
        return 1;
    }
    make_inter();
    const size_t sizes[] = {1, 1000, 40000};
    for (int k = 0; k < 3; k++) {
        t_inter(sizes[k]);
        t_nbr(sizes[k], 1);
        t_nbr(sizes[k], 0);
        t_graph(sizes[k]);
        t_external(sizes[k]);
    }
    MPI_Comm_free(&inter);
    return gpu_finish("gpu coll topo");
}
