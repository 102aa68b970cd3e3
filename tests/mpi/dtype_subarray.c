/* Array sections over the wire (2 ranks): a C-order subarray received
 * contiguous and sent back into a Fortran-order subarray; a large 3-D
 * subarray received into a differently placed subarray (non-contiguous on
 * both sides, rendezvous sized); darray pieces gathered into a global array
 * (including a non-contiguous send to self); an indexed lower triangle. */
#include "p2p_check.h"

static void subarray_2d(int rank, int peer)
{
    enum { R = 60, C = 80, SR = 20, SC = 30 };
    static double a[R][C], flat[SR * SC];
    int sizes[2] = {R, C}, subs[2] = {SR, SC}, starts[2] = {5, 10};
    MPI_Datatype sub, fsub;
    MPI_Status st;
    MPI_OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &sub));
    MPI_OK(MPI_Type_commit(&sub));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(sub, &lb, &ext));
    CHECK(lb == 0 && ext == R * C * 8, "subarray extent %ld", (long)ext);
    /* Fortran view of the same memory: an array (C, R) column-major; subarray at (10, 5) of size (SC, SR) */
    int fsizes[2] = {C, R}, fsubs[2] = {SC, SR}, fstarts[2] = {10, 5};
    MPI_OK(MPI_Type_create_subarray(2, fsizes, fsubs, fstarts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &fsub));
    MPI_OK(MPI_Type_commit(&fsub));
    p2p_setstep("2-D subarray -> contiguous");
    if (rank == 0) {
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                a[i][j] = i * 100 + j;
        MPI_OK(MPI_Send(a, 1, sub, peer, 1, MPI_COMM_WORLD));
        /* back into the Fortran-order description of the same section */
        memset(a, 0, sizeof a);
        MPI_OK(MPI_Recv(a, 1, fsub, peer, 2, MPI_COMM_WORLD, &st));
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                int in = i >= 5 && i < 5 + SR && j >= 10 && j < 10 + SC;
                CHECK(a[i][j] == (in ? -(i * 100 + j) : 0), "a[%d][%d] = %g", i, j, a[i][j]);
            }
    } else {
        MPI_OK(MPI_Recv(flat, SR * SC, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_DOUBLE) == SR * SC, "count");
        for (int i = 0; i < SR; i++)
            for (int j = 0; j < SC; j++)
                CHECK(flat[i * SC + j] == (i + 5) * 100 + j + 10, "flat[%d][%d] = %g", i, j, flat[i * SC + j]);
        for (int k = 0; k < SR * SC; k++)
            flat[k] = -flat[k];
        MPI_OK(MPI_Send(flat, SR * SC, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Type_free(&sub));
    MPI_OK(MPI_Type_free(&fsub));
}

static void subarray_3d(int rank, int peer)
{
    enum { N = 64, S = 40 };
    static float a[N][N][N];
    int sizes[3] = {N, N, N}, subs[3] = {S, S, S}, s1[3] = {3, 20, 7}, s2[3] = {24, 0, 11};
    MPI_Datatype t1, t2;
    MPI_OK(MPI_Type_create_subarray(3, sizes, subs, s1, MPI_ORDER_C, MPI_FLOAT, &t1));
    MPI_OK(MPI_Type_create_subarray(3, sizes, subs, s2, MPI_ORDER_C, MPI_FLOAT, &t2));
    MPI_OK(MPI_Type_commit(&t1));
    MPI_OK(MPI_Type_commit(&t2));
    p2p_setstep("3-D subarray -> other 3-D subarray (%d bytes)", S * S * S * 4);
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < N; k++)
                    a[i][j][k] = (float)(i * N * N + j * N + k);
        MPI_OK(MPI_Send(a, 1, t1, peer, 3, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < N; k++)
                    a[i][j][k] = -1.0f;
        MPI_Status st;
        MPI_OK(MPI_Recv(a, 1, t2, peer, 3, MPI_COMM_WORLD, &st));
        int e = 0;
        MPI_OK(MPI_Get_elements(&st, t2, &e));
        CHECK(e == S * S * S, "elements %d", e);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < N; k++) {
                    int in = i >= 24 && i < 24 + S && j < S && k >= 11 && k < 11 + S;
                    float want = in ? (float)((i - 24 + 3) * N * N + (j + 20) * N + (k - 11 + 7)) : -1.0f;
                    CHECK(a[i][j][k] == want, "a[%d][%d][%d] = %g, want %g", i, j, k, a[i][j][k], want);
                }
    }
    MPI_OK(MPI_Type_free(&t1));
    MPI_OK(MPI_Type_free(&t2));
}

