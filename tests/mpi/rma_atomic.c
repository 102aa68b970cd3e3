/* Atomicity of one-sided accumulates: every rank hits the same locations of
 * rank 0's window with mixes of MPI_Fetch_and_op, MPI_Accumulate (one and
 * several elements), MPI_Get_accumulate and MPI_Compare_and_swap loops, and
 * the totals must be exact; the values fetch-and-add returns on a counter must
 * be exactly 0..total-1 (no duplicates: no lost update).  Window flavors:
 * Win_allocate (node region among co-residents: origins apply directly with
 * CPU atomics, remote origins through the target's handler), Win_create
 * (private memory: the target's handler), Win_create inside an MPI_Alloc_mem
 * block (node region among co-residents), Win_allocate_shared (when the ranks
 * share the node).  Types: int64, int32, uint8 (atomics), an int64 at a
 * misaligned address and a double (the lock word).  argv[1] == "lock" runs
 * with WHARF_RMA_ATOMICS=0 (every accumulate under the lock word). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 200

static int rank, nranks, fails;

#define CHECK_RANK rank
#define CHECK_FAILS fails
#include "count_check.h"

/* window layout (bytes, disp_unit 1) */
#define OFF_CTR 0     /* int64 counter: fetch-and-add +1 only */
#define OFF_SUM 8     /* int64[4]: mixed SUM accumulates, fops, get-accs */
#define OFF_MAX 40    /* int64: MAX */
#define OFF_CAS 48    /* int64: CAS-loop increments */
#define OFF_I32 56    /* int32[2]: SUM */
#define OFF_U8 64     /* uint8[4]: SUM (wraps mod 256) */
#define OFF_MIS 69    /* int64 at a misaligned address: SUM (lock word) */
#define OFF_DBL 80    /* double: SUM (lock word) */
#define WIN_BYTES 128

