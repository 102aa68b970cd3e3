/* The counting check of the test programs that go on after a failed check and report the
 * count at the end (tests/mpi/rma_*.c, coll_*.c; p2p_check.h is the aborting kind).
 * Define CHECK_RANK and CHECK_FAILS before including: the program's rank and its
 * failure counter (ints in scope wherever CHECK is used).  A failed check counts; the
 * first CHECK_PRINT_MAX of them print rank, file, line and the message to stderr. */
#ifndef COUNT_CHECK_H
#define COUNT_CHECK_H
#include <stdio.h>

#ifndef CHECK_PRINT_MAX
#define CHECK_PRINT_MAX 10
#endif

#define CHECK(c, ...)                                                                             \
    do {                                                                                          \
        if (!(c) && (CHECK_FAILS)++ < CHECK_PRINT_MAX) {                                          \
            fprintf(stderr, "rank %d: FAIL %s:%d: ", (CHECK_RANK), __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
        }                                                                                         \
    } while (0)

#endif
