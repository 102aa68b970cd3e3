/* MPI_Comm_spawn and MPI_Comm_spawn_multiple for real: one program, whose
 * role is its first argument.
 *
 * parents (the job):  spawn_multiple from the last rank of a subcommunicator
 *   (every rank but rank 0 when there are several) of two commands, this
 *   program with "child-a X Y" x2 and "child-b" x1; check the error codes, the
 *   remote group, data both ways, an allreduce over the intercommunicator,
 *   MPI_Intercomm_merge with the children; then MPI_Comm_spawn with info
 *   keys wdir and path (bare program name) of one "child-w"; a missing
 *   program fails with MPI_ERR_SPAWN.
 * children: MPI_Comm_get_parent, their argv, MPI_APPNUM per command,
 *   MPI_UNIVERSE_SIZE; child-a rank 0 spawns a "grandchild" over
 *   MPI_COMM_SELF (nested spawn) and swaps a message with it. */
#include "p2p_check.h"
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

static char self_path[PATH_MAX];

static int appnum(void)
{
    int *v, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(flag, "MPI_APPNUM is set in a spawned process");
    return *v;
}

static void grandchild(MPI_Comm parent)
{
    int x = 0, wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize == 1, "grandchild world size %d", wsize);
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, parent, MPI_STATUS_IGNORE));
    x += 1;
    MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 6, parent));
    MPI_OK(MPI_Comm_disconnect(&parent));
}

static void child(const char *role, int argc, char **argv, MPI_Comm parent)
{
    int rank, wsize, rsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_OK(MPI_Comm_remote_size(parent, &rsize));
    int a = appnum();
    if (!strcmp(role, "child-w")) {
        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof cwd) && !strcmp(cwd, "/tmp"), "wdir: cwd %s", cwd);
        CHECK(wsize == 1 && a == 0, "child-w: size %d appnum %d", wsize, a);
        int token = 0;
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 9, parent, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 10, parent));
        MPI_OK(MPI_Comm_disconnect(&parent));
        return;
    }
    /* spawn_multiple: 2 x child-a (appnum 0, args X Y), then 1 x child-b (appnum 1, no args) */
    CHECK(wsize == 3, "children's world size %d", wsize);
    int is_a = !strcmp(role, "child-a");
    CHECK(is_a == (rank < 2), "rank %d is %s", rank, role);
    CHECK(a == (is_a ? 0 : 1), "%s: MPI_APPNUM %d", role, a);
    if (is_a)
        CHECK(argc == 4 && !strcmp(argv[2], "X") && !strcmp(argv[3], "Y with space"), "child-a argv: %d args", argc);
    else
        CHECK(argc == 2, "child-b argv: %d args", argc);
    int *us, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &us, &flag));
    CHECK(flag && *us >= 1, "MPI_UNIVERSE_SIZE");
    /* the parents' root sends every child its rank * 7 */
    int v = -1;
    MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 1, parent, MPI_STATUS_IGNORE));
    CHECK(v == rank * 7, "child %d got %d", rank, v);
    /* an allreduce over the intercommunicator: children get the parents' sum */
    int mine = 1000 + rank, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent));
    CHECK(sum == rsize * (rsize + 1) / 2, "children: sum of the parents %d (remote size %d)", sum, rsize);
    /* merged: parents low, children high */
    MPI_Comm merged;
    MPI_OK(MPI_Intercomm_merge(parent, 1, &merged));
    int mrank, msize, total = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == rsize + 3 && mrank == rsize + rank, "merged rank %d of %d", mrank, msize);
    MPI_OK(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    MPI_OK(MPI_Comm_free(&merged));
    if (is_a && rank == 0) { /* nested: a child spawns */
        MPI_Comm gc;
        char *gargs[] = {"grandchild", NULL};
        int code = -1;
        MPI_OK(MPI_Comm_spawn(self_path, gargs, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &gc, &code));
        CHECK(code == MPI_SUCCESS, "grandchild errcode %d", code);
        int x = 41;
        MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 5, gc));
        MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 6, gc, MPI_STATUS_IGNORE));
        CHECK(x == 42, "grandchild answered %d", x);
        MPI_OK(MPI_Comm_disconnect(&gc));
    }
    MPI_OK(MPI_Comm_disconnect(&parent));
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "the parent after MPI_Comm_disconnect");
}

