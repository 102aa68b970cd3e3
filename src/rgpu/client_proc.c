/* rgpu client driver: cuGetProcAddress over the forwarded entry points and
 * the error names (the tables shared with the emulator, rgpu/cu_table.h). */
#include <string.h>

#include "rgpu/client.h"
#include "rgpu/cu_table.h"

static const cu_proc_t procs[] = {CU_PROCS_COMMON(CU_PROC_ENTRY)};

RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *status)
{
    (void)flags;
    return cu_proc_lookup(procs, sizeof procs / sizeof *procs, symbol, pfn, cudaVersion, status);
}

RGC_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char **p)
{
    return cu_error_lookup(error, p, 0);
}

RGC_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char **p)
{
    return cu_error_lookup(error, p, 1);
}

#undef cuGetProcAddress
RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
RGC_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
