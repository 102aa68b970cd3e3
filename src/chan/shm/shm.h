/* Shared-memory channel internals: one node-level region per host holds a
 * lock-free single-producer/single-consumer queue of cells for every directed
 * pair of co-resident ranks.  Large transfers: CMA single copy (cma.c) as the
 * zero-copy get/put; otherwise the protocol layer pipelines fragments through
 * the cells as active messages. */
#ifndef WH_CHAN_SHM_SHM_H
#define WH_CHAN_SHM_SHM_H
#include <stdint.h>
#include "chan/chan.h"


/* Cell layout: the first cache line holds state, length, header and the first
 * 24 payload bytes, so a small message moves in one line. */
typedef struct wh_shm_cell {
    volatile uint32_t state;  /* 0 empty, 1 full (release/acquire) */
    uint32_t plen;            /* payload bytes in this cell */
    wh_hdr_t hdr;
    uint64_t aux;             /* reserved */
    unsigned char payload[];  /* continues past the first line */
} wh_shm_cell_t;

#define WH_SHM_CELL_HDR offsetof(wh_shm_cell_t, payload)


typedef struct wh_shm_state {
    unsigned char *queues;    /* nlocal x nlocal queues in the node region */
    int nlocal, me;           /* my local index */
    int *peer_ok;             /* per local index: its queues exist */
    unsigned char **txq;      /* local index -> my queue towards it */
    unsigned char **rxq;      /* local index -> its queue towards me */
    uint32_t *tx_idx, *rx_idx;
    int *peers;               /* local indices other than me */
    int npeers;
    uint32_t ncells, cell_payload;
    uint64_t cell_stride;
    /* CMA */
    int *cma_ok;              /* per local index: I can CMA-read it */
    int *cma_why;             /* per local index: WH_WHY_* when not */
    int *pid;                 /* per local index */
} wh_shm_state_t;

extern wh_shm_state_t wh_shm;

static inline wh_shm_cell_t *wh_shm_cell(unsigned char *q, uint32_t idx)
{
    return (wh_shm_cell_t *)(q + (uint64_t)(idx & (wh_shm.ncells - 1)) * wh_shm.cell_stride);
}

int wh_shm_region_setup(int phase);  /* region.c */
void wh_shm_region_teardown(void);
int wh_shm_cma_setup(int phase);     /* cma.c */
/* zero-copy get/put through process_vm_readv/writev (cma.c) */
int wh_shm_get_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c);
int wh_shm_put_zcopy(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c);
#endif
