/* The large shared-memory collectives (shm-large: bcast, reduce, allreduce
 * above WHARF_COLL_SHM_MAX, in chunks of WHARF_COLL_SHM_CHUNK) called with
 * counts that need different numbers of chunks on different ranks
 * (erroneous): no rank hangs, the ranks that must notice fail with the
 * right class, and the communicator runs correct collectives afterwards.
 *   bcast: the root and all but the last rank pass B elements, the last one A
 *          (< B): the last rank fails with MPI_ERR_TRUNCATE, the others succeed
 *          with the root's data;
 *   allreduce: the same counts: every rank fails (each sees every size);
 *   reduce to rank n-1: rank 0 passes A, the others B: every rank fails.
 * Three rounds, so the chunk and step counters stay in step across errors.
 * Over the network channel (the point-to-point algorithms) only the ranks
 * the algorithm routes the wrong size through must fail: there a reduce
 * fails on its root, and other ranks may fail or succeed (with right data). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define A 60000
#define B 100000
#define N 200000

static int errs;
#define ANY (-1) /* failure or success both allowed */

static void expect(const char *what, int rank, int rc, int want_fail, int want_class)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (want_fail == ANY)
        return;
    if (want_fail ? (rc == MPI_SUCCESS || (want_class && cls != want_class)) : rc != MPI_SUCCESS) {
        printf("rank %d: %s returned class %d, expected %s %d\n", rank, what, cls, want_fail ? "failure" : "success",
               want_class);
        errs++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    const char *ch = getenv("WHARF_CHANNEL"), *shm = getenv("WHARF_COLL_SHM");
    int p2p = (ch && !strcmp(ch, "net")) || (shm && !strcmp(shm, "0"));
    for (int round = 0; round < 3; round++) { /* every rank runs every round: no early exit */
        int last = r == n - 1;
        for (int i = 0; i < N; i++)
            a[i] = r == 0 ? i + round : -1;
        int rc = MPI_Bcast(a, last ? A : B, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        expect("bcast", r, rc, p2p && !last ? ANY : last, MPI_ERR_TRUNCATE);
        for (int i = 0; i < (last ? A : B) && rc == MPI_SUCCESS; i++)
            if (a[i] != i + round) {
                printf("rank %d: bcast element %d is %g\n", r, i, a[i]);
                errs++;
                break;
            }
        rc = MPI_Allreduce(a, b, last ? A : B, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        expect("allreduce", r, rc, 1, last ? MPI_ERR_TRUNCATE : 0);
        rc = MPI_Reduce(a, b, r == 0 ? A : B, MPI_DOUBLE, MPI_SUM, n - 1, MPI_COMM_WORLD);
        expect("reduce", r, rc, p2p && r != n - 1 ? ANY : 1, r == 0 ? MPI_ERR_TRUNCATE : 0);
        /* the communicator still works: large and small, correct data */
        for (int i = 0; i < N; i++)
            a[i] = r == 0 ? 2.0 * i : -1;
        expect("bcast after", r, MPI_Bcast(a, N, MPI_DOUBLE, 0, MPI_COMM_WORLD), 0, 0);
        for (int i = 0; i < N; i++)
            a[i] = r + i;
        expect("allreduce after", r, MPI_Allreduce(a, b, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), 0, 0);
        for (int i = 0; i < N; i++)
            if (b[i] != (double)n * i + n * (n - 1) / 2) {
                printf("rank %d: allreduce after the errors: element %d is %g\n", r, i, b[i]);
                errs++;
                break;
            }
        int x = r, s = 0;
        expect("small allreduce after", r, MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), 0, 0);
        if (s != n * (n - 1) / 2) {
            printf("rank %d: small allreduce after the errors gave %d\n", r, s);
            errs++;
        }
    }
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r == 0 && all == 0)
        printf(" No Errors\n");
    free(a);
    free(b);
    MPI_Finalize();
    return all != 0;
}
