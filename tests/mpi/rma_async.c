/* Passive-target progress without the target calling MPI
 * (WHARF_ASYNC_PROGRESS=1, set here before MPI_Init): the target computes
 * outside MPI (a sleep loop) while every other rank locks its window, puts,
 * gets, accumulates, fetch-and-ops and unlocks; then one origin puts a flag
 * the target watches in its own memory.  The origins must finish, and the
 * flag must arrive, long before the target would have called MPI again
 * (WAIT_S); without the progress thread the lock request alone waits for it.
 * Windows: Win_create (private memory: active messages) and Win_allocate.
 * Run with argument "off" (no thread) it fails, as it must. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_S 8.0   /* the target stays out of MPI this long at most */
#define LIMIT_S 5.0  /* the origins must be done well before */
#define MAGIC 0x5eed5eedLL

static int rank, nranks, fails;

#define CHECK_RANK rank
#define CHECK_FAILS fails
#include "count_check.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* window of int64: [0] flag, [1] accumulate counter, [2..2+nranks) one slot per origin */
static void run(MPI_Win win, volatile int64_t *mem, const char *what)
{
    const int target = 0;
    if (rank == target)
        for (int i = 0; i < 2 + nranks; i++)
            mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        /* compute outside MPI until the flag arrives (or WAIT_S pass) */
        double t0 = now();
        while (__atomic_load_n(&mem[0], __ATOMIC_ACQUIRE) != MAGIC && now() - t0 < WAIT_S) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        double dt = now() - t0;
        CHECK(mem[0] == MAGIC, "%s: the flag did not arrive while the target stayed out of MPI (%.1f s)", what, dt);
    } else {
        double t0 = now();
        int64_t v = 1000 + rank, back = 0, one = 1, old = -1;
        for (int it = 0; it < 5; it++) {
            MPI_Win_lock(it % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Put(&v, 1, MPI_INT64_T, target, 2 + rank, 1, MPI_INT64_T, win);
            MPI_Win_flush(target, win);
            MPI_Get(&back, 1, MPI_INT64_T, target, 2 + rank, 1, MPI_INT64_T, win);
            MPI_Accumulate(&one, 1, MPI_INT64_T, target, 1, 1, MPI_INT64_T, MPI_SUM, win);
            MPI_Fetch_and_op(&one, &old, MPI_INT64_T, target, 1, MPI_SUM, win);
            MPI_Win_unlock(target, win);
            CHECK(back == v, "%s: got %lld back, put %lld", what, (long long)back, (long long)v);
            CHECK(old >= 0, "%s: fetch-and-op returned %lld", what, (long long)old);
        }
        double dt = now() - t0;
        CHECK(dt < LIMIT_S, "%s: the origin took %.1f s against a target outside MPI", what, dt);
        int64_t flag = MAGIC;
        if (rank == nranks - 1) {
            /* every origin is through once the counter reaches 10 per origin:
             * the last rank polls it, then raises the flag */
            int64_t c = 0, zero = 0;
            double t1 = now();
            while (c < 10LL * (nranks - 1) && now() - t1 < LIMIT_S) {
                MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
                MPI_Fetch_and_op(&zero, &c, MPI_INT64_T, target, 1, MPI_NO_OP, win);
                MPI_Win_unlock(target, win);
            }
            CHECK(c == 10LL * (nranks - 1), "%s: counter %lld, expected %lld", what, (long long)c,
                  10LL * (nranks - 1));
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
            MPI_Put(&flag, 1, MPI_INT64_T, target, 0, 1, MPI_INT64_T, win);
            MPI_Win_unlock(target, win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target) {
        CHECK(mem[1] == 10LL * (nranks - 1), "%s: counter %lld, expected %lld", what, (long long)mem[1],
              10LL * (nranks - 1));
        for (int r = 1; r < nranks; r++)
            CHECK(mem[2 + r] == 1000 + r, "%s: slot %d holds %lld", what, r, (long long)mem[2 + r]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (!(argc > 1 && !strcmp(argv[1], "off"))) /* "off": shows the test fails without the thread */
        setenv("WHARF_ASYNC_PROGRESS", "1", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    size_t bytes = sizeof(int64_t) * (size_t)(2 + nranks);
    MPI_Win win;
    int64_t *own = calloc(1, bytes);
    MPI_Win_create(own, (MPI_Aint)bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, own, "Win_create");
    MPI_Win_free(&win);
    free(own);
    int64_t *mem;
    MPI_Win_allocate((MPI_Aint)bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    run(win, mem, "Win_allocate");
    MPI_Win_free(&win);
    int tf;
    MPI_Allreduce(&fails, &tf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_async: %s (%d ranks)\n", tf ? "FAILED" : "ok", nranks);
    MPI_Finalize();
    return tf != 0;
}
