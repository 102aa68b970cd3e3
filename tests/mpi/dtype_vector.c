/* Vectors over the wire (2 ranks): a matrix column sent as MPI_Type_vector is
 * received contiguous and vice versa, at an eager size and at a size that
 * takes the rendezvous / single-copy paths; a negative-stride hvector; a
 * resized vector used with count > 1; receive status counts and elements. */
#include "p2p_check.h"

#define ROWS 700
#define COLS 600 /* 700 * 8 bytes = 5600 per column: eager; whole-row blocks below are large */

static double val(int r, int c) { return r * 1000.0 + c; }

static void column_exchange(int rank, int peer)
{
    static double m[ROWS][COLS];
    double col[ROWS];
    MPI_Datatype colt;
    MPI_Status st;
    MPI_OK(MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &colt));
    MPI_OK(MPI_Type_commit(&colt));
    p2p_setstep("column vector -> contiguous");
    if (rank == 0) {
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                m[r][c] = val(r, c);
        MPI_OK(MPI_Send(&m[0][7], 1, colt, peer, 1, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(col, ROWS, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_DOUBLE) == ROWS, "count %lld", (long long)p2p_count(&st, MPI_DOUBLE));
        for (int r = 0; r < ROWS; r++)
            CHECK(col[r] == val(r, 7), "col[%d] = %g", r, col[r]);
    }
    p2p_setstep("contiguous -> column vector");
    if (rank == 1) {
        for (int r = 0; r < ROWS; r++)
            col[r] = -val(r, 3);
        MPI_OK(MPI_Send(col, ROWS, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(&m[0][3], 1, colt, peer, 2, MPI_COMM_WORLD, &st));
        int n = -1, e = -1;
        MPI_OK(MPI_Get_count(&st, colt, &n));
        MPI_OK(MPI_Get_elements(&st, colt, &e));
        CHECK(n == 1 && e == ROWS, "count %d elements %d", n, e);
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                CHECK(m[r][c] == (c == 3 ? -val(r, 3) : val(r, c)), "m[%d][%d] = %g", r, c, m[r][c]);
    }
    MPI_OK(MPI_Type_free(&colt));
    CHECK(colt == MPI_DATATYPE_NULL, "handle not reset");
}

/* Many columns at once (about 3 MB): rendezvous with CMA iovecs or pipelining. */
static void block_exchange(int rank, int peer)
{
    static double m[ROWS][COLS], b[ROWS * 250];
    MPI_Datatype blk;
    MPI_Status st;
    MPI_OK(MPI_Type_vector(ROWS, 250, COLS, MPI_DOUBLE, &blk));
    MPI_OK(MPI_Type_commit(&blk));
    p2p_setstep("large vector -> contiguous");
    if (rank == 0) {
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++)
                m[r][c] = val(r, c);
        MPI_OK(MPI_Send(&m[0][100], 1, blk, peer, 3, MPI_COMM_WORLD));
        /* and receive it back shifted, into the vector layout */
        MPI_OK(MPI_Recv(&m[0][300], 1, blk, peer, 4, MPI_COMM_WORLD, &st));
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) {
                double want = c >= 300 && c < 550 ? 2 * val(r, c - 200) : val(r, c);
                CHECK(m[r][c] == want, "m[%d][%d] = %g, want %g", r, c, m[r][c], want);
            }
    } else {
        MPI_OK(MPI_Recv(b, ROWS * 250, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &st));
        CHECK(p2p_count(&st, MPI_DOUBLE) == ROWS * 250, "count");
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < 250; c++)
                CHECK(b[r * 250 + c] == val(r, c + 100), "b[%d][%d] = %g", r, c, b[r * 250 + c]);
        for (int i = 0; i < ROWS * 250; i++)
            b[i] *= 2;
        MPI_OK(MPI_Send(b, ROWS * 250, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Type_free(&blk));
}

/* hvector with a negative stride walks memory backwards; a resized vector
 * interleaves with count > 1; a type freed while its send is pending. */
