/* Communicator basics: size/rank, dup (context separation, many dup/free
 * cycles so context ids are recycled), idup, split (colors, keys, MPI_UNDEFINED),
 * split_type (SHARED, HW_GUIDED, HW_UNGUIDED, UNDEFINED), compare, names,
 * and a communicator freed while a send on it is still pending. */
#include "p2p_check.h"

static void check_dup_separation(MPI_Comm dup)
{
    /* the same (source, tag) on two communicators must not cross */
    p2p_setstep("dup context separation");
    int peer = (p2p_rank + 1) % p2p_size, from = (p2p_rank + p2p_size - 1) % p2p_size;
    int a = 1000 + p2p_rank, b = 2000 + p2p_rank, ra = -1, rb = -1;
    MPI_Request rq[2];
    MPI_Status st, sts[2];
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, peer, 7, dup, &rq[1]));
    /* receive on the dup first: it must get the dup's message, not world's */
    MPI_OK(MPI_Recv(&rb, 1, MPI_INT, from, 7, dup, &st));
    MPI_OK(MPI_Recv(&ra, 1, MPI_INT, from, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Waitall(2, rq, sts));
    CHECK(rb == 2000 + from, "dup got %d, expected %d", rb, 2000 + from);
    CHECK(ra == 1000 + from, "world got %d, expected %d", ra, 1000 + from);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 7, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
}

