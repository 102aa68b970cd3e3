/* Context-id agreement when the ranks' free ids differ: rank r first takes
 * extra ids with communicators of its own (MPI_Comm_create_group over
 * itself) and frees every other one, so the lowest free id differs from rank
 * to rank and candidates get refused; then blocking dups, idups (also with
 * info) and create_group run concurrently.  Every new communicator must
 * carry traffic without crosstalk (one tag on all of them at once), and ids
 * must come back when communicators are freed (many rounds).  Last, idups
 * on two communicators posted in opposite orders on alternate ranks. */
#include "p2p_check.h"

#define NNEW 6

static void crosstalk_free(MPI_Comm *c, int n, int round)
{
    int in[NNEW], out[NNEW];
    MPI_Request rq[2 * NNEW];
    int right = (p2p_rank + 1) % p2p_size, left = (p2p_rank + p2p_size - 1) % p2p_size;
    for (int i = 0; i < n; i++) {
        in[i] = -1;
        out[i] = p2p_rank * 1000 + round * 10 + i;
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, left, 9, c[i], &rq[i]));
    }
    for (int i = n - 1; i >= 0; i--)
        MPI_OK(MPI_Isend(&out[i], 1, MPI_INT, right, 9, c[i], &rq[n + i]));
    MPI_OK(MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(in[i] == left * 1000 + round * 10 + i, "round %d comm %d got %d", round, i, in[i]);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_Group world, me;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &p2p_rank, &me));
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));

    for (int round = 0; round < 40; round++) {
        p2p_setstep("round %d: private communicators", round);
        /* rank r holds 2 * ((r + round) % 5) private ids, every other one freed */
        int np = 2 * ((p2p_rank + round) % 5);
        MPI_Comm priv[10];
        for (int i = 0; i < np; i++)
            MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, me, 100 + i, &priv[i]));
        for (int i = 0; i < np; i += 2)
            MPI_OK(MPI_Comm_free(&priv[i]));

        p2p_setstep("round %d: concurrent constructors", round);
        MPI_Comm c[NNEW];
        MPI_Request rq[3];
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c[0], &rq[0]));
        MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &c[1], &rq[1]));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[2]));
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, world, 7, &c[3]));
        MPI_OK(MPI_Comm_idup(c[2], &c[4], &rq[2]));
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p2p_rank, &c[5]));
        MPI_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NNEW; i++) {
            int cmp;
            MPI_OK(MPI_Comm_compare(c[i], MPI_COMM_WORLD, &cmp));
            CHECK(cmp == MPI_CONGRUENT, "round %d comm %d compares %d", round, i, cmp);
        }
        crosstalk_free(c, NNEW, round);
        for (int i = 0; i < NNEW; i++)
            MPI_OK(MPI_Comm_free(&c[i]));
        for (int i = 1; i < np; i += 2)
            MPI_OK(MPI_Comm_free(&priv[i]));
    }

    p2p_setstep("idups on two communicators posted in opposite orders on odd and even ranks");
    /* Both agreements run at once with their proposals reserved in opposite
     * orders; each must still get an id (they used to refuse each other's
     * candidate round after round until the ids ran out). */
    MPI_Comm base[2], x[2];
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base[0]));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &base[1]));
    for (int round = 0; round < 200; round++) {
        MPI_Request rq[2];
        int first = p2p_rank % 2;
        MPI_OK(MPI_Comm_idup(base[first], &x[first], &rq[0]));
        MPI_OK(MPI_Comm_idup(base[!first], &x[!first], &rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        crosstalk_free(x, 2, round);
        MPI_OK(MPI_Comm_free(&x[0]));
        MPI_OK(MPI_Comm_free(&x[1]));
    }
    MPI_OK(MPI_Comm_free(&base[0]));
    MPI_OK(MPI_Comm_free(&base[1]));

    p2p_setstep("many communicators alive at once");
    MPI_Comm many[200];
    for (int i = 0; i < 200; i++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &many[i]));
    crosstalk_free(many + 194, NNEW, 99);
    for (int i = 0; i < 200; i++)
        MPI_OK(MPI_Comm_free(&many[i]));

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Group_free(&me));
    MPI_OK(MPI_Group_free(&world));
    MPI_Finalize();
    return 0;
}
