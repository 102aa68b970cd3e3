/* The self channel: messages to one's own rank are delivered at once (the
 * payload is copied straight into a matching receive, or buffered). */
#include <stdint.h>
#include <stdlib.h>

#include "chan/chan.h"
#include "core/core.h"

static int self_init(int phase, int *usable)
{
    (void)phase;
    *usable = 1;
    return MPI_SUCCESS;
}

static int self_finalize(void) { return MPI_SUCCESS; }
static int self_progress(void) { return 0; }

static int self_send_eager(int wpeer, const wh_hdr_t *h, const void *buf, MPI_Count count, const wh_dtype_t *dt)
{
    const char *start;
    if (h->len == 0 || wh_dtype_is_contig(dt, (size_t)count, buf, &start)) {
        wh_proto_incoming(WH_CHAN_SELF, wpeer, h, h->len ? start : NULL, h->len);
        return MPI_SUCCESS;
    }
    void *tmp = malloc(h->len);
    if (!tmp)
        return wh_error(MPI_ERR_NO_MEM, "out of memory packing a %llu-byte message to self",
                        (unsigned long long)h->len);
    wh_dtype_pack(buf, (size_t)count, dt, 0, tmp, h->len);
    wh_proto_incoming(WH_CHAN_SELF, wpeer, h, tmp, h->len);
    free(tmp);
    return MPI_SUCCESS;
}

static int self_send_ctrl(int wpeer, const wh_hdr_t *h, const void *raw, size_t rawlen)
{
    wh_proto_incoming(WH_CHAN_SELF, wpeer, h, raw, rawlen);
    return MPI_SUCCESS;
}

static int self_rndv_send(wh_req_t *sreq, const wh_hdr_t *h)
{
    (void)sreq;
    (void)h;
    return wh_error(MPI_ERR_INTERN, "self channel has no rendezvous protocol");
}

static int self_rndv_recv(wh_req_t *rreq, const wh_hdr_t *h, const void *payload, size_t plen)
{
    (void)rreq;
    (void)h;
    (void)payload;
    (void)plen;
    return wh_error(MPI_ERR_INTERN, "self channel has no rendezvous protocol");
}

const wh_chan_ops_t wh_chan_self_ops = {
    .name = "self",
    .id = WH_CHAN_SELF,
    .init = self_init,
    .finalize = self_finalize,
    .progress = self_progress,
    .send_eager = self_send_eager,
    .send_ctrl = self_send_ctrl,
    .rndv_send = self_rndv_send,
    .rndv_recv = self_rndv_recv,
    .eager_max = SIZE_MAX,
    .blocking_fd = -1,
};
