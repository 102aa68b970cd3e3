/* Group operations: size/rank, incl/excl, range_incl/range_excl, union,
 * intersection, difference, translate_ranks, compare, MPI_GROUP_EMPTY, and
 * the error classes of bad arguments (MPI_ERRORS_RETURN on both predefined
 * communicators, since group calls raise errors on the default handler). */
#include "p2p_check.h"

/* the world ranks of g, in order */
static int members(MPI_Group g, MPI_Group world, int *out)
{
    int n, idx[256];
    MPI_OK(MPI_Group_size(g, &n));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, out));
    return n;
}

static void expect(MPI_Group g, MPI_Group world, int n, const int *want, const char *what)
{
    int got[256];
    int m = members(g, world, got);
    CHECK(m == n, "%s: size %d, expected %d", what, m, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i, got[i], want[i]);
    int r, myidx = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (want[i] == p2p_rank)
            myidx = i;
    MPI_OK(MPI_Group_rank(g, &r));
    CHECK(r == myidx, "%s: Group_rank %d, expected %d", what, r, myidx);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int P = p2p_size;
    CHECK(P <= 256, "test written for at most 256 ranks");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Group world, g1, g2, g3;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int want[256] = {0}, n = 0, cmp;

    p2p_setstep("world group");
    for (int i = 0; i < P; i++)
        want[i] = i;
    expect(world, world, P, want, "world");

    p2p_setstep("incl (reversed)");
    int rev[256];
    for (int i = 0; i < P; i++)
        rev[i] = P - 1 - i;
    MPI_OK(MPI_Group_incl(world, P, rev, &g1));
    expect(g1, world, P, rev, "incl reversed");
    MPI_OK(MPI_Group_compare(g1, world, &cmp));
    CHECK(cmp == (P > 1 ? MPI_SIMILAR : MPI_IDENT), "compare(reversed, world) = %d", cmp);
    MPI_OK(MPI_Group_compare(world, world, &cmp));
    CHECK(cmp == MPI_IDENT, "compare(world, world) = %d", cmp);

    p2p_setstep("excl rank 0");
    int zero = 0;
    MPI_OK(MPI_Group_excl(world, 1, &zero, &g2));
    for (n = 0; n < P - 1; n++)
        want[n] = n + 1;
    expect(g2, world, n, want, "excl 0");
    MPI_OK(MPI_Group_compare(g2, world, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "compare(excl, world) = %d", cmp);

    p2p_setstep("translate_ranks");
    int in[3] = {0, MPI_PROC_NULL, P - 1}, out[3];
    MPI_OK(MPI_Group_translate_ranks(world, 3, in, g2, out));
    CHECK(out[0] == MPI_UNDEFINED, "rank 0 (absent) translated to %d", out[0]);
    CHECK(out[1] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[1]);
    CHECK(P == 1 ? out[2] == MPI_UNDEFINED : out[2] == P - 2, "rank P-1 translated to %d", out[2]);

    p2p_setstep("union / intersection / difference");
    MPI_Group u, x, d;
    MPI_OK(MPI_Group_union(g2, g1, &u)); /* g2 order, then missing ones in g1 order: 1..P-1, 0 */
    for (n = 0; n < P - 1; n++)
        want[n] = n + 1;
    want[n++] = 0;
    expect(u, world, n, want, "union");
    MPI_OK(MPI_Group_intersection(g1, g2, &x)); /* g1 order without 0: P-1..1 */
    for (n = 0; n < P - 1; n++)
        want[n] = P - 1 - n;
    expect(x, world, n, want, "intersection");
    MPI_OK(MPI_Group_difference(world, g2, &d));
    want[0] = 0;
    expect(d, world, 1, want, "difference");
    MPI_Group e;
    MPI_OK(MPI_Group_difference(g2, world, &e));
    MPI_OK(MPI_Group_compare(e, MPI_GROUP_EMPTY, &cmp));
    CHECK(cmp == MPI_IDENT, "empty difference vs MPI_GROUP_EMPTY: %d", cmp);
    MPI_OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
    CHECK(n == 0, "MPI_GROUP_EMPTY size %d", n);
    MPI_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &n));
    CHECK(n == MPI_UNDEFINED, "MPI_GROUP_EMPTY rank %d", n);
    MPI_OK(MPI_Group_free(&e));

    p2p_setstep("range_incl / range_excl");
    MPI_Group r1, r2;
    int ranges[2][3] = {{P - 1, 0, -2}, {P > 1 ? P - 2 : 0, P > 1 ? P - 2 : 0, 1}};
    int nr = P > 1 ? 2 : 1; /* P-2 has the other parity: not in the first range */
    MPI_OK(MPI_Group_range_incl(world, nr, ranges, &r1));
    n = 0;
    for (int i = P - 1; i >= 0; i -= 2)
        want[n++] = i;
    if (nr == 2)
        want[n++] = P - 2;
    expect(r1, world, n, want, "range_incl");
    MPI_OK(MPI_Group_range_excl(world, 1, ranges, &r2)); /* everything not in P-1, P-3, ... */
    n = 0;
    for (int i = 0; i < P; i++)
        if ((P - 1 - i) % 2 != 0)
            want[n++] = i;
    expect(r2, world, n, want, "range_excl");
    MPI_OK(MPI_Group_free(&r1));
    MPI_OK(MPI_Group_free(&r2));

    p2p_setstep("incl of nothing is MPI_GROUP_EMPTY");
    MPI_OK(MPI_Group_incl(world, 0, NULL, &g3));
    MPI_OK(MPI_Group_size(g3, &n));
    CHECK(n == 0, "incl of 0 ranks has size %d", n);
    MPI_OK(MPI_Group_free(&g3));

    p2p_setstep("errors");
    int bad[2] = {0, 0};
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, (int[]){P}, &g3));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 1, (int[]){-1}, &g3));
    if (P > 1)
        MPI_FAILS(MPI_ERR_RANK, MPI_Group_incl(world, 2, bad, &g3)); /* duplicate */
    MPI_FAILS(MPI_ERR_ARG, MPI_Group_incl(world, -1, bad, &g3));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_excl(world, 1, (int[]){P + 3}, &g3));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, (int[]){P}, g2, out));
    MPI_FAILS(MPI_ERR_ARG, MPI_Group_range_incl(world, 1, (int[][3]){{0, 0, 0}}, &g3));
    MPI_FAILS(MPI_ERR_RANK, MPI_Group_range_incl(world, 1, (int[][3]){{0, P, 1}}, &g3));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_size(MPI_GROUP_NULL, &n));
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_union(world, MPI_GROUP_NULL, &g3));
    MPI_Group gn = MPI_GROUP_NULL;
    MPI_FAILS(MPI_ERR_GROUP, MPI_Group_free(&gn));
    MPI_FAILS(MPI_ERR_ARG, MPI_Group_size(world, NULL));
    {
        /* the message names the problem */
        char msg[MPI_MAX_ERROR_STRING];
        int len, rc = MPI_Group_incl(world, 1, (int[]){P + 7}, &g3);
        MPI_Error_string(rc, msg, &len);
        char num[32];
        snprintf(num, sizeof num, "%d", P + 7);
        CHECK(strstr(msg, num) && strstr(msg, "rank"), "message '%s'", msg);
    }

    MPI_OK(MPI_Group_free(&u));
    MPI_OK(MPI_Group_free(&x));
    MPI_OK(MPI_Group_free(&d));
    MPI_OK(MPI_Group_free(&g1));
    MPI_OK(MPI_Group_free(&g2));
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