static void odd_shapes(int rank, int peer)
{
    int a[64], got[64];
    MPI_Datatype back, pair, inter;
    MPI_Status st;
    MPI_OK(MPI_Type_create_hvector(16, 1, -(MPI_Aint)sizeof(int), MPI_INT, &back));
    MPI_OK(MPI_Type_commit(&back));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(back, &lb, &ext));
    CHECK(lb == -60 && ext == 64, "lb %ld extent %ld", (long)lb, (long)ext);
    /* two ints 8 apart, resized to an extent of one int: count 4 interleaves */
    MPI_OK(MPI_Type_vector(2, 1, 8, MPI_INT, &pair));
    MPI_OK(MPI_Type_create_resized(pair, 0, sizeof(int), &inter));
    MPI_OK(MPI_Type_commit(&inter));
    MPI_OK(MPI_Type_free(&pair)); /* inter keeps what it needs */
    p2p_setstep("negative stride and resized");
    if (rank == 0) {
        for (int i = 0; i < 64; i++)
            a[i] = i;
        MPI_Request rq;
        MPI_OK(MPI_Isend(&a[15], 1, back, peer, 5, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Type_free(&back)); /* pending send keeps it alive */
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(a, 4, inter, peer, 6, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(got, 16, MPI_INT, peer, 5, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 16; i++)
            CHECK(got[i] == 15 - i, "got[%d] = %d", i, got[i]);
        MPI_OK(MPI_Recv(got, 8, MPI_INT, peer, 6, MPI_COMM_WORLD, &st));
        static const int want[8] = {0, 8, 1, 9, 2, 10, 3, 11};
        for (int i = 0; i < 8; i++)
            CHECK(got[i] == want[i], "interleaved got[%d] = %d", i, got[i]);
        MPI_OK(MPI_Type_free(&back));
    }
    /* receive into the resized layout: 4 copies overlap-free at stride one int */
    p2p_setstep("receive into a resized vector");
    if (rank == 1) {
        for (int i = 0; i < 8; i++)
            got[i] = 100 + i;
        MPI_OK(MPI_Send(got, 8, MPI_INT, peer, 7, MPI_COMM_WORLD));
    } else {
        memset(a, 0, sizeof a);
        MPI_OK(MPI_Recv(a, 4, inter, peer, 7, MPI_COMM_WORLD, &st));
        static const int want[12] = {100, 102, 104, 106, 0, 0, 0, 0, 101, 103, 105, 107};
        for (int i = 0; i < 12; i++)
            CHECK(a[i] == want[i], "a[%d] = %d", i, a[i]);
        int n = -1, e = -1;
        MPI_OK(MPI_Get_count(&st, inter, &n));
        MPI_OK(MPI_Get_elements(&st, inter, &e));
        CHECK(n == 4 && e == 8, "count %d elements %d", n, e);
    }
    MPI_OK(MPI_Type_free(&inter));
}

/* a short message into a vector: partial count, elements still exact */
static void partial(int rank, int peer)
{
    double m[80];
    MPI_Datatype colt;
    MPI_Status st;
    MPI_OK(MPI_Type_vector(10, 1, 4, MPI_DOUBLE, &colt)); /* extent 37 doubles */
    MPI_OK(MPI_Type_commit(&colt));
    p2p_setstep("partial receive into a vector");
    if (rank == 0) {
        double v[13];
        for (int i = 0; i < 13; i++)
            v[i] = i + 0.5;
        MPI_OK(MPI_Send(v, 13, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < 80; i++)
            m[i] = -1;
        MPI_OK(MPI_Recv(m, 2, colt, peer, 8, MPI_COMM_WORLD, &st));
        int n = 0, e = 0;
        MPI_OK(MPI_Get_count(&st, colt, &n));
        MPI_OK(MPI_Get_elements(&st, colt, &e));
        CHECK(n == MPI_UNDEFINED && e == 13, "count %d elements %d", n, e);
        for (int i = 0; i < 80; i++) {
            double want = -1;
            if (i < 40 && i % 4 == 0)
                want = i / 4 + 0.5;
            else if (i >= 37 && (i - 37) % 4 == 0 && (i - 37) / 4 < 3)
                want = 10 + (i - 37) / 4 + 0.5;
            CHECK(m[i] == want, "m[%d] = %g, want %g", i, m[i], want);
        }
    }
    MPI_OK(MPI_Type_free(&colt));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    if (p2p_size != 2) {
        if (p2p_rank == 0)
            printf("dtype_vector needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - p2p_rank;
    column_exchange(p2p_rank, peer);
    block_exchange(p2p_rank, peer);
    odd_shapes(p2p_rank, peer);
    partial(p2p_rank, peer);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
