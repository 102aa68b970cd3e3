/* Minimal unit-test helpers: CHECK(cond) counts; DONE() prints "N passed, M failed". */
#ifndef WH_TEST_CHECK_H
#define WH_TEST_CHECK_H
#include <stdio.h>
static int wh_t_pass, wh_t_fail;
#define CHECK(cond)                                                                               \
    do {                                                                                          \
        if (cond)                                                                                 \
            wh_t_pass++;                                                                          \
        else {                                                                                    \
            wh_t_fail++;                                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);              \
        }                                                                                         \
    } while (0)
#define DONE()                                                                                    \
    (printf("%d passed, %d failed\n", wh_t_pass, wh_t_fail), wh_t_fail ? 1 : 0)
#endif
