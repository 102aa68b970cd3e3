/* Locality probe for tests/locality/check_locality.py (issue 3).
 *
 * Every rank prints one parseable line
 *   loc_probe: rank R size N host HOSTNAME boot_id BOOTID pid PID shared A,B,...
 * where the shared list is the MPI_COMM_WORLD ranks of its
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) communicator (which must equal the
 * node group of the locality report), then exchanges an 8-byte and a 1 MiB
 * message with every other rank (all ordered pairs, so every pair's channel
 * and protocol shows up in WHARF_REPORT=channels), checks every byte, and
 * prints
 *   loc_probe: rank R exchange ok ITERS iterations
 * Rank 0 ends with "loc_probe: done" after a final barrier.  Any failure
 * prints "loc_probe: FAIL rank R: ..." and aborts the job.
 *
 * Options:
 *   --iters K       repeat the exchange K times (payload depends on the job's
 *                   --seed, the iteration, source and destination, so data of
 *                   another job would be noticed)
 *   --seed S        payload seed (default 1)
 *   --big BYTES     size of the large message (default 1 MiB)
 *   --die R:I       rank R kills itself with SIGKILL in iteration I, after
 *                   posting its sends and receives and making some progress
 *                   (so it dies in the middle of a rendezvous, holding shared
 *                   state); the other ranks are left waiting for it
 *   --sleep-ms MS   sleep MS milliseconds between iterations
 */
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank = -1, size = 0;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("loc_probe: FAIL rank %d: %s\n", rank, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 3);
    exit(3);
}

#define OK(call)                                                                    \
    do {                                                                            \
        int rc_ = (call);                                                           \
        if (rc_ != MPI_SUCCESS) {                                                   \
            char es_[MPI_MAX_ERROR_STRING] = "";                                    \
            int el_ = 0;                                                            \
            MPI_Error_string(rc_, es_, &el_);                                       \
            fail("%s failed: %s", #call, es_);                                      \
        }                                                                           \
    } while (0)

static unsigned char pat(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)(i * 2654435761u) ^ (seed * 40503u + 0x9e37u);
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static uint32_t seed_of(uint32_t job, int iter, int src, int dst, int big)
{
    return job * 1000003u + (uint32_t)iter * 7919u + (uint32_t)src * 131u + (uint32_t)dst * 17u + (uint32_t)big;
}

static void read_boot_id(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f)
        return;
    if (fgets(out, (int)n, f))
        out[strcspn(out, "\n")] = 0;
    fclose(f);
}

