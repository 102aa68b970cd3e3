/* Helpers for the point-to-point MPI test programs (tests/mpi/p2p_*.c).
 * Silent on success; on a failed check print the rank, the current step and
 * the problem to stdout and abort the job with a non-zero code. */
#ifndef P2P_CHECK_H
#define P2P_CHECK_H
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int p2p_rank = -1, p2p_size = 0;
static char p2p_step[256] = "init";

static void p2p_setstep(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static void p2p_setstep(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p2p_step, sizeof p2p_step, fmt, ap);
    va_end(ap);
}

static void p2p_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
static void p2p_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("FAIL rank %d/%d [%s] %s:%d: %s\n", p2p_rank, p2p_size, p2p_step, file, line, msg);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void p2p_checkfail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static void p2p_checkfail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p2p_fail(file, line, "check `%s` failed: %s", cond, msg);
}

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond))                                                                              \
            p2p_checkfail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                \
    } while (0)

/* An MPI call that must succeed. */
#define MPI_OK(call)                                                                              \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        if (rc_ != MPI_SUCCESS) {                                                                 \
            char es_[MPI_MAX_ERROR_STRING];                                                       \
            int el_ = 0;                                                                          \
            es_[0] = 0;                                                                           \
            MPI_Error_string(rc_, es_, &el_);                                                     \
            p2p_fail(__FILE__, __LINE__, "%s returned %d: %s", #call, rc_, es_);                  \
        }                                                                                         \
    } while (0)

/* An MPI call that must fail with error class cls (ERRORS_RETURN set). */
#define MPI_FAILS(cls, call)                                                                      \
    do {                                                                                          \
        int rc_ = (call), cl_ = -1;                                                               \
        if (rc_ != MPI_SUCCESS)                                                                   \
            MPI_Error_class(rc_, &cl_);                                                           \
        if (cl_ != (cls))                                                                         \
            p2p_fail(__FILE__, __LINE__, "%s returned %d (class %d), expected class %s (%d)", #call, \
                     rc_, cl_, #cls, cls);                                                        \
    } while (0)

static void p2p_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &p2p_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p2p_size);
}

/* Deterministic byte pattern for (seed, index). */
static inline unsigned char p2p_pat(unsigned seed, size_t i)
{
    uint32_t x = (uint32_t)(i * 2654435761u) ^ (seed * 40503u + 0x9e37u);
    return (unsigned char)(x ^ (x >> 13) ^ (x >> 24));
}

static void __attribute__((unused)) p2p_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        p[i] = p2p_pat(seed, i);
}

/* Index of the first wrong byte, or (size_t)-1. */
static size_t __attribute__((unused)) p2p_verify(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != p2p_pat(seed, i))
            return i;
    return (size_t)-1;
}

static MPI_Count __attribute__((unused)) p2p_count(const MPI_Status *st, MPI_Datatype t)
{
    MPI_Count n = -1;
    MPI_Get_count_c(st, t, &n);
    return n;
}
#endif
