/* The schedule engine: building step lists, running them group by group, and
 * the progress hook that advances every active schedule (see sched.h). */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "coll/sched.h"
#include "coll/shmcoll.h"
#include "util/scratch.h"

/* ---------- building ---------- */

wh_sched_t *wh_sched_new(wh_comm_t *c)
{
    wh_sched_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->comm = s->home = c;
    c->obj.refs++;
    s->tag = WH_TAG_NBC_BASE + (int)(c->coll_seq++ % WH_TAG_NBC_SPAN);
    return s;
}

void wh_sched_set_op(wh_sched_t *s, wh_op_t *op, MPI_Datatype dth, wh_dtype_t *dt)
{
    wh_op_addref(op);
    wh_dtype_addref(dt);
    s->op = op;
    s->dth = dth;
    s->dt = dt;
}

static void build_fail(wh_sched_t *s, int code)
{
    if (s->build_err == MPI_SUCCESS)
        s->build_err = code;
}

static wh_sstep_t *add(wh_sched_t *s, int kind)
{
    if (s->build_err)
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        wh_sstep_t *n = realloc(s->steps, (size_t)cap * sizeof *n);
        if (!n) {
            build_fail(s, wh_coll_nomem("collective schedule", (size_t)cap * sizeof *n));
            return NULL;
        }
        s->steps = n;
        s->cap = cap;
    }
    wh_sstep_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->peer = MPI_PROC_NULL;
    return st;
}

static void hold(wh_dtype_t *a, wh_dtype_t *b)
{
    if (a)
        wh_dtype_addref(a);
    if (b)
        wh_dtype_addref(b);
}

/* signal: a zero-byte message that must still be sent (barriers) */
static void add_comm(wh_sched_t *s, int kind, const void *buf, MPI_Count count, wh_dtype_t *dt, int peer,
                     int signal, int tagoff)
{
    if (tagoff < 0 || tagoff >= WH_TAG_NBC_OFFS) {
        build_fail(s, wh_error(MPI_ERR_INTERN, "schedule tag offset %d outside 0..%d", tagoff, WH_TAG_NBC_OFFS - 1));
        return;
    }
    /* nothing moves: no step (both sides skip alike, type signatures match) */
    if (peer == MPI_PROC_NULL || (!signal && (count == 0 || dt->size == 0)))
        return;
    wh_sstep_t *st = add(s, kind);
    if (!st)
        return;
    st->peer = peer;
    st->tagoff = (uint8_t)tagoff;
    st->local = s->comm != s->home;
    if (kind == WH_SS_SEND) {
        st->src = buf;
        st->scount = count;
        st->sdt = dt;
    } else {
        st->dst = (void *)buf;
        st->dcount = count;
        st->ddt = dt;
    }
    hold(dt, NULL);
    if (++s->grp_reqs > s->maxreq)
        s->maxreq = s->grp_reqs;
}

void wh_sched_send(wh_sched_t *s, const void *buf, MPI_Count count, wh_dtype_t *dt, int peer)
{
    add_comm(s, WH_SS_SEND, buf, count, dt, peer, 0, 0);
}

void wh_sched_send_tag(wh_sched_t *s, const void *buf, MPI_Count count, wh_dtype_t *dt, int peer, int tagoff)
{
    add_comm(s, WH_SS_SEND, buf, count, dt, peer, 0, tagoff);
}

void wh_sched_recv_tag(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int peer, int tagoff)
{
    add_comm(s, WH_SS_RECV, buf, count, dt, peer, 0, tagoff);
}

void wh_sched_recv(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int peer)
{
    add_comm(s, WH_SS_RECV, buf, count, dt, peer, 0, 0);
}

void wh_sched_signal(wh_sched_t *s, int to, int from)
{
    add_comm(s, WH_SS_RECV, NULL, 0, wh_coll_byte(), from, 1, 0);
    add_comm(s, WH_SS_SEND, NULL, 0, wh_coll_byte(), to, 1, 0);
}

void wh_sched_copy(wh_sched_t *s, const void *src, MPI_Count scount, wh_dtype_t *sdt, void *dst, MPI_Count dcount,
                   wh_dtype_t *ddt)
{
    if (src == dst && sdt == ddt && scount == dcount)
        return;
    if ((scount == 0 || sdt->size == 0) && (dcount == 0 || ddt->size == 0))
        return;
    wh_sstep_t *st = add(s, WH_SS_COPY);
    if (!st)
        return;
    *st = (wh_sstep_t){.kind = WH_SS_COPY, .peer = MPI_PROC_NULL, .src = src, .scount = scount, .sdt = sdt,
                       .dst = dst, .dcount = dcount, .ddt = ddt};
    hold(sdt, ddt);
}

