/* One-sided messages: the ordered, never-blocking send of rma messages (a
 * per-peer FIFO of copies pushed by a progress hook), the held operation
 * message that a following flush rides on, waiting helpers, the window table
 * and error-handler dispatch, init and finalize. */
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "chan/am.h"
#include "coord/coord.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

wh_rma_am_t wh_rma_am;
wh_tab_t wh_win_tab;

typedef struct rma_q {
    struct rma_q *next;
    int wpeer;
    wh_hdr_t h;
    size_t len;
    unsigned char data[];
} rma_q_t;

static rma_q_t *q_head, *q_tail;
static int q_busy; /* q_head != NULL, for the progress engine */
static int *q_count; /* per world rank */

#define WH_RMA_CHUNK ((size_t)64 << 10)

size_t wh_rma_max_payload(int wpeer)
{
    size_t m = wh_chan_caps[wh_coord_peers[wpeer].chan].max_am;
    return m < WH_RMA_CHUNK ? m : WH_RMA_CHUNK;
}

static int try_send(int wpeer, const wh_hdr_t *h, const void *data, size_t len)
{
    int chan = wh_coord_peers[wpeer].chan;
    wh_data_t d = {.base = (char *)data, .len = len, .mem = WH_MEM_HOST};
    return wh_chans[chan]->am_send(wpeer, h, len ? &d : NULL);
}

/* The held operation message (wh_rma_hold): one at a time, wpeer -1 when none. */
#define HOLD_CAP 4096
static struct {
    int wpeer;
    wh_hdr_t h;
    size_t len;
    unsigned char data[HOLD_CAP];
} held = {.wpeer = -1};

static int queue_copy(int wpeer, const wh_hdr_t *h, const void *data, size_t len);

/* Send the held message (queued if the channel is busy: never blocks). */
static void release_held(void)
{
    if (held.wpeer < 0)
        return;
    int wpeer = held.wpeer;
    held.wpeer = -1;
    int rc = WH_AGAIN;
    if (!q_count[wpeer])
        rc = try_send(wpeer, &held.h, held.data, held.len);
    if (rc == WH_AGAIN)
        rc = queue_copy(wpeer, &held.h, held.data, held.len);
    if (rc != MPI_SUCCESS)
        WH_WARN("rma", "a one-sided operation message to rank %d failed: error %d", wpeer, rc);
}

int wh_rma_hold(int wpeer, const wh_hdr_t *h, const void *data, size_t len)
{
    size_t max = wh_tun.rma_hold_max < HOLD_CAP ? wh_tun.rma_hold_max : HOLD_CAP;
    if (len > max)
        return wh_rma_send_wait(wpeer, h, data, len);
    release_held();
    held.h = *h;
    held.len = len;
    if (len)
        memcpy(held.data, data, len);
    held.wpeer = wpeer;
    q_busy = 1; /* the progress hook sends it if nothing else does first */
    return MPI_SUCCESS;
}

int wh_rma_send(int wpeer, const wh_hdr_t *h, const void *data, size_t len)
{
    release_held();
    if (!q_count[wpeer]) {
        int rc = try_send(wpeer, h, data, len);
        if (rc != WH_AGAIN)
            return rc;
    }
    return queue_copy(wpeer, h, data, len);
}

static int queue_copy(int wpeer, const wh_hdr_t *h, const void *data, size_t len)
{
    rma_q_t *q = malloc(sizeof *q + len);
    if (!q)
        wh_job_abort(1, "wharf: out of memory queueing a one-sided message");
    q->next = NULL;
    q->wpeer = wpeer;
    q->h = *h;
    q->len = len;
    if (len)
        memcpy(q->data, data, len);
    if (q_tail)
        q_tail->next = q;
    else
        q_head = q;
    q_tail = q;
    q_busy = 1;
    q_count[wpeer]++;
    return MPI_SUCCESS;
}

