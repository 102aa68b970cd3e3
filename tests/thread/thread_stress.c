/* MPI_THREAD_MULTIPLE stress (issue 13): NT threads per rank, each on its own
 * communicator, run through every message size class of every channel
 * (inline cells, pool slots, rendezvous/CMA) with wildcard receives,
 * Mprobe/Mrecv, Waitany/Testsome, nonblocking and blocking collectives, and
 * create and free communicators and datatypes while the other threads
 * communicate.  All data checked, every loop bounded; built for the
 * ThreadSanitizer run of `make check-tsan` as well. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 6
#define ROUNDS 4

static int rank, size;
static MPI_Comm comms[NT];

static const int sizes[] = {0, 1, 8, 79, 80, 81, 1000, 4096, 16384, 16385, 65536, 300000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXN 300000

static void die(int t, const char *what, long got, long want)
{
    printf("rank %d thread %d: %s: got %ld, expected %ld\n", rank, t, what, got, want);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int src, int t, int k, int i) { return (unsigned char)(src * 37 + t * 11 + k * 5 + i); }

static void fill(unsigned char *b, int n, int src, int t, int k)
{
    for (int i = 0; i < n; i++)
        b[i] = pat(src, t, k, i);
}

static void check(const unsigned char *b, int n, int src, int t, int k, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != pat(src, t, k, i))
            die(t, what, b[i], pat(src, t, k, i));
}

/* Ring exchange: everybody sends every size to rank+1 and receives from
 * MPI_ANY_SOURCE (only rank-1 sends on this communicator with these tags). */
static void ring(int t, MPI_Comm c, unsigned char *sb, unsigned char *rb)
{
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int k = 0; k < NSIZES; k++) {
        int n = sizes[k];
        fill(sb, n, rank, t, k);
        memset(rb, 0xee, (size_t)(n ? n : 1));
        MPI_Request rq[2];
        MPI_Status st;
        MPI_Irecv(rb, n, MPI_BYTE, MPI_ANY_SOURCE, k, c, &rq[0]);
        MPI_Isend(sb, n, MPI_BYTE, to, k, c, &rq[1]);
        int done = 0, idx;
        for (int s = 0; s < 2; s++) {
            MPI_Waitany(2, rq, &idx, &st);
            if (idx == 0) {
                done = 1;
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                if (cnt != n || st.MPI_SOURCE != from || st.MPI_TAG != k)
                    die(t, "ring status (count)", cnt, n);
            }
        }
        if (!done)
            die(t, "ring receive never completed", 0, 1);
        check(rb, n, from, t, k, "ring data");
    }
}

/* Matched probe: the peer sends a size the receiver learns from Mprobe. */
static void mprobe(int t, MPI_Comm c, unsigned char *sb, unsigned char *rb, int round)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    int k = (round * 5 + t) % NSIZES, n = sizes[k];
    fill(sb, n, rank, t, k);
    MPI_Request sr;
    MPI_Isend(sb, n, MPI_BYTE, peer, 100 + k, c, &sr);
    MPI_Message msg;
    MPI_Status st;
    MPI_Mprobe(peer, MPI_ANY_TAG, c, &msg, &st);
    int cnt;
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    if (cnt != n || st.MPI_TAG != 100 + k)
        die(t, "mprobe count", cnt, n);
    MPI_Mrecv(rb, cnt, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    check(rb, n, peer, t, k, "mrecv data");
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
}

/* A vector datatype built and freed by this thread, used for one exchange. */
static void dtype(int t, MPI_Comm c, int round)
{
    int peer = rank ^ 1;
    MPI_Datatype v;
    MPI_Type_vector(50 + t, 3, 7, MPI_INT, &v);
    MPI_Type_commit(&v);
    if (peer < size) {
        int n = (50 + t) * 7, sb[400], rb[400];
        for (int i = 0; i < n; i++) {
            sb[i] = rank * 100000 + t * 1000 + round * 10 + i;
            rb[i] = -1;
        }
        MPI_Sendrecv(sb, 1, v, peer, 7, rb, 1, v, peer, 7, c, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            int in = (i % 7) < 3 && i / 7 < 50 + t;
            int want = in ? peer * 100000 + t * 1000 + round * 10 + i : -1;
            if (rb[i] != want)
                die(t, "vector element", rb[i], want);
        }
    }
    MPI_Type_free(&v);
}

