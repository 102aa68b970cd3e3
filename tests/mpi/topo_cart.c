/* Cartesian topologies: MPI_Dims_create values (as MPICH computes them),
 * Cart_create/get/rank/coords/shift/sub/map, Cartdim_get, Topo_test, the
 * topology kept by Comm_dup and Comm_idup, ranks left out of a smaller grid,
 * and the error cases (MPI_ERRORS_RETURN). */
#include "p2p_check.h"

static void dims_is(int nnodes, int ndims, const int *in, const int *want)
{
    int d[20];
    memcpy(d, in, (size_t)ndims * sizeof(int));
    MPI_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i], want[i]);
}

/* check every query of a 2-d cartesian communicator of dims d, periods p */
static void check_cart2(MPI_Comm c, const int *d, const int *p)
{
    int st, nd, r, n, dims[2], per[2], co[2];
    MPI_OK(MPI_Topo_test(c, &st));
    CHECK(st == MPI_CART, "Topo_test %d", st);
    MPI_OK(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2, "Cartdim_get %d", nd);
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    CHECK(n == d[0] * d[1], "size %d", n);
    MPI_OK(MPI_Cart_get(c, 2, dims, per, co));
    CHECK(dims[0] == d[0] && dims[1] == d[1], "dims %d %d", dims[0], dims[1]);
    CHECK(per[0] == p[0] && per[1] == p[1], "periods %d %d", per[0], per[1]);
    CHECK(co[0] == r / d[1] && co[1] == r % d[1], "rank %d coords %d %d (row major)", r, co[0], co[1]);
    for (int q = 0; q < n; q++) {
        int cq[2], rq;
        MPI_OK(MPI_Cart_coords(c, q, 2, cq));
        CHECK(cq[0] == q / d[1] && cq[1] == q % d[1], "coords of %d: %d %d", q, cq[0], cq[1]);
        MPI_OK(MPI_Cart_rank(c, cq, &rq));
        CHECK(rq == q, "Cart_rank(coords(%d)) = %d", q, rq);
    }
    for (int dir = 0; dir < 2; dir++) {
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst, want[2];
            MPI_OK(MPI_Cart_shift(c, dir, disp, &src, &dst));
            for (int k = 0; k < 2; k++) {
                int cc[2] = {co[0], co[1]};
                cc[dir] += k ? disp : -disp;
                if (p[dir])
                    cc[dir] = ((cc[dir] % d[dir]) + d[dir]) % d[dir];
                want[k] = cc[dir] < 0 || cc[dir] >= d[dir] ? MPI_PROC_NULL : cc[0] * d[1] + cc[1];
            }
            CHECK(src == want[0] && dst == want[1], "shift dir %d disp %d: %d %d, expected %d %d", dir, disp, src, dst,
                  want[0], want[1]);
            /* the shift pairs up: what I send to dst arrives from src */
            int out = r * 7 + dir, in = -5;
            MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, dst, 3, &in, 1, MPI_INT, src, 3, c, MPI_STATUS_IGNORE));
            CHECK(in == (src == MPI_PROC_NULL ? -5 : src * 7 + dir), "shifted value %d from %d", in, src);
        }
    }
    if (p[0]) { /* periodic: coordinates wrap */
        int cw[2] = {co[0] - d[0], co[1]}, rw;
        MPI_OK(MPI_Cart_rank(c, cw, &rw));
        CHECK(rw == r, "wrapped Cart_rank %d", rw);
    }
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int n = p2p_size;

    p2p_setstep("Dims_create");
    dims_is(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_is(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims_is(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_is(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_is(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_is(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims_is(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_is(36, 2, (int[]){0, 0}, (int[]){6, 6});
    dims_is(8, 2, (int[]){0, 2}, (int[]){4, 2});
    /* equal spreads: MPICH prefers the larger smallest factors (MPICH topo/dims5) */
    dims_is(5616, 4, (int[]){0, 0, 0, 0}, (int[]){13, 9, 8, 6});
    dims_is(5040, 3, (int[]){0, 0, 0}, (int[]){21, 16, 15});
    dims_is(497664, 14, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
            (int[]){4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2});
    dims_is(1 << 30, 20, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
            (int[]){4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2});
    dims_is(999983, 2, (int[]){0, 0}, (int[]){999983, 1});
    if (p2p_rank == 0) { /* a search linear in nnodes took seconds here (MPICH's dims5 timed out) */
        double t0 = MPI_Wtime();
        for (int i = 0; i < 1000; i++) {
            int d2[2] = {0, 0};
            MPI_OK(MPI_Dims_create(997920 - 2 * (i % 8), 2, d2));
            CHECK(d2[0] >= d2[1] && d2[0] * d2[1] == 997920 - 2 * (i % 8), "Dims_create %d x %d", d2[0], d2[1]);
        }
        CHECK(MPI_Wtime() - t0 < 1.0, "1000 2-d Dims_create near 1e6 took %.2f s", MPI_Wtime() - t0);
    }
    MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(10, 2, (int[]){3, 0}));
    MPI_FAILS(MPI_ERR_DIMS, MPI_Dims_create(4, 2, (int[]){-1, 0}));

    p2p_setstep("2-d grid, periodic in dimension 0");
    int d[2] = {0, 0}, per[2] = {1, 0};
    MPI_OK(MPI_Dims_create(n, 2, d));
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 1, &cart));
    CHECK(cart != MPI_COMM_NULL, "every rank is in the grid");
    check_cart2(cart, d, per);

    p2p_setstep("Comm_dup and Comm_idup keep the topology");
    MPI_Comm dup, idup;
    MPI_Request req;
    MPI_OK(MPI_Comm_dup(cart, &dup));
    check_cart2(dup, d, per);
    MPI_OK(MPI_Comm_idup(cart, &idup, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_cart2(idup, d, per);
    MPI_OK(MPI_Comm_free(&idup));
    MPI_OK(MPI_Comm_free(&dup));

    p2p_setstep("Cart_sub keeping dimension 1 (rows), then none");
    MPI_Comm row, pt;
    MPI_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    int rs, rr, rd[1], rp[1], rc[1], co[2], nd;
    MPI_OK(MPI_Cart_coords(cart, p2p_rank, 2, co));
    MPI_OK(MPI_Comm_size(row, &rs));
    MPI_OK(MPI_Comm_rank(row, &rr));
    CHECK(rs == d[1] && rr == co[1], "row size %d rank %d", rs, rr);
    MPI_OK(MPI_Cart_get(row, 1, rd, rp, rc));
    CHECK(rd[0] == d[1] && rp[0] == 0 && rc[0] == co[1], "row dims %d periods %d coords %d", rd[0], rp[0], rc[0]);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&p2p_rank, &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(sum == co[0] * d[1] * d[1] + d[1] * (d[1] - 1) / 2, "row sum %d", sum);
    MPI_OK(MPI_Cart_sub(cart, (int[]){0, 0}, &pt));
    MPI_OK(MPI_Comm_size(pt, &rs));
    MPI_OK(MPI_Cartdim_get(pt, &nd));
    CHECK(rs == 1 && nd == 0, "point size %d ndims %d", rs, nd);
    MPI_OK(MPI_Comm_free(&pt));
    MPI_OK(MPI_Comm_free(&row));

    p2p_setstep("3-d periodic grid");
    int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1}, c3[3];
    MPI_OK(MPI_Dims_create(n, 3, d3));
    MPI_Comm cube;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cube));
    MPI_OK(MPI_Cart_coords(cube, p2p_rank, 3, c3));
    CHECK(c3[0] * d3[1] * d3[2] + c3[1] * d3[2] + c3[2] == p2p_rank, "3-d coords %d %d %d", c3[0], c3[1], c3[2]);
    for (int dir = 0; dir < 3; dir++) {
        int s, t;
        MPI_OK(MPI_Cart_shift(cube, dir, 1, &s, &t));
        CHECK(s != MPI_PROC_NULL && t != MPI_PROC_NULL, "periodic shift gave MPI_PROC_NULL");
        int cs[3];
        MPI_OK(MPI_Cart_coords(cube, t, 3, cs));
        CHECK(cs[dir] == (c3[dir] + 1) % d3[dir], "dest coordinate %d", cs[dir]);
    }
    MPI_OK(MPI_Comm_free(&cube));

    p2p_setstep("a grid smaller than the communicator");
    if (n > 1) {
        MPI_Comm small;
        int dm = n - 1, pm = 0, newrank;
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dm, &pm, 0, &small));
        MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, &dm, &pm, &newrank));
        if (p2p_rank == n - 1) {
            CHECK(small == MPI_COMM_NULL, "last rank got a communicator");
            CHECK(newrank == MPI_UNDEFINED, "Cart_map gave %d", newrank);
        } else {
            int ss;
            MPI_OK(MPI_Comm_size(small, &ss));
            CHECK(ss == n - 1 && newrank == p2p_rank, "size %d newrank %d", ss, newrank);
            int s, t;
            MPI_OK(MPI_Cart_shift(small, 0, 1, &s, &t));
            CHECK(s == (p2p_rank ? p2p_rank - 1 : MPI_PROC_NULL) && t == (p2p_rank < n - 2 ? p2p_rank + 1 : MPI_PROC_NULL),
                  "line shift %d %d", s, t);
            MPI_OK(MPI_Comm_free(&small));
        }
    }

    p2p_setstep("errors");
    int st;
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED, "world has topology %d", st);
    int x[2], y[2], z[2];
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cart_get(MPI_COMM_WORLD, 2, x, y, z));
    MPI_FAILS(MPI_ERR_TOPOLOGY, MPI_Cartdim_get(MPI_COMM_WORLD, &st));
    MPI_Comm bad = MPI_COMM_SELF;
    int big = n + 1, zero = 0;
    int rcode = MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &zero, 0, &bad);
    CHECK(rcode != MPI_SUCCESS, "a grid larger than the communicator was accepted");
    CHECK(bad == MPI_COMM_NULL, "a failed MPI_Cart_create left comm_cart 0x%x, not MPI_COMM_NULL", (unsigned)bad);
    bad = MPI_COMM_SELF;
    rcode = MPI_Graph_create(MPI_COMM_WORLD, 1, (int[]){-1}, (int[]){0}, 0, &bad);
    CHECK(rcode != MPI_SUCCESS && bad == MPI_COMM_NULL, "failed MPI_Graph_create: rc %d, comm_graph 0x%x", rcode,
          (unsigned)bad);
    MPI_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    int far[2] = {0, d[1]};
    rcode = MPI_Cart_rank(cart, far, &st);
    CHECK(rcode != MPI_SUCCESS, "coordinate outside a non-periodic dimension accepted");
    rcode = MPI_Cart_shift(cart, 2, 1, &st, &st);
    CHECK(rcode != MPI_SUCCESS, "direction 2 of a 2-d grid accepted");
    MPI_FAILS(MPI_ERR_RANK, MPI_Cart_coords(cart, n, 2, x));

    MPI_OK(MPI_Comm_free(&cart));
    MPI_Finalize();
    return 0;
}
