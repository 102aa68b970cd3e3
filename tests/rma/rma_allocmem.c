/* MPI_Alloc_mem blocks larger than the old 8 MiB limit serve MPI_Win_create
 * windows from the node heap (src/rma/win.c, WHARF_ALLOC_MEM_NODE): the
 * shape of bench/suite's wh_put_bw (an origin buffer and a window of 4 MiB
 * slots, both from MPI_Alloc_mem, plus a page), 4 MiB puts and gets to the
 * right neighbour under lock/flush, every byte checked.  Then the bounds:
 * blocks allocated until well past this rank's share (the rest must come
 * from malloc, every one usable), freed out of order and allocated again;
 * and a window over an MPI_Alloc_mem block made after MPI_Win_allocate
 * windows filled the heap (with WHARF_NODE_HEAP=64m: exhausted, so private
 * memory).  tests/rma/CMakeLists.part.cmake checks the path each
 * configuration takes with WHARF_REPORT=channels. */
#include <string.h>

#include "p2p_check.h"

#define SLOT ((size_t)4 << 20)
#define NSLOT 4
#define PG 4096

/* puts and gets of SLOT bytes into every slot of the right neighbour's window over wbase */
static void slots(const char *what, unsigned char *wbase, unsigned char *local, unsigned seed)
{
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;
    MPI_Win win;
    p2p_setstep("%s: MPI_Win_create", what);
    memset(wbase, 0, SLOT * NSLOT);
    MPI_OK(MPI_Win_create(wbase, (MPI_Aint)(SLOT * NSLOT), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    p2p_setstep("%s: puts", what);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < NSLOT; k++) {
            p2p_fill(local + (size_t)k * SLOT, SLOT, seed + (unsigned)(me * 16 + k + round * 8));
            MPI_OK(MPI_Put(local + (size_t)k * SLOT, (int)SLOT, MPI_BYTE, right, (MPI_Aint)(k * SLOT), (int)SLOT,
                           MPI_BYTE, win));
            MPI_OK(MPI_Win_flush(right, win));
        }
    MPI_OK(MPI_Win_unlock(right, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    for (int k = 0; k < NSLOT; k++) {
        size_t bad = p2p_verify(wbase + (size_t)k * SLOT, SLOT, seed + (unsigned)(left * 16 + k + 8));
        CHECK(bad == (size_t)-1, "%s: window slot %d byte %zu wrong after the puts", what, k, bad);
    }
    MPI_OK(MPI_Win_unlock(me, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    p2p_setstep("%s: gets", what);
    memset(local, 0, SLOT * NSLOT);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    for (int k = NSLOT - 1; k >= 0; k--)
        MPI_OK(MPI_Get(local + (size_t)k * SLOT, (int)SLOT, MPI_BYTE, right, (MPI_Aint)(k * SLOT), (int)SLOT,
                       MPI_BYTE, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Win_unlock(right, win));
    for (int k = 0; k < NSLOT; k++) {
        size_t bad = p2p_verify(local + (size_t)k * SLOT, SLOT, seed + (unsigned)(me * 16 + k + 8));
        CHECK(bad == (size_t)-1, "%s: got slot %d byte %zu wrong", what, k, bad);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_free(&win));
}

static unsigned char *amem(size_t len)
{
    void *p = NULL;
    MPI_OK(MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &p));
    CHECK(p != NULL, "MPI_Alloc_mem(%zu) returned NULL", len);
    CHECK(((uintptr_t)p & 7) == 0, "MPI_Alloc_mem(%zu) returned %p, not 8-byte aligned", len, p);
    return p;
}

/* page-aligned part of a block of len + PG bytes */
static unsigned char *pgalign(unsigned char *p)
{
    return (unsigned char *)(((uintptr_t)p + PG - 1) & ~(uintptr_t)(PG - 1));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    /* 1. the benchmark's shape: origin buffer first, then the window */
    unsigned char *lb = amem(SLOT * NSLOT + PG), *wb = amem(SLOT * NSLOT + PG);
    slots("bench shape", pgalign(wb), pgalign(lb), 1);
    MPI_OK(MPI_Free_mem(wb));
    MPI_OK(MPI_Free_mem(lb));

    /* 2. many blocks, well past any share of the node heap: all usable */
    enum { NB = 24 };
    const size_t bsz = ((size_t)12 << 20) + 100;
    unsigned char *b[NB];
    p2p_setstep("blocks: allocate %d of %zu bytes", NB, bsz);
    for (int i = 0; i < NB; i++) {
        b[i] = amem(bsz);
        p2p_fill(b[i], bsz, 100u + (unsigned)i);
    }
    for (int i = 0; i < NB; i++) {
        size_t bad = p2p_verify(b[i], bsz, 100u + (unsigned)i);
        CHECK(bad == (size_t)-1, "block %d byte %zu overwritten", i, bad);
    }
    p2p_setstep("blocks: free out of order, allocate again");
    for (int i = 0; i < NB; i += 2)
        MPI_OK(MPI_Free_mem(b[i]));
    for (int i = 0; i < NB; i += 2) {
        b[i] = amem(bsz);
        p2p_fill(b[i], bsz, 200u + (unsigned)i);
    }
    for (int i = 0; i < NB; i++) {
        size_t bad = p2p_verify(b[i], bsz, (i % 2 ? 100u : 200u) + (unsigned)i);
        CHECK(bad == (size_t)-1, "block %d byte %zu overwritten after the second round", i, bad);
    }
    for (int i = NB - 1; i >= 0; i--)
        MPI_OK(MPI_Free_mem(b[i]));
    /* everything given back: the bench shape again (node heap again by default) */
    lb = amem(SLOT * NSLOT + PG);
    wb = amem(SLOT * NSLOT + PG);
    slots("bench shape after the churn", pgalign(wb), pgalign(lb), 2);
    MPI_OK(MPI_Free_mem(wb));
    MPI_OK(MPI_Free_mem(lb));

    /* 3. MPI_Win_allocate windows take most of the heap first (all of a 64 MiB one) */
    unsigned char *big;
    MPI_Win bw;
    p2p_setstep("Win_allocate, then MPI_Alloc_mem");
    MPI_OK(MPI_Win_allocate((MPI_Aint)28 << 20, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &big, &bw));
    memset(big, 0x5a, (size_t)28 << 20);
    lb = amem(SLOT * NSLOT);
    wb = amem(SLOT * NSLOT);
    slots("Alloc_mem after Win_allocate", wb, lb, 3);
    for (size_t i = 0; i < ((size_t)28 << 20); i += 4093)
        CHECK(big[i] == 0x5a, "Win_allocate memory byte %zu changed", i);
    MPI_OK(MPI_Free_mem(wb));
    MPI_OK(MPI_Free_mem(lb));
    MPI_OK(MPI_Win_free(&bw));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (p2p_rank == 0)
        printf("rma_allocmem: ok\n");
    MPI_Finalize();
    return 0;
}