static void colls(int t, MPI_Comm c, int round)
{
    long v = rank + t + round, sum = -1, want = 0;
    for (int r = 0; r < size; r++)
        want += r + t + round;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c);
    if (sum != want)
        die(t, "allreduce", sum, want);
    int root = (t + round) % size, b[64];
    for (int i = 0; i < 64; i++)
        b[i] = rank == root ? root * 1000 + i + t : -1;
    MPI_Request rq;
    MPI_Ibcast(b, 64, MPI_INT, root, c, &rq);
    int flag = 0;
    for (long s = 0; !flag && s < 200000000L; s++)
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    if (!flag)
        die(t, "ibcast never completed", 0, 1);
    for (int i = 0; i < 64; i++)
        if (b[i] != root * 1000 + i + t)
            die(t, "ibcast element", b[i], root * 1000 + i + t);
    int *ag = malloc(sizeof(int) * (size_t)size * 3), *mine = malloc(sizeof(int) * (size_t)size * 3);
    for (int i = 0; i < size * 3; i++)
        mine[i] = rank * 10000 + i + t;
    MPI_Alltoall(mine, 3, MPI_INT, ag, 3, MPI_INT, c);
    for (int r = 0; r < size; r++)
        for (int j = 0; j < 3; j++)
            if (ag[r * 3 + j] != r * 10000 + rank * 3 + j + t)
                die(t, "alltoall element", ag[r * 3 + j], r * 10000 + rank * 3 + j + t);
    free(ag);
    free(mine);
    /* a communicator created and freed while the other threads run */
    MPI_Comm d;
    MPI_Comm_split(c, rank % 2, -rank, &d);
    int dr, ds;
    MPI_Comm_rank(d, &dr);
    MPI_Comm_size(d, &ds);
    if (ds != (size + 1 - rank % 2) / 2)
        die(t, "split size", ds, (size + 1 - rank % 2) / 2);
    MPI_Barrier(d);
    MPI_Comm_free(&d);
}

/* Many small nonblocking messages both ways, completed with Testsome. */
static void window(int t, MPI_Comm c, int round)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    enum { W = 32 };
    int sv[W], rv[W], idx[2 * W];
    MPI_Request rq[2 * W];
    for (int i = 0; i < W; i++) {
        sv[i] = rank * 1000000 + t * 10000 + round * 100 + i;
        rv[i] = -1;
        MPI_Irecv(&rv[i], 1, MPI_INT, peer, 200 + i, c, &rq[i]);
    }
    for (int i = 0; i < W; i++)
        MPI_Isend(&sv[i], 1, MPI_INT, peer, 200 + i, c, &rq[W + i]);
    int left = 2 * W;
    for (long s = 0; left > 0 && s < 200000000L; s++) {
        int out = 0;
        MPI_Testsome(2 * W, rq, &out, idx, MPI_STATUSES_IGNORE);
        if (out != MPI_UNDEFINED)
            left -= out;
    }
    if (left)
        die(t, "testsome left requests", left, 0);
    for (int i = 0; i < W; i++)
        if (rv[i] != peer * 1000000 + t * 10000 + round * 100 + i)
            die(t, "window element", rv[i], peer * 1000000 + t * 10000 + round * 100 + i);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Comm c = comms[t];
    unsigned char *sb = malloc(MAXN), *rb = malloc(MAXN);
    if (!sb || !rb)
        die(t, "out of memory", 0, 1);
    for (int round = 0; round < ROUNDS; round++) {
        switch ((t + round) % 4) { /* threads do different things at the same time */
        case 0: ring(t, c, sb, rb); break;
        case 1: mprobe(t, c, sb, rb, round); window(t, c, round); break;
        case 2: colls(t, c, round); break;
        case 3: dtype(t, c, round); mprobe(t, c, sb, rb, round); break;
        }
    }
    free(sb);
    free(rb);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE)
        die(-1, "provided thread level", provided, MPI_THREAD_MULTIPLE);
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t))
            die(t, "pthread_create", 1, 0);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("thread_stress: %d ranks x %d threads x %d rounds ok\n", size, NT, ROUNDS);
    MPI_Finalize();
    return 0;
}
