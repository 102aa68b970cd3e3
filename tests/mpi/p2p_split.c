/* Large co-resident messages that both ranks copy at once (WH_PROTO_SPLIT,
 * src/proto/split.c), and the cases around it, every byte checked:
 *  - a sender that computes (outside MPI) between MPI_Isend and MPI_Wait:
 *    the receiver completes without it, copying every chunk itself;
 *  - more transfers in flight at once, both ways, than a rank has split lines
 *    (16): the rest take the receiver-only single copy, in any order;
 *  - a message longer than the receive buffer: MPI_ERR_TRUNCATE, the buffer's
 *    bytes delivered and nothing past them written;
 *  - a non-contiguous receive (a vector): no split, the data still right;
 *  - MPI_Sendrecv head to head (each rank helps the other while it receives).
 * Over every channel variant (wh_mpi_test): where CMA does not serve the
 * pair the same program checks the other protocols. Two ranks.  Argument
 * "heap": the buffers come from MPI_Alloc_mem (the node-shared heap), so the
 * two ranks copy through their mappings of the region (WH_SHM_KEY_HEAP),
 * also between containers that CMA does not serve. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p2p_check.h"

#define BIG (1u << 20)
#define NFLIGHT 24
#define MID (192u << 10)

static void spin_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void check_data(const unsigned char *b, size_t n, unsigned seed)
{
    size_t bad = p2p_verify(b, n, seed);
    CHECK(bad == (size_t)-1, "byte %zu of %zu wrong", bad, n);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    CHECK(p2p_size == 2, "needs 2 ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = 1 - p2p_rank;
    int heap = argc > 1 && strcmp(argv[1], "heap") == 0;
    unsigned char *s, *r;
    if (heap) {
        MPI_OK(MPI_Alloc_mem((MPI_Aint)NFLIGHT * MID, MPI_INFO_NULL, &s));
        MPI_OK(MPI_Alloc_mem((MPI_Aint)NFLIGHT * MID + BIG, MPI_INFO_NULL, &r));
    } else {
        s = malloc((size_t)NFLIGHT * MID), r = malloc((size_t)NFLIGHT * MID + BIG);
    }
    CHECK(s && r, "out of memory");
    MPI_Status st;

    p2p_setstep("sender busy outside MPI");
    for (int round = 0; round < 3; round++) {
        unsigned seed = 11u + (unsigned)round;
        if (p2p_rank == 0) {
            MPI_Request q;
            p2p_fill(s, BIG, seed);
            MPI_OK(MPI_Isend(s, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &q));
            spin_ms(30); /* the receiver's CTS arrives meanwhile; nobody here answers it */
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv(r, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
            check_data(r, BIG, seed);
            CHECK(p2p_count(&st, MPI_BYTE) == BIG, "count");
        }
    }

    p2p_setstep("%d transfers of %u bytes in flight both ways", NFLIGHT, MID);
    {
        MPI_Request q[2 * NFLIGHT];
        for (int i = 0; i < NFLIGHT; i++)
            p2p_fill(s + (size_t)i * MID, MID, 100u + (unsigned)i + 50u * (unsigned)p2p_rank);
        for (int i = 0; i < NFLIGHT; i++)
            MPI_OK(MPI_Irecv(r + (size_t)i * MID, MID, MPI_BYTE, peer, i, MPI_COMM_WORLD, &q[i]));
        for (int i = 0; i < NFLIGHT; i++) /* sent in reverse tag order: matched out of posting order */
            MPI_OK(MPI_Isend(s + (size_t)(NFLIGHT - 1 - i) * MID, MID, MPI_BYTE, peer, NFLIGHT - 1 - i,
                             MPI_COMM_WORLD, &q[NFLIGHT + i]));
        MPI_OK(MPI_Waitall(2 * NFLIGHT, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < NFLIGHT; i++)
            check_data(r + (size_t)i * MID, MID, 100u + (unsigned)i + 50u * (unsigned)peer);
    }

    p2p_setstep("truncated");
    {
        size_t cap = BIG - 4096 - 3;
        if (p2p_rank == 0) {
            p2p_fill(s, BIG, 77);
            MPI_OK(MPI_Send(s, BIG, MPI_BYTE, 1, 3, MPI_COMM_WORLD));
        } else {
            memset(r, 0xee, BIG + 64);
            int rc = MPI_Recv(r, (int)cap, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st), cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive returned class %d", cls);
            check_data(r, cap, 77);
            for (size_t i = cap; i < BIG + 64; i++)
                CHECK(r[i] == 0xee, "byte %zu past the buffer written", i);
        }
    }

    p2p_setstep("vector receive");
    {
        MPI_Datatype v; /* every other 4 KiB block */
        MPI_OK(MPI_Type_vector(64, 4096, 8192, MPI_BYTE, &v));
        MPI_OK(MPI_Type_commit(&v));
        if (p2p_rank == 0) {
            p2p_fill(s, 64 * 4096, 5);
            MPI_OK(MPI_Send(s, 64 * 4096, MPI_BYTE, 1, 4, MPI_COMM_WORLD));
        } else {
            memset(r, 0, 64 * 8192);
            MPI_OK(MPI_Recv(r, 1, v, 0, 4, MPI_COMM_WORLD, &st));
            for (int b = 0; b < 64; b++)
                for (int i = 0; i < 4096; i++)
                    CHECK(r[(size_t)b * 8192 + (size_t)i] == p2p_pat(5, (size_t)b * 4096 + (size_t)i),
                          "block %d byte %d", b, i);
        }
        MPI_Type_free(&v);
    }

    p2p_setstep("sendrecv head to head");
    for (size_t n = 64u << 10; n <= BIG; n = n * 2 + 4093) {
        p2p_fill(s, n, (unsigned)n + (unsigned)p2p_rank);
        MPI_OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, peer, 5, r, (int)n, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &st));
        check_data(r, n, (unsigned)n + (unsigned)peer);
    }

    if (heap) {
        MPI_OK(MPI_Free_mem(s));
        MPI_OK(MPI_Free_mem(r));
    } else {
        free(s);
        free(r);
    }
    MPI_Finalize();
    if (p2p_rank == 0)
        printf("p2p_split: ok\n");
    return 0;
}
