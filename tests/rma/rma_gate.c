/* The bulk gate (src/rma/atomic.c): CPU-atomic accumulates that skip the lock
 * word while no bulk accumulate is in flight must never lose an update to a
 * bulk accumulate (a plain pass) running at the same moment on the same
 * elements.  Every rank hammers a few "hot" elements of rank 0's window with
 * MPI_Fetch_and_op, MPI_Compare_and_swap loops and single-element
 * MPI_Accumulate, while odd ranks (and rank 0 into its own memory) at the
 * same time add 1 to every element with bulk accumulates that cover the hot
 * elements.  Rank 0 checks exact totals, and that every fetch-and-op result
 * and compare-and-swap sequence is consistent (each value seen once).  Then
 * a tight race of fetch-and-op against back-to-back bulk passes on one element.
 * Arguments: "long" runs more rounds (stress). */
#include <string.h>

#include "p2p_check.h"

enum { N = 1024, HOT = 4 };

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    int iters = argc > 1 && !strcmp(argv[1], "long") ? 4000 : 600;
    int64_t *mem;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(N * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < N; i++)
        mem[i] = 0;
    int64_t *ones = malloc(N * sizeof(int64_t));
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    int bulk = me % 2 == 1 || me == 0; /* ranks that also run bulk accumulates */
    int nbulk = 0, ncas = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    p2p_setstep("atomics against bulk passes");
    /* fetch-and-op results on hot element 0 must all differ: an update lost
     * to a plain pass shows up as a repeated value or a wrong total */
    int64_t *seen = malloc((size_t)iters * sizeof(int64_t));
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < iters; it++) {
        int64_t one = 1, got = -1;
        if (bulk && it % 3 == 0) {
            MPI_OK(MPI_Accumulate(ones, N, MPI_INT64_T, 0, 0, N, MPI_INT64_T, MPI_SUM, win));
            nbulk++;
        }
        MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win)); /* the result is defined once the operation completed */
        seen[it] = got;
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT64_T, 0, 1 + it % (HOT - 1), 1, MPI_INT64_T, MPI_SUM, win));
        if (it % 4 == 0) { /* compare-and-swap increment of the last hot element */
            int64_t cur = 0, old = -1;
            for (int tries = 0; tries < 1000000; tries++) {
                int64_t next = cur + 1;
                MPI_OK(MPI_Compare_and_swap(&next, &cur, &old, MPI_INT64_T, 0, HOT, win));
                MPI_OK(MPI_Win_flush(0, win));
                if (old == cur)
                    break;
                cur = old;
            }
            CHECK(old == cur, "compare-and-swap never succeeded");
            ncas++;
        }
        if (it % 16 == 0)
            MPI_OK(MPI_Win_flush(0, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    for (int i = 1; i < iters; i++) /* one origin's results on one element only grow */
        CHECK(seen[i] > seen[i - 1], "fetch-and-op %d returned %lld after %lld (an update was lost or repeated)", i,
              (long long)seen[i], (long long)seen[i - 1]);
    int counts[2] = {nbulk, ncas}, sums[2];
    MPI_OK(MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0) {
        int64_t b = sums[0];
        CHECK(mem[0] == b + (int64_t)n * iters, "hot element 0 (fetch-and-op) = %lld, want %lld", (long long)mem[0],
              (long long)(b + (int64_t)n * iters));
        int64_t acc = 0;
        for (int i = 1; i < HOT; i++)
            acc += mem[i] - b;
        CHECK(acc == (int64_t)n * iters, "hot elements 1..%d (accumulate) hold %lld above the bulk sums, want %lld",
              HOT - 1, (long long)acc, (long long)n * iters);
        CHECK(mem[HOT] == b + sums[1], "hot element %d (compare-and-swap) = %lld, want %lld", HOT,
              (long long)mem[HOT], (long long)(b + sums[1]));
        for (int i = HOT + 1; i < N; i++)
            CHECK(mem[i] == b, "element %d = %lld, want %lld (a bulk update was lost)", i, (long long)mem[i],
                  (long long)b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* a race as tight as it gets: odd ranks apply bulk accumulates of exactly
     * WHARF_RMA_ACC_BULK bytes (128 int64) over element 0 back to back while
     * even ranks hit element 0 with fetch-and-op as fast as they can; a
     * fetch-and-op landing between a plain pass's load and store of element 0
     * would be lost */
    p2p_setstep("fetch-and-op against back-to-back bulk passes");
    MPI_OK(MPI_Win_fence(0, win));
    if (me == 0)
        mem[0] = 0;
    MPI_OK(MPI_Win_fence(0, win));
    int rounds = iters > 600 ? 400000 : 100000, nb = 0, nf = 0;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < rounds; it++) {
        if (me % 2) {
            MPI_OK(MPI_Accumulate(ones, 128, MPI_INT64_T, 0, 0, 128, MPI_INT64_T, MPI_SUM, win));
            nb++;
        } else {
            int64_t one = 1, got;
            MPI_OK(MPI_Fetch_and_op(&one, &got, MPI_INT64_T, 0, 0, MPI_SUM, win));
            nf++;
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    counts[0] = nb;
    counts[1] = nf;
    MPI_OK(MPI_Reduce(counts, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        CHECK(mem[0] == (int64_t)sums[0] + sums[1], "element 0 = %lld after %d bulk passes and %d fetch-and-ops",
              (long long)mem[0], sums[0], sums[1]);
    MPI_OK(MPI_Win_free(&win));
    free(seen);
    free(ones);
    MPI_Finalize();
    if (me == 0)
        printf("rma_gate: OK on %d ranks\n", n);
    return 0;
}