static void check_split(void)
{
    p2p_setstep("split by parity, reversed keys");
    MPI_Comm sub;
    int color = p2p_rank % 2, key = p2p_size - p2p_rank; /* reverse order */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub));
    CHECK(sub != MPI_COMM_NULL, "split returned MPI_COMM_NULL");
    int n = 0, r = -1;
    MPI_OK(MPI_Comm_size(sub, &n));
    int expect_n = (p2p_size + (color == 0)) / 2;
    CHECK(n == expect_n, "sub size %d, expected %d", n, expect_n);
    MPI_OK(MPI_Comm_rank(sub, &r));
    /* ranks of my color sorted by descending world rank */
    int expect_r = 0;
    for (int i = p2p_rank + 1; i < p2p_size; i++)
        expect_r += i % 2 == color;
    CHECK(r == expect_r, "sub rank %d, expected %d", r, expect_r);
    /* the group of sub translates back to world ranks */
    MPI_Group gw, gs;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    MPI_OK(MPI_Comm_group(sub, &gs));
    int sr[64], wr[64];
    for (int i = 0; i < n; i++)
        sr[i] = i;
    MPI_OK(MPI_Group_translate_ranks(gs, n, sr, gw, wr));
    for (int i = 0; i < n; i++) {
        int expect_w = -1, k = 0;
        for (int w = p2p_size - 1; w >= 0; w--)
            if (w % 2 == color && k++ == i)
                expect_w = w;
        CHECK(wr[i] == expect_w, "sub rank %d is world %d, expected %d", i, wr[i], expect_w);
    }
    /* a reduction in sub sees only my color */
    int sum = 0;
    MPI_OK(MPI_Allreduce(&p2p_rank, &sum, 1, MPI_INT, MPI_SUM, sub));
    int expect_sum = 0;
    for (int i = 0; i < p2p_size; i++)
        expect_sum += i % 2 == color ? i : 0;
    CHECK(sum == expect_sum, "sum over sub %d, expected %d", sum, expect_sum);
    int cmp = -1;
    MPI_OK(MPI_Comm_compare(sub, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "compare(sub, world) = %d", cmp);
    MPI_OK(MPI_Group_free(&gw));
    MPI_OK(MPI_Group_free(&gs));
    CHECK(gw == MPI_GROUP_NULL && gs == MPI_GROUP_NULL, "Group_free did not reset the handles");
    MPI_OK(MPI_Comm_free(&sub));
    CHECK(sub == MPI_COMM_NULL, "Comm_free did not reset the handle");

    p2p_setstep("split with MPI_UNDEFINED");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, p2p_rank == 0 ? MPI_UNDEFINED : 5, 0, &sub));
    if (p2p_rank == 0) {
        CHECK(sub == MPI_COMM_NULL, "rank 0 with MPI_UNDEFINED got a communicator");
    } else {
        MPI_OK(MPI_Comm_size(sub, &n));
        MPI_OK(MPI_Comm_rank(sub, &r));
        CHECK(n == p2p_size - 1 && r == p2p_rank - 1, "size %d rank %d", n, r);
        MPI_OK(MPI_Comm_free(&sub));
    }

    p2p_setstep("split keeping order: same color and key");
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &sub));
    MPI_OK(MPI_Comm_compare(sub, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare = %d, expected MPI_CONGRUENT", cmp);
    MPI_OK(MPI_Comm_free(&sub));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p2p_size - p2p_rank, &sub));
    MPI_OK(MPI_Comm_compare(sub, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == (p2p_size > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare = %d, expected MPI_SIMILAR", cmp);
    MPI_OK(MPI_Comm_free(&sub));
}

/* every rank's communicator from a split must hold exactly the ranks that got
 * the same communicator: check via the world rank of its rank 0 */
static void check_partition(MPI_Comm sub, const char *what)
{
    int leader = -1, n = 0, *all = malloc(sizeof(int) * (size_t)p2p_size);
    MPI_Group gs, gw;
    int zero = 0;
    MPI_OK(MPI_Comm_group(sub, &gs));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    MPI_OK(MPI_Group_translate_ranks(gs, 1, &zero, gw, &leader));
    MPI_OK(MPI_Comm_size(sub, &n));
    MPI_OK(MPI_Allgather(&leader, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    int same = 0;
    for (int i = 0; i < p2p_size; i++)
        same += all[i] == leader;
    CHECK(same == n, "%s: %d ranks share leader %d but my communicator has %d", what, same, leader, n);
    MPI_Group_free(&gs);
    MPI_Group_free(&gw);
    free(all);
}

static void check_split_type(void)
{
    p2p_setstep("split_type SHARED");
    MPI_Comm shm, hw, un, none;
    int n, cmp;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, p2p_rank, MPI_INFO_NULL, &shm));
    CHECK(shm != MPI_COMM_NULL, "SHARED gave MPI_COMM_NULL");
    check_partition(shm, "SHARED");
    MPI_OK(MPI_Comm_size(shm, &n));

    p2p_setstep("split_type HW_GUIDED mpi_shared_memory");
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, p2p_rank, info, &hw));
    CHECK(hw != MPI_COMM_NULL, "HW_GUIDED/mpi_shared_memory gave MPI_COMM_NULL");
    MPI_OK(MPI_Comm_compare(hw, shm, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "HW_GUIDED vs SHARED: %d", cmp);
    MPI_OK(MPI_Comm_free(&hw));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "wharf-unknown-resource"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &hw));
    CHECK(hw == MPI_COMM_NULL, "unknown hardware resource type gave a communicator");
    MPI_OK(MPI_Info_free(&info));

    p2p_setstep("split_type HW_UNGUIDED");
    for (int withinfo = 0; withinfo < 2; withinfo++) {
        MPI_Info ui = MPI_INFO_NULL;
        if (withinfo)
            MPI_OK(MPI_Info_create(&ui));
        MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, ui, &un));
        if (n == p2p_size) { /* one host: no strictly smaller subset */
            CHECK(un == MPI_COMM_NULL, "HW_UNGUIDED on a single host gave a communicator");
        } else {
            CHECK(un != MPI_COMM_NULL, "HW_UNGUIDED on several hosts gave MPI_COMM_NULL");
            int m;
            MPI_OK(MPI_Comm_size(un, &m));
            CHECK(m < p2p_size, "HW_UNGUIDED size %d is not smaller than %d", m, p2p_size);
            if (withinfo) { /* the implementation sets the key in the info it was given */
                char val[64] = "";
                int has = 0;
                MPI_OK(MPI_Info_get(ui, "mpi_hw_resource_type", sizeof val - 1, val, &has));
                CHECK(has && !strcmp(val, "mpi_shared_memory"), "HW_UNGUIDED info: has %d value '%s'", has, val);
            }
            MPI_OK(MPI_Comm_free(&un));
        }
        if (withinfo)
            MPI_OK(MPI_Info_free(&ui));
    }

    p2p_setstep("split_type MPI_UNDEFINED");
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, p2p_rank == 1 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                               MPI_INFO_NULL, &none));
    CHECK((p2p_rank == 1) == (none == MPI_COMM_NULL), "UNDEFINED handling");
    if (none != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&none));
    MPI_OK(MPI_Comm_free(&shm));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int n = -1, r = -1, cmp = -1, flag = -1;
    MPI_OK(MPI_Comm_size(MPI_COMM_SELF, &n));
    MPI_OK(MPI_Comm_rank(MPI_COMM_SELF, &r));
    CHECK(n == 1 && r == 0, "COMM_SELF size %d rank %d", n, r);
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_IDENT, "compare(world, world) = %d", cmp);
    MPI_OK(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == (p2p_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare(self, world) = %d", cmp);
    MPI_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "world is an intercommunicator?");

    p2p_setstep("names");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world name '%s' (%d)", name, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_SELF"), "self name '%s'", name);

    p2p_setstep("dup");
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_compare(dup, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare(dup, world) = %d", cmp);
    MPI_OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(len == 0 && name[0] == 0, "a duplicate inherited the name '%s'", name);
    MPI_OK(MPI_Comm_set_name(dup, "my duplicate"));
    MPI_OK(MPI_Comm_get_name(dup, name, &len));
    CHECK(!strcmp(name, "my duplicate") && len == 12, "name '%s'", name);
    check_dup_separation(dup);

    p2p_setstep("idup and dup_with_info");
    MPI_Comm idup, wdup;
    MPI_Request rq;
    MPI_Status st;
    MPI_OK(MPI_Comm_idup(dup, &idup, &rq));
    MPI_OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
    MPI_OK(MPI_Comm_compare(idup, dup, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare(idup, dup) = %d", cmp);
    check_dup_separation(idup);
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Comm_dup_with_info(idup, info, &wdup));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_get_info(wdup, &info));
    CHECK(info != MPI_INFO_NULL, "Comm_get_info gave MPI_INFO_NULL");
    /* the assertions (MPI-4.1 7.4.4) are reported back, as MPICH does;
       set_info changes the ones it names; a dup does not inherit them,
       dup_with_info takes its argument's only */
    char hv[MPI_MAX_INFO_VAL];
    int hf = 0;
    MPI_OK(MPI_Info_get(info, "mpi_assert_no_any_tag", sizeof hv - 1, hv, &hf));
    CHECK(hf && !strcmp(hv, "true"), "mpi_assert_no_any_tag in use: flag %d '%s'", hf, hf ? hv : "");
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_exact_length", "false"));
    MPI_OK(MPI_Info_set(info, "mpi_assert_allow_overtaking", "maybe")); /* not a boolean: ignored */
    MPI_OK(MPI_Comm_set_info(wdup, info));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_get_info(wdup, &info));
    MPI_OK(MPI_Info_get(info, "mpi_assert_exact_length", sizeof hv - 1, hv, &hf));
    CHECK(hf && !strcmp(hv, "false"), "mpi_assert_exact_length after set_info: flag %d", hf);
    MPI_OK(MPI_Info_get(info, "mpi_assert_no_any_tag", sizeof hv - 1, hv, &hf));
    CHECK(hf && !strcmp(hv, "true"), "set_info dropped mpi_assert_no_any_tag: flag %d", hf);
    MPI_OK(MPI_Info_get(info, "mpi_assert_allow_overtaking", sizeof hv - 1, hv, &hf));
    CHECK(!hf, "a non-boolean mpi_assert_allow_overtaking was kept");
    MPI_OK(MPI_Info_free(&info));
    MPI_Comm ddup;
    MPI_OK(MPI_Comm_dup(wdup, &ddup));
    MPI_OK(MPI_Comm_get_info(ddup, &info));
    MPI_OK(MPI_Info_get(info, "mpi_assert_no_any_tag", sizeof hv - 1, hv, &hf));
    CHECK(!hf, "MPI_Comm_dup passed mpi_assert_no_any_tag on");
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Comm_free(&ddup));
    check_dup_separation(wdup);
    MPI_OK(MPI_Comm_free(&wdup));
    MPI_OK(MPI_Comm_free(&idup));

    check_split();
    check_split_type();

    /* more cycles than there are context ids (4096) prove they are recycled;
     * on MPI_COMM_SELF the agreement is local, so this is quick */
    p2p_setstep("dup/free cycles recycle context ids");
    for (int i = 0; i < 4200; i++) {
        MPI_Comm t;
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &t));
        MPI_OK(MPI_Comm_free(&t));
    }
    for (int i = 0; i < 200; i++) {
        MPI_Comm t;
        MPI_OK(MPI_Comm_dup(i % 2 ? dup : MPI_COMM_WORLD, &t));
        MPI_OK(MPI_Comm_free(&t));
    }
    /* many alive at once */
    MPI_Comm many[100];
    for (int i = 0; i < 100; i++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &many[i]));
    int v = p2p_rank, sum = 0;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, many[99]));
    CHECK(sum == p2p_size * (p2p_size - 1) / 2, "allreduce on the 100th dup: %d", sum);
    for (int i = 0; i < 100; i++)
        MPI_OK(MPI_Comm_free(&many[i]));

    p2p_setstep("free with a send pending");
    if (p2p_size >= 2 && p2p_rank < 2) {
        MPI_Comm t;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p2p_rank, &t));
        enum { N = 1 << 20 };
        char *big = malloc(N);
        if (p2p_rank == 0) {
            p2p_fill(big, N, 5);
            MPI_OK(MPI_Isend(big, N, MPI_CHAR, 1, 3, t, &rq));
            MPI_OK(MPI_Comm_free(&t)); /* the pending send keeps the communicator */
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv(big, N, MPI_CHAR, 0, 3, t, &st));
            CHECK(p2p_verify(big, N, 5) == (size_t)-1, "payload on a communicator freed by the sender");
            MPI_OK(MPI_Comm_free(&t));
        }
        free(big);
    } else {
        MPI_Comm t;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p2p_rank, &t));
        MPI_OK(MPI_Comm_free(&t));
    }

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
