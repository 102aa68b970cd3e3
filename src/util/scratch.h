/* Scratch memory for temporaries of collectives (util/scratch.c). */
#ifndef WH_UTIL_SCRATCH_H
#define WH_UTIL_SCRATCH_H
#include <stddef.h>

/* A block of at least `bytes` bytes (64-byte aligned), NULL when out of
 * memory.  Give it back with wh_scratch_put, never free(). */
void *wh_scratch_get(size_t bytes);
/* Return a block from wh_scratch_get (NULL is ignored). */
void wh_scratch_put(void *p);
/* Release every cached block (MPI_Finalize). */
void wh_scratch_drain(void);
/* Cached bytes right now (tests). */
size_t wh_scratch_cached(void);

#endif
