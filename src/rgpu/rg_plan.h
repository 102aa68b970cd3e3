/* The plan of a peer copy between two servers (rg_plan.c). */
#ifndef WH_RG_PLAN_H
#define WH_RG_PLAN_H
#include <stddef.h>
#include <stdint.h>

#define RG_PEER_MAXBUF 8 /* intermediate buffers per server and copy */

/* the chunk size and the number of intermediate buffers of a peer copy of n
 * bytes (both servers compute the same plan) */
void rg_peer_plan(uint64_t n, size_t *chunk, int *nbuf);
/* the pieces of that copy (chunks, the last one shorter): how many, and
 * piece k's offset and length (k < npieces) */
static inline uint64_t rg_peer_npieces(uint64_t n, size_t chunk)
{
    return (n + chunk - 1) / chunk;
}
static inline void rg_peer_piece(uint64_t n, size_t chunk, uint64_t k, uint64_t *off, uint64_t *len)
{
    *off = k * chunk;
    *len = n - *off < chunk ? n - *off : chunk;
}
#endif
