/* shared checks of the rgpu tests (they run on the emulator directly and
 * through the rgpu client driver, with the same code) */
#ifndef RGPU_T_COMMON_H
#define RGPU_T_COMMON_H
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

static int t_fail;
#define CHECK(c)                                                                                            \
    do {                                                                                                    \
        if (!(c)) {                                                                                         \
            fprintf(stderr, "check failed: %s:%d: %s\n", __FILE__, __LINE__, #c);                           \
            t_fail++;                                                                                       \
        }                                                                                                   \
    } while (0)
#define CU(x)                                                                                               \
    do {                                                                                                    \
        CUresult r_ = (x);                                                                                  \
        if (r_ != CUDA_SUCCESS) {                                                                           \
            const char *n_ = NULL;                                                                          \
            cuGetErrorName(r_, &n_);                                                                        \
            fprintf(stderr, "check failed: %s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, (int)r_,         \
                    n_ ? n_ : "?");                                                                         \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)
#define CU_IS(x, want)                                                                                      \
    do {                                                                                                    \
        CUresult r_ = (x);                                                                                  \
        if (r_ != (want)) {                                                                                 \
            fprintf(stderr, "check failed: %s:%d: %s = %d, expected %s\n", __FILE__, __LINE__, #x, (int)r_, \
                    #want);                                                                                 \
            t_fail++;                                                                                       \
        }                                                                                                   \
    } while (0)
#endif
