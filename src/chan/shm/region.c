/* The shm channel's part of the node region (locality/region.h), carved right
 * after the registry: nlocal x nlocal small rings (one per directed pair,
 * interleaved: row i holds cell i of every pair), then one pool of large
 * slots per rank, then one doorbell line per rank.  Every co-resident rank carves the same
 * size in the same order, so everything sits at the same offset for everyone
 * without any exchange; after the doorbells, each rank's split lines (shm.h).  Memory: n^2 x ring cells x 128 B (the ring depth
 * shrinks as n grows, keeping the rings within 16 MiB) + n x slots x slot size
 * + n x 64 B. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/shm/shm.h"
#include "core/err.h"
#include "core/job.h"
#include "locality/locality.h"
#include "util/log.h"
#include "util/tunables.h"

wh_shm_state_t wh_shm;

static uint32_t ring_depth(int n)
{
    if (wh_tun.shm_ring > 0)
        return (uint32_t)wh_tun.shm_ring;
    uint64_t pairs = (uint64_t)n * (uint64_t)n, d = 32;
    while (d > 4 && pairs * d * WH_SHM_CELL_BYTES > (16u << 20))
        d >>= 1;
    return (uint32_t)d;
}

static uint64_t slot_stride(uint64_t payload)
{
    return (offsetof(wh_shm_slot_t, payload) + payload + 63) & ~(uint64_t)63;
}

uint64_t wh_shm_ring_row(int n)
{
    uint64_t row = (uint64_t)n * (uint64_t)n * WH_SHM_CELL_BYTES;
    return row < 4096 + 64 ? 4096 + 64 : row;
}

uint64_t wh_shm_region_bytes(int n, uint32_t ring_cells, uint32_t nslots, uint64_t slot_payload)
{
    uint64_t rings = ring_cells * wh_shm_ring_row(n);
    return ((rings + 4095) & ~(uint64_t)4095) + (uint64_t)n * nslots * slot_stride(slot_payload) +
           (uint64_t)n * (sizeof(wh_db_t) + WH_SHM_SPLIT_LINES * sizeof(wh_shm_split_t));
}

static int layout(int n)
{
    uint32_t ring = ring_depth(n);
    if (ring < 2 || (ring & (ring - 1)) || ring > (1u << 16))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_RING=%u must be a power of two between 2 and 65536", ring);
    int slots = wh_tun.shm_slots;
    if (slots < 1 || slots > 65536)
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_SLOTS=%d must be between 1 and 65536", slots);
    size_t pay = wh_tun.shm_slot_size;
    if (pay < 64 || pay > (64u << 20))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_SLOT_SIZE=%zu must be between 64 bytes and 64 MiB", pay);
    wh_shm.ring_cells = ring;
    wh_shm.ring_stride = wh_shm_ring_row(n);
    wh_shm.nslots = (uint32_t)slots;
    wh_shm.slot_stride = slot_stride(pay);
    wh_shm.slot_payload = (uint32_t)(wh_shm.slot_stride - offsetof(wh_shm_slot_t, payload));
    return MPI_SUCCESS;
}

static int alloc_tables(int n)
{
    wh_shm.txq = calloc((size_t)n, sizeof(void *));
    wh_shm.rxq = calloc((size_t)n, sizeof(void *));
    wh_shm.pool = calloc((size_t)n, sizeof(void *));
    wh_shm.tx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.rx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.peers = calloc((size_t)n, sizeof(int));
    wh_shm.peer_ok = calloc((size_t)n, sizeof(int));
    if (!wh_shm.txq || !wh_shm.rxq || !wh_shm.pool || !wh_shm.tx_idx || !wh_shm.rx_idx || !wh_shm.peers ||
        !wh_shm.peer_ok)
        return wh_error(MPI_ERR_NO_MEM, "out of memory setting up shared-memory queues");
    return MPI_SUCCESS;
}

/* phase 0: carve the queues and empty the ones I consume (a fixed region may
 * hold an earlier job's cells); phase 1 (after a barrier): keep the peers
 * whose own carving worked. */