static void parents(void)
{
    int rank = p2p_rank, size = p2p_size;
    /* a subcommunicator without rank 0 (when there is more than one rank), root its last rank */
    MPI_Comm sub;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, size > 1 && rank == 0 ? MPI_UNDEFINED : 0, rank, &sub));
    if (sub != MPI_COMM_NULL) {
        p2p_setstep("spawn_multiple");
        int srank, ssize;
        MPI_Comm_rank(sub, &srank);
        MPI_Comm_size(sub, &ssize);
        int root = ssize - 1;
        char *cmds[2] = {self_path, self_path};
        char *args_a[] = {"child-a", "X", "Y with space", NULL}, *args_b[] = {"child-b", NULL};
        char **argvs[2] = {args_a, args_b};
        int np[2] = {2, 1}, codes[3] = {-1, -1, -1};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        MPI_Comm ic;
        MPI_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, root, sub, &ic, codes));
        CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS && codes[2] == MPI_SUCCESS, "errcodes %d %d %d",
              codes[0], codes[1], codes[2]);
        int rsize, lsize, flag;
        MPI_OK(MPI_Comm_test_inter(ic, &flag));
        MPI_OK(MPI_Comm_remote_size(ic, &rsize));
        MPI_OK(MPI_Comm_size(ic, &lsize));
        CHECK(flag && rsize == 3 && lsize == ssize, "intercommunicator: inter %d remote %d local %d", flag, rsize,
              lsize);
        if (srank == root)
            for (int c = 0; c < 3; c++) {
                int v = c * 7;
                MPI_OK(MPI_Send(&v, 1, MPI_INT, c, 1, ic));
            }
        int mine = srank + 1, sum = 0; /* the children see 1 + 2 + ... + ssize */
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic));
        CHECK(sum == 1000 * 3 + 3, "parents: sum of the children %d", sum);
        MPI_Comm merged;
        MPI_OK(MPI_Intercomm_merge(ic, 0, &merged));
        int mrank, msize, total = 0;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        CHECK(msize == ssize + 3 && mrank == srank, "merged rank %d of %d", mrank, msize);
        MPI_OK(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
        CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
        MPI_OK(MPI_Comm_free(&merged));
        MPI_OK(MPI_Comm_disconnect(&ic));
        MPI_OK(MPI_Comm_free(&sub));
    }
    /* info keys: wdir, and path with a bare program name; root rank 0 of the world */
    p2p_setstep("spawn with wdir/path");
    char dir[PATH_MAX], *slash;
    snprintf(dir, sizeof dir, "%s", self_path);
    slash = strrchr(dir, '/');
    CHECK(slash != NULL, "program path %s", self_path);
    *slash = '\0';
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "wdir", "/tmp"));
    MPI_OK(MPI_Info_set(info, "path", dir));
    char *wargs[] = {"child-w", NULL};
    MPI_Comm ic;
    int code = -1;
    MPI_OK(MPI_Comm_spawn(slash + 1, wargs, 1, info, 0, MPI_COMM_WORLD, &ic, &code));
    MPI_OK(MPI_Info_free(&info));
    CHECK(code == MPI_SUCCESS, "errcode %d", code);
    if (rank == size - 1) {
        int token = 77;
        MPI_OK(MPI_Send(&token, 1, MPI_INT, 0, 9, ic));
    }
    if (rank == 0) {
        int token = 0;
        MPI_OK(MPI_Recv(&token, 1, MPI_INT, 0, 10, ic, MPI_STATUS_IGNORE));
        CHECK(token == 77, "child-w echoed %d", token);
    }
    MPI_OK(MPI_Comm_disconnect(&ic));
    /* a program that does not exist: MPI_ERR_SPAWN on every rank, every code set */
    p2p_setstep("spawn of a missing program");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int codes[2] = {0, 0};
    MPI_FAILS(MPI_ERR_SPAWN, MPI_Comm_spawn("/nonexistent/wharf-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL,
                                            0, MPI_COMM_WORLD, &ic, codes));
    CHECK(ic == MPI_COMM_NULL && codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN, "codes %d %d", codes[0],
          codes[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    if (!realpath("/proc/self/exe", self_path))
        p2p_fail(__FILE__, __LINE__, "realpath(/proc/self/exe)");
    MPI_Comm parent;
    MPI_OK(MPI_Comm_get_parent(&parent));
    const char *role = argc > 1 ? argv[1] : "parent";
    CHECK((parent == MPI_COMM_NULL) == !strcmp(role, "parent"), "role %s, parent %s", role,
          parent == MPI_COMM_NULL ? "none" : "set");
    if (!strcmp(role, "grandchild"))
        grandchild(parent);
    else if (parent != MPI_COMM_NULL)
        child(role, argc, argv, parent);
    else
        parents();
    if (parent == MPI_COMM_NULL) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (p2p_rank == 0)
            printf("spawn: %d ranks: ok\n", p2p_size);
    }
    MPI_Finalize();
    return 0;
}
