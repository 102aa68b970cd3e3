/* A rank program that uses only the PMI client (src/pmi/pmi.h), for the
 * launcher tests.  Usage: pmi_test MODE [ARGS...]
 *   kvs               put own key, barrier, get every other key, check values
 *                     (also a long one), missing keys, a second round; prints
 *                     "rank R of N: kvs ok"
 *   abort CODE RANK   RANK calls wh_pmi_abort(CODE, msg); the others wait in
 *                     a barrier until they are killed
 *   crash RANK        RANK kills itself with SIGKILL; the others wait in a barrier
 *   exit CODE RANK    after a barrier, RANK exits with CODE, others block in a barrier
 *   nofinalize        init, barrier, exit 0 without finalize
 *   sleep SECS        init, barrier, print "ready", sleep, finalize
 *   output LINES      print LINES lines to stdout and stderr, each written in
 *                     pieces, then finalize
 *   args ARGS...      print every argument as "arg[i]=<...>"
 *   env               print the PMI and WHARF variables it got, then finalize
 *   app TAG           print "rank R of N app A tag TAG cwd DIR var V" (A: its
 *                     PMI appnum, V: $MPMD_VAR), barrier, finalize
 *   stdin             every rank reads its stdin to EOF and prints "rank R stdin
 *                     BYTES LINES FIRSTLINE" (FIRSTLINE: "-" when empty), then finalize
 *   skip RANK         RANK exits 0 at once without PMI; the others wait in a barrier
 *   closefd RANK      RANK closes its PMI connection (no finalize) and sleeps;
 *                     the others wait in a barrier
 *   watch RANK FILE   after a barrier RANK exits 3; the others poll wh_pmi_lost()
 *                     and create FILE.<rank> when the launcher closes PMI (30 s max)
 *   raw LINE          write LINE (C escapes \n \0 \\ decoded) to PMI_FD, then sleep
 * Exit status 0 on success, 3 on a failed check (message on stderr). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmi/pmi.h"

static int rank = -1, size = -1;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "pmi_test rank %d: check failed at line %d: %s: ", rank, __LINE__,    \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (pmi: %s)\n", wh_pmi_error());                                       \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

static void init(void)
{
    char err[256];
    CHECK(wh_pmi_init(&rank, &size, err, sizeof err) == 0, "init: %s", err);
    CHECK(rank >= 0 && rank < size, "rank %d size %d", rank, size);
    const char *e = getenv("WHARF_JOB_ID");
    if (e && !wh_pmi_is_singleton()) /* under wharfrun the job id is the kvsname */
        CHECK(!strcmp(e, wh_pmi_kvsname()), "WHARF_JOB_ID %s != kvsname %s", e, wh_pmi_kvsname());
}

static void finalize(void)
{
    CHECK(wh_pmi_finalize() == 0, "finalize");
}

static void long_value(int r, char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++)
        buf[i] = (char)('a' + (i * 7 + (size_t)r) % 26);
    buf[len - 1] = '\0';
}

