/* Shared-memory channel: eager messages through per-pair cell queues. */
#include <stdio.h>
#include <string.h>

#include "chan/shm/shm.h"
#include "core/core.h"
#include "locality/locality.h"
#include "mpi/init.h"
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
    if (rc != MPI_SUCCESS) {
        *usable = 0;
        if (phase == 0 && !strcmp(wh_tun.node_fallback, "net"))
            return MPI_SUCCESS; /* warned; the peers see it in my record */
    }
    return rc;
}

static int shm_reaches(int wpeer, int *why, int *single_copy, int *sc_why)
{
    int lp = wh_job.local_index[wpeer];
    *single_copy = 0;
    *sc_why = WH_WHY_NA;
    if (lp < 0) {
        *why = WH_WHY_NOT_LOCAL;
        return 0;
    }
    if (!wh_shm.peer_ok || !wh_shm.peer_ok[lp]) {
        *why = WH_WHY_NO_REGION;
        return 0;
    }
    *why = WH_WHY_OK;
    *single_copy = wh_shm.cma_ok && wh_shm.cma_ok[lp];
    *sc_why = wh_shm.cma_why ? wh_shm.cma_why[lp] : WH_WHY_NA;
    return 1;
}

static int shm_finalize(void)
{
    wh_shm_region_teardown();
    return MPI_SUCCESS;
}

/* Claim the next cell of my queue towards local peer lp, or NULL if full. */
static inline wh_shm_cell_t *tx_cell(int lp)
{
    wh_shm_cell_t *c = wh_shm_cell(wh_shm.txq[lp], wh_shm.tx_idx[lp]);
    if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != 0)
        return NULL;
    return c;
}

static inline void tx_commit(int lp, wh_shm_cell_t *c)
{
    __atomic_store_n(&c->state, 1, __ATOMIC_RELEASE);
    wh_shm.tx_idx[lp]++;
}

static int shm_send_eager(int wpeer, const wh_hdr_t *h, const void *buf, MPI_Count count, const wh_dtype_t *dt)
{
    int lp = wh_job.local_index[wpeer];
    wh_shm_cell_t *c = tx_cell(lp);
    if (!c)
        return WH_AGAIN;
    size_t len = h->len;
    if (len) {
        if (dt->contig)
            memcpy(c->payload, (const char *)buf + dt->true_lb, len);
        else
            wh_dtype_pack(buf, (size_t)count, dt, 0, c->payload, len);
    }
    c->hdr = *h;
    c->plen = (uint32_t)len;
    tx_commit(lp, c);
    return MPI_SUCCESS;
}

/* Also used by rndv.c for CTS/FIN (through wh_send_ctrl). */
static int shm_send_ctrl(int wpeer, const wh_hdr_t *h, const void *raw, size_t rawlen)
{
    int lp = wh_job.local_index[wpeer];
    wh_shm_cell_t *c = tx_cell(lp);
    if (!c)
        return WH_AGAIN;
    if (rawlen)
        memcpy(c->payload, raw, rawlen);
    c->hdr = *h;
    c->plen = (uint32_t)rawlen;
    tx_commit(lp, c);
    return MPI_SUCCESS;
}

static int shm_progress(void)
{
    int n = 0;
    for (int i = 0; i < wh_shm.npeers; i++) {
        int lp = wh_shm.peers[i];
        unsigned char *q = wh_shm.rxq[lp];
        for (int batch = 0; batch < 8; batch++) {
            wh_shm_cell_t *c = wh_shm_cell(q, wh_shm.rx_idx[lp]);
            if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 0)
                break;
            if (__builtin_expect(c->plen > wh_shm.cell_payload, 0)) {
                char msg[160];
                snprintf(msg, sizeof msg, "corrupt shared-memory cell from rank %d: %u payload bytes in a %u-byte cell",
                         wh_job.local_ranks[lp], c->plen, wh_shm.cell_payload);
                fprintf(stderr, "wharf: rank %d: %s\n", wh_job.rank, msg);
                wh_job_abort(1, msg);
            }
            if (c->hdr.type < WH_MSG_CHAN)
                wh_proto_incoming(WH_CHAN_SHM, wh_job.local_ranks[lp], &c->hdr, c->payload, c->plen);
            else
                wh_shm_handle_chan(lp, c);
            __atomic_store_n(&c->state, 0, __ATOMIC_RELEASE);
            wh_shm.rx_idx[lp]++;
            n++;
        }
    }
    if (wh_shm.nstreams)
        n += wh_shm_stream_push();
    return n;
}

static size_t shm_eager_cap(void) { return wh_shm.cell_payload; }

int wh_shm_rndv_send(wh_req_t *sreq, const wh_hdr_t *h);
int wh_shm_rndv_recv(wh_req_t *rreq, const wh_hdr_t *h, const void *payload, size_t plen);

/* eager_max is the cell payload; the coordinator caps it with WHARF_SHM_EAGER_MAX */
const wh_chan_ops_t wh_chan_shm_ops = {
    .name = "shm",
    .id = WH_CHAN_SHM,
    .init = shm_init,
    .finalize = shm_finalize,
    .progress = shm_progress,
    .send_eager = shm_send_eager,
    .send_ctrl = shm_send_ctrl,
    .rndv_send = wh_shm_rndv_send,
    .rndv_recv = wh_shm_rndv_recv,
    .eager_max = 64u << 20,
    .blocking_fd = -1,
    .eager_cap = shm_eager_cap,
    .reaches = shm_reaches,
};