void wh_sched_reduce(wh_sched_t *s, const void *in, void *inout, MPI_Count count)
{
    if (count == 0)
        return;
    wh_sstep_t *st = add(s, WH_SS_REDUCE);
    if (!st)
        return;
    st->src = in;
    st->dst = inout;
    st->scount = st->dcount = count;
}

void wh_sched_local(wh_sched_t *s, int on)
{
    s->comm = on && s->home->is_inter ? s->home->local : s->home;
}

void wh_sched_fence(wh_sched_t *s)
{
    if (s->nsteps > 0 && !s->build_err)
        s->steps[s->nsteps - 1].last = 1;
    s->grp_reqs = 0;
}

static void *keep(wh_sched_t *s, void *raw)
{
    if (s->nmem == s->memcap) {
        int cap = s->memcap ? 2 * s->memcap : 8;
        void **n = realloc(s->mem, (size_t)cap * sizeof *n);
        if (!n) {
            wh_scratch_put(raw);
            build_fail(s, wh_coll_nomem("collective schedule", (size_t)cap * sizeof *n));
            return NULL;
        }
        s->mem = n;
        s->memcap = cap;
    }
    s->mem[s->nmem++] = raw;
    return raw;
}

void *wh_sched_tmp(wh_sched_t *s, MPI_Count count, const wh_dtype_t *dt)
{
    void *raw;
    if (s->build_err)
        return NULL;
    void *p = wh_coll_tmp(count, dt, &raw);
    if (!p) {
        build_fail(s, wh_coll_nomem("collective temporary", (size_t)count * (size_t)dt->extent));
        return NULL;
    }
    return keep(s, raw) ? p : NULL;
}

void *wh_sched_bytes(wh_sched_t *s, size_t bytes)
{
    if (s->build_err)
        return NULL;
    void *p = wh_scratch_get(bytes);
    if (!p) {
        build_fail(s, wh_coll_nomem("collective temporary", bytes));
        return NULL;
    }
    return keep(s, p);
}

int wh_sched_commit(wh_sched_t *s)
{
    wh_sched_fence(s);
    s->comm = s->home;
    if (s->build_err)
        return s->build_err;
    if (s->maxreq > 0 && !(s->reqs = calloc((size_t)s->maxreq, sizeof *s->reqs)))
        return s->build_err = wh_coll_nomem("collective schedule requests", (size_t)s->maxreq * sizeof *s->reqs);
    return MPI_SUCCESS;
}

void wh_sched_free(wh_sched_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nsteps; i++) {
        wh_sstep_t *st = &s->steps[i];
        if (st->sdt)
            wh_dtype_release(st->sdt);
        if (st->ddt)
            wh_dtype_release(st->ddt);
    }
    for (int i = 0; i < s->nmem; i++)
        wh_scratch_put(s->mem[i]);
    if (s->op)
        wh_op_release(s->op);
    if (s->dt)
        wh_dtype_release(s->dt);
    wh_comm_release(s->home);
    free(s->mem);
    free(s->steps);
    free(s->reqs);
    free(s);
}

/* ---------- running ---------- */

static wh_sched_t *active_head;
static int nactive;
static int running; /* an advance is under way (user ops may call MPI) */

static void list_add(wh_sched_t *s)
{
    s->prev = NULL;
    s->next = active_head;
    if (active_head)
        active_head->prev = s;
    active_head = s;
    s->active = 1;
    nactive++;
}

static void list_remove(wh_sched_t *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        active_head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->active = 0;
    nactive--;
}

/* The schedule is done: report to its request (or free both if orphaned). */
static void finish(wh_sched_t *s)
{
    list_remove(s);
    wh_req_t *r = s->req;
    r->err = s->err;
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, s->err, 0, 0);
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    if (s->orphan) {
        r->extra = NULL;
        r->poll_fn = NULL;
        wh_sched_free(s);
        wh_req_release(r);
    }
}