static int mode_kvs(void)
{
    init();
    int maxv = wh_pmi_max_vallen();
    CHECK(maxv >= 1000, "max vallen %d", maxv);
    char key[64], val[4096], want[4096];
    snprintf(key, sizeof key, "key-%d", rank);
    snprintf(val, sizeof val, "value=of/rank:%d", rank); /* '=' and ':' are fine */
    CHECK(wh_pmi_put(key, val) == 0, "put");
    snprintf(key, sizeof key, "long-%d", rank);
    long_value(rank, val, (size_t)maxv + 1);
    CHECK(wh_pmi_put(key, val) == 0, "put long (%d bytes)", maxv);
    long_value(rank, val, (size_t)maxv + 2);
    CHECK(wh_pmi_put("too-long", val) != 0, "a value over max_vallen must be refused");
    CHECK(wh_pmi_put("bad key", "x") != 0, "a key with a space must be refused");
    CHECK(wh_pmi_put("k", "a b") != 0, "a value with a space must be refused");
    CHECK(wh_pmi_barrier() == 0, "barrier 1");
    for (int r = 0; r < size; r++) {
        snprintf(key, sizeof key, "key-%d", r);
        snprintf(want, sizeof want, "value=of/rank:%d", r);
        CHECK(wh_pmi_get(key, val, sizeof val) == 0, "get %s", key);
        CHECK(!strcmp(val, want), "get %s: '%s' != '%s'", key, val, want);
        snprintf(key, sizeof key, "long-%d", r);
        long_value(r, want, (size_t)maxv + 1);
        CHECK(wh_pmi_get(key, val, sizeof val) == 0, "get %s", key);
        CHECK(!strcmp(val, want), "get %s: wrong long value", key);
        CHECK(wh_pmi_get(key, val, 10) != 0, "get into a small buffer must fail");
    }
    CHECK(wh_pmi_get("no-such-key", val, sizeof val) == -1, "missing key");
    /* the connection still works after a failed get */
    snprintf(key, sizeof key, "round2-%d", rank);
    CHECK(wh_pmi_put(key, "second") == 0, "put round 2");
    CHECK(wh_pmi_barrier() == 0, "barrier 2");
    snprintf(key, sizeof key, "round2-%d", (rank + 1) % size);
    CHECK(wh_pmi_get(key, val, sizeof val) == 0 && !strcmp(val, "second"), "get round 2");
    CHECK(wh_pmi_barrier() == 0, "barrier 3");
    printf("rank %d of %d: kvs ok\n", rank, size);
    fflush(stdout);
    finalize();
    return 0;
}

static void put(const char *p, size_t n)
{
    CHECK(write(1, p, n) == (ssize_t)n, "write");
}

