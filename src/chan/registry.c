/* The channel registry: the one list of channels, and the loops over it
 * (init in phases, progress, finalize).  Fallback channels (the network) are
 * opened only when some peer is not reached by another channel. */
#include <stdio.h>
#include <string.h>

#include "chan/chan.h"
#include "core/core.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

const wh_chan_ops_t *const wh_chans[WH_CHAN_MAX] = {
    [WH_CHAN_SELF] = &wh_chan_self_ops,
    [WH_CHAN_SHM] = &wh_chan_shm_ops,
    [WH_CHAN_NET] = &wh_chan_net_ops,
};
int wh_chan_usable[WH_CHAN_MAX];
char wh_chan_why[WH_CHAN_MAX][200];

void wh_chan_set_why(int chan, const char *why)
{
    if (chan >= 0 && chan < WH_CHAN_MAX)
        snprintf(wh_chan_why[chan], sizeof wh_chan_why[chan], "%s", why ? why : "");
}
int wh_chan_polled[WH_CHAN_MAX];
wh_chan_caps_t wh_chan_caps[WH_CHAN_MAX];

int wh_chan_by_name(const char *name)
{
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (!strcmp(wh_chans[c]->name, name))
            return c;
    return -1;
}

/* Is a fallback channel needed: a peer no other usable channel may reach, or
 * WHARF_CHANNEL names it?  Decided after the other channels' phase 0 (the
 * groups are symmetric, so every rank decides the same for each pair). */
static int fallback_needed(int fc)
{
    if (!strcmp(wh_tun.channel, wh_chans[fc]->name))
        return 1;
    for (int p = 0; p < wh_job.size; p++) {
        int covered = 0;
        for (int c = 0; c < WH_CHAN_MAX && !covered; c++)
            covered = c != fc && wh_chan_usable[c] && !(wh_chan_caps[c].flags & WH_CAP_FALLBACK) &&
                      wh_chans[c]->may_reach && wh_chans[c]->may_reach(p);
        if (!covered)
            return 1;
    }
    return 0;
}

int wh_chans_init(void)
{
    for (int c = 0; c < WH_CHAN_MAX; c++) {
        wh_chan_usable[c] = 1;
        wh_chan_why[c][0] = 0;
        memset(&wh_chan_caps[c], 0, sizeof wh_chan_caps[c]);
        wh_chans[c]->query(&wh_chan_caps[c]);
    }
    for (int phase = 0; phase < 3; phase++) {
        for (int c = 0; c < WH_CHAN_MAX; c++) {
            if (!wh_chan_usable[c])
                continue;
            if (phase == 0 && (wh_chan_caps[c].flags & WH_CAP_FALLBACK) && (wh_job.size == 1 || !fallback_needed(c))) {
                wh_chan_usable[c] = 0;
                WH_DEBUG("init", "%s channel not opened: every peer is reached otherwise", wh_chans[c]->name);
                continue;
            }
            int usable = 1;
            int rc = wh_chans[c]->init(phase, &usable);
            if (rc != MPI_SUCCESS)
                return rc;
            if (!usable)
                wh_chan_usable[c] = 0;
        }
        if (phase < 2 && wh_pmi_barrier() != 0)
            return wh_error(MPI_ERR_OTHER, "PMI barrier failed: %s", wh_pmi_error());
    }
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (wh_chan_usable[c])
            wh_chans[c]->query(&wh_chan_caps[c]); /* limits known only after init (cell size, provider) */
    return MPI_SUCCESS;
}

void wh_chans_finalize(void)
{
    for (int c = WH_CHAN_MAX - 1; c >= 0; c--)
        if (wh_chan_usable[c])
            wh_chans[c]->finalize();
    memset(wh_chan_polled, 0, sizeof wh_chan_polled);
    wh_chans_poll_set();
}

void wh_chans_check_peers(void)
{
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (wh_chan_usable[c] && wh_chan_polled[c] && wh_chans[c]->check_peers)
            wh_chans[c]->check_peers();
}

/* progress functions of the polled channels, compact for the hot loop */
int (*wh_chan_poll_fns[WH_CHAN_MAX])(void);
int wh_chan_npoll;

void wh_chans_poll_set(void)
{
    wh_chan_npoll = 0;
    for (int c = 0; c < WH_CHAN_MAX; c++)
        if (wh_chan_polled[c] && wh_chans[c]->progress)
            wh_chan_poll_fns[wh_chan_npoll++] = wh_chans[c]->progress;
}

int wh_data_out_slow(const wh_data_t *d, size_t off, void *dst, size_t n)
{
    if (d->base)
        return wh_mem_copy(dst, WH_MEM_HOST, d->base + off, d->mem, n);
    return d->pack(d, off, dst, n);
}

int wh_data_iov(const wh_data_t *d, size_t off, size_t n, struct iovec *iov, int max, size_t *covered)
{
    if (d->base) {
        if (max < 1)
            return 0;
        iov[0].iov_base = d->base + off;
        iov[0].iov_len = n;
        *covered = n;
        return 1;
    }
    return d->iov(d, off, n, iov, max, covered);
}

int wh_chan_nosup_get(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *dst, wh_comp_t *c)
{
    (void)wpeer, (void)raddr, (void)rkey, (void)dst, (void)c;
    return WH_FALLBACK;
}

int wh_chan_nosup_put(int wpeer, uint64_t raddr, uint64_t rkey, const wh_data_t *src, wh_comp_t *c)
{
    (void)wpeer, (void)raddr, (void)rkey, (void)src, (void)c;
    return WH_FALLBACK;
}

int wh_chan_nosup_bulk_recv(int wpeer, const wh_data_t *dst, uint64_t *token, wh_comp_t *c)
{
    (void)wpeer, (void)dst, (void)token, (void)c;
    return WH_FALLBACK;
}

int wh_chan_nosup_bulk_send(int wpeer, uint64_t token, const wh_data_t *src, wh_comp_t *c)
{
    (void)wpeer, (void)token, (void)src, (void)c;
    return wh_error(MPI_ERR_INTERN, "bulk send on a channel without bulk streams");
}