int wh_shm_region_setup(int phase)
{
    int n = wh_shm.nlocal;
    if (phase == 0) {
        wh_shm.nlocal = n = wh_job.local_size;
        wh_shm.me = wh_job.local_rank;
        WH_CHECK(layout(n));
        WH_CHECK(alloc_tables(n));
        int rc;
        wh_reg_rec_t *me = wh_loc_me();
        size_t rings = ((size_t)wh_shm.ring_cells * wh_shm.ring_stride + 4095) & ~(size_t)4095;
        unsigned char *base = wh_loc_carve(wh_shm_region_bytes(n, wh_shm.ring_cells, wh_shm.nslots,
                                                               wh_shm.slot_payload), &rc);
        if (!base) {
            char msg[MPI_MAX_ERROR_STRING];
            WH_WARN("shm", "shared-memory queues unavailable: %s; using the network",
                    wh_error_text(rc, msg, sizeof msg));
            __atomic_store_n(&me->shm_state, 2, __ATOMIC_RELEASE);
            return rc;
        }
        wh_shm.rings = base;
        wh_shm.pools = base + rings;
        for (int p = 0; p < n; p++)
            wh_shm.pool[p] = wh_shm.pools + (size_t)p * wh_shm.nslots * wh_shm.slot_stride;
        wh_shm.db = (wh_db_t *)(wh_shm.pools + (size_t)n * wh_shm.nslots * wh_shm.slot_stride);
        wh_shm.split = (wh_shm_split_t *)(wh_shm.db + n);
        /* mine may hold an earlier job's state (a fixed region) */
        __atomic_store_n(&wh_shm.db[wh_shm.me].word, 0, __ATOMIC_RELAXED);
        for (unsigned i = 0; i < WH_SHM_SPLIT_LINES; i++)
            wh_shm_split_line(wh_shm.me, i)->busy = 0;
        wh_db_setup();
        /* a fixed region may hold an earlier job's cells: empty the rings I
         * consume and my pool (a new file is zero-filled: touching every
         * page from every rank would cost 128 ranks seconds of page faults) */
        if (!wh_loc_region_zeroed()) {
            for (int p = 0; p < n; p++) {
                unsigned char *q = wh_shm.rings + ((size_t)p * n + wh_shm.me) * WH_SHM_CELL_BYTES;
                for (uint32_t i = 0; i < wh_shm.ring_cells; i++)
                    __atomic_store_n(&wh_shm_cell(q, i)->state, 0, __ATOMIC_RELAXED);
            }
            for (uint32_t s = 0; s < wh_shm.nslots; s++)
                __atomic_store_n(&wh_shm_slot(wh_shm.pool[wh_shm.me], s)->busy, 0, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&me->shm_state, 1, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    if (phase != 1)
        return MPI_SUCCESS;
    wh_shm.npeers = 0;
    const wh_reg_rec_t *mine = wh_loc_me();
    wh_shm.db_ok = mine != NULL;
    for (int p = 0; p < n; p++) {
        wh_shm.txq[p] = wh_shm.rings + ((size_t)wh_shm.me * n + p) * WH_SHM_CELL_BYTES;
        wh_shm.rxq[p] = wh_shm.rings + ((size_t)p * n + wh_shm.me) * WH_SHM_CELL_BYTES;
        const wh_reg_rec_t *r = wh_loc_rec(p);
        if (p == wh_shm.me || !r)
            continue;
        if (__atomic_load_n(&r->shm_state, __ATOMIC_ACQUIRE) == 1) {
            wh_shm.peer_ok[p] = 1;
            wh_shm.peers[wh_shm.npeers++] = p;
            /* a futex wakes nobody in another kernel (VMs sharing a fixed region) */
            if (!mine || strncmp(r->boot_id, mine->boot_id, sizeof r->boot_id))
                wh_shm.db_ok = 0;
        } else {
            WH_INFO("shm", "rank %d has no shared-memory queues; using the network with it", r->rank);
        }
    }
    WH_DEBUG("shm", "%d local ranks, %d reachable, rings of %u cells per pair, %u slots x %u bytes per rank; doorbell sleep %s (%s)",
             n, wh_shm.npeers, wh_shm.ring_cells, wh_shm.nslots, wh_shm.slot_payload,
             wh_shm.db_ok ? "possible" : "impossible: a peer on another kernel",
             wh_db_fence ? "membarrier unavailable: wakers fence" : "membarrier");
    return MPI_SUCCESS;
}

void wh_shm_region_teardown(void)
{
    free(wh_shm.txq);
    free(wh_shm.rxq);
    free(wh_shm.pool);
    free(wh_shm.tx_idx);
    free(wh_shm.rx_idx);
    free(wh_shm.peers);
    free(wh_shm.peer_ok);
    free(wh_shm.cma_ok);
    free(wh_shm.cma_why);
    free(wh_shm.pid);
    free(wh_shm.cma_seen);
    memset(&wh_shm, 0, sizeof wh_shm);
}
