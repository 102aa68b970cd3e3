/* The shm channel's part of the node region (locality/region.h): one
 * single-producer/single-consumer queue of cells per directed pair of
 * co-resident ranks, carved out of the node region right after the registry.
 * Every co-resident rank carves the same size in the same order, so the
 * queues sit at the same offset for everyone without any exchange. */
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

static int layout(void)
{
    int cells = wh_tun.shm_cells;
    if (cells < 2 || (cells & (cells - 1)))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_CELLS=%d must be a power of two >= 2", cells);
    size_t pay = wh_tun.shm_cell_size;
    if (pay < 64 || pay > (64u << 20))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_CELL_SIZE=%zu must be between 64 bytes and 64 MiB", pay);
    wh_shm.ncells = (uint32_t)cells;
    wh_shm.cell_stride = (WH_SHM_CELL_HDR + pay + 63) & ~(uint64_t)63;
    wh_shm.cell_payload = (uint32_t)(wh_shm.cell_stride - WH_SHM_CELL_HDR);
    return MPI_SUCCESS;
}

static int alloc_tables(int n)
{
    wh_shm.txq = calloc((size_t)n, sizeof(void *));
    wh_shm.rxq = calloc((size_t)n, sizeof(void *));
    wh_shm.tx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.rx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.peers = calloc((size_t)n, sizeof(int));
    wh_shm.peer_ok = calloc((size_t)n, sizeof(int));
    if (!wh_shm.txq || !wh_shm.rxq || !wh_shm.tx_idx || !wh_shm.rx_idx || !wh_shm.peers || !wh_shm.peer_ok)
        return wh_error(MPI_ERR_NO_MEM, "out of memory setting up shared-memory queues");
    return MPI_SUCCESS;
}

/* phase 0: carve the queues and empty the ones I consume (a fixed region may
 * hold an earlier job's cells); phase 1 (after a barrier): keep the peers
 * whose own carving worked. */
int wh_shm_region_setup(int phase)
{
    int n = wh_shm.nlocal;
    size_t qb;
    if (phase == 0) {
        wh_shm.nlocal = n = wh_job.local_size;
        wh_shm.me = wh_job.local_rank;
        WH_CHECK(layout());
        WH_CHECK(alloc_tables(n));
        qb = (size_t)wh_shm.ncells * wh_shm.cell_stride;
        int rc;
        wh_reg_rec_t *me = wh_loc_me();
        wh_shm.queues = wh_loc_carve((size_t)n * (size_t)n * qb, &rc);
        if (!wh_shm.queues) {
            char msg[MPI_MAX_ERROR_STRING];
            WH_WARN("shm", "shared-memory queues unavailable: %s; using the network",
                    wh_error_text(rc, msg, sizeof msg));
            __atomic_store_n(&me->shm_state, 2, __ATOMIC_RELEASE);
            return rc;
        }
        for (int p = 0; p < n; p++) {
            unsigned char *q = wh_shm.queues + ((size_t)p * n + wh_shm.me) * qb;
            for (uint32_t i = 0; i < wh_shm.ncells; i++)
                __atomic_store_n(&wh_shm_cell(q, i)->state, 0, __ATOMIC_RELAXED);
        }
        __atomic_store_n(&me->shm_state, 1, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    if (phase != 1)
        return MPI_SUCCESS;
    qb = (size_t)wh_shm.ncells * wh_shm.cell_stride;
    wh_shm.npeers = 0;
    for (int p = 0; p < n; p++) {
        wh_shm.txq[p] = wh_shm.queues + ((size_t)wh_shm.me * n + p) * qb;
        wh_shm.rxq[p] = wh_shm.queues + ((size_t)p * n + wh_shm.me) * qb;
        const wh_reg_rec_t *r = wh_loc_rec(p);
        if (p == wh_shm.me || !r)
            continue;
        if (__atomic_load_n(&r->shm_state, __ATOMIC_ACQUIRE) == 1) {
            wh_shm.peer_ok[p] = 1;
            wh_shm.peers[wh_shm.npeers++] = p;
        } else {
            WH_INFO("shm", "rank %d has no shared-memory queues; using the network with it", r->rank);
        }
    }
    WH_DEBUG("shm", "%d local ranks, %d reachable, %u cells x %u bytes per pair", n, wh_shm.npeers, wh_shm.ncells,
             wh_shm.cell_payload);
    return MPI_SUCCESS;
}

void wh_shm_region_teardown(void)
{
    free(wh_shm.txq);
    free(wh_shm.rxq);
    free(wh_shm.tx_idx);
    free(wh_shm.rx_idx);
    free(wh_shm.peers);
    free(wh_shm.peer_ok);
    free(wh_shm.cma_ok);
    free(wh_shm.cma_why);
    free(wh_shm.pid);
    memset(&wh_shm, 0, sizeof wh_shm);
}
