/* Memory kinds: every copy of user data (eager copy-in/out, pipelined
 * fragments, zero-copy staging, pack/unpack in the protocol layer) goes
 * through wh_mem_copy, so a new kind of memory is one new provider here and
 * not a change in every channel.  Host memory is the inline memcpy; CUDA
 * device memory (mem/cuda) is registered at init when a driver is present.
 * Without a provider the hot path costs one predictable branch: wh_mem_query
 * tests wh_mem_nonhost, wh_mem_copy tests both kinds against host. */
#ifndef WH_MEM_MEM_H
#define WH_MEM_MEM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum wh_mem_kind { WH_MEM_HOST = 0, WH_MEM_CUDA = 1, WH_MEM_KINDS = 4 };

/* A provider of one memory kind (registered at init by its directory). */
typedef struct wh_mem_ops {
    const char *name;
    /* 1 if p lies in memory of this kind (pointer query) */
    int (*owns)(const void *p);
    /* copy n bytes between dst (kind dk) and src (kind sk), one of them this kind */
    int (*copy)(void *dst, int dk, const void *src, int sk, size_t n);
} wh_mem_ops_t;

extern const wh_mem_ops_t *wh_mem_kinds[WH_MEM_KINDS];
extern int wh_mem_nonhost; /* a non-host provider is registered */

int wh_mem_register(int kind, const wh_mem_ops_t *ops);
void wh_mem_unregister(int kind);
/* Register the providers whose runtime is present (WHARF_CUDA), at MPI_Init. */
int wh_mem_init(void);
void wh_mem_finalize(void);
/* Name of a kind (for messages and reports). */
const char *wh_mem_name(int kind);
int wh_mem_query_slow(const void *p);
int wh_mem_copy_slow(void *dst, int dk, const void *src, int sk, size_t n);

/* Host pages known to be host memory (page number + 1, direct-mapped),
 * valid while *wh_mem_gen equals wh_mem_gen_seen (the providers' count of
 * allocations: a new one may turn a host address into device memory).
 * Filled and reset by the providers' caches (mem/cuda/kcache.c); empty when
 * they have no allocation events. */
#define WH_MEM_HOSTPG 1024
extern uintptr_t wh_mem_hostpg[WH_MEM_HOSTPG];
extern const volatile uint64_t *wh_mem_gen;
extern uint64_t wh_mem_gen_seen;

/* Kind of the memory at p (host unless a provider claims it). */
static inline int wh_mem_query(const void *p)
{
    if (__builtin_expect(!wh_mem_nonhost, 1))
        return WH_MEM_HOST;
    uintptr_t pg = ((uintptr_t)p >> 12) + 1;
    if (__builtin_expect(wh_mem_hostpg[pg % WH_MEM_HOSTPG] == pg && *wh_mem_gen == wh_mem_gen_seen, 1))
        return WH_MEM_HOST; /* a known host page */
    return wh_mem_query_slow(p);
}

/* Copy n bytes; returns an MPI error code (MPI_SUCCESS = 0). */
static inline int wh_mem_copy(void *dst, int dk, const void *src, int sk, size_t n)
{
    if (__builtin_expect((dk | sk) == WH_MEM_HOST, 1)) {
        memcpy(dst, src, n);
        return 0;
    }
    return wh_mem_copy_slow(dst, dk, src, sk, n);
}
#endif