/* Run one step of the group being started. */
static void run_step(wh_sched_t *s, const wh_sstep_t *st)
{
    int rc = MPI_SUCCESS;
    wh_req_t *q = NULL;
    int tag = s->tag + (int)st->tagoff * WH_TAG_NBC_STEP;
    wh_comm_t *c = st->local ? s->home->local : s->home;
    switch (st->kind) {
    case WH_SS_SEND:
        /* after an error, an empty message: the receiver (expecting bytes)
         * sees the size mismatch and fails too instead of using bad data */
        rc = wh_isend(st->src, s->err == MPI_SUCCESS ? st->scount : 0, st->sdt, st->peer, tag, c, WH_CTX_COLL,
                      WH_MODE_STD, &q);
        break;
    case WH_SS_RECV:
        rc = wh_irecv(st->dst, st->dcount, st->ddt, st->peer, tag, c, WH_CTX_COLL, &q);
        break;
    case WH_SS_COPY:
        /* a rank's own block: a send count that disagrees with the receive
         * count is an error here, and the rank's messages become empty */
        if (__builtin_expect((size_t)st->scount * st->sdt->size != (size_t)st->dcount * st->ddt->size, 0))
            rc = wh_error((size_t)st->scount * st->sdt->size > (size_t)st->dcount * st->ddt->size ? MPI_ERR_TRUNCATE
                                                                                                   : MPI_ERR_OTHER,
                          "collective: this rank's send data (%zu bytes) and receive block (%zu bytes) differ in size",
                          (size_t)st->scount * st->sdt->size, (size_t)st->dcount * st->ddt->size);
        else
            rc = wh_coll_copy(st->src, st->scount, st->sdt, st->dst, st->dcount, st->ddt);
        break;
    case WH_SS_REDUCE:
        rc = wh_op_apply(s->op, st->src, st->dst, (size_t)st->scount, s->dth, s->dt);
        break;
    default:
        rc = wh_error(MPI_ERR_INTERN, "collective schedule step of unknown kind %d", st->kind);
        break;
    }
    if (q)
        s->reqs[s->nreq++] = q;
    if (rc != MPI_SUCCESS && s->err == MPI_SUCCESS)
        s->err = rc;
}

/* Advance s as far as it goes now; nonzero if anything happened. */
static int advance(wh_sched_t *s)
{
    int did = 0;
    for (;;) {
        if (s->nreq > 0) {
            for (int i = 0; i < s->nreq; i++)
                if (!__atomic_load_n(&s->reqs[i]->complete, __ATOMIC_ACQUIRE))
                    return did;
            for (int i = 0; i < s->nreq; i++) {
                wh_req_t *q = s->reqs[i];
                if (__builtin_expect(q->err != MPI_SUCCESS || (q->kind == WH_REQ_RECV && q->msg_len != q->bytes), 0)
                    && s->err == MPI_SUCCESS)
                    /* fewer bytes than posted: the ranks disagree on the count */
                    s->err = q->err != MPI_SUCCESS ? q->err
                                                   : wh_coll_short_error(q->status.MPI_SOURCE, q->msg_len, q->bytes);
                wh_req_release(q);
                s->reqs[i] = NULL;
            }
            s->nreq = 0;
            did = 1;
        }
        if (s->pos >= s->nsteps) {
            if (s->shmbar && !wh_shmc_arrived(s->home, s->shm_k))
                return did;
            finish(s);
            return 1;
        }
        /* start the next group: local steps run now, messages are posted.
         * After an error (a message longer or shorter than posted: the
         * ranks called the collective with different counts) the remaining
         * steps still run, so the peers waiting for this rank's messages
         * complete too (with their own error if they see a mismatch)
         * instead of hanging; the first error is reported. */
        int i = s->pos;
        for (;;) {
            const wh_sstep_t *st = &s->steps[i++];
            run_step(s, st);
            if (st->last || i >= s->nsteps)
                break;
        }
        s->pos = i;
        did = 1;
    }
}

static int progress_hook(void)
{
    if (__builtin_expect(nactive == 0 || running, 1))
        return 0;
    running = 1;
    int n = 0;
    for (wh_sched_t *s = active_head, *next; s; s = next) {
        next = s->next; /* s may finish and be freed */
        n += advance(s);
    }
    running = 0;
    return n;
}

int wh_sched_start(wh_sched_t *s)
{
    static int hooked;
    if (!hooked) {
        int rc = wh_progress_hook_add(progress_hook, &nactive);
        if (rc != MPI_SUCCESS)
            return rc;
        hooked = 1;
    }
    wh_req_t *r = s->req;
    s->pos = 0;
    s->nreq = 0;
    s->err = MPI_SUCCESS;
    r->err = MPI_SUCCESS;
    __atomic_store_n(&r->complete, 0, __ATOMIC_RELEASE);
    if (s->shmbar) { /* at the call, in the order of the communicator's collectives */
        s->shm_k = wh_shmc_arrive(s->home);
        wh_coll_count(s->home, WH_CK_BARRIER, WH_CA_SHM);
    }
    list_add(s);
    if (!running) {
        running = 1;
        advance(s); /* first group goes out now */
        running = 0;
    }
    return MPI_SUCCESS;
}

int wh_sched_poll(wh_req_t *r)
{
    wh_sched_t *s = r->extra;
    if (!s || !s->active || running)
        return 0;
    running = 1;
    int n = advance(s);
    running = 0;
    return n;
}

void wh_sched_abandon(wh_sched_t *s)
{
    s->orphan = 1;
}

int wh_sched_active_count(void)
{
    return nactive;
}