int main(int argc, char **argv)
{
    int iters = 1, die_rank = -1, die_iter = -1, sleep_ms = 0;
    uint32_t job_seed = 1;
    size_t big = 1u << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            job_seed = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--big") && i + 1 < argc)
            big = (size_t)strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--die") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d:%d", &die_rank, &die_iter) != 2) {
                fprintf(stderr, "loc_probe: --die R:I\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
            sleep_ms = atoi(argv[++i]);
        else {
            fprintf(stderr, "loc_probe: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* the node group through MPI_Comm_split_type */
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    if (node == MPI_COMM_NULL)
        fail("MPI_Comm_split_type(SHARED) gave MPI_COMM_NULL");
    int nsize = 0, nrank = -1;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_rank(node, &nrank);
    int *members = calloc((size_t)nsize, sizeof(int));
    OK(MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node));
    if (members[nrank] != rank)
        fail("node communicator: my entry is %d, expected %d", members[nrank], rank);
    char host[256] = "", boot[64];
    gethostname(host, sizeof host - 1);
    read_boot_id(boot, sizeof boot);
    char line[8192];
    int off = snprintf(line, sizeof line, "loc_probe: rank %d size %d host %s boot_id %s pid %d shared ", rank, size,
                       host, boot, (int)getpid());
    for (int i = 0; i < nsize && off < (int)sizeof line - 16; i++)
        off += snprintf(line + off, sizeof line - (size_t)off, "%s%d", i ? "," : "", members[i]);
    printf("%s\n", line);
    fflush(stdout);
    /* the node communicator must be usable: a sum over it */
    int sum = 0, want = 0;
    for (int i = 0; i < nsize; i++)
        want += members[i];
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, node));
    if (sum != want)
        fail("allreduce over the node communicator: %d, expected %d", sum, want);
    MPI_Comm_free(&node);
    free(members);

    /* 8 B and BIG bytes to and from every other rank */
    int npeer = size - 1;
    size_t sizes[2] = {8, big};
    unsigned char **sbuf = calloc((size_t)size * 2, sizeof(void *));
    unsigned char **rbuf = calloc((size_t)size * 2, sizeof(void *));
    MPI_Request *reqs = calloc((size_t)size * 4, sizeof(MPI_Request));
    for (int p = 0; p < size; p++)
        for (int b = 0; b < 2; b++) {
            sbuf[p * 2 + b] = malloc(sizes[b] + 1);
            rbuf[p * 2 + b] = malloc(sizes[b] + 1);
            if (!sbuf[p * 2 + b] || !rbuf[p * 2 + b])
                fail("out of memory");
        }
    for (int it = 0; it < iters; it++) {
        int nr = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            for (int b = 0; b < 2; b++) {
                memset(rbuf[p * 2 + b], 0xa5, sizes[b]);
                OK(MPI_Irecv(rbuf[p * 2 + b], (int)sizes[b], MPI_BYTE, p, 10 + b, MPI_COMM_WORLD, &reqs[nr++]));
            }
        }
        for (int k = 1; k <= npeer; k++) {
            int p = (rank + k) % size;
            for (int b = 0; b < 2; b++) {
                uint32_t s = seed_of(job_seed, it, rank, p, b);
                for (size_t i = 0; i < sizes[b]; i++)
                    sbuf[p * 2 + b][i] = pat(s, i);
                OK(MPI_Isend(sbuf[p * 2 + b], (int)sizes[b], MPI_BYTE, p, 10 + b, MPI_COMM_WORLD, &reqs[nr++]));
            }
        }
        if (rank == die_rank && it == die_iter) {
            int flag;
            for (int i = 0; i < 50; i++)
                MPI_Testall(nr, reqs, &flag, MPI_STATUSES_IGNORE);
            printf("loc_probe: rank %d dies now (SIGKILL) in iteration %d\n", rank, it);
            fflush(stdout);
            kill(getpid(), SIGKILL);
        }
        MPI_Status *st = calloc((size_t)nr, sizeof(MPI_Status));
        OK(MPI_Waitall(nr, reqs, st));
        for (int p = 0, i = 0; p < size; p++) {
            if (p == rank)
                continue;
            for (int b = 0; b < 2; b++, i++) {
                int cnt = -1;
                MPI_Get_count(&st[i], MPI_BYTE, &cnt);
                if (st[i].MPI_SOURCE != p || cnt != (int)sizes[b])
                    fail("message from rank %d: source %d, %d bytes, expected %zu", p, st[i].MPI_SOURCE, cnt, sizes[b]);
                uint32_t s = seed_of(job_seed, it, p, rank, b);
                for (size_t j = 0; j < sizes[b]; j++)
                    if (rbuf[p * 2 + b][j] != pat(s, j)) {
                        fail("iteration %d, %zu-byte message from rank %d: byte %zu is 0x%02x, expected 0x%02x", it,
                             sizes[b], p, j, rbuf[p * 2 + b][j], pat(s, j));
                    }
            }
        }
        free(st);
        if (sleep_ms > 0) {
            struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    printf("loc_probe: rank %d exchange ok %d iterations\n", rank, iters);
    fflush(stdout);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        printf("loc_probe: done\n");
        fflush(stdout);
    }
    for (int p = 0; p < size * 2; p++) {
        free(sbuf[p]);
        free(rbuf[p]);
    }
    free(sbuf);
    free(rbuf);
    free(reqs);
    MPI_Finalize();
    return 0;
}
