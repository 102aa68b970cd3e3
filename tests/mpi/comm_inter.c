/* Intercommunicators between the even and the odd ranks of MPI_COMM_WORLD:
 * Intercomm_create (two choices of leaders), the queries (test_inter, size,
 * remote_size, group, remote_group, compare), point-to-point across, Comm_dup,
 * Comm_idup, Comm_split, Comm_create, Comm_split_type and Intercomm_merge (by high, and ties), free,
 * MPI_Comm_create_from_group / MPI_Intercomm_create_from_groups, and the
 * error cases. */
#include "p2p_check.h"

static int nev, nodd; /* group sizes */

static int world_of(int parity, int r)
{
    return 2 * r + parity;
}

/* check ic against the expected groups and exchange with every remote rank */
static void check_inter(MPI_Comm ic, int tag)
{
    int mypar = p2p_rank % 2, flag, n, rn, r;
    MPI_OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag, "not an intercommunicator");
    MPI_OK(MPI_Comm_size(ic, &n));
    MPI_OK(MPI_Comm_remote_size(ic, &rn));
    MPI_OK(MPI_Comm_rank(ic, &r));
    CHECK(n == (mypar ? nodd : nev) && rn == (mypar ? nev : nodd), "size %d remote size %d", n, rn);
    CHECK(r == p2p_rank / 2, "rank %d", r);
    MPI_Group lg, rg, wg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Comm_group(ic, &lg));
    MPI_OK(MPI_Comm_remote_group(ic, &rg));
    int gs, rr[64], wr[64];
    MPI_OK(MPI_Group_size(rg, &gs));
    CHECK(gs == rn, "remote group size %d", gs);
    for (int i = 0; i < 64; i++)
        rr[i] = i;
    MPI_OK(MPI_Group_translate_ranks(rg, rn, rr, wg, wr));
    for (int i = 0; i < rn; i++)
        CHECK(wr[i] == world_of(!mypar, i), "remote rank %d is world rank %d", i, wr[i]);
    MPI_OK(MPI_Group_translate_ranks(lg, n, rr, wg, wr));
    for (int i = 0; i < n; i++)
        CHECK(wr[i] == world_of(mypar, i), "local rank %d is world rank %d", i, wr[i]);
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&wg));
    /* every rank sends its world rank to every remote rank */
    int out = p2p_rank, in[64];
    MPI_Request rq[128];
    MPI_Status st[128];
    for (int i = 0; i < rn; i++)
        MPI_OK(MPI_Irecv(&in[i], 1, MPI_INT, i, tag, ic, &rq[i]));
    for (int i = 0; i < rn; i++)
        MPI_OK(MPI_Isend(&out, 1, MPI_INT, i, tag, ic, &rq[rn + i]));
    MPI_OK(MPI_Waitall(2 * rn, rq, st));
    for (int i = 0; i < rn; i++) {
        CHECK(in[i] == world_of(!mypar, i), "from remote %d got %d", i, in[i]);
        CHECK(st[i].MPI_SOURCE == i && st[i].MPI_TAG == tag, "status %d/%d", st[i].MPI_SOURCE, st[i].MPI_TAG);
    }
}

