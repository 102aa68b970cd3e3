/* The memory-kind registry (see mem.h). */
#include <mpi.h>

#include "core/err.h"
#include "mem/cuda/wh_cuda.h"
#include "mem/mem.h"

static const wh_mem_ops_t host_ops = {.name = "host", .owns = NULL, .copy = NULL};
const wh_mem_ops_t *wh_mem_kinds[WH_MEM_KINDS] = {[WH_MEM_HOST] = &host_ops};
int wh_mem_nonhost;
uintptr_t wh_mem_hostpg[WH_MEM_HOSTPG];
static const uint64_t no_gen;
const volatile uint64_t *wh_mem_gen = &no_gen;
uint64_t wh_mem_gen_seen;

int wh_mem_register(int kind, const wh_mem_ops_t *ops)
{
    if (kind <= WH_MEM_HOST || kind >= WH_MEM_KINDS || !ops || !ops->owns || !ops->copy)
        return wh_error(MPI_ERR_INTERN, "memory kind %d: invalid registration", kind);
    wh_mem_kinds[kind] = ops;
    wh_mem_nonhost = 1;
    return MPI_SUCCESS;
}

int wh_mem_query_slow(const void *p)
{
    for (int k = WH_MEM_HOST + 1; k < WH_MEM_KINDS; k++)
        if (wh_mem_kinds[k] && wh_mem_kinds[k]->owns(p))
            return k;
    return WH_MEM_HOST;
}

int wh_mem_copy_slow(void *dst, int dk, const void *src, int sk, size_t n)
{
    int k = dk != WH_MEM_HOST ? dk : sk;
    if (k < 0 || k >= WH_MEM_KINDS || !wh_mem_kinds[k] || !wh_mem_kinds[k]->copy)
        return wh_error(MPI_ERR_INTERN, "no provider copies memory of kind %d", k);
    return wh_mem_kinds[k]->copy(dst, dk, src, sk, n);
}

void wh_mem_unregister(int kind)
{
    if (kind <= WH_MEM_HOST || kind >= WH_MEM_KINDS)
        return;
    wh_mem_kinds[kind] = NULL;
    wh_mem_nonhost = 0;
    for (int k = WH_MEM_HOST + 1; k < WH_MEM_KINDS; k++)
        if (wh_mem_kinds[k])
            wh_mem_nonhost = 1;
}

const char *wh_mem_name(int kind)
{
    if (kind >= 0 && kind < WH_MEM_KINDS && wh_mem_kinds[kind])
        return wh_mem_kinds[kind]->name;
    return kind == WH_MEM_CUDA ? "cuda" : "unknown";
}

int wh_mem_init(void)
{
    return wh_cuda_init();
}

void wh_mem_finalize(void)
{
    wh_cuda_finalize();
}
