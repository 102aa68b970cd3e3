/* common.h - shared code of the wharf micro-benchmark suite (bench/suite).
 *
 * Plain MPI + C11 + POSIX: builds with any mpicc (wharf, MPICH, Open MPI) and
 * contains nothing wharf-specific.  Every benchmark is one .c file that
 * includes this header (header-only: all functions are static).
 *
 * What lives here: option parsing (-m -i -x -c -W -f -s -w -M -h), iteration
 * counts, page-aligned MPI_Alloc_mem buffers, data patterns for validation,
 * OSU-style output, the rank 0/1 pair helpers used by the point-to-point and
 * one-sided tests, the one-sided driver (window setup, "SKIPPED" detection,
 * put/get/accumulate loops) and the collective driver. */
#ifndef WB_COMMON_H
#define WB_COMMON_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>

/* ------------------------------------------------------------------------ */
/* Benchmark description and options                                        */
/* ------------------------------------------------------------------------ */

enum {
    WB_NEED2 = 1u << 0,  /* needs at least 2 ranks */
    WB_WINDOW = 1u << 1, /* uses -W (window of messages per iteration) */
    WB_RMA = 1u << 2,    /* one-sided: uses -s and -w */
    WB_COLL = 1u << 3,   /* collective: avg over ranks, -f adds min/max */
    WB_NOSIZE = 1u << 4, /* no message size (barrier): one row, size 0 */
    WB_PAIR = 1u << 5,   /* only ranks 0 and 1 measure, the others wait */
    WB_THREADS = 1u << 6, /* asks MPI_THREAD_MULTIPLE (wb.provided says what it got) */
};

struct wb_bench {
    const char *name;     /* executable name, e.g. "wh_latency" */
    const char *what;     /* one-line description for the header */
    const char *columns;  /* value column names after "Size", separated by '|' */
    size_t min_size;      /* default -m MIN */
    size_t max_size;      /* default -m MAX */
    int iters;            /* default -i */
    int warmup;           /* default -x */
    int window;           /* default -W (0: not used) */
    size_t elem;          /* element size; smaller sizes are skipped */
    unsigned flags;
};

enum { WB_SYNC_FENCE, WB_SYNC_LOCK };

struct wb_opts {
    size_t min_size, max_size;
    int iters, warmup, window;
    int validate, full;
    int sync;      /* one-sided: WB_SYNC_FENCE or WB_SYNC_LOCK */
    int win_alloc; /* one-sided: 0 = MPI_Win_create, 1 = MPI_Win_allocate */
    size_t cap;    /* per-buffer memory cap for window slots (-M) */
    int cuda;      /* -d cuda: message buffers in CUDA device memory */
    int malloc;    /* -d malloc: host buffers from posix_memalign instead of MPI_Alloc_mem */
};

/* Sizes above this use iterations/10 and warm-up/10 (like OSU's "large"). */
#define WB_LARGE ((size_t)8192)
/* Largest message size accepted by -m (counts are passed as int). */
#define WB_SIZE_LIMIT ((size_t)1 << 30)
/* Default memory cap for the per-message slots of windowed tests. */
#define WB_DEFAULT_CAP ((size_t)64 << 20)
/* Printed validation errors per rank before the rest are only counted. */
#define WB_MAX_REPORTS 10

enum { WB_TAG_DATA = 11, WB_TAG_ACK = 12, WB_TAG_SYNC = 13, WB_TAG_CTL = 14 };

static struct {
    const struct wb_bench *b;
    struct wb_opts o;
    int rank, nranks;
    long errors;     /* local validation errors */
    long checks;     /* local buffers validated */
    int reports;     /* errors printed so far */
    int columns_out; /* column header printed */
    int skipped;     /* benchmark skipped (one-sided unavailable) */
    int provided;    /* thread level from MPI_Init_thread (WB_THREADS) */
} wb;

/* ------------------------------------------------------------------------ */
/* Small utilities                                                          */
/* ------------------------------------------------------------------------ */

static inline void wb_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "%s: rank %d: ", wb.b ? wb.b->name : "wh_bench", wb.rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

