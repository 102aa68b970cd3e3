/* Emulator tests load the driver as wharf does: dlopen("libcuda.so.1"),
 * then every entry point through cuGetProcAddress. */
#ifndef CUDAEMU_T_COMMON_H
#define CUDAEMU_T_COMMON_H
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_fail;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                 \
            t_fail++;                                                                                                  \
        }                                                                                                              \
    } while (0)
#define CK(call) CHECK((call) == CUDA_SUCCESS)

static __typeof__(&cuGetProcAddress) p_cuGetProcAddress;

static void *t_sym(const char *name)
{
    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    if (p_cuGetProcAddress(name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) || !fn) {
        fprintf(stderr, "cuGetProcAddress(%s) failed\n", name);
        exit(2);
    }
    return fn;
}

static void t_load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
        exit(2);
    }
    /* the one symbol looked up by name: the v12 entry point */
    p_cuGetProcAddress = (__typeof__(p_cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!p_cuGetProcAddress) {
        fprintf(stderr, "no cuGetProcAddress_v2\n");
        exit(2);
    }
}

/* F(cuMemAlloc) declares p_cuMemAlloc of the header's exact type and fills it */
#define F(name) static __typeof__(&name) p_##name
#define LOAD(name) p_##name = (__typeof__(p_##name))t_sym(#name)
#endif
