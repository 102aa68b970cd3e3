/* One-sided operations that the network channel can move with libfabric
 * (src/rma/fabric.c), checked on values whatever path they take:
 *  - non-contiguous puts and gets (strided origin, strided target, both) on
 *    a Win_create window over malloc'ed memory;
 *  - atomicity: every rank, the target included, increments one int64 with
 *    MPI_Fetch_and_op, one int32 with MPI_Accumulate through a strided
 *    target type, one uint64 with a compare-and-swap loop, and one double
 *    with MPI_Accumulate (exact sums), all concurrently under lock_all;
 *    MPI_Get_accumulate with MPI_NO_OP reads in between; MPI_MAXLOC on a
 *    pair type (never a libfabric atomic) on a separate location.
 * tests/rma/CMakeLists.part.cmake runs it over every channel and, with
 * WHARF_REPORT=channels, checks which path the network variant took. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 200
#define N 64

static int fails;
#define CHECK_RANK rank
#define CHECK_FAILS fails
#include "count_check.h"

/* window layout (bytes) */
#define OFF_I64 0     /* fetch_and_op counter */
#define OFF_U64 8     /* CAS counter */
#define OFF_DBL 16    /* double sum */
#define OFF_I32 32    /* 4 int32, every other one accumulated (strided) */
#define OFF_PAIR 64   /* MPI_DOUBLE_INT for MAXLOC */
#define OFF_DATA 1024 /* 2*N ints for strided put/get */
#define WIN_BYTES (OFF_DATA + 2 * N * (int)sizeof(int))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char *mem = calloc(1, WIN_BYTES);
    MPI_Win win;
    MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rank + 1) % n;

    /* ---- non-contiguous put/get to the right neighbour ---- */
    MPI_Datatype vec, tvec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec); /* every other int */
    MPI_Type_commit(&vec);
    MPI_Type_vector(N / 4, 4, 8, MPI_INT, &tvec); /* blocks of 4 ints, 4 apart */
    MPI_Type_commit(&tvec);
    int src[2 * N], dst[2 * N];
    for (int i = 0; i < 2 * N; i++)
        src[i] = rank * 1000 + i;
    MPI_Win_fence(0, win);
    /* strided origin -> contiguous target ints [0, N) */
    MPI_Put(src, 1, vec, right, OFF_DATA, N, MPI_INT, win);
    MPI_Win_fence(0, win);
    int *d = (int *)(void *)(mem + OFF_DATA);
    int left = (rank - 1 + n) % n;
    for (int i = 0; i < N; i++)
        CHECK(d[i] == left * 1000 + 2 * i, "strided-origin put: slot %d = %d, want %d", i, d[i], left * 1000 + 2 * i);
    MPI_Win_fence(0, win);
    /* contiguous origin -> strided target (blocks of 4) */
    memset(mem + OFF_DATA, 0, 2 * N * sizeof(int));
    MPI_Win_fence(0, win);
    MPI_Put(src, N, MPI_INT, right, OFF_DATA, 1, tvec, win);
    MPI_Win_fence(0, win);
    for (int i = 0, k = 0; i < 2 * N; i++) {
        int in_block = (i % 8) < 4;
        int want = in_block ? left * 1000 + k : 0;
        CHECK(d[i] == want, "strided-target put: slot %d = %d, want %d", i, d[i], want);
        k += in_block;
    }
    MPI_Win_fence(0, win);
    /* strided get from a strided target into a strided origin */
    memset(dst, -1, sizeof dst);
    MPI_Get(dst, 1, vec, right, OFF_DATA, 1, tvec, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++) {
        int want = rank * 1000 + i; /* what I put into right's blocks */
        CHECK(dst[2 * i] == want, "strided get: slot %d = %d, want %d", 2 * i, dst[2 * i], want);
        CHECK(dst[2 * i + 1] == -1, "strided get wrote the gap %d", 2 * i + 1);
    }
    MPI_Win_fence(0, win);

    /* ---- concurrent accumulates to rank 0 from everyone, rank 0 included ---- */
    MPI_Datatype every_other;
    MPI_Type_vector(2, 1, 2, MPI_INT32_T, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Win_lock_all(0, win);
    int64_t one = 1, old64;
    int32_t ones[2] = {1, 1};
    double half = 0.5;
    for (int it = 0; it < ITERS; it++) {
        MPI_Fetch_and_op(&one, &old64, MPI_INT64_T, 0, OFF_I64, MPI_SUM, win);
        MPI_Accumulate(ones, 2, MPI_INT32_T, 0, OFF_I32, 1, every_other, MPI_SUM, win);
        MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, OFF_DBL, 1, MPI_DOUBLE, MPI_SUM, win);
        /* increment by compare-and-swap (bounded retries) */
        uint64_t cur = 0, seen;
        MPI_Get_accumulate(NULL, 0, MPI_UINT64_T, &cur, 1, MPI_UINT64_T, 0, OFF_U64, 1, MPI_UINT64_T, MPI_NO_OP,
                           win);
        MPI_Win_flush(0, win);
        for (int tries = 0; tries < 100000; tries++) {
            uint64_t next = cur + 1;
            MPI_Compare_and_swap(&next, &cur, &seen, MPI_UINT64_T, 0, OFF_U64, win);
            MPI_Win_flush(0, win);
            if (seen == cur)
                break;
            cur = seen;
        }
        struct {
            double v;
            int r;
        } pr = {(double)((rank * 7 + it) % 13), rank};
        MPI_Accumulate(&pr, 1, MPI_DOUBLE_INT, 0, OFF_PAIR, 1, MPI_DOUBLE_INT, MPI_MAXLOC, win);
        MPI_Win_flush(0, win);
        CHECK(old64 >= 0 && old64 < (int64_t)n * ITERS, "fetch_and_op returned %lld", (long long)old64);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t c64;
        uint64_t u64;
        double dv;
        int32_t i32[4];
        memcpy(&c64, mem + OFF_I64, 8);
        memcpy(&u64, mem + OFF_U64, 8);
        memcpy(&dv, mem + OFF_DBL, 8);
        memcpy(i32, mem + OFF_I32, 16);
        CHECK(c64 == (int64_t)n * ITERS, "fetch_and_op counter %lld, want %lld", (long long)c64,
              (long long)n * ITERS);
        CHECK(u64 == (uint64_t)n * ITERS, "CAS counter %llu, want %llu", (unsigned long long)u64,
              (unsigned long long)n * ITERS);
        CHECK(dv == 0.5 * n * ITERS, "double sum %g, want %g", dv, 0.5 * n * ITERS);
        CHECK(i32[0] == n * ITERS && i32[2] == n * ITERS && i32[1] == 0 && i32[3] == 0,
              "strided int32 sums %d %d %d %d, want %d 0 %d 0", i32[0], i32[1], i32[2], i32[3], n * ITERS, n * ITERS);
        double pv;
        int pr;
        memcpy(&pv, mem + OFF_PAIR, sizeof pv);
        memcpy(&pr, mem + OFF_PAIR + sizeof(double), sizeof pr);
        CHECK(pv == 12.0, "MAXLOC value %g, want 12", pv);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&tvec);
    MPI_Type_free(&every_other);
    MPI_Win_free(&win);
    free(mem);
    int all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("rma_fabric: %s (%d ranks)\n", all ? "FAILED" : "ok", n);
    MPI_Finalize();
    return all ? 1 : 0;
}
