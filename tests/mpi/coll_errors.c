/* MPI-level tests of the collective argument checks (MPI_ERRORS_RETURN):
 * every check used here fails on all ranks of the communicator (or is made
 * on MPI_COMM_SELF), so no rank is left waiting in a collective.  Then
 * collectives on split (reordered) communicators, and the library still
 * works after all the errors. */
#include "p2p_check.h"

static int R, N;

static int has(int code, const char *s)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return strstr(msg, s) != NULL;
}

static void test_errors(void)
{
    MPI_Comm w = MPI_COMM_WORLD, self = MPI_COMM_SELF;
    MPI_OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN));
    int a[16] = {0}, b[16] = {0};

    p2p_setstep("comm");
    MPI_FAILS(MPI_ERR_COMM, MPI_Barrier(MPI_COMM_NULL));
    MPI_FAILS(MPI_ERR_COMM, MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL));
    MPI_FAILS(MPI_ERR_COMM, MPI_Bcast(a, 1, MPI_INT, 0, (MPI_Comm)0x44001234));

    p2p_setstep("root");
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, N, w));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(a, 1, MPI_INT, -1, w));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, N + 3, w));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_ROOT, w));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Scatterv(a, NULL, NULL, MPI_INT, b, 1, MPI_INT, MPI_PROC_NULL, w));

    p2p_setstep("count");
    MPI_FAILS(MPI_ERR_COUNT, MPI_Bcast(a, -1, MPI_INT, 0, w));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Allgather(a, -1, MPI_INT, b, 1, MPI_INT, w));
    int bad[64];
    for (int i = 0; i < 64; i++)
        bad[i] = i == N - 1 ? -1 : 1;
    MPI_FAILS(MPI_ERR_COUNT, MPI_Allgatherv(a, 1, MPI_INT, b, bad, bad, MPI_INT, w));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Reduce_scatter(a, b, bad, MPI_INT, MPI_SUM, w));
    int neg = -1, zero = 0;
    MPI_FAILS(MPI_ERR_COUNT, MPI_Gatherv(a, 1, MPI_INT, b, &neg, &zero, MPI_INT, 0, self));
    MPI_FAILS(MPI_ERR_ARG, MPI_Alltoallv(a, NULL, bad, MPI_INT, b, bad, bad, MPI_INT, w));

    p2p_setstep("type");
    MPI_Datatype unc;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &unc)); /* never committed */
    MPI_FAILS(MPI_ERR_TYPE, MPI_Bcast(a, 1, unc, 0, w));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Allreduce(a, b, 1, unc, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, w));
    MPI_Datatype types[64];
    int ones[64], disp[64];
    for (int i = 0; i < 64; i++)
        types[i] = MPI_INT, ones[i] = 1, disp[i] = 0;
    types[0] = unc;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Alltoallw(a, ones, disp, types, b, ones, disp, types, w));
    MPI_OK(MPI_Type_free(&unc));

    p2p_setstep("op");
    int rc = MPI_Allreduce(a, b, 1, MPI_WCHAR, MPI_SUM, w);
    MPI_FAILS(MPI_ERR_OP, rc);
    CHECK(has(rc, "MPI_SUM") && has(rc, "MPI_WCHAR"), "the op/type error names neither the op nor the type");
    MPI_FAILS(MPI_ERR_OP, MPI_Reduce(a, b, 2, MPI_INT, MPI_MAXLOC, 0, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BAND, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_C_FLOAT_COMPLEX, MPI_LXOR, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Scan(a, b, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_NO_OP, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Reduce_scatter_block(a, b, 1, MPI_BYTE, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_OP, MPI_Reduce_local(a, b, 1, MPI_LOGICAL, MPI_SUM));
    MPI_OK(MPI_Reduce_local(a, b, 1, MPI_LOGICAL, MPI_LAND));
    MPI_Op sum = MPI_SUM;
    MPI_FAILS(MPI_ERR_OP, MPI_Op_free(&sum));
    MPI_Op freed = MPI_OP_NULL;
    MPI_FAILS(MPI_ERR_OP, MPI_Op_commutative(freed, &zero));

    p2p_setstep("buffer");
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(b + R, 1, MPI_INT, b, 1, MPI_INT, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(NULL, b, 3, MPI_INT, MPI_SUM, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Gather(b, 1, MPI_INT, b, 1, MPI_INT, 0, self));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatter(a, 1, MPI_INT, a, 1, MPI_INT, 0, self));
    /* gather/scatter: MPI_IN_PLACE on a non-root; the root's one-block buffer
       is its own block of the root buffer: every rank fails, locally */
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Gather(R == 0 ? b : MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, 0, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Scatter(b, 1, MPI_INT, R == 0 ? b : MPI_IN_PLACE, 1, MPI_INT, 0, w));
    /* MPI_IN_PLACE is only for the root of a reduce: non-roots pass it as
       sendbuf, the root passes it as recvbuf, so every rank fails */
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce(MPI_IN_PLACE, R == 0 ? MPI_IN_PLACE : b, 1, MPI_INT, MPI_SUM, 0, w));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce_local(a, a, 1, MPI_INT, MPI_SUM));

    p2p_setstep("intercommunicator");
    if (N >= 2) {
        MPI_Comm half, inter;
        MPI_OK(MPI_Comm_split(w, R % 2, R, &half));
        if (MPI_Intercomm_create(half, 0, w, R % 2 ? 0 : 1, 77, &inter) == MPI_SUCCESS) {
            MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
            /* scan and exscan are not defined on intercommunicators (the
               others are: tests/mpi/coll_inter.c) */
            rc = MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, inter);
            MPI_FAILS(MPI_ERR_COMM, rc);
            CHECK(has(rc, "intercommunicator"), "the error does not say why");
            MPI_FAILS(MPI_ERR_COMM, MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, inter));
            MPI_OK(MPI_Barrier(inter));
            MPI_OK(MPI_Comm_free(&inter));
        }
        MPI_OK(MPI_Comm_free(&half));
    }
}

