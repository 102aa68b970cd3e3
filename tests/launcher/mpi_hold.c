/* An MPI rank program for the launcher's attacker and fault tests
 * (tests/launcher/launcher_test.sh):
 *   mpi_hold hold FILE      every rank prints "rank R ready" after MPI_Init,
 *                           then waits (<= 60 s) until FILE exists, then a
 *                           barrier and MPI_Finalize: the node region stays
 *                           up while the test pokes at it
 *   mpi_hold peerdie V      rank V kills itself with SIGKILL after a
 *                           barrier; every other rank waits in MPI_Recv from
 *                           V and must be told that V died
 *   mpi_hold truncate R     rank R truncates the node region (found among
 *                           its descriptors under $WHARF_NODE_DIR) to 4 KiB,
 *                           as a co-resident process could; then everyone
 *                           communicates and must end with a clear message
 *   mpi_hold ring N         N round trips between ranks 0 and 1 with checked
 *                           payloads, then "ring ok"
 *   mpi_hold spawnfail S    MPI_Comm_spawn of 2 copies of itself; parents
 *                           and children meet in a barrier on the
 *                           intercommunicator (so both parents have printed),
 *                           then the spawned rank 1 exits with status S while
 *                           the parents and its sibling wait for it: wharfrun
 *                           must end the job naming it
 *   mpi_hold sspawn N       run as a singleton (no launcher): twice spawns
 *                           copies of itself with MPI_Comm_spawn_multiple
 *                           (1 and N-1 processes), sums over the
 *                           intercommunicator; the children check their
 *                           MPI_APPNUM and world size; then a spawn of a
 *                           missing program must fail with MPI_ERR_SPAWN;
 *                           prints "singleton spawn ok"
 *   mpi_hold sspawnfail S   a singleton spawns 2 copies; the second exits
 *                           with status S while the singleton waits for it:
 *                           the singleton must be ended, naming it
 *   mpi_hold appnum TAG     prints "rank R of N appnum A tag TAG sum S": its
 *                           MPI_APPNUM attribute and the sum of the ranks
 *                           over MPI_COMM_WORLD (every application's ranks) */
#include <dirent.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (!strcmp(argv[1], "spawnfail") && parent == MPI_COMM_NULL) {
        MPI_Comm ic;
        MPI_Comm_spawn(argv[0], argv + 1, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
        printf("parent %d spawned\n", rank);
        fflush(stdout);
        MPI_Barrier(ic);
        int x = 0;
        MPI_Recv(&x, 1, MPI_INT, 1, 0, ic, MPI_STATUS_IGNORE);
        printf("parent %d received %d from a dead child?\n", rank, x);
    } else if (!strcmp(argv[1], "spawnfail")) {
        MPI_Barrier(parent);
        if (rank == 1)
            exit(atoi(argv[2]));
        MPI_Barrier(MPI_COMM_WORLD);
        printf("child %d passed a barrier with a dead sibling?\n", rank);
    } else if (!strcmp(argv[1], "sspawn") && parent == MPI_COMM_NULL) {
        int n = atoi(argv[2]), bad = size != 1;
        for (int round = 0; round < 2; round++) {
            char *cmds[2] = {argv[0], argv[0]}, *args[] = {"sspawn", argv[2], NULL};
            char **argvs[2] = {args, args};
            int np[2] = {1, n - 1}, errs[16], rsize = 0, one = 1, sum = 0;
            MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
            MPI_Comm ic;
            MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_SELF, &ic, errs);
            MPI_Comm_remote_size(ic, &rsize);
            MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
            bad += rsize != n || sum != n;
            for (int i = 0; i < n && i < 16; i++)
                bad += errs[i] != MPI_SUCCESS;
            MPI_Comm_disconnect(&ic);
        }
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MPI_Comm ic;
        int e = MPI_Comm_spawn("/nonexistent/wharf-prog", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic,
                               MPI_ERRCODES_IGNORE), cls = -1;
        MPI_Error_class(e, &cls);
        bad += cls != MPI_ERR_SPAWN;
        printf("singleton spawn %s\n", bad ? "BAD" : "ok");
    } else if (!strcmp(argv[1], "sspawn")) {
        int *an, flag, one = 1, sum = 0, n = atoi(argv[2]);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &an, &flag);
        if (!flag || size != n || (*an != (rank == 0 ? 0 : 1)))
            printf("child %d of %d: appnum %d, want %d\n", rank, size, flag ? *an : -1, rank == 0 ? 0 : 1);
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent);
        MPI_Comm_disconnect(&parent);
    } else if (!strcmp(argv[1], "sspawnfail") && parent == MPI_COMM_NULL) {
        MPI_Comm ic;
        MPI_Comm_spawn(argv[0], argv + 1, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE);
        printf("singleton spawned\n");
        fflush(stdout);
        int x = 0;
        MPI_Recv(&x, 1, MPI_INT, 1, 0, ic, MPI_STATUS_IGNORE);
        printf("singleton received %d from a dead child?\n", x);
    } else if (!strcmp(argv[1], "sspawnfail")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1)
            exit(atoi(argv[2]));
        sleep(60);
    } else if (!strcmp(argv[1], "appnum")) {
        int *an, flag, sum = rank;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &an, &flag);
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("rank %d of %d appnum %d tag %s sum %d\n", rank, size, flag ? *an : -1, argv[2], sum);
    } else if (!strcmp(argv[1], "hold")) {
        printf("rank %d ready\n", rank);
        fflush(stdout);
        for (int i = 0; i < 600 && access(argv[2], F_OK) != 0; i++)
            usleep(100 * 1000);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(argv[1], "peerdie")) {
        int victim = atoi(argv[2]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == victim) {
            printf("rank %d dies\n", rank);
            fflush(stdout);
            raise(SIGKILL);
        }
        int x = 0;
        MPI_Recv(&x, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d received %d from a dead peer?\n", rank, x);
    } else if (!strcmp(argv[1], "truncate")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == atoi(argv[2])) {
            const char *dir = getenv("WHARF_NODE_DIR");
            printf("rank %d truncates\n", rank);
            fflush(stdout);
            DIR *d = opendir("/proc/self/fd");
            struct dirent *e;
            int done = 0;
            while (d && dir && (e = readdir(d))) {
                char p[300], l[1024];
                snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
                ssize_t n = readlink(p, l, sizeof l - 1);
                if (n <= 0)
                    continue;
                l[n] = '\0';
                if (!strncmp(l, dir, strlen(dir)) && ftruncate(atoi(e->d_name), 4096) == 0)
                    done++;
            }
            if (d)
                closedir(d);
            printf("rank %d truncated %d region(s)\n", rank, done);
            fflush(stdout);
        }
        for (int i = 0; i < 100; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        printf("rank %d communicated through a truncated region?\n", rank);
    } else if (!strcmp(argv[1], "ring") && size >= 2) {
        int n = atoi(argv[2]), bad = 0;
        for (int i = 0; i < n && rank < 2; i++) {
            int v = i * 7 + 1, got = -1;
            if (rank == 0) {
                MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&got, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad += got != v + 1;
            } else {
                MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad += got != v;
                got++;
                MPI_Send(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            }
        }
        if (rank == 0)
            printf("ring %s\n", bad ? "BAD" : "ok");
    }
    MPI_Finalize();
    return 0;
}