/* 2 processes as a 1x2 grid; rows block-distributed (1 process), columns cyclic(3) */
static void darray(int rank, int peer)
{
    enum { R = 10, C = 23 };
    int g[R][C], mine[R][C];
    int gs[2] = {R, C}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 3}, ps[2] = {1, 2};
    MPI_Datatype part[2];
    for (int r = 0; r < 2; r++) {
        MPI_OK(MPI_Type_create_darray(2, r, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &part[r]));
        MPI_OK(MPI_Type_commit(&part[r]));
    }
    int sz0, sz1;
    MPI_OK(MPI_Type_size(part[0], &sz0));
    MPI_OK(MPI_Type_size(part[1], &sz1));
    CHECK(sz0 + sz1 == R * C * 4 && sz0 == R * 12 * 4, "darray sizes %d + %d", sz0, sz1);
    p2p_setstep("darray gather");
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            mine[i][j] = (rank + 1) * 10000 + i * 100 + j;
    if (rank == 1) {
        MPI_OK(MPI_Send(mine, 1, part[1], peer, 4, MPI_COMM_WORLD));
    } else {
        memset(g, 0, sizeof g);
        MPI_OK(MPI_Recv(g, 1, part[1], peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* my own piece: non-contiguous to non-contiguous through the self channel */
        MPI_OK(MPI_Sendrecv(mine, 1, part[0], 0, 5, g, 1, part[0], 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                int owner = (j / 3) % 2;
                CHECK(g[i][j] == (owner + 1) * 10000 + i * 100 + j, "g[%d][%d] = %d", i, j, g[i][j]);
            }
    }
    MPI_OK(MPI_Type_free(&part[0]));
    MPI_OK(MPI_Type_free(&part[1]));
}

static void triangle(int rank, int peer)
{
    enum { N = 40 };
    static double m[N][N];
    double packed[N * (N + 1) / 2];
    int bl[N], disp[N];
    for (int i = 0; i < N; i++) {
        bl[i] = i + 1;
        disp[i] = i * N;
    }
    MPI_Datatype low;
    MPI_OK(MPI_Type_indexed(N, bl, disp, MPI_DOUBLE, &low));
    MPI_OK(MPI_Type_commit(&low));
    p2p_setstep("indexed lower triangle");
    if (rank == 0) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                m[i][j] = i + j / 100.0;
        MPI_OK(MPI_Send(m, 1, low, peer, 6, MPI_COMM_WORLD));
        memset(m, 0, sizeof m);
        MPI_OK(MPI_Recv(m, 1, low, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                CHECK(m[i][j] == (j <= i ? 2 * (i + j / 100.0) : 0), "m[%d][%d] = %g", i, j, m[i][j]);
    } else {
        MPI_Status st;
        MPI_OK(MPI_Recv(packed, N * (N + 1) / 2, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_DOUBLE) == N * (N + 1) / 2, "count");
        int k = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j <= i; j++, k++) {
                CHECK(packed[k] == i + j / 100.0, "packed[%d] = %g", k, packed[k]);
                packed[k] *= 2;
            }
        MPI_OK(MPI_Send(packed, N * (N + 1) / 2, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Type_free(&low));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    if (p2p_size != 2) {
        if (p2p_rank == 0)
            printf("dtype_subarray needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - p2p_rank;
    subarray_2d(p2p_rank, peer);
    subarray_3d(p2p_rank, peer);
    darray(p2p_rank, peer);
    triangle(p2p_rank, peer);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
