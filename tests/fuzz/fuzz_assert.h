/* The fuzzers' invariant check: a violated invariant names the file, line and condition and
 * aborts (a non-zero exit for ctest, a crash report for libFuzzer). */
#ifndef WH_FUZZ_ASSERT_H
#define WH_FUZZ_ASSERT_H
#include <stdio.h>
#include <stdlib.h>

#define FZ_ASSERT(c)                                                                               \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c);             \
            abort();                                                                               \
        }                                                                                          \
    } while (0)
#endif