static void block_forever(void)
{
    wh_pmi_barrier(); /* the target rank never joins: blocks until killed */
    fprintf(stderr, "pmi_test rank %d: barrier returned, should have been killed\n", rank);
    exit(4);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "kvs"))
        return mode_kvs();
    if (!strcmp(mode, "abort") && argc == 4) {
        init();
        if (rank == atoi(argv[3])) {
            char msg[128];
            snprintf(msg, sizeof msg, "test abort from rank %d", rank);
            usleep(100 * 1000); /* let the others reach the barrier */
            wh_pmi_abort(atoi(argv[2]), msg);
        }
        block_forever();
    }
    if (!strcmp(mode, "crash") && argc == 3) {
        init();
        if (rank == atoi(argv[2])) {
            usleep(100 * 1000);
            kill(getpid(), SIGKILL);
        }
        block_forever();
    }
    if (!strcmp(mode, "exit") && argc == 4) {
        init();
        CHECK(wh_pmi_barrier() == 0, "barrier");
        if (rank == atoi(argv[3]))
            exit(atoi(argv[2]));
        block_forever();
    }
    if (!strcmp(mode, "nofinalize")) {
        init();
        CHECK(wh_pmi_barrier() == 0, "barrier");
        return 0;
    }
    if (!strcmp(mode, "sleep") && argc == 3) {
        init();
        CHECK(wh_pmi_barrier() == 0, "barrier");
        printf("rank %d ready\n", rank);
        fflush(stdout);
        sleep((unsigned)atoi(argv[2]));
        finalize();
        return 0;
    }
    if (!strcmp(mode, "output") && argc == 3) {
        init();
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            /* a line in three writes, so partial lines of ranks would mix */
            char a[64], b[64];
            snprintf(a, sizeof a, "out rank %d ", rank);
            snprintf(b, sizeof b, "line %d end\n", i);
            put(a, strlen(a));
            if (i % 16 == 0)
                usleep(1000);
            put(b, 5);
            put(b + 5, strlen(b) - 5);
            dprintf(2, "err rank %d line %d end\n", rank, i);
        }
        finalize();
        return 0;
    }
    if (!strcmp(mode, "args")) {
        for (int i = 2; i < argc; i++)
            printf("arg[%d]=<%s>\n", i - 2, argv[i]);
        return 0;
    }
    if (!strcmp(mode, "env")) {
        init();
        static const char *const vars[] = {"PMI_RANK", "PMI_SIZE", "WHARF_HOST_INDEX",
                                           "WHARF_HOST_NAME", "WHARF_LOCAL_RANK",
                                           "WHARF_LOCAL_SIZE", "WHARF_TEST_VAR", "XTEST_A",
                                           "XTEST_B", "LD_LIBRARY_PATH", "MPI_LOCALRANKID",
                                           "MV2_COMM_WORLD_LOCAL_SIZE"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
            const char *v = getenv(vars[i]);
            printf("rank %d %s=%s\n", rank, vars[i], v ? v : "(unset)");
        }
        printf("rank %d remote=%s\n", rank, getenv("PMI_PORT") ? "yes" : "no");
        fflush(stdout);
        CHECK(wh_pmi_barrier() == 0, "barrier");
        finalize();
        return 0;
    }
    if (!strcmp(mode, "app") && argc == 3) {
        init();
        char cwd[512];
        const char *v = getenv("MPMD_VAR");
        printf("rank %d of %d app %d tag %s cwd %s var %s\n", rank, size, wh_pmi_appnum(), argv[2],
               getcwd(cwd, sizeof cwd) ? cwd : "?", v ? v : "(unset)");
        fflush(stdout);
        CHECK(wh_pmi_barrier() == 0, "barrier");
        finalize();
        return 0;
    }
    if (!strcmp(mode, "stdin")) {
        init();
        char first[128] = "-", buf[65536];
        size_t bytes = 0, lines = 0, fl = 0;
        int infirst = 1;
        ssize_t n;
        while ((n = read(0, buf, sizeof buf)) > 0) {
            for (ssize_t k = 0; k < n; k++) {
                if (buf[k] == '\n') {
                    lines++;
                    infirst = 0;
                } else if (infirst && fl + 1 < sizeof first) {
                    first[fl++] = buf[k];
                    first[fl] = '\0';
                }
            }
            bytes += (size_t)n;
        }
        CHECK(n == 0, "read stdin");
        printf("rank %d stdin %zu %zu %s\n", rank, bytes, lines, first);
        fflush(stdout);
        CHECK(wh_pmi_barrier() == 0, "barrier");
        finalize();
        return 0;
    }
    if (!strcmp(mode, "skip") && argc == 3) {
        const char *r = getenv("PMI_RANK");
        if (r && atoi(r) == atoi(argv[2]))
            return 0;
        init();
        block_forever();
    }
    if (!strcmp(mode, "closefd") && argc == 3) {
        init();
        if (rank == atoi(argv[2])) {
            close(wh_pmi_fd());
            sleep(30);
            return 0;
        }
        block_forever();
    }
    if (!strcmp(mode, "watch") && argc == 4) {
        init();
        CHECK(!wh_pmi_lost(), "connection lost before the barrier");
        CHECK(wh_pmi_barrier() == 0, "barrier");
        if (rank == atoi(argv[2]))
            exit(3);
        for (int i = 0; i < 3000; i++) {
            if (wh_pmi_lost()) {
                char path[4096];
                snprintf(path, sizeof path, "%s.%d", argv[3], rank);
                FILE *f = fopen(path, "w");
                CHECK(f, "create %s", path);
                fclose(f);
                return 0;
            }
            usleep(10 * 1000);
        }
        return 5;
    }
    if (!strcmp(mode, "raw") && argc == 3) {
        const char *fd = getenv("PMI_FD");
        CHECK(fd, "no PMI_FD");
        char out[4096];
        size_t n = 0;
        for (const char *c = argv[2]; *c && n < sizeof out; c++) {
            if (*c == '\\' && c[1]) {
                c++;
                out[n++] = *c == 'n' ? '\n' : *c == '0' ? '\0' : *c;
            } else {
                out[n++] = *c;
            }
        }
        CHECK(write(atoi(fd), out, n) == (ssize_t)n, "raw write");
        sleep(30);
        return 0;
    }
    fprintf(stderr, "usage: pmi_test kvs|abort CODE RANK|crash RANK|exit CODE RANK|nofinalize|"
                    "sleep SECS|output LINES|args ...|env|skip RANK|closefd RANK|watch RANK FILE|raw LINE\n");
    return 2;
}
