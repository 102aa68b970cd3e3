/* The self channel: an active message to one's own rank is dispatched at
 * once (a contiguous payload straight from the user buffer, else packed). */
#include <stdint.h>
#include <stdlib.h>

#include "chan/am.h"
#include "core/core.h"

static int self_init(int phase, int *usable)
{
    (void)phase;
    *usable = 1;
    return MPI_SUCCESS;
}

static int self_finalize(void) { return MPI_SUCCESS; }
static int self_may_reach(int wpeer) { return wpeer == wh_job.rank; }

static int self_reaches(int wpeer, int *why, uint32_t *peer_caps, int *cap_why)
{
    (void)why;
    *peer_caps = WH_CAP_AM;
    *cap_why = 0;
    return wpeer == wh_job.rank;
}

static void self_query(wh_chan_caps_t *caps)
{
    caps->flags = WH_CAP_AM;
    caps->mem_kinds = 1u << WH_MEM_HOST;
    caps->max_inline = SIZE_MAX;
    caps->max_am = SIZE_MAX;
    caps->eager_max = SIZE_MAX;
    caps->max_frag = SIZE_MAX;
    caps->lat_us = 0.0;
    caps->bw_mbs = 0.0;
}

static int self_am_send(int wpeer, const wh_hdr_t *h, const wh_data_t *d)
{
    if (!d || !d->len) {
        wh_am_dispatch(WH_CHAN_SELF, wpeer, h, NULL, 0);
        return MPI_SUCCESS;
    }
    if (d->base && d->mem == WH_MEM_HOST) {
        wh_am_dispatch(WH_CHAN_SELF, wpeer, h, d->base, d->len);
        return MPI_SUCCESS;
    }
    void *tmp = malloc(d->len);
    if (!tmp)
        return wh_error(MPI_ERR_NO_MEM, "out of memory packing a %zu-byte message to self", d->len);
    int rc = wh_data_out(d, 0, tmp, d->len);
    if (rc == MPI_SUCCESS)
        wh_am_dispatch(WH_CHAN_SELF, wpeer, h, tmp, d->len);
    free(tmp);
    return rc;
}

const wh_chan_ops_t wh_chan_self_ops = {
    .name = "self",
    .init = self_init,
    .finalize = self_finalize,
    .progress = NULL,
    .query = self_query,
    .may_reach = self_may_reach,
    .reaches = self_reaches,
    .am_send = self_am_send,
    .get_zcopy = wh_chan_nosup_get,
    .put_zcopy = wh_chan_nosup_put,
    .bulk_recv = wh_chan_nosup_bulk_recv,
    .bulk_send = wh_chan_nosup_bulk_send,
};
