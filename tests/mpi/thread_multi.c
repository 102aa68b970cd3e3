/* MPI_THREAD_MULTIPLE (issue 13): several threads per rank call MPI at once.
 * Each thread has its own duplicated communicator and runs, against the same
 * thread of the peer rank: ping-pongs of 8 B, 4 KiB and 200 KiB (eager and
 * rendezvous), Iprobe + Recv, Isend/Irecv/Waitall windows, an allreduce and a
 * barrier; meanwhile the main thread waits on a generalized request that a
 * helper thread completes.  Data is checked; every loop is bounded. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
#define ITERS 60

static int rank, size;
static MPI_Comm comms[NT];

static void die(int t, const char *what, long got, long want)
{
    printf("rank %d thread %d: %s: got %ld, expected %ld\n", rank, t, what, got, want);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = comms[t];
    int peer = rank ^ 1;
    static const int sizes[3] = {8, 4096, 200 * 1024};
    unsigned char *sb = malloc(200 * 1024), *rb = malloc(200 * 1024);
    for (int it = 0; it < ITERS; it++) {
        if (peer < size) {
            int n = sizes[it % 3];
            for (int i = 0; i < n; i++)
                sb[i] = (unsigned char)(rank * 31 + t * 7 + it + i);
            memset(rb, 0, (size_t)n);
            if (rank & 1) {
                MPI_Recv(rb, n, MPI_BYTE, peer, it, c, MPI_STATUS_IGNORE);
                MPI_Send(sb, n, MPI_BYTE, peer, it, c);
            } else {
                MPI_Send(sb, n, MPI_BYTE, peer, it, c);
                int flag = 0;
                MPI_Status st;
                for (long spin = 0; !flag && spin < 100000000L; spin++)
                    MPI_Iprobe(peer, it, c, &flag, &st);
                if (!flag)
                    die(t, "Iprobe never saw the reply", 0, 1);
                int cnt;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                if (cnt != n)
                    die(t, "probed count", cnt, n);
                MPI_Recv(rb, n, MPI_BYTE, peer, it, c, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < n; i++)
                if (rb[i] != (unsigned char)(peer * 31 + t * 7 + it + i))
                    die(t, "ping-pong byte", rb[i], (unsigned char)(peer * 31 + t * 7 + it + i));
            /* a window of nonblocking messages both ways */
            MPI_Request rq[8];
            int sv[4], rv[4];
            for (int k = 0; k < 4; k++) {
                sv[k] = rank * 1000 + t * 100 + k;
                MPI_Irecv(&rv[k], 1, MPI_INT, peer, 1000 + k, c, &rq[k]);
            }
            for (int k = 0; k < 4; k++)
                MPI_Isend(&sv[k], 1, MPI_INT, peer, 1000 + k, c, &rq[4 + k]);
            MPI_Waitall(8, rq, MPI_STATUSES_IGNORE);
            for (int k = 0; k < 4; k++)
                if (rv[k] != peer * 1000 + t * 100 + k)
                    die(t, "window value", rv[k], peer * 1000 + t * 100 + k);
        }
        int v = rank + t, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c);
        if (sum != size * (size - 1) / 2 + size * t)
            die(t, "allreduce", sum, size * (size - 1) / 2 + size * t);
        if (it % 10 == 0)
            MPI_Barrier(c);
    }
    free(sb);
    free(rb);
    return NULL;
}

static int g_query(void *x, MPI_Status *st)
{
    (void)x;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int g_free(void *x) { (void)x; return MPI_SUCCESS; }
static int g_cancel(void *x, int done) { (void)x; (void)done; return MPI_SUCCESS; }

static void *completer(void *arg)
{
    MPI_Request r = *(MPI_Request *)arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    MPI_Grequest_complete(r);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE)
        die(-1, "provided thread level", provided, MPI_THREAD_MULTIPLE);
    int q = -1, main_flag = 0;
    MPI_Query_thread(&q);
    MPI_Is_thread_main(&main_flag);
    if (q != MPI_THREAD_MULTIPLE || !main_flag)
        die(-1, "Query_thread / Is_thread_main", q * 10 + main_flag, MPI_THREAD_MULTIPLE * 10 + 1);
    for (int t = 0; t < NT; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NT], ct;
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    /* the main thread blocks on a generalized request another thread completes */
    MPI_Request g;
    MPI_Grequest_start(g_query, g_free, g_cancel, NULL, &g);
    pthread_create(&ct, NULL, completer, &g);
    MPI_Wait(&g, MPI_STATUS_IGNORE);
    pthread_join(ct, NULL);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NT; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("thread_multi: %d ranks x %d threads ok\n", size, NT);
    MPI_Finalize();
    return 0;
}