/* The text of an MPI error code (never fails: falls back to the number). */
static inline void wb_errstr(int code, char *out, size_t outlen)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(code, s, &len) != MPI_SUCCESS || len <= 0) {
        snprintf(out, outlen, "MPI error code %d", code);
        return;
    }
    if (len > MPI_MAX_ERROR_STRING)
        len = MPI_MAX_ERROR_STRING;
    s[len] = 0;
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\r'))
        s[--len] = 0;
    snprintf(out, outlen, "%s", s);
}

/* Abort with the error string of rc; for calls made under MPI_ERRORS_RETURN. */
static inline void wb_mpi_fail(const char *call, int rc)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    wb_errstr(rc, s, sizeof s);
    wb_die("%s failed: %s", call, s);
}

#define WB_CHECK(call)                                                                             \
    do {                                                                                           \
        int wb_rc_ = (call);                                                                       \
        if (wb_rc_ != MPI_SUCCESS)                                                                 \
            wb_mpi_fail(#call, wb_rc_);                                                            \
    } while (0)

static inline size_t wb_pagesize(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static inline size_t wb_next_size(size_t s)
{
    if (s == 0)
        return 1;
    if (s > SIZE_MAX / 2)
        return SIZE_MAX;
    return s * 2;
}

#define WB_FOR_SIZES(s) for (size_t s = wb.o.min_size; s <= wb.o.max_size; s = wb_next_size(s))

static inline int wb_iters(size_t size)
{
    int it = wb.o.iters;
    if (size > WB_LARGE) {
        int lo = it < 10 ? it : 10;
        it = it / 10 > lo ? it / 10 : lo;
    }
    return it;
}

static inline int wb_warmup(size_t size)
{
    int w = wb.o.warmup;
    if (size > WB_LARGE) {
        int lo = w < 1 ? w : 1;
        w = w / 10 > lo ? w / 10 : lo;
    }
    return w;
}

/* ------------------------------------------------------------------------ */
/* Option parsing                                                           */
/* ------------------------------------------------------------------------ */

static inline void wb_usage(FILE *f)
{
    const struct wb_bench *b = wb.b;
    fprintf(f, "usage: %s [-m [MIN:]MAX] [-i ITERS] [-x WARMUP] [-c] [-d host|malloc|cuda]", b->name);
    if (b->flags & WB_WINDOW)
        fprintf(f, " [-W WINDOW] [-M BYTES]");
    if (b->flags & WB_RMA)
        fprintf(f, " [-s fence|lock] [-w create|allocate]");
    if (b->flags & WB_COLL)
        fprintf(f, " [-f]");
    fprintf(f, " [-h]\n  %s\n", b->what);
    fprintf(f, "  -d cuda     message buffers in CUDA device memory (GPU-aware MPI; the driver is loaded\n"
               "              with dlopen, GPU = rank modulo the visible GPUs; not with -c or one-sided)\n");
    fprintf(f, "  -d malloc   host buffers from posix_memalign (as OSU) instead of MPI_Alloc_mem (default;\n"
               "              an MPI may place that memory where its peers reach it directly)\n");
    fprintf(f, "  -m MIN:MAX  message sizes in bytes, powers of two from MIN (default %zu:%zu);\n"
               "              MAX alone, MIN: and :MAX work too; K, M, G suffixes (x1024)\n",
            b->min_size, b->max_size);
    fprintf(f, "  -i ITERS    timed iterations per size (default %d; sizes above %zu bytes use ITERS/10,\n"
               "              but at least min(ITERS, 10))\n",
            b->iters, WB_LARGE);
    fprintf(f, "  -x WARMUP   untimed warm-up iterations per size (default %d; /10 above %zu bytes)\n",
            b->warmup, WB_LARGE);
    fprintf(f, "  -c          validate: fill data with per-rank/per-iteration patterns and check every\n"
               "              received buffer; errors are reported and the exit status is 1.\n"
               "              Timings then include the fill/check work: do not publish them.\n");
    if (b->flags & WB_WINDOW) {
        fprintf(f, "  -W WINDOW   messages in flight per iteration (default %d)\n", b->window);
        fprintf(f, "  -M BYTES    memory cap per slot buffer; with WINDOW*SIZE above it, slots are\n"
                   "              reused round-robin (default 64M)\n");
    }
    if (b->flags & WB_RMA) {
        fprintf(f, "  -s fence    synchronize with MPI_Win_fence after every operation (default)\n"
                   "  -s lock     MPI_Win_lock once per size, MPI_Win_flush after every operation\n"
                   "  -w create   window from MPI_Win_create on MPI_Alloc_mem memory (default)\n"
                   "  -w allocate window from MPI_Win_allocate\n");
    }
    if (b->flags & WB_COLL)
        fprintf(f, "  -f          full output: add min and max over ranks of the per-rank average\n");
    fprintf(f, "  -h          this help\n");
}

static inline int wb_parse_size(const char *s, size_t *out)
{
    char *end;
    if (*s == 0 || *s == '-')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != 0 || (v != 0 && mul > ULLONG_MAX / v))
        return -1;
    v *= mul;
    if (v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

static inline int wb_parse_int(const char *s, int lo, int *out)
{
    char *end;
    if (*s == 0)
        return -1;
    long v = strtol(s, &end, 10);
    if (*end != 0 || v < lo || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* 0: run; 1: help printed, exit 0; 2: error printed, exit 2.  Only rank 0 prints. */
static inline int wb_parse(int argc, char **argv)
{
    const struct wb_bench *b = wb.b;
    struct wb_opts *o = &wb.o;
    int loud = wb.rank == 0;
    o->min_size = b->min_size;
    o->max_size = b->max_size;
    o->iters = b->iters;
    o->warmup = b->warmup;
    o->window = b->window > 0 ? b->window : 1;
    o->validate = 0;
    o->full = 0;
    o->sync = WB_SYNC_FENCE;
    o->win_alloc = 0;
    o->cap = WB_DEFAULT_CAP;
    o->cuda = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (a[0] != '-' || a[1] == 0 || a[2] != 0) {
            if (loud)
                fprintf(stderr, "%s: unexpected argument '%s'\n", b->name, a);
            goto bad;
        }
        char opt = a[1];
        if (strchr("mixWsMwd", opt)) {
            if (i + 1 >= argc) {
                if (loud)
                    fprintf(stderr, "%s: option -%c needs a value\n", b->name, opt);
                goto bad;
            }
            val = argv[++i];
        }
        switch (opt) {
        case 'h':
            if (loud)
                wb_usage(stdout);
            return 1;
        case 'c': o->validate = 1; break;
        case 'd':
            if (!strcmp(val, "cuda"))
                o->cuda = 1;
            else if (!strcmp(val, "malloc"))
                o->malloc = 1;
            else if (strcmp(val, "host"))
                goto badval;
            break;
        case 'f': o->full = 1; break;
        case 'm': {
            char buf[128];
            snprintf(buf, sizeof buf, "%s", val);
            char *colon = strchr(buf, ':');
            size_t lo = o->min_size, hi = o->max_size;
            if (colon) {
                *colon = 0;
                if ((buf[0] && wb_parse_size(buf, &lo)) || (colon[1] && wb_parse_size(colon + 1, &hi)))
                    goto badval;
            } else if (wb_parse_size(buf, &hi))
                goto badval;
            if (lo > hi || hi > WB_SIZE_LIMIT) {
                if (loud)
                    fprintf(stderr, "%s: -m %s: need MIN <= MAX <= %zu\n", b->name, val, WB_SIZE_LIMIT);
                goto bad;
            }
            o->min_size = lo;
            o->max_size = hi;
            break;
        }
        case 'i': if (wb_parse_int(val, 1, &o->iters)) goto badval; break;
        case 'x': if (wb_parse_int(val, 0, &o->warmup)) goto badval; break;
        case 'W': if (wb_parse_int(val, 1, &o->window)) goto badval; break;
        case 'M':
            if (wb_parse_size(val, &o->cap) || o->cap == 0)
                goto badval;
            break;
        case 's':
            if (!strcmp(val, "fence"))
                o->sync = WB_SYNC_FENCE;
            else if (!strcmp(val, "lock") || !strcmp(val, "flush"))
                o->sync = WB_SYNC_LOCK;
            else
                goto badval;
            break;
        case 'w':
            if (!strcmp(val, "create"))
                o->win_alloc = 0;
            else if (!strcmp(val, "allocate"))
                o->win_alloc = 1;
            else
                goto badval;
            break;
        default:
            if (loud)
                fprintf(stderr, "%s: unknown option '%s'\n", b->name, a);
            goto bad;
        }
        continue;
    badval:
        if (loud)
            fprintf(stderr, "%s: bad value '%s' for -%c\n", b->name, val, opt);
        goto bad;
    }
    if (o->cuda && (o->validate || (b->flags & WB_RMA))) {
        if (loud)
            fprintf(stderr, "%s: -d cuda does not go with %s\n", b->name,
                    o->validate ? "-c (validation touches the buffers with the CPU)"
                                : "one-sided benchmarks (windows over device memory)");
        goto bad;
    }
    return 0;
bad:
    if (loud)
        wb_usage(stderr);
    return 2;
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

static inline void wb_print_header(void)
{
    const struct wb_bench *b = wb.b;
    const struct wb_opts *o = &wb.o;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS)
        snprintf(lib, sizeof lib, "(MPI_Get_library_version failed)");
    lib[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = 0;
    char *nl = strpbrk(lib, "\r\n");
    if (nl)
        *nl = 0;
    for (char *q = lib; *q; q++) /* MPICH: "MPICH Version:<TAB>4.0.2" */
        if (*q == '\t')
            *q = ' ';
    len = (int)strlen(lib);
    while (len > 0 && (lib[len - 1] == ' ' || lib[len - 1] == '\t'))
        lib[--len] = 0;
    printf("# %s: %s\n", b->name, b->what);
    printf("# MPI library: %s\n", lib);
    printf("# ranks: %d", wb.nranks);
    if (b->flags & WB_PAIR)
        printf(" (ranks 0 and 1 measure%s)", wb.nranks > 2 ? ", the others wait in a barrier" : "");
    printf(", iterations: %d", o->iters);
    if (!(b->flags & WB_NOSIZE) && o->max_size > WB_LARGE)
        printf(" (%d above %zu B)", wb_iters(WB_LARGE + 1), WB_LARGE);
    printf(", warm-up: %d", o->warmup);
    if (b->flags & WB_WINDOW)
        printf(", window: %d", o->window);
    if (b->flags & WB_RMA)
        printf(", sync: %s, window from: %s", o->sync == WB_SYNC_FENCE ? "fence" : "lock/flush",
               o->win_alloc ? "MPI_Win_allocate" : "MPI_Win_create");
    printf(", validation: %s%s\n", o->validate ? "on (timings include fill/check work)" : "off",
           o->cuda ? ", buffers: CUDA device memory" : "");
    if (strstr(b->columns, "MB/s"))
        printf("# MB/s = 1e6 bytes per second\n");
    fflush(stdout);
}

static inline void wb_columns(void)
{
    if (wb.columns_out)
        return;
    wb.columns_out = 1;
    printf("# %-10s", "Size");
    /* columns: names separated by '|', each right-aligned over its value */
    const char *c = wb.b->columns;
    for (int first = 1; *c; first = 0) {
        size_t n = strcspn(c, "|");
        printf("%s%15.*s", first ? " " : "  ", (int)n, c);
        c += n;
        if (*c == '|')
            c++;
    }
    if ((wb.b->flags & WB_COLL) && wb.o.full)
        printf("  %15s  %15s", "Min Latency(us)", "Max Latency(us)");
    printf("\n");
}

static inline void wb_row(size_t size, double v)
{
    wb_columns();
    printf("%-12zu %15.2f\n", size, v);
    fflush(stdout);
}

static inline void wb_row2(size_t size, double v1, double v2)
{
    wb_columns();
    printf("%-12zu %15.2f  %15.2f\n", size, v1, v2);
    fflush(stdout);
}

static inline void wb_row3(size_t size, double v1, double v2, double v3)
{
    wb_columns();
    printf("%-12zu %15.2f  %15.2f  %15.2f\n", size, v1, v2, v3);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* Start and end                                                            */
/* ------------------------------------------------------------------------ */

static inline void wb_init(int *argc, char ***argv, const struct wb_bench *b)
{
    if (b->flags & WB_THREADS)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &wb.provided);
    else
        MPI_Init(argc, argv);
    wb.b = b;
    MPI_Comm_rank(MPI_COMM_WORLD, &wb.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wb.nranks);
    int r = wb_parse(*argc, *argv);
    if (r) {
        fflush(stdout);
        MPI_Finalize();
        exit(r == 1 ? 0 : 2);
    }
    if (wb.rank == 0)
        wb_print_header();
}

/* Benchmarks that need a partner: with one rank say so and exit 0. */
static inline void wb_require_pair(void)
{
    if (wb.nranks >= 2)
        return;
    if (wb.rank == 0) {
        printf("# %s needs at least 2 ranks (running with %d): nothing to measure\n", wb.b->name,
               wb.nranks);
        fflush(stdout);
    }
    MPI_Finalize();
    exit(0);
}

/* Ranks 0 and 1 exchange a value (point-to-point only, no collectives). */
static inline void wb_pair_exchange(const void *mine, void *theirs, int bytes)
{
    int peer = 1 - wb.rank;
    MPI_Sendrecv(mine, bytes, MPI_BYTE, peer, WB_TAG_CTL, theirs, bytes, MPI_BYTE, peer, WB_TAG_CTL,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Ranks 0 and 1 synchronize with each other. */
static inline void wb_pair_sync(void)
{
    char a = 0, b = 0;
    int peer = 1 - wb.rank;
    MPI_Sendrecv(&a, 0, MPI_BYTE, peer, WB_TAG_SYNC, &b, 0, MPI_BYTE, peer, WB_TAG_SYNC,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static inline void wb_print_validation(long errors, long checks)
{
    if (wb.rank != 0 || !wb.o.validate || wb.skipped)
        return;
    if (errors)
        printf("# validation: FAILED: %ld error(s) in %ld checked buffers\n", errors, checks);
    else if (!checks)
        printf("# validation: nothing to check\n");
    else
        printf("# validation: passed (%ld buffers checked)\n", checks);
    fflush(stdout);
}

/* End of a benchmark where only ranks 0 and 1 work: sum their validation
 * results, let everybody meet in a barrier, finalize.  Returns the exit status. */
static inline int wb_finish_pair(void)
{
    long mine[2] = {wb.errors, wb.checks}, theirs[2] = {0, 0};
    if (wb.nranks >= 2 && wb.rank < 2)
        wb_pair_exchange(mine, theirs, (int)sizeof mine);
    long errors = mine[0] + theirs[0], checks = mine[1] + theirs[1];
    wb_print_validation(errors, checks);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return errors ? 1 : 0;
}

/* End of a benchmark where every rank works. */
static inline int wb_finish_all(void)
{
    long mine[2] = {wb.errors, wb.checks}, tot[2] = {0, 0};
    MPI_Allreduce(mine, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    wb_print_validation(tot[0], tot[1]);
    MPI_Finalize();
    return tot[0] ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

struct wb_mem {
    void *base; /* what MPI_Alloc_mem returned */
    char *p;    /* page-aligned start */
    size_t len;
};

/* -d cuda: the CUDA driver API by dlopen (no CUDA header needed). */
static struct {
    int (*init)(unsigned);
    int (*count)(int *);
    int (*get)(int *, int);
    int (*retain)(void **, int);
    int (*setcur)(void *);
    int (*alloc)(unsigned long long *, size_t);
    int (*free)(unsigned long long);
    int (*memset8)(unsigned long long, unsigned char, size_t);
} wb_cu;

static inline void wb_cuda_setup(void)
{
    if (wb_cu.alloc)
        return;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    int (*gpa)(const char *, void **, int, unsigned long long, int *) =
        lib ? (int (*)(const char *, void **, int, unsigned long long, int *))dlsym(lib, "cuGetProcAddress_v2")
            : NULL;
    if (!gpa)
        wb_die("-d cuda: no CUDA 12 driver (libcuda.so.1 with cuGetProcAddress_v2)");
    const char *names[] = {"cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDevicePrimaryCtxRetain",
                           "cuCtxSetCurrent", "cuMemAlloc", "cuMemFree", "cuMemsetD8"};
    void **slots = (void **)&wb_cu;
    for (int i = 0; i < 8; i++)
        if (gpa(names[i], &slots[i], 12000, 0, NULL) || !slots[i])
            wb_die("-d cuda: the driver has no %s", names[i]);
    int n = 0, dev = 0;
    void *ctx = NULL;
    if (wb_cu.init(0) || wb_cu.count(&n) || n < 1 || wb_cu.get(&dev, wb.rank % n) || wb_cu.retain(&ctx, dev) ||
        wb_cu.setcur(ctx))
        wb_die("-d cuda: no usable GPU (%d visible)", n);
}

/* Page-aligned MPI_Alloc_mem buffer of len bytes, zeroed (pages touched);
 * with -d malloc from posix_memalign, with -d cuda zeroed device memory. */
static inline struct wb_mem wb_alloc(size_t len)
{
    struct wb_mem m = {NULL, NULL, len};
    if (wb.o.cuda) {
        unsigned long long d = 0;
        wb_cuda_setup();
        if (wb_cu.alloc(&d, len ? len : 1) || wb_cu.memset8(d, 0, len ? len : 1))
            wb_die("-d cuda: cuMemAlloc(%zu) failed", len);
        m.base = m.p = (char *)(uintptr_t)d;
        return m;
    }
    size_t pg = wb_pagesize();
    size_t tot = len + pg;
    if (len > SIZE_MAX - pg || tot > (size_t)PTRDIFF_MAX)
        wb_die("buffer of %zu bytes is too large", len);
    if (wb.o.malloc) {
        if (posix_memalign(&m.base, pg, tot))
            wb_die("posix_memalign(%zu) failed", tot);
    } else {
        int rc = MPI_Alloc_mem((MPI_Aint)tot, MPI_INFO_NULL, &m.base);
        if (rc != MPI_SUCCESS || !m.base)
            wb_die("MPI_Alloc_mem(%zu) failed", tot);
    }
    m.p = (char *)(((uintptr_t)m.base + pg - 1) & ~(uintptr_t)(pg - 1));
    memset(m.p, 0, len);
    return m;
}

static inline void wb_free(struct wb_mem *m)
{
    if (m->base && wb.o.cuda)
        wb_cu.free((unsigned long long)(uintptr_t)m->base);
    else if (m->base && wb.o.malloc)
        free(m->base);
    else if (m->base)
        MPI_Free_mem(m->base);
    m->base = NULL;
    m->p = NULL;
}

/* Windowed tests give each in-flight message its own slot, cache-line
 * aligned, as long as WINDOW*stride fits in the -M cap; beyond that slots
 * are reused round-robin (like OSU, which uses one buffer for all). */
static inline size_t wb_stride(size_t size)
{
    size_t st = (size + 63) & ~(size_t)63;
    return st ? st : 64;
}

static inline int wb_slots(size_t size, int window)
{
    size_t n = wb.o.cap / wb_stride(size);
    if (n < 1)
        n = 1;
    return n < (size_t)window ? (int)n : window;
}

/* Bytes needed for the slots of every size of the run. */
static inline size_t wb_slot_bytes(int window)
{
    size_t need = 0;
    WB_FOR_SIZES(s) {
        size_t b = (size_t)wb_slots(s, window) * wb_stride(s);
        if (b > need)
            need = b;
    }
    return need;
}

/* ------------------------------------------------------------------------ */
/* Validation patterns                                                      */
/* ------------------------------------------------------------------------ */

static inline uint64_t wb_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Seed for the data a given rank sends in a given iteration, slot and size. */
static inline uint64_t wb_seed(int rank, long iter, int slot, size_t size)
{
    return wb_mix64(((uint64_t)(unsigned)rank << 40) ^ ((uint64_t)(unsigned)slot << 20) ^
                    wb_mix64((uint64_t)iter) ^ wb_mix64((uint64_t)size + 0x5151));
}

static inline void wb_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    size_t words = n / 8;
    for (size_t k = 0; k < words; k++) {
        uint64_t w = wb_mix64(seed + k);
        memcpy(p + 8 * k, &w, 8);
    }
    if (n % 8) {
        uint64_t w = wb_mix64(seed + words);
        memcpy(p + 8 * words, &w, n % 8);
    }
}

static inline void wb_report(const char *fmt, ...)
{
    wb.errors++;
    if (wb.reports >= WB_MAX_REPORTS) {
        if (wb.reports++ == WB_MAX_REPORTS)
            fprintf(stderr, "%s: rank %d: further validation errors are counted, not shown\n",
                    wb.b->name, wb.rank);
        return;
    }
    wb.reports++;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: validation error: %s\n", wb.b->name, wb.rank, msg);
    fflush(stderr);
}

/* Check n bytes against wb_fill(seed); what describes the buffer. Returns 1 if bad. */
static inline int wb_check(const void *buf, size_t n, uint64_t seed, const char *what)
{
    const unsigned char *p = buf;
    size_t bad = 0, first = 0;
    unsigned char got = 0, want = 0;
    wb.checks++;
    for (size_t off = 0; off < n; off += 8) {
        uint64_t w = wb_mix64(seed + off / 8);
        unsigned char e[8];
        memcpy(e, &w, 8);
        size_t m = n - off < 8 ? n - off : 8;
        if (memcmp(p + off, e, m) == 0)
            continue;
        for (size_t j = 0; j < m; j++)
            if (p[off + j] != e[j]) {
                if (!bad++) {
                    first = off + j;
                    got = p[off + j];
                    want = e[j];
                }
            }
    }
    if (bad)
        wb_report("%s: %zu of %zu bytes wrong, first at offset %zu: 0x%02x, expected 0x%02x", what,
                  bad, n, first, got, want);
    return bad != 0;
}

/* Received-count check for point-to-point receives. */
static inline void wb_check_count(const MPI_Status *st, size_t expect, const char *what)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    if (cnt < 0 || (size_t)cnt != expect)
        wb_report("%s: received %d bytes, expected %zu", what, cnt, expect);
}

/* Reductions (MPI_FLOAT, MPI_SUM): small integer values, so every sum is exact
 * whatever order the library adds in.  Element k of rank r in iteration it is
 * (7k + 13r + it) mod 61; the sum over all ranks depends only on (7k + it) mod 61. */
static inline float wb_rval(size_t k, int rank, long it)
{
    return (float)((k * 7 + (size_t)rank * 13 + (size_t)it) % 61);
}

static inline void wb_rfill(float *p, size_t count, int rank, long it)
{
    for (size_t k = 0; k < count; k++)
        p[k] = wb_rval(k, rank, it);
}

static inline void wb_rcheck(const float *p, size_t count, int nranks, long it, const char *what)
{
    double table[61];
    for (int b = 0; b < 61; b++) {
        double s = 0;
        for (int r = 0; r < nranks; r++)
            s += (double)((b + r * 13) % 61);
        table[b] = s;
    }
    size_t bad = 0, first = 0;
    wb.checks++;
    for (size_t k = 0; k < count; k++) {
        double want = table[(k * 7 + (size_t)it) % 61];
        if ((double)p[k] != want && !bad++)
            first = k;
    }
    if (bad) {
        double want = table[(first * 7 + (size_t)it) % 61];
        wb_report("%s: %zu of %zu elements wrong, first [%zu] = %g, expected %g", what, bad, count,
                  first, (double)p[first], want);
    }
}

/* ------------------------------------------------------------------------ */
/* Collective driver                                                        */
/* ------------------------------------------------------------------------ */

/* A collective benchmark supplies these; size is in bytes (per rank/block). */
struct wb_coll {
    void (*prepare)(size_t size, long it); /* with -c: fill send data (untimed) */
    void (*call)(size_t size);              /* the timed collective */
    void (*check)(size_t size, long it);    /* with -c: check results (untimed) */
};

/* Average latency per call on each rank; rank 0 prints avg [min max] over ranks. */
static inline void wb_coll_report(size_t size, double local_us)
{
    double mn = 0, mx = 0, sum = 0;
    MPI_Reduce(&local_us, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wb.rank != 0)
        return;
    if (wb.o.full)
        wb_row3(size, sum / wb.nranks, mn, mx);
    else
        wb_row(size, sum / wb.nranks);
}

/* OSU style: each iteration times one call, then all ranks meet in a barrier. */
static inline int wb_coll_run(const struct wb_coll *c)
{
    WB_FOR_SIZES(s) {
        if (s < wb.b->elem)
            continue;
        int it = wb_iters(s), wu = wb_warmup(s);
        double t = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < it + wu; i++) {
            if (wb.o.validate && c->prepare)
                c->prepare(s, i);
            double t0 = MPI_Wtime();
            c->call(s);
            double t1 = MPI_Wtime();
            if (i >= wu)
                t += t1 - t0;
            if (wb.o.validate && c->check)
                c->check(s, i);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        wb_coll_report(s, t * 1e6 / it);
    }
    return wb_finish_all();
}

#include "rma.h" /* one-sided driver */

#endif /* WB_COMMON_H */
