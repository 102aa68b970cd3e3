/* wh_mt_mr: multi-threaded message rate (MPI_THREAD_MULTIPLE).
 * Ranks 0 and 1 each run T threads (T = 1, 2, 4: one column each); thread t of
 * rank 0 streams windows of MPI_Isend to thread t of rank 1 on its own
 * communicator (a dup of MPI_COMM_WORLD), which answers each window with a
 * 0-byte ack, as in wh_bw.  Reported: messages/s over all threads of rank 0,
 * from the slowest thread's time.  A library that does not provide
 * MPI_THREAD_MULTIPLE prints SKIPPED.  Other ranks only join the barriers. */
#include "common.h"

#include <pthread.h>

static const struct wb_bench bench = {
    .name = "wh_mt_mr",
    .what = "multi-threaded message rate, T threads of rank 0 stream to T threads of rank 1",
    .columns = "1 thread msg/s|2 threads msg/s|4 threads msg/s",
    .min_size = 8, .max_size = 8, .iters = 2000, .warmup = 100, .window = 64, .elem = 0,
    .flags = WB_NEED2 | WB_WINDOW | WB_PAIR | WB_THREADS,
};

enum { MAX_THREADS = 4 };

struct worker {
    pthread_t th;
    int idx;
    MPI_Comm comm;
    size_t size;
    int iters, warmup;
    pthread_barrier_t *start;
    double secs;
    long errors;
};

static void *run(void *arg)
{
    struct worker *w = arg;
    int W = wb.o.window, peer = 1 - wb.rank, n = (int)w->size;
    char *buf = calloc((size_t)W, w->size ? w->size : 1);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)W);
    if (!buf || !reqs)
        wb_die("out of memory");
    pthread_barrier_wait(w->start);
    double t0 = MPI_Wtime();
    for (int i = 0; i < w->iters + w->warmup; i++) {
        if (i == w->warmup)
            t0 = MPI_Wtime();
        if (wb.rank == 0) {
            for (int j = 0; j < W; j++) {
                if (wb.o.validate && n >= (int)sizeof(int))
                    memcpy(buf + (size_t)j * w->size, &(int){i * W + j + w->idx}, sizeof(int));
                MPI_Isend(buf + (size_t)j * w->size, n, MPI_BYTE, peer, WB_TAG_DATA, w->comm, &reqs[j]);
            }
            MPI_Waitall(W, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, peer, WB_TAG_ACK, w->comm, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < W; j++)
                MPI_Irecv(buf + (size_t)j * w->size, n, MPI_BYTE, peer, WB_TAG_DATA, w->comm, &reqs[j]);
            MPI_Waitall(W, reqs, MPI_STATUSES_IGNORE);
            if (wb.o.validate && n >= (int)sizeof(int))
                for (int j = 0; j < W; j++) {
                    int v;
                    memcpy(&v, buf + (size_t)j * w->size, sizeof v);
                    w->errors += v != i * W + j + w->idx;
                }
            MPI_Send(NULL, 0, MPI_BYTE, peer, WB_TAG_ACK, w->comm);
        }
    }
    w->secs = MPI_Wtime() - t0;
    free(buf);
    free(reqs);
    return NULL;
}

/* Messages per second of one size with T threads per rank (rank 0's view). */
static double measure(size_t size, int T, MPI_Comm *comms)
{
    struct worker ws[MAX_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)T);
    int it = wb_iters(size) / T > 0 ? wb_iters(size) / T : 1;
    for (int t = 0; t < T; t++) {
        ws[t] = (struct worker){.idx = t, .comm = comms[t], .size = size, .iters = it,
                                .warmup = wb_warmup(size), .start = &start};
        if (pthread_create(&ws[t].th, NULL, run, &ws[t]))
            wb_die("pthread_create failed");
    }
    double tmax = 0;
    for (int t = 0; t < T; t++) {
        pthread_join(ws[t].th, NULL);
        tmax = ws[t].secs > tmax ? ws[t].secs : tmax;
        wb.errors += ws[t].errors;
        wb.checks += wb.o.validate && wb.rank == 1 ? (long)it * wb.o.window : 0;
    }
    pthread_barrier_destroy(&start);
    return (double)T * it * wb.o.window / tmax;
}

int main(int argc, char **argv)
{
    wb_init(&argc, &argv, &bench);
    wb_require_pair();
    if (wb.provided < MPI_THREAD_MULTIPLE) {
        if (wb.rank == 0)
            printf("# SKIPPED: the library provides thread level %d, not MPI_THREAD_MULTIPLE\n", wb.provided);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm comms[MAX_THREADS];
    for (int t = 0; t < MAX_THREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    WB_FOR_SIZES(s) {
        double r[3] = {0, 0, 0};
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0, T = 1; T <= MAX_THREADS; k++, T *= 2) {
            if (wb.rank < 2)
                r[k] = measure(s, T, comms);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (wb.rank == 0)
            wb_row3(s, r[0], r[1], r[2]);
    }
    for (int t = 0; t < MAX_THREADS; t++)
        MPI_Comm_free(&comms[t]);
    return wb_finish_pair();
}