/* collectives on communicators whose ranks are not world ranks */
static void test_split(void)
{
    p2p_setstep("split");
    MPI_Comm sub;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, R % 2, N - R, &sub)); /* reversed order */
    int sr, sn;
    MPI_Comm_rank(sub, &sr);
    MPI_Comm_size(sub, &sn);
    int x = R, sum = 0, expect = 0;
    for (int i = R % 2; i < N; i += 2)
        expect += i;
    MPI_OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, sub));
    CHECK(sum == expect, "split allreduce %d, want %d", sum, expect);
    int v = sr == sn - 1 ? 4242 + R : -1;
    MPI_OK(MPI_Bcast(&v, 1, MPI_INT, sn - 1, sub));
    int lowest = R % 2; /* the last rank of the reversed sub-communicator */
    CHECK(v == 4242 + lowest, "split bcast %d", v);
    int *all = malloc(sizeof(int) * sn);
    MPI_OK(MPI_Allgather(&R, 1, MPI_INT, all, 1, MPI_INT, sub));
    for (int i = 0; i < sn; i++) /* sub rank i is world rank of key order: largest first */
        CHECK(all[i] == lowest + 2 * (sn - 1 - i), "split allgather[%d] = %d", i, all[i]);
    int *s = malloc(sizeof(int) * sn), *t = malloc(sizeof(int) * sn);
    for (int i = 0; i < sn; i++)
        s[i] = 1000 * sr + i;
    MPI_OK(MPI_Alltoall(s, 1, MPI_INT, t, 1, MPI_INT, sub));
    for (int i = 0; i < sn; i++)
        CHECK(t[i] == 1000 * i + sr, "split alltoall[%d] = %d", i, t[i]);
    int sc = -1;
    MPI_OK(MPI_Scan(&x, &sc, 1, MPI_INT, MPI_SUM, sub));
    int se = 0;
    for (int i = 0; i <= sr; i++)
        se += lowest + 2 * (sn - 1 - i);
    CHECK(sc == se, "split scan %d, want %d", sc, se);
    MPI_OK(MPI_Barrier(sub));
    free(all), free(s), free(t);
    MPI_OK(MPI_Comm_free(&sub));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    R = p2p_rank;
    N = p2p_size;
    test_errors();
    test_split();
    /* still working after all the errors */
    p2p_setstep("after errors");
    int x = 1, y = 0;
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == N, "allreduce after errors: %d", y);
    if (R == 0)
        printf("coll_errors: OK on %d ranks\n", N);
    MPI_Finalize();
    return 0;
}
