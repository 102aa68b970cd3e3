/* The job side of test net.forge (tests/net/forge_test.py): two ranks over
 * the network channel wait, driving progress, while net_forge sends forged
 * traffic at rank 0's endpoint; nothing of it may be delivered (no message
 * matches MPI_Iprobe, window memory keeps its pattern), and afterwards real
 * point-to-point and one-sided traffic must still work.
 *
 *   net_victim FLAGFILE    the harness creates FLAGFILE when the attack is over */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WIN_BYTES (64 * 1024)

static int fail(int rank, const char *what)
{
    fprintf(stderr, "net_victim[%d]: FAIL: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 || size != 2)
        return fail(rank, "usage: 2 ranks, net_victim FLAGFILE");
    unsigned char *mem = malloc(WIN_BYTES);
    memset(mem, 0x5a, WIN_BYTES);
    MPI_Win win;
    MPI_Win_create(mem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        printf("net_victim: ready\n");
        fflush(stdout);
    }

    /* the attack: progress for at most 120 s while the harness runs net_forge */
    int seen = 0;
    for (int i = 0; i < 120000 && access(argv[1], F_OK) != 0; i++) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            fprintf(stderr, "net_victim[%d]: a message from %d tag %d was delivered during the attack\n", rank,
                    st.MPI_SOURCE, st.MPI_TAG);
            seen = 1;
            break;
        }
        usleep(1000);
    }
    if (seen)
        return fail(rank, "forged message delivered");
    if (access(argv[1], F_OK) != 0)
        return fail(rank, "the harness never ended the attack");
    MPI_Barrier(MPI_COMM_WORLD);

    /* window memory untouched */
    for (int i = 0; i < WIN_BYTES; i++)
        if (mem[i] != 0x5a)
            return fail(rank, "window memory changed during the attack");
    /* real traffic still flows: p2p (eager and rendezvous), put, get */
    long v = rank == 1 ? 42 : 0;
    static char big[1 << 20];
    if (rank == 1) {
        memset(big, 7, sizeof big);
        MPI_Send(&v, 1, MPI_LONG, 0, 7, MPI_COMM_WORLD);
        MPI_Send(big, sizeof big, MPI_CHAR, 0, 8, MPI_COMM_WORLD);
    } else {
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (v != 42 || st.MPI_SOURCE != 1 || st.MPI_TAG != 7)
            return fail(rank, "first message after the attack is not rank 1's 42");
        MPI_Recv(big, sizeof big, MPI_CHAR, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < sizeof big; i++)
            if (big[i] != 7)
                return fail(rank, "rendezvous payload after the attack is wrong");
    }
    unsigned char *src = malloc(WIN_BYTES), *dst = malloc(WIN_BYTES);
    memset(src, 0x10 + rank, WIN_BYTES);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1 - rank, 0, win);
    MPI_Put(src, WIN_BYTES / 2, MPI_BYTE, 1 - rank, 0, WIN_BYTES / 2, MPI_BYTE, win);
    MPI_Win_unlock(1 - rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, 1 - rank, 0, win);
    MPI_Get(dst, WIN_BYTES, MPI_BYTE, 1 - rank, 0, WIN_BYTES, MPI_BYTE, win);
    MPI_Win_unlock(1 - rank, win);
    for (int i = 0; i < WIN_BYTES; i++) {
        unsigned char want = i < WIN_BYTES / 2 ? (unsigned char)(0x10 + rank) : 0x5a;
        if (dst[i] != want)
            return fail(rank, "one-sided data after the attack is wrong");
    }
    MPI_Win_free(&win);
    free(mem);
    free(src);
    free(dst);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("net_victim: ok\n");
    MPI_Finalize();
    return 0;
}
