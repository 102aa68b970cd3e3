/* Shared-memory channel: active messages through per-pair rings of small cells
 * in the node region, larger payloads in slots of the sender's pool (shm.h);
 * CMA single copy as its zero-copy get/put (cma.c); every cell published
 * rings the receiver's doorbell, every batch consumed the sender's (for
 * ranks that sleep while idle, doorbell.h). */
#include <stdio.h>
#include <string.h>

#include "chan/am.h"
#include "chan/shm/shm.h"
#include "core/core.h"
#include "locality/locality.h"
#include "util/log.h"
#include "util/tunables.h"

static int shm_init(int phase, int *usable)
{
    *usable = 1;
    if (!wh_loc_have_region()) {
        if (phase == 0)
            WH_DEBUG("shm", "no co-resident peers in a node region");
        *usable = 0;
        return MPI_SUCCESS;
    }
    int rc = wh_shm_region_setup(phase);
    if (rc == MPI_SUCCESS)
        rc = wh_shm_cma_setup(phase);
    if (rc == MPI_SUCCESS && phase == 1)
        wh_shm_alive_setup();
    if (rc != MPI_SUCCESS) {
        *usable = 0;
        if (phase == 0 && !strcmp(wh_tun.node_fallback, "net"))
            return MPI_SUCCESS; /* warned; the peers see it in my record */
    }
    return rc;
}

static int shm_may_reach(int wpeer)
{
    return wpeer != wh_job.rank && wh_job.local_index[wpeer] >= 0 && wh_loc_have_region();
}

static int shm_reaches(int wpeer, int *why, uint32_t *peer_caps, int *cap_why)
{
    int lp = wh_job.local_index[wpeer];
    *peer_caps = 0;
    *cap_why = WH_WHY_NA;
    if (lp < 0) {
        *why = WH_WHY_NOT_LOCAL;
        return 0;
    }
    if (!wh_shm.peer_ok || !wh_shm.peer_ok[lp]) {
        *why = WH_WHY_NO_REGION;
        return 0;
    }
    *why = WH_WHY_OK;
    *peer_caps = WH_CAP_AM;
    if (wh_shm.cma_ok && wh_shm.cma_ok[lp])
        *peer_caps |= WH_CAP_GET_ZCOPY | WH_CAP_PUT_ZCOPY;
    *cap_why = wh_shm.cma_why ? wh_shm.cma_why[lp] : WH_WHY_NA;
    return 1;
}

static void shm_query(wh_chan_caps_t *caps)
{
    size_t pay = wh_shm.slot_payload ? wh_shm.slot_payload : wh_tun.shm_slot_size;
    caps->flags = WH_CAP_AM | (wh_tun.cma ? WH_CAP_GET_ZCOPY | WH_CAP_PUT_ZCOPY : 0);
    caps->mem_kinds = 1u << WH_MEM_HOST;
    caps->max_inline = 64 - WH_SHM_CELL_HDR; /* payload sharing the header's cache line */
    caps->max_am = pay;
    caps->eager_max = wh_tun.shm_eager_max < pay ? wh_tun.shm_eager_max : pay;
    caps->max_frag = pay;
    caps->lat_us = 0.2;
    caps->bw_mbs = 10000.0;
}

static int shm_finalize(void)
{
    wh_shm_alive_leave();
    wh_shm_region_teardown();
    return MPI_SUCCESS;
}

/* A free slot of my pool, or -1.  Only I set busy; a receiver clears it
 * (release) once it is done with the payload. */
static inline int32_t slot_get(void)
{
    unsigned char *pool = wh_shm.pool[wh_shm.me];
    uint32_t n = wh_shm.nslots, s = wh_shm.slot_cursor;
    for (uint32_t i = 0; i < n; i++, s = s + 1 == n ? 0 : s + 1) {
        wh_shm_slot_t *sl = wh_shm_slot(pool, s);
        if (__atomic_load_n(&sl->busy, __ATOMIC_ACQUIRE) == 0) {
            __atomic_store_n(&sl->busy, 1, __ATOMIC_RELAXED);
            wh_shm.slot_cursor = s + 1 == n ? 0 : s + 1;
            return (int32_t)s;
        }
    }
    return -1;
}

