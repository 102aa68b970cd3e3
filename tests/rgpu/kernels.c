/* Kernels of the rgpu test application, in the emulator's module convention
 * (tests/cudaemu/cudaemu_kernel.h): CPU implementations exported under the
 * kernel's name, with their parameter sizes. */
#include <stdint.h>

#include "cudaemu_kernel.h"

#define KEXPORT __attribute__((visibility("default")))

/* vadd(const double *a, const double *b, double *c, uint32_t n): c = a + b */
KEXPORT const unsigned cudaemu_params_vadd[] = {4, 8, 8, 8, 4};
KEXPORT void vadd(const cudaemu_launch_t *l, void **p)
{
    uint32_t n = *(uint32_t *)p[3];
    const double *a = l->dev(*(uint64_t *)p[0], (size_t)n * 8);
    const double *b = l->dev(*(uint64_t *)p[1], (size_t)n * 8);
    double *c = l->dev(*(uint64_t *)p[2], (size_t)n * 8);
    if (!n || !a || !b || !c)
        return;
    uint64_t threads = (uint64_t)l->grid[0] * l->block[0];
    for (uint64_t t = 0; t < threads; t++)
        for (uint64_t i = t; i < n; i += threads)
            c[i] = a[i] + b[i];
}

/* scale_add(double *x, double s, uint32_t n): x = x * s + 1 (a second kernel with a scalar) */
KEXPORT const unsigned cudaemu_params_scale_add[] = {3, 8, 8, 4};
KEXPORT void scale_add(const cudaemu_launch_t *l, void **p)
{
    uint32_t n = *(uint32_t *)p[2];
    double s = *(double *)p[1];
    double *x = l->dev(*(uint64_t *)p[0], (size_t)n * 8);
    if (!n || !x)
        return;
    for (uint32_t i = 0; i < n; i++)
        x[i] = x[i] * s + 1.0;
}

/* sum(const double *x, double *out, uint32_t n): out[0] = sum of x, in index order */
KEXPORT const unsigned cudaemu_params_sum[] = {3, 8, 8, 4};
KEXPORT void sum(const cudaemu_launch_t *l, void **p)
{
    uint32_t n = *(uint32_t *)p[2];
    const double *x = l->dev(*(uint64_t *)p[0], (size_t)n * 8 + !n);
    double *out = l->dev(*(uint64_t *)p[1], 8);
    if (!out || (n && !x))
        return;
    double s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += x[i];
    out[0] = s;
}
