/* MPI_Comm_split_type with the MPI-4.0 hardware types: HW_GUIDED with
 * mpi_shared_memory gives the MPI_COMM_TYPE_SHARED groups (the node groups
 * of the locality layer) and reports the resource in the info; an unknown
 * or missing resource type gives MPI_COMM_NULL; HW_UNGUIDED gives a strict
 * subset or MPI_COMM_NULL; the info hint survives Comm_dup. */
#include "p2p_check.h"

static void has_hw_info(MPI_Comm c, const char *want)
{
    MPI_Info info;
    char val[64] = "";
    int flag = 0;
    MPI_OK(MPI_Comm_get_info(c, &info));
    MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", sizeof val - 1, val, &flag));
    CHECK(want ? flag && !strcmp(val, want) : !flag, "mpi_hw_resource_type: flag %d value '%s'", flag, val);
    MPI_OK(MPI_Info_free(&info));
}

static int csize(MPI_Comm c)
{
    int n;
    MPI_OK(MPI_Comm_size(c, &n));
    return n;
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_Comm shared, guided, c;
    MPI_Info info;
    int cmp;

    p2p_setstep("SHARED and HW_GUIDED mpi_shared_memory");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided));
    CHECK(guided != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    MPI_OK(MPI_Comm_compare(shared, guided, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "HW_GUIDED vs SHARED: %d", cmp);
    has_hw_info(guided, "mpi_shared_memory");
    has_hw_info(shared, NULL);
    MPI_OK(MPI_Comm_dup(guided, &c));
    has_hw_info(c, "mpi_shared_memory");
    MPI_OK(MPI_Comm_free(&c));
    /* the key orders the ranks */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, -p2p_rank, info, &c));
    int r, rs;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_rank(shared, &rs));
    CHECK(r == csize(shared) - 1 - rs, "reversed key: rank %d (shared rank %d)", r, rs);
    MPI_OK(MPI_Comm_free(&c));

    p2p_setstep("HW_GUIDED with an unknown or missing resource type");
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "hwloc://NoSuchThing"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    CHECK(c == MPI_COMM_NULL, "unknown resource type gave a communicator");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "missing resource type gave a communicator");

    p2p_setstep("HW_UNGUIDED: a strict subset or MPI_COMM_NULL");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (csize(shared) == p2p_size) {
        CHECK(c == MPI_COMM_NULL, "one node group: HW_UNGUIDED must give MPI_COMM_NULL");
    } else {
        CHECK(c != MPI_COMM_NULL, "several node groups: HW_UNGUIDED gave MPI_COMM_NULL");
        MPI_OK(MPI_Comm_compare(c, shared, &cmp));
        CHECK(cmp == MPI_CONGRUENT && csize(c) < p2p_size, "HW_UNGUIDED vs SHARED %d", cmp);
        has_hw_info(c, "mpi_shared_memory");
        MPI_OK(MPI_Comm_free(&c));
    }
    /* the node group cannot be split further */
    MPI_OK(MPI_Comm_split_type(shared, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_UNGUIDED of a node group gave a communicator");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_SELF, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "HW_UNGUIDED of MPI_COMM_SELF gave a communicator");

    p2p_setstep("MPI_UNDEFINED");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, p2p_rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
    CHECK((c == MPI_COMM_NULL) == (p2p_rank % 2 == 1), "MPI_UNDEFINED gave %s", c == MPI_COMM_NULL ? "NULL" : "a comm");
    if (c != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&c));

    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_free(&guided));
    MPI_OK(MPI_Comm_free(&shared));
    MPI_Finalize();
    return 0;
}
