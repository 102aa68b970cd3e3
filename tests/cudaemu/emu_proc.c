/* cudaemu: cuGetProcAddress (the v12 signature, plus the older 4-argument
 * export) and the error names, over the tables shared with the rgpu client
 * driver (src/rgpu/cu_table.h: base name + the CUDA version the caller was
 * written for -> the versioned entry point the header's macros pick). */
#include "emu.h"
#include "rgpu/cu_table.h"

/* the entry points and errors: the table shared with the rgpu client driver */
static const cu_proc_t procs[] = {CU_PROCS_COMMON(CU_PROC_ENTRY) CU_PROCS_EMU(CU_PROC_ENTRY)};

EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus)
{
    (void)flags; /* per-thread default stream variants are the legacy ones here */
    return cu_proc_lookup(procs, sizeof procs / sizeof *procs, symbol, pfn, cudaVersion, symbolStatus);
}

/* the 4-argument export older callers (CUDA 11.3 - 11.8 headers) link to */
#undef cuGetProcAddress
EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
EMU_API CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

EMU_API CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    return cu_error_lookup(error, pStr, 0);
}

EMU_API CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    return cu_error_lookup(error, pStr, 1);
}