static void check_merged(MPI_Comm m, int evens_first)
{
    int n, r, flag, sum = 0, par = p2p_rank % 2;
    MPI_OK(MPI_Comm_test_inter(m, &flag));
    MPI_OK(MPI_Comm_size(m, &n));
    MPI_OK(MPI_Comm_rank(m, &r));
    CHECK(!flag && n == p2p_size, "merged: inter %d size %d", flag, n);
    int want = (par == 0) == evens_first ? p2p_rank / 2 : (par ? nev : nodd) + p2p_rank / 2;
    CHECK(r == want, "merged rank %d, expected %d", r, want);
    MPI_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, m));
    CHECK(sum == n * (n - 1) / 2, "allreduce in merged %d", sum);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    nev = (p2p_size + 1) / 2;
    nodd = p2p_size / 2;
    int par = p2p_rank % 2;
    CHECK(p2p_size >= 2, "needs 2 ranks");

    p2p_setstep("Intercomm_create, leaders local 0 / world 0 and 1");
    MPI_Comm local, ic;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, par, p2p_rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - par, 99, &ic));
    check_inter(ic, 1);

    p2p_setstep("Comm_dup and Comm_idup of an intercommunicator");
    MPI_Comm d, id;
    MPI_Request req;
    int cmp;
    MPI_OK(MPI_Comm_dup(ic, &d));
    MPI_OK(MPI_Comm_compare(ic, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare of dup %d", cmp);
    MPI_OK(MPI_Comm_idup(ic, &id, &req));
    check_inter(d, 2);
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_inter(id, 3);
    MPI_OK(MPI_Comm_compare(ic, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_UNEQUAL, "intercomm vs world %d", cmp);

    p2p_setstep("Intercomm_merge: odds high");
    MPI_Comm m;
    MPI_OK(MPI_Intercomm_merge(ic, par, &m));
    check_merged(m, 1);
    MPI_OK(MPI_Comm_free(&m));
    p2p_setstep("Intercomm_merge: evens high");
    MPI_OK(MPI_Intercomm_merge(d, !par, &m));
    check_merged(m, 0);
    MPI_OK(MPI_Comm_free(&m));
    p2p_setstep("Intercomm_merge: both high (the group of world rank 0 first)");
    MPI_OK(MPI_Intercomm_merge(id, 1, &m));
    check_merged(m, 1);
    MPI_OK(MPI_Comm_free(&m));

    p2p_setstep("Comm_split of an intercommunicator by local rank parity");
    MPI_Comm s;
    int lr = p2p_rank / 2, color = lr % 2;
    MPI_OK(MPI_Comm_split(ic, color, -lr, &s)); /* reversed order */
    int remote_same = color ? (par ? nev : nodd) / 2 : ((par ? nev : nodd) + 1) / 2;
    if (!remote_same) {
        CHECK(s == MPI_COMM_NULL, "split gave a communicator without remote members");
    } else {
        int sn, srn, sr, flag;
        MPI_OK(MPI_Comm_test_inter(s, &flag));
        MPI_OK(MPI_Comm_size(s, &sn));
        MPI_OK(MPI_Comm_remote_size(s, &srn));
        MPI_OK(MPI_Comm_rank(s, &sr));
        int mine_same = color ? (par ? nodd : nev) / 2 : ((par ? nodd : nev) + 1) / 2;
        CHECK(flag && sn == mine_same && srn == remote_same, "split: inter %d size %d remote %d", flag, sn, srn);
        CHECK(sr == mine_same - 1 - lr / 2, "split rank %d (keys reversed)", sr);
        /* remote rank i is the remote member of my color with the i-th largest local rank */
        int v = p2p_rank, got[64], rsize = par ? nev : nodd, top = rsize - 1;
        MPI_Request q[128];
        for (int i = 0; i < srn; i++)
            MPI_OK(MPI_Irecv(&got[i], 1, MPI_INT, i, 4, s, &q[i]));
        for (int i = 0; i < srn; i++)
            MPI_OK(MPI_Isend(&v, 1, MPI_INT, i, 4, s, &q[srn + i]));
        MPI_OK(MPI_Waitall(2 * srn, q, MPI_STATUSES_IGNORE));
        while (top % 2 != color)
            top--;
        for (int i = 0; i < srn; i++, top -= 2)
            CHECK(got[i] == world_of(!par, top), "split: remote rank %d is world %d, expected %d", i, got[i],
                  world_of(!par, top));
        MPI_OK(MPI_Comm_free(&s));
    }

    p2p_setstep("Comm_create of an intercommunicator: local rank 0 dropped on both sides");
    {
        MPI_Group lg, sub;
        MPI_OK(MPI_Comm_group(ic, &lg));
        int zero = 0;
        MPI_OK(MPI_Group_excl(lg, 1, &zero, &sub));
        MPI_Comm cc;
        MPI_OK(MPI_Comm_create(ic, sub, &cc));
        int mine_n = (par ? nodd : nev) - 1, rem_n = (par ? nev : nodd) - 1;
        if (lr == 0 || rem_n == 0) {
            CHECK(cc == MPI_COMM_NULL, "Comm_create gave a communicator to an excluded rank or without remote members");
        } else {
            int cn, crn, cr, flag;
            MPI_OK(MPI_Comm_test_inter(cc, &flag));
            MPI_OK(MPI_Comm_size(cc, &cn));
            MPI_OK(MPI_Comm_remote_size(cc, &crn));
            MPI_OK(MPI_Comm_rank(cc, &cr));
            CHECK(flag && cn == mine_n && crn == rem_n && cr == lr - 1, "Comm_create: inter %d size %d remote %d rank %d",
                  flag, cn, crn, cr);
            /* the two ranks 0 swap: remote rank 0 is the other side's local rank 1 */
            int v = p2p_rank, got = -1;
            if (cr == 0) {
                MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 8, &got, 1, MPI_INT, 0, 8, cc, MPI_STATUS_IGNORE));
                CHECK(got == world_of(!par, 1), "Comm_create: remote rank 0 is world %d", got);
            }
            MPI_OK(MPI_Comm_free(&cc));
        }
        MPI_OK(MPI_Group_free(&sub));
        MPI_OK(MPI_Group_free(&lg));
    }

    p2p_setstep("Comm_split_type of an intercommunicator");
    {
        MPI_Comm st;
        MPI_OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &st));
        if (st != MPI_COMM_NULL) {
            int flag;
            MPI_OK(MPI_Comm_test_inter(st, &flag));
            CHECK(flag, "split_type of an intercommunicator is not one");
            MPI_OK(MPI_Comm_free(&st));
        }
        MPI_OK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &st));
        CHECK(st == MPI_COMM_NULL, "split_type MPI_UNDEFINED");
    }

    p2p_setstep("Intercomm_create with the last ranks as leaders, tag 7");
    MPI_Comm ic2;
    int mysize = par ? nodd : nev, other_last = world_of(!par, (par ? nev : nodd) - 1);
    MPI_OK(MPI_Intercomm_create(local, mysize - 1, MPI_COMM_WORLD, other_last, 7, &ic2));
    check_inter(ic2, 5);

    p2p_setstep("Comm_create_from_group and Intercomm_create_from_groups");
    MPI_Group wg, hg[2];
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int k = 0; k < 2; k++)
        MPI_OK(MPI_Group_range_incl(wg, 1, (int[][3]){{k, p2p_size - 1, 2}}, &hg[k]));
    MPI_Comm fc, fic;
    MPI_OK(MPI_Comm_create_from_group(hg[par], "org.wharf.test.half", MPI_INFO_NULL, MPI_ERRORS_RETURN, &fc));
    int fn, fr, fsum = 0;
    MPI_OK(MPI_Comm_size(fc, &fn));
    MPI_OK(MPI_Comm_rank(fc, &fr));
    CHECK(fn == mysize && fr == p2p_rank / 2, "from_group size %d rank %d", fn, fr);
    MPI_OK(MPI_Allreduce(&p2p_rank, &fsum, 1, MPI_INT, MPI_SUM, fc));
    CHECK(fsum == (par ? nodd * nodd : nev * (nev - 1)), "from_group allreduce %d", fsum);
    MPI_OK(MPI_Intercomm_create_from_groups(hg[par], 0, hg[!par], 0, "org.wharf.test.inter", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &fic));
    check_inter(fic, 6);
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(fic, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new intercommunicator");
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_free(&fic));
    MPI_OK(MPI_Comm_free(&fc));
    for (int k = 0; k < 2; k++)
        MPI_OK(MPI_Group_free(&hg[k]));
    MPI_OK(MPI_Group_free(&wg));

    p2p_setstep("errors");
    int x;
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_remote_size(MPI_COMM_WORLD, &x));
    MPI_Group g;
    MPI_FAILS(MPI_ERR_COMM, MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
    MPI_FAILS(MPI_ERR_COMM, MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m));
    MPI_OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_COMM, MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 1, &m));
    MPI_FAILS(MPI_ERR_RANK, MPI_Intercomm_create(local, mysize, MPI_COMM_WORLD, 0, 1, &m));

    MPI_OK(MPI_Comm_free(&ic2));
    MPI_OK(MPI_Comm_free(&id));
    MPI_OK(MPI_Comm_free(&d));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
    MPI_Finalize();
    return 0;
}