static void run(MPI_Win win, char *mem, const char *what)
{
    int64_t one = 1, ones[4] = {1, 1, 1, 1}, res[4];
    int64_t *got = malloc(sizeof(int64_t) * ITERS);
    int32_t i32[2];
    uint8_t u8[4] = {1, 1, 1, 1};
    double d1 = 1.0;
    if (rank == 0)
        memset(mem, 0, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < ITERS; i++) {
        MPI_Fetch_and_op(&one, &got[i], MPI_INT64_T, 0, OFF_CTR, MPI_SUM, win);
        /* SUM location: fop +1, 4-element accumulate +1, 2-element get-acc +1 */
        MPI_Fetch_and_op(&one, &res[0], MPI_INT64_T, 0, OFF_SUM, MPI_SUM, win);
        MPI_Accumulate(ones, 4, MPI_INT64_T, 0, OFF_SUM, 4, MPI_INT64_T, MPI_SUM, win);
        MPI_Get_accumulate(ones, 2, MPI_INT64_T, res, 2, MPI_INT64_T, 0, OFF_SUM, 2, MPI_INT64_T, MPI_SUM, win);
        MPI_Fetch_and_op(NULL, &res[2], MPI_INT64_T, 0, OFF_SUM, MPI_NO_OP, win);
        int64_t m = (int64_t)rank * 100000 + i;
        MPI_Fetch_and_op(&m, &res[3], MPI_INT64_T, 0, OFF_MAX, MPI_MAX, win);
        /* CAS loop increment */
        int64_t cur = 0, want, found;
        for (int k = 0; k < 100000; k++) {
            want = cur + 1;
            MPI_Compare_and_swap(&want, &cur, &found, MPI_INT64_T, 0, OFF_CAS, win);
            MPI_Win_flush(0, win);
            if (found == cur)
                break;
            cur = found;
        }
        i32[0] = 1;
        i32[1] = 1 << (rank % 31);
        MPI_Accumulate(i32, 2, MPI_INT32_T, 0, OFF_I32, 2, MPI_INT32_T, MPI_SUM, win);
        MPI_Accumulate(u8, 4, MPI_UINT8_T, 0, OFF_U8, 4, MPI_UINT8_T, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &res[0], MPI_INT64_T, 0, OFF_MIS, MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_INT64_T, 0, OFF_MIS, 1, MPI_INT64_T, MPI_SUM, win);
        MPI_Accumulate(&d1, 1, MPI_DOUBLE, 0, OFF_DBL, 1, MPI_DOUBLE, MPI_SUM, win);
        if (i % 16 == 0)
            MPI_Win_flush(0, win);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the counter's fetched values: a permutation of 0..total-1 */
    int64_t total = (int64_t)nranks * ITERS;
    int64_t *all = rank == 0 ? malloc(sizeof(int64_t) * (size_t)total) : NULL;
    MPI_Gather(got, ITERS, MPI_INT64_T, all, ITERS, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)total, 1);
        int dup = 0, out = 0;
        for (int64_t k = 0; k < total; k++) {
            if (all[k] < 0 || all[k] >= total)
                out++;
            else if (seen[all[k]]++)
                dup++;
        }
        CHECK(!dup && !out, "%s: fetch-and-add returned %d duplicates and %d values out of range", what, dup, out);
        free(seen);
        free(all);
        int64_t v[8];
        memcpy(v, mem, sizeof v);
        CHECK(v[0] == total, "%s: counter %lld, expected %lld", what, (long long)v[0], (long long)total);
        CHECK(v[1] == 3 * total, "%s: sum[0] %lld, expected %lld", what, (long long)v[1], (long long)(3 * total));
        CHECK(v[2] == 2 * total, "%s: sum[1] %lld, expected %lld", what, (long long)v[2], (long long)(2 * total));
        CHECK(v[3] == total && v[4] == total, "%s: sum[2..3] %lld %lld, expected %lld", what, (long long)v[3],
              (long long)v[4], (long long)total);
        int64_t mx = (int64_t)(nranks - 1) * 100000 + ITERS - 1;
        CHECK(v[5] == mx, "%s: max %lld, expected %lld", what, (long long)v[5], (long long)mx);
        CHECK(v[6] == total, "%s: CAS counter %lld, expected %lld", what, (long long)v[6], (long long)total);
        int32_t w32[2];
        memcpy(w32, mem + OFF_I32, sizeof w32);
        CHECK(w32[0] == total, "%s: int32 sum %d, expected %lld", what, w32[0], (long long)total);
        int32_t x = 0;
        for (int r = 0; r < nranks; r++)
            x += (int32_t)(1u << (r % 31)) * ITERS;
        CHECK(w32[1] == x, "%s: int32 sum of bits %d, expected %d", what, w32[1], x);
        uint8_t b[4];
        memcpy(b, mem + OFF_U8, 4);
        for (int k = 0; k < 4; k++)
            CHECK(b[k] == (uint8_t)total, "%s: uint8[%d] %u, expected %u", what, k, b[k], (unsigned)(uint8_t)total);
        int64_t mis;
        memcpy(&mis, mem + OFF_MIS, 8);
        CHECK(mis == 2 * total, "%s: misaligned sum %lld, expected %lld", what, (long long)mis, (long long)(2 * total));
        double dd;
        memcpy(&dd, mem + OFF_DBL, 8);
        CHECK(dd == (double)total, "%s: double sum %g, expected %lld", what, dd, (long long)total);
    }
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "lock"))
        setenv("WHARF_RMA_ATOMICS", "0", 1);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    char *mem;
    MPI_Win win;

    MPI_Win_allocate(rank == 0 ? WIN_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    run(win, mem, "Win_allocate");
    MPI_Win_free(&win);

    char *own = calloc(1, WIN_BYTES);
    MPI_Win_create(own, rank == 0 ? WIN_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, own, "Win_create");
    MPI_Win_free(&win);
    free(own);

    /* Win_create inside an MPI_Alloc_mem block (node heap among co-residents:
     * a node-region window, the block's lock word), not at its start */
    char *am;
    MPI_Alloc_mem(WIN_BYTES + 64, MPI_INFO_NULL, &am);
    MPI_Win_create(am + 64, rank == 0 ? WIN_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    run(win, am + 64, "Win_create on MPI_Alloc_mem");
    MPI_Win_free(&win);
    MPI_Free_mem(am);

    /* shared windows where the ranks share a node (else MPI_ERR_RMA_SHARED) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared(rank == 0 ? WIN_BYTES : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    int ok = rc == MPI_SUCCESS, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all_ok) {
        run(win, mem, "Win_allocate_shared");
        MPI_Win_free(&win);
    } else if (ok) {
        MPI_Win_free(&win);
    }

    int tf;
    MPI_Allreduce(&fails, &tf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_atomic: %s (%d ranks, %s)\n", tf ? "FAILED" : "ok", nranks, argc > 1 ? argv[1] : "atomics");
    MPI_Finalize();
    return tf != 0;
}
