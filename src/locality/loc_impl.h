/* Locality internals shared by locality.c and report.c. */
#ifndef WH_LOCALITY_LOC_IMPL_H
#define WH_LOCALITY_LOC_IMPL_H
#include <mpi.h>
#include "locality/locality.h"
#include "locality/region.h"

typedef struct wh_loc {
    wh_region_t reg;
    uint64_t nonce;
    uint32_t slot_cap;
    size_t tags_off, slots_off, reg_len;
    size_t cursor;               /* next free byte for wh_loc_carve */
    int carve_failed;            /* a carve failed: the cursor differs from the peers' */
    struct wh_nheap_ctl *heap_ctl; /* node heap control block (carved at members) */
    wh_reg_rec_t *me;
    wh_reg_rec_t **recs;         /* local index -> record */
    char fail[MPI_MAX_ERROR_STRING]; /* why this rank has no region ("" if it has) */
    /* coordinator's decisions, per world rank, this rank as the receiver */
    char *code;                  /* '.', 'C', 'S', 'N' */
    unsigned char *shm_why, *cma_why;
} wh_loc_t;

extern wh_loc_t wh_loc;
int wh_loc_launcher_mode(void);
int wh_loc_report(void);         /* report.c: rank 0 prints WHARF_REPORT=locality */
void wh_loc_heap_open(void);     /* once init's carving is done (wh_loc_finish) */
void wh_loc_guard_on(void);      /* guard.c: SIGBUS inside the region -> a clear abort */
void wh_loc_guard_off(void);
#endif
