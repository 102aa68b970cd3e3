/* Sessions and partitioned communication together, without MPI_Init (the
 * container scenario of issue 14): a communicator from the mpi://WORLD
 * process set, a partitioned ring over it for a few rounds with partitions
 * readied from the last to the first, the node process set (mpix://SHARED)
 * agreeing with its own communicator, and a clean MPI_Session_finalize. */
#include "p2p_check.h"

#define NP 6
#define PC 4096 /* 16 KiB partitions: eager on some channels, rendezvous on others */

int main(void)
{
    (void)p2p_init;
    MPI_Session s;
    MPI_Group wg, ng;
    MPI_Comm c, node;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    MPI_OK(MPI_Comm_create_from_group(wg, "org.wharf.scenario", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int rank, size;
    MPI_OK(MPI_Comm_rank(c, &rank));
    MPI_OK(MPI_Comm_size(c, &size));
    p2p_rank = rank, p2p_size = size;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int *sb = malloc(NP * PC * sizeof(int)), *rb = malloc(NP * PC * sizeof(int));
    MPI_Request rq[2];
    MPI_OK(MPI_Precv_init(rb, NP, PC, MPI_INT, from, 1, c, MPI_INFO_NULL, &rq[0]));
    MPI_OK(MPI_Psend_init(sb, NP, PC, MPI_INT, to, 1, c, MPI_INFO_NULL, &rq[1]));
    for (int round = 0; round < 4; round++) {
        p2p_setstep("round %d", round);
        for (int i = 0; i < NP * PC; i++)
            sb[i] = rank * 1000003 + round * 131 + i, rb[i] = -1;
        MPI_OK(MPI_Startall(2, rq));
        for (int p = NP - 1; p >= 0; p--)
            MPI_OK(MPI_Pready(p, rq[1]));
        MPI_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NP * PC; i++)
            CHECK(rb[i] == from * 1000003 + round * 131 + i, "element %d: %d", i, rb[i]);
    }
    MPI_OK(MPI_Request_free(&rq[0]));
    MPI_OK(MPI_Request_free(&rq[1]));
    MPI_Info inf;
    char v[32];
    int len = sizeof v, flag;
    MPI_OK(MPI_Session_get_pset_info(s, "mpix://SHARED", &inf));
    MPI_OK(MPI_Info_get_string(inf, "mpi_size", &len, v, &flag));
    MPI_OK(MPI_Info_free(&inf));
    MPI_OK(MPI_Group_from_session_pset(s, "mpix://SHARED", &ng));
    MPI_OK(MPI_Comm_create_from_group(ng, "org.wharf.scenario.node", MPI_INFO_NULL, MPI_ERRORS_RETURN, &node));
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, node));
    CHECK(flag && sum == atoi(v), "node comm of %d ranks, mpi_size %s", sum, flag ? v : "(missing)");
    int nodes = 0, leader = 0;
    MPI_OK(MPI_Comm_rank(node, &leader));
    leader = leader == 0;
    MPI_OK(MPI_Allreduce(&leader, &nodes, 1, MPI_INT, MPI_SUM, c));
    MPI_OK(MPI_Comm_free(&node));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&ng));
    MPI_OK(MPI_Session_finalize(&s));
    if (rank == 0)
        printf("sess_part: %d ranks in %d node groups: ok\n", size, nodes);
    free(sb);
    free(rb);
    return 0;
}
