/* Portable point-to-point benchmark (plain MPI C, builds with any mpicc).
 *   p2p lat|bw|bibw [-m MIN:MAX] [-i ITERS] [-w WARMUP] [-W WINDOW] [-v]
 * lat:  ping-pong latency between ranks 0 and 1 (one-way, microseconds)
 * bw:   rank 0 streams WINDOW nonblocking sends per iteration (MB/s)
 * bibw: both ranks stream at once (MB/s, both directions together)
 * Output follows the OSU layout: '#' header lines, then "size value". -v
 * validates received data. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iters_for(size_t size, int base)
{
    if (size >= (1 << 20))
        return base / 20 > 10 ? base / 20 : 10;
    if (size >= (64 << 10))
        return base / 5 > 20 ? base / 5 : 20;
    return base;
}

static void fill(char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)((i * 31 + (size_t)seed) & 0xff);
}

static int check(const char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (char)((i * 31 + (size_t)seed) & 0xff))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "lat";
    size_t minsz = 0, maxsz = 4 << 20;
    int iters = 10000, warm = 200, window = 64, validate = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char *c = strchr(argv[++i], ':');
            minsz = strtoul(argv[i], NULL, 0);
            maxsz = c ? strtoul(c + 1, NULL, 0) : minsz;
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warm = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-W") && i + 1 < argc)
            window = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-v"))
            validate = 1;
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "p2p: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *sbuf = NULL, *rbuf = NULL;
    MPI_Alloc_mem((MPI_Aint)maxsz + 1, MPI_INFO_NULL, &sbuf);
    MPI_Alloc_mem((MPI_Aint)maxsz + 1, MPI_INFO_NULL, &rbuf);
    memset(sbuf, 1, maxsz + 1);
    memset(rbuf, 0, maxsz + 1);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)window);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = 0;
        printf("# p2p %s  library: %.100s\n", mode, lib);
        printf("# %-10s %s\n", "size", !strcmp(mode, "lat") ? "latency(us)" : "bandwidth(MB/s)");
    }
    int errors = 0;
    for (size_t sz = minsz; sz <= maxsz; sz = sz ? sz * 2 : 1) {
        int n = iters_for(sz, iters), w = sz >= (1 << 20) ? warm / 20 + 2 : warm;
        double t0 = 0, t = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (!strcmp(mode, "lat")) {
            if (validate && rank == 0)
                fill(sbuf, sz, (int)sz);
            for (int i = 0; i < n + w; i++) {
                if (i == w)
                    t0 = MPI_Wtime();
                if (rank == 0) {
                    MPI_Send(sbuf, (int)sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int)sz, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(rbuf, (int)sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (validate && i == 0)
                        errors += check(rbuf, sz, (int)sz);
                    MPI_Send(rbuf, (int)sz, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
                }
            }
            t = (MPI_Wtime() - t0) * 1e6 / (2.0 * n);
        } else {
            int bi = !strcmp(mode, "bibw");
            for (int i = 0; i < n + w; i++) {
                if (i == w)
                    t0 = MPI_Wtime();
                if (rank == 0 || (bi && rank == 1)) {
                    int peer = 1 - rank;
                    int k = 0;
                    if (bi)
                        for (int j = 0; j < window; j++)
                            MPI_Irecv(rbuf, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &reqs[k++]);
                    MPI_Request *sreqs = bi ? malloc(sizeof(MPI_Request) * (size_t)window) : reqs;
                    for (int j = 0; j < window; j++)
                        MPI_Isend(sbuf, (int)sz, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &sreqs[j]);
                    MPI_Waitall(window, sreqs, MPI_STATUSES_IGNORE);
                    if (bi) {
                        MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                        free(sreqs);
                    }
                    char ack;
                    if (!bi)
                        MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    for (int j = 0; j < window; j++)
                        MPI_Irecv(rbuf, (int)sz, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &reqs[j]);
                    MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
                    char ack = 0;
                    MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
                }
            }
            double el = MPI_Wtime() - t0;
            t = (double)sz * window * n * (bi ? 2 : 1) / el / 1e6;
        }
        if (rank == 0)
            printf("%-12zu %.3f\n", sz, t);
        fflush(stdout);
        if (sz == 0 && maxsz == 0)
            break;
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        printf("# VALIDATION FAILED: %d errors\n", all);
    MPI_Free_mem(sbuf);
    MPI_Free_mem(rbuf);
    free(reqs);
    MPI_Finalize();
    return all ? 1 : 0;
}
