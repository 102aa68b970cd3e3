/* The predefined op/type pairs MPICH accepts beyond the standard's groups,
 * used in real reductions (MPI_Allreduce, MPI_Iallreduce, MPI_Reduce_local)
 * with every result checked: arithmetic on MPI_CHAR, MPI_SIGNED_CHAR,
 * MPI_UNSIGNED_CHAR and MPI_CHARACTER; logical ops on MPI_AINT, MPI_OFFSET,
 * MPI_COUNT, MPI_INTEGER and floating point; bitwise ops on the
 * multi-language integers.  The pairs MPICH refuses still fail with
 * MPI_ERR_OP (on MPI_ERRORS_RETURN). */
#include "p2p_check.h"

static int R, N;

/* small values that keep sums and products of up to 8 ranks in range */
static int v(int rank, int e)
{
    return (rank * 3 + e * 5) % 4 - (e % 3 == 0 ? 1 : 0); /* -1 .. 3, zeros included */
}

/* x op y computed in the element type (wrap-around as the library's loops) */
#define COMBINE(T, op, x, y)                                                                      \
    ((op) == MPI_SUM ? (T)((x) + (y)) : (op) == MPI_PROD ? (T)((x) * (y))                         \
     : (op) == MPI_MAX ? ((y) > (x) ? (y) : (x)) : (op) == MPI_MIN ? ((y) < (x) ? (y) : (x))      \
     : (op) == MPI_LAND ? (T)((x) != 0 && (y) != 0) : (op) == MPI_LOR ? (T)((x) != 0 || (y) != 0) \
                        : (T)(((x) != 0) != ((y) != 0)))
#define COMBINE_BITS(T, op, x, y)                                                                 \
    ((op) == MPI_BAND ? (T)((x) & (y)) : (op) == MPI_BOR ? (T)((x) | (y)) : (T)((x) ^ (y)))

#define NE 12

/* Reduce NE elements of C type T (MPI type dt) with op over all ranks, by
 * MPI_Allreduce and by MPI_Iallreduce, and check each element. */
#define RUN(T, dt, op, COMB)                                                                      \
    do {                                                                                          \
        T in[NE], out[NE], out2[NE];                                                              \
        for (int e = 0; e < NE; e++) {                                                            \
            in[e] = (T)v(R, e);                                                                   \
            out[e] = out2[e] = (T)99;                                                             \
        }                                                                                         \
        p2p_setstep("%s on %s", #op, #dt);                                                        \
        MPI_OK(MPI_Allreduce(in, out, NE, dt, op, MPI_COMM_WORLD));                               \
        MPI_Request q;                                                                            \
        MPI_OK(MPI_Iallreduce(in, out2, NE, dt, op, MPI_COMM_WORLD, &q));                         \
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));                                                  \
        for (int e = 0; e < NE; e++) {                                                            \
            T want = (T)v(0, e);                                                                  \
            for (int i = 1; i < N; i++)                                                           \
                want = COMB(T, op, want, (T)v(i, e));                                             \
            CHECK(out[e] == want, "[%d] = %lld, want %lld", e, (long long)out[e], (long long)want); \
            CHECK(out2[e] == want, "iallreduce [%d] = %lld, want %lld", e, (long long)out2[e],    \
                  (long long)want);                                                               \
        }                                                                                         \
    } while (0)

#define ARITH(T, dt)                                                                              \
    do {                                                                                          \
        RUN(T, dt, MPI_SUM, COMBINE);                                                                      \
        RUN(T, dt, MPI_PROD, COMBINE);                                                                     \
        RUN(T, dt, MPI_MAX, COMBINE);                                                                      \
        RUN(T, dt, MPI_MIN, COMBINE);                                                                      \
    } while (0)
#define LOGICAL(T, dt)                                                                            \
    do {                                                                                          \
        RUN(T, dt, MPI_LAND, COMBINE);                                                                     \
        RUN(T, dt, MPI_LOR, COMBINE);                                                                      \
        RUN(T, dt, MPI_LXOR, COMBINE);                                                                     \
    } while (0)
#define BITS(T, dt)                                                                               \
    do {                                                                                          \
        RUN(T, dt, MPI_BAND, COMBINE_BITS);                                                                     \
        RUN(T, dt, MPI_BOR, COMBINE_BITS);                                                                      \
        RUN(T, dt, MPI_BXOR, COMBINE_BITS);                                                                     \
    } while (0)

static void accepted(void)
{
    ARITH(char, MPI_CHAR);
    ARITH(signed char, MPI_SIGNED_CHAR);
    ARITH(unsigned char, MPI_UNSIGNED_CHAR);
    ARITH(char, MPI_CHARACTER);
    LOGICAL(char, MPI_CHAR);
    BITS(char, MPI_CHAR);
    LOGICAL(MPI_Aint, MPI_AINT);
    LOGICAL(MPI_Offset, MPI_OFFSET);
    LOGICAL(MPI_Count, MPI_COUNT);
    BITS(MPI_Aint, MPI_AINT);
    BITS(MPI_Count, MPI_COUNT);
    ARITH(MPI_Offset, MPI_OFFSET);
    LOGICAL(int, MPI_INTEGER);
    LOGICAL(double, MPI_DOUBLE);
    LOGICAL(float, MPI_FLOAT);
    LOGICAL(float, MPI_REAL);
    /* MPI_Reduce_local takes the same pairs */
    p2p_setstep("reduce_local");
    char a[3] = {5, -2, 7}, b[3] = {1, 3, -4};
    MPI_OK(MPI_Reduce_local(a, b, 3, MPI_CHAR, MPI_SUM));
    CHECK(b[0] == 6 && b[1] == 1 && b[2] == 3, "MPI_Reduce_local MPI_SUM on MPI_CHAR: %d %d %d", b[0], b[1], b[2]);
    MPI_Count c[2] = {0, 9}, d[2] = {4, 4};
    MPI_OK(MPI_Reduce_local(c, d, 2, MPI_COUNT, MPI_LAND));
    CHECK(d[0] == 0 && d[1] == 1, "MPI_Reduce_local MPI_LAND on MPI_COUNT: %lld %lld", (long long)d[0],
          (long long)d[1]);
    double x[2] = {0.0, 2.5}, y[2] = {1.0, 0.0};
    MPI_OK(MPI_Reduce_local(x, y, 2, MPI_DOUBLE, MPI_LXOR));
    CHECK(y[0] == 1.0 && y[1] == 1.0, "MPI_Reduce_local MPI_LXOR on MPI_DOUBLE: %g %g", y[0], y[1]);
}

static void refused(void)
{
    p2p_setstep("refused pairs");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    double in[4] = {1, 2, 3, 4}, out[4];
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_C_DOUBLE_COMPLEX, MPI_LAND, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_BYTE, MPI_LOR, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(in, out, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Iallreduce(in, out, 1, MPI_PACKED, MPI_MAX, MPI_COMM_WORLD, &q));
    CHECK(q == MPI_REQUEST_NULL, "a refused MPI_Iallreduce returned a request");
    MPI_FAILS(MPI_ERR_OP, MPI_Reduce_local(in, out, 1, MPI_FLOAT, MPI_BXOR));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    accepted();
    refused();
    MPI_Finalize();
    return 0;
}
