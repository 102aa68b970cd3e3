/* Locality: which ranks share this node, found by what they really share (a
 * node region, see region.h and registry.h), and which channels each pair of
 * co-resident ranks can use, with the reason for every rejected one.
 *
 * Init sequence (each step ends with the PMI barrier the caller runs):
 *   wh_loc_publish()  rank 0 publishes the job nonce; everyone its hostname
 *   wh_loc_join()     open the region, take a slot, write my record and tag
 *   wh_loc_members()  read the tags: co-residents -> wh_job.local_*; publish my group
 *   ... channels set up (shm carves queues with wh_loc_carve) ...
 *   wh_loc_finish()   groups of every rank (wh_job.host_of), unlink, report */
#ifndef WH_LOCALITY_LOCALITY_H
#define WH_LOCALITY_LOCALITY_H
#include <stddef.h>
#include "locality/registry.h"

/* Why a channel is not used for a pair (report codes). */
enum {
    WH_WHY_OK = 0,
    WH_WHY_NOT_LOCAL,     /* shm: not in the same node region */
    WH_WHY_FORCED_NET,    /* shm: WHARF_CHANNEL=net */
    WH_WHY_NO_REGION,     /* shm: node region unavailable (this rank or the peer) */
    WH_WHY_CMA_OFF,       /* cma: disabled by WHARF_CMA=0 */
    WH_WHY_KERNEL,        /* cma: different kernels (boot_id) */
    WH_WHY_PIDNS,         /* cma: different PID namespaces */
    WH_WHY_EPERM,         /* cma: probe failed, not permitted */
    WH_WHY_PROBE,         /* cma: probe failed otherwise */
    WH_WHY_NA,            /* cma: needs shm */
    WH_WHY_NO_ENDPOINT,   /* net: the peer published no network endpoint */
    WH_WHY_CMA_SLOW,      /* cma: possible, but MPI_Init measured it slower than the cells (WHARF_CMA_SLOW_RATIO) */
    WH_WHY_MAX
};
const char *wh_loc_why_text(int why);

int wh_loc_publish(void);
int wh_loc_join(void);
int wh_loc_members(void);
int wh_loc_finish(void);
void wh_loc_finalize(void);
void wh_loc_abort_cleanup(void);

/* 1 when this rank has a node region with co-residents */
int wh_loc_have_region(void);
/* 1 when this rank could not set up its node region (WHARF_NODE_FALLBACK=net) */
int wh_loc_failed(void);
/* Carve len bytes (64-byte aligned) out of the node region, at the same offset
 * in every co-resident rank when they carve in the same order. */
void *wh_loc_carve(size_t len, int *rc);
/* my record / the record of local index lp (NULL if unknown) */
wh_reg_rec_t *wh_loc_me(void);
const wh_reg_rec_t *wh_loc_rec(int lp);
/* CMA verdict for local index lp as seen by me (the reader); sets *why */
int wh_loc_cma_check(int lp, int *why);
/* Channel decisions for every world rank, recorded by the coordinator. */
void wh_loc_set_choice(int wpeer, char code, int shm_why, int cma_why);
const char *wh_loc_region_desc(void);
/* 1 when the node region is a new zero-filled file (the file provider), 0
 * when it may hold an earlier job's bytes (a fixed mapping). */
int wh_loc_region_zeroed(void);
/* Bytes of node region in use now (0 without one). */
size_t wh_loc_region_bytes(void);
#endif
