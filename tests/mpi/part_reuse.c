/* Partitioned requests on communicators that reuse a freed one's context id
 * (found by mpi4py's test_p2p_buf_part): each rank pairs a partitioned send
 * and receive with itself on a duplicate of MPI_COMM_SELF, frees it, then the
 * ranks of a duplicate of MPI_COMM_WORLD (which may get the same id) form a
 * ring.  The matching numbering must start afresh on the new communicator,
 * or the ranks disagree which send pairs with which receive and hang. */
#include "p2p_check.h"

static void ring(MPI_Comm c, int parts, int rounds)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int dest = (rank + 1) % size, src = (rank + size - 1) % size;
    int sbuf[8], rbuf[8];
    for (int i = 0; i < parts; i++)
        sbuf[i] = rank * 100 + i;
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(sbuf, parts, 1, MPI_INT, dest, 0, c, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rbuf, parts, 1, MPI_INT, src, 0, c, MPI_INFO_NULL, &r));
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < parts; i++)
            rbuf[i] = -1;
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Start(&s));
        for (int i = 0; i < parts; i++)
            MPI_OK(MPI_Pready(i, s));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        for (int i = 0; i < parts; i++)
            CHECK(rbuf[i] == src * 100 + i, "partition %d from %d: %d", i, src, rbuf[i]);
    }
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    for (int it = 0; it < 3; it++) {
        p2p_setstep("self duplicate, round %d", it);
        MPI_Comm self;
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
        for (int k = 0; k < 1 + it; k++) /* uneven counts per rank would desynchronize a shared numbering */
            ring(self, 1 + p2p_rank % 3, 2);
        MPI_OK(MPI_Comm_free(&self));
        p2p_setstep("world duplicate, round %d", it);
        MPI_Comm w;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &w));
        ring(w, 3, 3);
        MPI_OK(MPI_Comm_free(&w));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (p2p_rank == 0)
        printf("part_reuse: %d ranks: ok\n", p2p_size);
    MPI_Finalize();
    return 0;
}