static int shm_am_send(int wpeer, const wh_hdr_t *h, const wh_data_t *d)
{
    int lp = wh_job.local_index[wpeer];
    wh_shm_cell_t *c = wh_shm_cell(wh_shm.txq[lp], wh_shm.tx_idx[lp]);
    if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != 0)
        return WH_AGAIN;
    size_t len = 0;
    uint32_t slot = 0;
    if (d && (len = d->len)) {
        unsigned char *dst = c->payload;
        if (len > WH_SHM_INLINE) {
            int32_t s = slot_get();
            if (s < 0)
                return WH_AGAIN;
            wh_shm_slot_t *sl = wh_shm_slot(wh_shm.pool[wh_shm.me], (uint32_t)s);
            dst = sl->payload;
            slot = (uint32_t)s + 1;
        }
        int rc = wh_data_out(d, 0, dst, len);
        if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
            if (slot)
                __atomic_store_n(&wh_shm_slot(wh_shm.pool[wh_shm.me], slot - 1)->busy, 0, __ATOMIC_RELAXED);
            return rc;
        }
    }
    c->hdr = *h;
    c->plen = (uint32_t)len;
    c->slot = slot;
    __atomic_store_n(&c->state, 1, __ATOMIC_RELEASE);
    wh_shm.tx_idx[lp]++;
    wh_db_ring(&wh_shm.db[lp], WH_DB_ASLEEP); /* one load while nobody sleeps */
    return MPI_SUCCESS;
}

static _Noreturn void corrupt(int lp, const wh_shm_cell_t *c)
{
    char msg[200];
    snprintf(msg, sizeof msg,
             "corrupt shared-memory cell from rank %d: %u payload bytes in slot %u (%u slots of %u bytes, %u inline)",
             wh_job.local_ranks[lp], c->plen, c->slot, wh_shm.nslots, wh_shm.slot_payload, (unsigned)WH_SHM_INLINE);
    WH_ERRLOG("shm", "%s", msg);
    wh_job_abort(1, msg);
}

static int shm_progress(void)
{
    int n = 0;
    for (int i = 0; i < wh_shm.npeers; i++) {
        int lp = wh_shm.peers[i];
        unsigned char *q = wh_shm.rxq[lp];
        int batch;
        for (batch = 0; batch < 8; batch++) {
            wh_shm_cell_t *c = wh_shm_cell(q, wh_shm.rx_idx[lp]);
            if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 0)
                break;
            uint32_t slot = c->slot, plen = c->plen;
            if (__builtin_expect(slot == 0, 1)) {
                if (__builtin_expect(plen > WH_SHM_INLINE, 0))
                    corrupt(lp, c);
                wh_am_dispatch(WH_CHAN_SHM, wh_job.local_ranks[lp], &c->hdr, c->payload, plen);
            } else {
                if (__builtin_expect(slot > wh_shm.nslots || plen > wh_shm.slot_payload, 0))
                    corrupt(lp, c);
                wh_shm_slot_t *sl = wh_shm_slot(wh_shm.pool[lp], slot - 1);
                wh_am_dispatch(WH_CHAN_SHM, wh_job.local_ranks[lp], &c->hdr, sl->payload, plen);
                __atomic_store_n(&sl->busy, 0, __ATOMIC_RELEASE);
            }
            __atomic_store_n(&c->state, 0, __ATOMIC_RELEASE);
            wh_shm.rx_idx[lp]++;
            n++;
        }
        if (batch) /* room freed: the sender may sleep with sends queued for it */
            wh_db_ring(&wh_shm.db[lp], WH_DB_SPACE);
    }
    return n;
}

/* WHARF_WAIT_SLEEP (doorbell.h): arm my doorbell, look once more, sleep. */
int wh_shm_nap(long timeout_us, int want_space, int (*recheck)(void))
{
    if (!wh_shm.db || !wh_shm.db_ok)
        return -1;
    wh_db_t *d = &wh_shm.db[wh_shm.me];
    uint32_t armed = wh_db_arm(d, want_space);
    if (recheck()) {
        wh_db_disarm(d);
        return 0;
    }
    return wh_db_wait(d, armed, timeout_us);
}


const wh_chan_ops_t wh_chan_shm_ops = {
    .name = "shm",
    .init = shm_init,
    .finalize = shm_finalize,
    .progress = shm_progress,
    .query = shm_query,
    .may_reach = shm_may_reach,
    .reaches = shm_reaches,
    .am_send = shm_am_send,
    .get_zcopy = wh_shm_get_zcopy,
    .put_zcopy = wh_shm_put_zcopy,
    .bulk_recv = wh_chan_nosup_bulk_recv,
    .bulk_send = wh_chan_nosup_bulk_send,
    .check_peers = wh_shm_check_peers,
    .nap = wh_shm_nap,
};
