/* MPI_Win_allocate_shared: every co-resident rank sees every part by load and
 * store (Win_shared_query with ranks and MPI_PROC_NULL), contiguous parts,
 * zero-size parts, RMA on the shared window, and on a sub-communicator
 * (MPI_Comm_split_type SHARED). */
#include "p2p_check.h"

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nr, nn;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &nn);

    p2p_setstep("allocate_shared");
    MPI_Aint sz = (nr == 1) ? 0 : (MPI_Aint)(100 + nr) * (MPI_Aint)sizeof(long); /* rank 1: an empty part */
    long *mine;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared(sz, sizeof(long), MPI_INFO_NULL, node, &mine, &win));
    void *v;
    int flag;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_FLAVOR_SHARED, "flavor %d", *(int *)v);
    MPI_OK(MPI_Win_lock_all(0, win));
    for (MPI_Aint i = 0; i < sz / (MPI_Aint)sizeof(long); i++)
        mine[i] = nr * 1000000L + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    for (int r = 0; r < nn; r++) {
        MPI_Aint rsz;
        int du;
        long *p;
        MPI_OK(MPI_Win_shared_query(win, r, &rsz, &du, &p));
        MPI_Aint expect = r == 1 ? 0 : (MPI_Aint)(100 + r) * (MPI_Aint)sizeof(long);
        CHECK(rsz == expect && du == (int)sizeof(long), "rank %d part: %ld bytes, unit %d", r, (long)rsz, du);
        /* an empty part has no base (NULL, as MPICH; MPICH's rma/win_shared_noncontig_put asserts it) */
        CHECK(rsz != 0 || p == NULL, "rank %d's empty part: base %p, want NULL", r, (void *)p);
        for (MPI_Aint i = 0; i < rsz / (MPI_Aint)sizeof(long); i++)
            CHECK(p[i] == r * 1000000L + i, "rank %d part [%ld] = %ld", r, (long)i, p[i]);
    }
    MPI_Aint qsz;
    int qdu;
    long *q;
    MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsz, &qdu, &q));
    CHECK(qsz == 100 * (MPI_Aint)sizeof(long), "PROC_NULL query: %ld bytes", (long)qsz);
    MPI_OK(MPI_Win_unlock_all(win));

    /* store into the right neighbour's part directly, read it back through MPI_Get */
    p2p_setstep("store+get");
    int right = (nr + 1) % nn;
    MPI_OK(MPI_Win_fence(0, win));
    if (right != 1) {
        MPI_Aint rsz;
        int du;
        long *p;
        MPI_OK(MPI_Win_shared_query(win, right, &rsz, &du, &p));
        p[0] = -7 - nr;
    }
    MPI_OK(MPI_Win_fence(0, win));
    long got = 0, add = 5;
    if (right != 1) {
        MPI_OK(MPI_Get(&got, 1, MPI_LONG, right, 0, 1, MPI_LONG, win));
        MPI_OK(MPI_Win_fence(0, win));
        CHECK(got == -7 - nr, "get after direct store: %ld", got);
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, right, 0, 1, MPI_LONG, MPI_SUM, win));
    } else {
        MPI_OK(MPI_Win_fence(0, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    int left = (nr + nn - 1) % nn;
    if (nr != 1)
        CHECK(mine[0] == -7 - left + 5, "after accumulate: %ld", mine[0]);
    MPI_OK(MPI_Win_free(&win));

    /* the shared window over MPI_COMM_SELF always works */
    p2p_setstep("self");
    double *d;
    MPI_OK(MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_SELF, &d, &win));
    d[3] = 2.5;
    MPI_Aint ssz;
    int sdu;
    double *sp;
    MPI_OK(MPI_Win_shared_query(win, 0, &ssz, &sdu, &sp));
    CHECK(sp == d && ssz == 64 && sp[3] == 2.5, "self shared query");
    MPI_OK(MPI_Win_free(&win));

    /* over the whole job: works when every rank shares the node region, else
     * MPI_ERR_RMA_SHARED (as MPICH) on every rank */
    p2p_setstep("world");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int *w;
    if (nn == n) {
        MPI_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
        MPI_OK(MPI_Win_free(&win));
    } else {
        MPI_FAILS(MPI_ERR_RMA_SHARED,
                  MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win));
    }

    MPI_Comm_free(&node);
    MPI_Finalize();
    if (me == 0)
        printf("rma_shared: OK on %d ranks\n", n);
    return 0;
}
