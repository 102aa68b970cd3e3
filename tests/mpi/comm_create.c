/* MPI_Comm_create and MPI_Comm_create_group: membership, rank order given
 * by the group, traffic on the result, disjoint groups in one call,
 * non-members, and the error cases (with MPI_ERRORS_RETURN). */
#include "p2p_check.h"

/* ring exchange inside c: checks that c works and ranks are consistent */
static void ring(MPI_Comm c, int tag)
{
    int n, r;
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &r));
    int out = r * 100 + tag, in = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, tag, &in, 1, MPI_INT, (r + n - 1) % n, tag, c, &st));
    CHECK(in == ((r + n - 1) % n) * 100 + tag, "ring got %d", in);
    CHECK(st.MPI_SOURCE == (r + n - 1) % n && st.MPI_TAG == tag, "status %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    int sum = 0;
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce in created comm: %d", sum);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Group world;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    p2p_setstep("Comm_create with the even ranks, reversed");
    int ev[64], nev = 0;
    for (int i = p2p_size - 1; i >= 0; i--)
        if (i % 2 == 0)
            ev[nev++] = i;
    MPI_Group geven;
    MPI_OK(MPI_Group_incl(world, nev, ev, &geven));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, geven, &c));
    if (p2p_rank % 2 == 0) {
        CHECK(c != MPI_COMM_NULL, "member got MPI_COMM_NULL");
        int r, n;
        MPI_OK(MPI_Comm_rank(c, &r));
        MPI_OK(MPI_Comm_size(c, &n));
        CHECK(n == nev && ev[r] == p2p_rank, "rank %d size %d", r, n);
        ring(c, 1);
        MPI_Group g;
        int cmp;
        MPI_OK(MPI_Comm_group(c, &g));
        MPI_OK(MPI_Group_compare(g, geven, &cmp));
        CHECK(cmp == MPI_IDENT, "group of created comm vs group: %d", cmp);
        MPI_OK(MPI_Group_free(&g));
        MPI_OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "non-member got a communicator");
    }

    p2p_setstep("Comm_create with disjoint groups (evens / odds)");
    MPI_Group gmine;
    MPI_OK(MPI_Group_range_incl(world, 1, (int[][3]){{p2p_rank % 2, p2p_size - 1, 2}}, &gmine));
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, gmine, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint create gave MPI_COMM_NULL");
    ring(c, 2);
    MPI_OK(MPI_Comm_free(&c));

    p2p_setstep("Comm_create with MPI_GROUP_EMPTY");
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "empty group gave a communicator");

    p2p_setstep("Comm_create_group over the odd ranks only");
    MPI_Group godd;
    MPI_OK(MPI_Group_difference(world, geven, &godd));
    if (p2p_rank % 2 == 1) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, godd, 42, &c));
        CHECK(c != MPI_COMM_NULL, "member got MPI_COMM_NULL");
        int r;
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK(r == p2p_rank / 2, "odd rank %d has rank %d", p2p_rank, r);
        ring(c, 3);
        MPI_OK(MPI_Comm_free(&c));
    } else if (p2p_size > 2) {
        /* meanwhile the even ranks build their own, concurrently, tag 42 too */
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, geven, 42, &c));
        ring(c, 4);
        MPI_OK(MPI_Comm_free(&c));
    }
    /* a non-member calling with the empty group gets MPI_COMM_NULL at once */
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 0, &c));
    CHECK(c == MPI_COMM_NULL, "create_group with MPI_GROUP_EMPTY");

    p2p_setstep("Comm_create_group over everybody, reversed");
    MPI_Group grev;
    int rev[64];
    for (int i = 0; i < p2p_size; i++)
        rev[i] = p2p_size - 1 - i;
    MPI_OK(MPI_Group_incl(world, p2p_size, rev, &grev));
    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, grev, 7, &c));
    {
        int r;
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK(r == p2p_size - 1 - p2p_rank, "reversed create_group: rank %d", r);
        ring(c, 5);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Group_free(&grev));

    p2p_setstep("Comm_create_group on a sub-communicator, many times");
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, p2p_rank < (p2p_size + 1) / 2, p2p_rank, &half));
    MPI_Group ghalf;
    MPI_OK(MPI_Comm_group(half, &ghalf));
    for (int i = 0; i < 200; i++) {
        MPI_OK(MPI_Comm_create_group(half, ghalf, i, &c));
        int cmp;
        MPI_OK(MPI_Comm_compare(c, half, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "iteration %d: compare %d", i, cmp);
        MPI_OK(MPI_Comm_free(&c));
    }

    p2p_setstep("errors");
    int cls = -1, rc;
    /* a group that is not a subgroup of half */
    MPI_Group other;
    MPI_OK(MPI_Group_difference(world, ghalf, &other));
    if (p2p_size > 1) {
        MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create(half, other, &c));
        MPI_OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
        MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create(half, other, &c));
        MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create_group(half, other, 1, &c));
    }
    MPI_FAILS(MPI_ERR_GROUP, MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c));
    MPI_FAILS(MPI_ERR_TAG, MPI_Comm_create_group(MPI_COMM_WORLD, world, -1, &c));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_create(MPI_COMM_NULL, world, &c));
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF, nul = MPI_COMM_NULL;
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&w));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* raised on SELF itself */
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&s));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_free(&nul));
    CHECK(w == MPI_COMM_WORLD, "failed free changed the handle");
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c));
    MPI_FAILS(MPI_ERR_ARG, MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c));
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &rc));
    rc = MPI_Comm_dup(MPI_COMM_NULL, &c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "dup of MPI_COMM_NULL: class %d", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    CHECK(strstr(msg, "MPI_COMM_NULL") != NULL, "message '%s' does not name MPI_COMM_NULL", msg);

    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Group_free(&other));
    MPI_OK(MPI_Group_free(&ghalf));
    MPI_OK(MPI_Group_free(&godd));
    MPI_OK(MPI_Group_free(&gmine));
    MPI_OK(MPI_Group_free(&geven));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
