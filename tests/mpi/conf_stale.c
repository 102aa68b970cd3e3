/* Stale handles (issue 13 item 6): a freed communicator, datatype, group,
 * op, info, window or request handle must not resolve to the object created
 * next in its slot — the call fails with the handle's error class instead of
 * silently using the newer object. */
#include "p2p_check.h"

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int n;
    for (int round = 0; round < 3; round++) {
        MPI_Comm a, b, old;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
        old = a;
        MPI_OK(MPI_Comm_free(&a));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b)); /* reuses the freed slot */
        CHECK(b != old, "round %d: the new communicator got the freed handle 0x%x", round, (unsigned)old);
        MPI_FAILS(MPI_ERR_COMM, MPI_Comm_size(old, &n));
        MPI_OK(MPI_Comm_size(b, &n));
        CHECK(n == p2p_size, "size of the new communicator %d", n);
        MPI_OK(MPI_Comm_free(&b));
    }
    MPI_Datatype t, t2, oldt;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    oldt = t;
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t2));
    MPI_OK(MPI_Type_commit(&t2));
    int sz = 0;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_size(oldt, &sz));
    MPI_OK(MPI_Type_size(t2, &sz));
    CHECK(sz == 12, "size of the new type %d", sz);
    MPI_OK(MPI_Type_free(&t2));

    MPI_Group g, g2, oldg, wg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int r0 = 0;
    MPI_OK(MPI_Group_incl(wg, 1, &r0, &g));
    oldg = g;
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_incl(wg, 1, &r0, &g2));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_size(oldg, &n));
    MPI_OK(MPI_Group_free(&g2));
    MPI_OK(MPI_Group_free(&wg));

    MPI_Op op, op2, oldop;
    MPI_OK(MPI_Op_create(user_sum, 1, &op));
    oldop = op;
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Op_create(user_sum, 0, &op2));
    int commute = -1;
    MPI_FAILS(MPI_ERR_OP, MPI_Op_commutative(oldop, &commute));
    MPI_OK(MPI_Op_commutative(op2, &commute));
    CHECK(commute == 0, "the new op's commutativity %d", commute);
    MPI_OK(MPI_Op_free(&op2));

    /* a completed and freed request */
    int x = 1, y = 0;
    MPI_Request rq, oldrq, rq2;
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq));
    oldrq = rq;
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq2));
    CHECK(rq2 != oldrq, "the new request got the completed request's handle");
    MPI_OK(MPI_Wait(&rq2, MPI_STATUS_IGNORE));

    MPI_Finalize();
    return 0;
}
