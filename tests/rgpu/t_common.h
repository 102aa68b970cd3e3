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

/* the primary contexts of the first and the last GPU (through the client:
 * one per server); 0, or 1 with a failed check when there are fewer than 2 */
static inline int t_two_gpus(CUcontext ctx[2])
{
    int ndev;
    CU(cuInit(0));
    CU(cuDeviceGetCount(&ndev));
    CHECK(ndev >= 2);
    if (ndev < 2)
        return 1;
    for (int d = 0; d < 2; d++) {
        CUdevice dev;
        CU(cuDeviceGet(&dev, d == 0 ? 0 : ndev - 1));
        CU(cuDevicePrimaryCtxRetain(&ctx[d], dev));
    }
    return 0;
}
#endif