int wh_rma_send_wait(int wpeer, const wh_hdr_t *h, const void *data, size_t len)
{
    unsigned idle = 0;
    release_held();
    for (;;) {
        if (!q_count[wpeer]) {
            int rc = try_send(wpeer, h, data, len);
            if (rc != WH_AGAIN)
                return rc;
        }
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

/* the progress hook: push queued messages, keeping each peer's order */
static int rma_push(void)
{
    release_held();
    if (!q_head) {
        q_busy = 0;
        return 0;
    }
    int n = 0;
    static unsigned char *blocked;
    if (!blocked && !(blocked = calloc((size_t)wh_peers_cap, 1)))
        return 0;
    rma_q_t **pp = &q_head, *last = NULL;
    while (*pp) {
        rma_q_t *q = *pp;
        int rc = WH_AGAIN;
        if (!blocked[q->wpeer])
            rc = try_send(q->wpeer, &q->h, q->data, q->len);
        if (rc == WH_AGAIN) {
            blocked[q->wpeer] = 1;
            last = q;
            pp = &q->next;
            continue;
        }
        if (rc != MPI_SUCCESS)
            WH_WARN("rma", "dropping a one-sided message to rank %d: error %d", q->wpeer, rc);
        *pp = q->next;
        q_count[q->wpeer]--;
        free(q);
        n++;
    }
    q_tail = last;
    q_busy = q_head != NULL;
    for (rma_q_t *q = q_head; q; q = q->next)
        blocked[q->wpeer] = 0;
    return n;
}

int wh_rma_ctl(wh_win_t *w, int target, int sub, int32_t tag)
{
    /* sreq names my window: a target answers (GRANT, ACK) with it, even
     * before its own creation of the window has learnt the peers' ids */
    wh_hdr_t h = {.type = wh_rma_am.ctl, .flags = (uint8_t)sub, .ctx = w->peers[target].id, .src = w->rank,
                  .tag = tag, .sreq = WH_HINDEX(w->obj.handle)};
    int wpeer = w->peers[target].wrank;
    int sync = sub == WH_RC_FLUSH || sub == WH_RC_UNLOCK || sub == WH_RC_COMPLETE;
    /* the held message is this window's last operation to that target: the
     * request rides on it (the target handles the operation, then the request) */
    if (sync && held.wpeer == wpeer && held.h.ctx == h.ctx && held.h.sreq == h.sreq && !held.h.cid) {
        held.h.cid = (uint16_t)sub;
        held.h.tag = tag;
        wh_coord_note(wh_coord_peers[wpeer].chan, WH_PROTO_RMA_SYNC_MERGED, 0);
        release_held();
        return MPI_SUCCESS;
    }
    if (sync)
        wh_coord_note(wh_coord_peers[wpeer].chan, WH_PROTO_RMA_SYNC, 0);
    return wh_rma_send(wpeer, &h, NULL, 0);
}

int wh_rma_answer(wh_win_t *w, int wpeer, const wh_hdr_t *req, int sub, int32_t tag)
{
    wh_hdr_t h = {.type = wh_rma_am.ctl, .flags = (uint8_t)sub, .ctx = (uint32_t)req->sreq, .src = w->rank,
                  .tag = tag};
    return wh_rma_send(wpeer, &h, NULL, 0);
}

void wh_rma_wait_u64(const uint64_t *ctr, uint64_t val)
{
    unsigned idle = 0;
    while (__atomic_load_n(ctr, __ATOMIC_ACQUIRE) < val) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

void wh_rma_wait_i64_zero(const int64_t *ctr)
{
    unsigned idle = 0;
    while (__atomic_load_n(ctr, __ATOMIC_ACQUIRE) > 0) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

/* ---------- window table and error handlers ---------- */

wh_win_t *wh_win_get(MPI_Win h)
{
    return wh_win_tab.objsize ? wh_tab_get(&wh_win_tab, h) : NULL;
}

int wh_raise_win(wh_win_t *w, const char *fname, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!w)
        return wh_raise_comm(NULL, fname, code);
    if (w->errh_default) /* never given a handler: MPI_COMM_WORLD's current one (as MPICH) */
        return wh_raise_comm(wh_comm_get(MPI_COMM_WORLD), fname, code);
    wh_errh_t *e = wh_errh_get(w->errh);
    int kind = e ? e->kind : WH_ERRH_FATAL;
    if (kind == WH_ERRH_RETURN)
        return code;
    if (kind != WH_ERRH_USER)
        wh_fatal(fname, code);
    MPI_Win h = w->obj.handle;
    int rc = code;
    e->obj.refs++; /* the handler may free itself */
    e->comm_fn(&h, &rc);
    wh_errh_release(e);
    return rc;
}

/* ---------- init / finalize ---------- */

int wh_rma_init(void)
{
    WH_CHECK(wh_am_register("rma.op", wh_rma_target_op, &wh_rma_am.op));
    WH_CHECK(wh_am_register("rma.reply", wh_rma_origin_reply, &wh_rma_am.reply));
    WH_CHECK(wh_am_register("rma.ctl", wh_rma_target_ctl, &wh_rma_am.ctl));
    if (!wh_win_tab.objsize)
        wh_tab_init(&wh_win_tab, WH_H_WIN, sizeof(wh_win_t));
    if (!q_count && !(q_count = calloc((size_t)wh_peers_cap, sizeof(int))))
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    return wh_progress_hook_add(rma_push, &q_busy);
}

void wh_rma_finalize(void)
{
    wh_rma_async_stop();
    /* push what is still queued (acks of the last epoch) */
    release_held();
    unsigned idle = 0;
    for (long i = 0; q_head && i < 100000000L; i++)
        if (!wh_progress())
            wh_progress_idle(&idle);
}
