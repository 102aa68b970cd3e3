/* A rank SIGKILLed inside a passive-target epoch (issue 9; tests/arch/rank_kill.py
 * checks that the job ends with an error, quickly, names the dead rank and leaves
 * nothing in the node directory).
 *   rma_kill target  the last rank, target of every other rank's shared lock, dies
 *                    while they put, get, accumulate and flush to it;
 *   rma_kill holder  the last rank dies holding an exclusive lock on rank 0's window
 *                    while the others wait for that lock in MPI_Win_lock. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int holder = argc > 1 && strcmp(argv[1], "holder") == 0;
    int victim = np - 1;
    long *base;
    MPI_Win win;
    MPI_Win_allocate(1024 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, 1024 * sizeof(long));
    MPI_Barrier(MPI_COMM_WORLD);

    if (holder) {
        if (me == victim) {
            long v = 42;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
            MPI_Win_flush(0, win);
            for (int r = 0; r < np - 1; r++)
                MPI_Send(&v, 1, MPI_LONG, r, 7, MPI_COMM_WORLD);
            nap_ms(300); /* let the others block in MPI_Win_lock */
            fprintf(stderr, "rma_kill: rank %d dies holding the lock\n", me);
            raise(SIGKILL);
        } else {
            long v;
            MPI_Recv(&v, 1, MPI_LONG, victim, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            printf("rma_kill: rank %d got a lock whose holder never released it\n", me);
            MPI_Win_unlock(0, win);
        }
    } else {
        if (me == victim) {
            MPI_Barrier(MPI_COMM_WORLD);
            nap_ms(200); /* the others are inside their epochs now */
            fprintf(stderr, "rma_kill: rank %d dies as a passive target\n", me);
            raise(SIGKILL);
        } else {
            long v = me, got = 0, one = 1;
            MPI_Win_lock(MPI_LOCK_SHARED, victim, 0, win);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            /* bounded: the shared-memory paths complete without the target */
            for (long it = 0; it < 2000000 && MPI_Wtime() - t0 < 5.0; it++) {
                MPI_Put(&v, 1, MPI_LONG, victim, me, 1, MPI_LONG, win);
                MPI_Accumulate(&one, 1, MPI_LONG, victim, 512, 1, MPI_LONG, MPI_SUM, win);
                MPI_Get(&got, 1, MPI_LONG, victim, me, 1, MPI_LONG, win);
                MPI_Win_flush(victim, win);
            }
            MPI_Win_unlock(victim, win);
        }
    }
    /* collective over the dead rank: must not complete */
    MPI_Win_free(&win);
    printf("rma_kill: finished, which it must not\n");
    MPI_Finalize();
    return 0;
}
