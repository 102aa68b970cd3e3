/* Context-id agreement as a nonblocking state machine (see comm/comm.h).
 *
 * One round has two phases, each an allreduce of a pair (max, min) of 32-bit
 * values up a binomial tree to participant 0, across to the other group's
 * root for intercommunicators, and back down:
 *   propose: (my lowest available id >= start, reserved; 1)  -> candidate
 *   check:   (0; 1 if I hold the candidate reserved)          -> all ok?
 * Every message of one agreement uses the same tag; messages between two
 * ranks on one context and tag arrive in order and the sources are always
 * explicit, so successive phases cannot cross.
 *
 * Concurrent agreements are ordered by priority (the lower context id of the
 * communicator they run on, then the earlier tag), the same at every rank.
 * When a candidate is reserved here by a lower-priority agreement that has
 * not yet voted on it (still proposing), the higher one takes the
 * reservation over; otherwise two agreements whose proposals were reserved
 * in opposite orders on different ranks would refuse each other's candidate
 * in every round until the ids ran out.  Agreements advance in priority
 * order, so within one progress pass the higher one claims first. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "op/op.h"
#include "proto/request.h"
#include "util/log.h"
#include "util/tunables.h"

#define WH_CID_TAG_BASE (-(1 << 29))
#define WH_CID_TAG_MASK ((1 << 28) - 1)
#define WH_CID_MAXCHILD 32

enum { PH_PROPOSE, PH_CHECK };
enum { S_BEGIN, S_UP, S_X, S_DOWN, S_END, S_DONE };

struct wh_cid_op {
    struct wh_cid_op *next;
    wh_cid_spec_t s;
    int *prank;
    int phase, step;
    uint32_t start, cand;
    int32_t mine;             /* id reserved for this op here, or -1 */
    int32_t val[2];           /* (max, min) pair being reduced */
    int32_t in[WH_CID_MAXCHILD][2], xin[2], sup[2], sdown[2], sx[2];
    wh_req_t *reqs[WH_CID_MAXCHILD + 2];
    int nreq;
    int err;
    int got;                  /* ids agreed so far */
    uint32_t ctx[2];
    wh_cid_done_fn done;
    void *arg;
};

static wh_cid_op_t *holder[WH_CTX_IDS]; /* agreement in flight reserving each id, or NULL */
static wh_cid_op_t *ops_head; /* in priority order */
static int ops_busy; /* ops_head != NULL, for the progress engine */
static int in_hook, hook_on;

static int avail(uint32_t id)
{
    return id < WH_CTX_IDS && wh_ctx_is_free(id) && !holder[id];
}

static void reserve(wh_cid_op_t *op, uint32_t id)
{
    holder[id] = op;
    op->mine = (int32_t)id;
}

/* a goes before b (same answer at every rank both run on) */
static int before(const wh_cid_op_t *a, const wh_cid_op_t *b)
{
    if (a->s.comm->ctx != b->s.comm->ctx)
        return a->s.comm->ctx < b->s.comm->ctx;
    return a->s.tag > b->s.tag; /* internal tags count down */
}

int wh_cid_tag(wh_comm_t *c)
{
    return WH_CID_TAG_BASE - (int)(c->cid_seq++ & WH_CID_TAG_MASK);
}

static inline int prank(const wh_cid_op_t *op, int i)
{
    return op->prank ? op->prank[i] : i;
}

static inline int lowbit(int r)
{
    return r & -r;
}

static void combine(int32_t *v, const int32_t *in)
{
    if (in[0] > v[0])
        v[0] = in[0];
    if (in[1] < v[1])
        v[1] = in[1];
}

static int post_recv(wh_cid_op_t *op, int32_t *buf, int src, int tag, wh_comm_t *c)
{
    wh_req_t *r;
    int rc = wh_irecv(buf, 2, wh_dtype_get(MPI_INT32_T), src, tag, c, WH_CTX_COLL, &r);
    if (rc == MPI_SUCCESS)
        op->reqs[op->nreq++] = r;
    return rc;
}

static int post_send(wh_cid_op_t *op, int32_t *buf, const int32_t *val, int dest, int tag, wh_comm_t *c)
{
    wh_req_t *r;
    buf[0] = val[0];
    buf[1] = val[1];
    int rc = wh_isend(buf, 2, wh_dtype_get(MPI_INT32_T), dest, tag, c, WH_CTX_COLL, WH_MODE_STD, &r);
    if (rc == MPI_SUCCESS)
        op->reqs[op->nreq++] = r;
    return rc;
}

/* all posted requests complete: release them (first error into op->err) */
static int reqs_done(wh_cid_op_t *op)
{
    for (int i = 0; i < op->nreq; i++)
        if (!__atomic_load_n(&op->reqs[i]->complete, __ATOMIC_ACQUIRE))
            return 0;
    for (int i = 0; i < op->nreq; i++) {
        if (op->reqs[i]->err && !op->err)
            op->err = op->reqs[i]->err;
        wh_req_release(op->reqs[i]);
    }
    op->nreq = 0;
    return 1;
}

static void drop_mine(wh_cid_op_t *op)
{
    if (op->mine >= 0)
        holder[op->mine] = NULL;
    op->mine = -1;
}

/* the local value of a phase */
static void phase_begin(wh_cid_op_t *op)
{
    if (op->phase == PH_PROPOSE) {
        uint32_t id = op->start;
        if (op->s.member) {
            while (id < WH_CTX_IDS && !avail(id))
                id++;
            if (id < WH_CTX_IDS)
                reserve(op, id);
        }
        op->val[0] = (int32_t)id;
        op->val[1] = 1;
    } else {
        op->val[0] = 0;
        op->val[1] = !op->s.member || op->mine == (int32_t)op->cand;
    }
}

/* the reduced value of a phase is known everywhere */
static void phase_end(wh_cid_op_t *op)
{
    if (op->phase == PH_PROPOSE) {
        op->cand = (uint32_t)op->val[0];
        if (op->cand >= WH_CTX_IDS) {
            drop_mine(op);
            op->err = wh_error(MPI_ERR_OTHER, "out of communicator context ids: all %d are in use (free communicators "
                                              "you no longer need)", WH_CTX_IDS);
            op->step = S_DONE;
            return;
        }
        if (op->s.member && op->mine != (int32_t)op->cand) {
            drop_mine(op);
            wh_cid_op_t *h = holder[op->cand];
            if (h && h->phase == PH_PROPOSE && before(op, h)) {
                WH_DEBUG("comm", "context id %u: reservation taken over from a lower-priority agreement", op->cand);
                drop_mine(h);
            }
            if (avail(op->cand))
                reserve(op, op->cand);
        }
        op->phase = PH_CHECK;
    } else if (op->val[1]) {
        if (op->s.member) {
            drop_mine(op);
            wh_ctx_take(op->cand);
            op->ctx[op->got] = op->cand << 1;
        }
        if (++op->got == op->s.nids) {
            op->step = S_DONE;
            return;
        }
        op->start = op->cand + 1;
        op->phase = PH_PROPOSE;
    } else {
        WH_DEBUG("comm", "context id %u is taken at some participant; next round", op->cand);
        drop_mine(op);
        op->start = op->cand + 1;
        op->phase = PH_PROPOSE;
    }
    op->step = S_BEGIN;
}

/* Advance as far as possible without blocking; nonzero if anything moved. */
static int advance(wh_cid_op_t *op)
{
    int moved = 0, n = op->s.n, me = op->s.me, rc = MPI_SUCCESS;
    wh_comm_t *c = op->s.comm;
    while (op->step != S_DONE && reqs_done(op)) {
        if (op->err) {
            drop_mine(op);
            op->step = S_DONE;
            break;
        }
        moved = 1;
        int lb = me ? lowbit(me) : 1 << 30;
        switch (op->step) {
        case S_BEGIN:
            phase_begin(op);
            for (int m = 1, k = 0; m < lb && me + m < n && rc == MPI_SUCCESS; m <<= 1, k++)
                rc = post_recv(op, op->in[k], prank(op, me + m), op->s.tag, c);
            op->step = S_UP;
            break;
        case S_UP:
            for (int m = 1, k = 0; m < lb && me + m < n; m <<= 1, k++)
                combine(op->val, op->in[k]);
            if (me) {
                rc = post_send(op, op->sup, op->val, prank(op, me - lb), op->s.tag, c);
                if (rc == MPI_SUCCESS)
                    rc = post_recv(op, op->val, prank(op, me - lb), op->s.tag, c);
                op->step = S_DOWN;
            } else if (op->s.xcomm) {
                rc = post_send(op, op->sx, op->val, op->s.xpeer, op->s.xtag, op->s.xcomm);
                if (rc == MPI_SUCCESS)
                    rc = post_recv(op, op->xin, op->s.xpeer, op->s.xtag, op->s.xcomm);
                op->step = S_X;
            } else {
                op->step = S_DOWN;
            }
            break;
        case S_X:
            combine(op->val, op->xin);
            op->step = S_DOWN;
            break;
        case S_DOWN:
            for (int m = 1; m < lb && me + m < n && rc == MPI_SUCCESS; m <<= 1)
                rc = post_send(op, op->sdown, op->val, prank(op, me + m), op->s.tag, c);
            op->step = S_END;
            break;
        case S_END:
            phase_end(op);
            break;
        }
        if (rc != MPI_SUCCESS && !op->err)
            op->err = rc;
    }
    return moved;
}

static void op_free(wh_cid_op_t *op)
{
    wh_comm_release(op->s.comm);
    wh_comm_release(op->s.xcomm);
    free(op->prank);
    free(op);
}

/* progress hook: advance every agreement in flight, finish the done ones */
static int cid_progress(void)
{
    if (!ops_head || in_hook) {
        if (!in_hook)
            ops_busy = 0;
        return 0;
    }
    in_hook = 1;
    int n = 0;
    for (wh_cid_op_t **pp = &ops_head; *pp;) {
        wh_cid_op_t *op = *pp;
        n += advance(op);
        if (op->step != S_DONE) {
            pp = &op->next;
            continue;
        }
        *pp = op->next;
        if (op->done)
            op->done(op, op->arg);
        op_free(op);
    }
    ops_busy = ops_head != NULL;
    in_hook = 0;
    return n;
}

/* the first round of an agreement (op zeroed; prank is the caller's to set) */
static void op_init(wh_cid_op_t *op, const wh_cid_spec_t *s)
{
    op->s = *s;
    op->s.prank = NULL;
    if (op->s.nids < 1 || op->s.nids > 2)
        op->s.nids = 1;
    op->phase = PH_PROPOSE;
    op->step = S_BEGIN;
    op->start = 2;
    op->mine = -1;
}

int wh_cid_start(const wh_cid_spec_t *s, wh_cid_done_fn done, void *arg, wh_cid_op_t **out)
{
    int rc;
    if (!hook_on) {
        if ((rc = wh_progress_hook_add(cid_progress, &ops_busy)) != MPI_SUCCESS)
            return rc;
        hook_on = 1;
    }
    wh_cid_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return wh_error(MPI_ERR_NO_MEM, "out of memory starting a context-id agreement");
    op_init(op, s);
    if (s->prank) {
        if (!(op->prank = malloc((size_t)s->n * sizeof(int)))) {
            free(op);
            return wh_error(MPI_ERR_NO_MEM, "out of memory starting a context-id agreement");
        }
        memcpy(op->prank, s->prank, (size_t)s->n * sizeof(int));
    }
    s->comm->obj.refs++;
    if (s->xcomm)
        s->xcomm->obj.refs++;
    op->done = done;
    op->arg = arg;
    wh_cid_op_t **pp = &ops_head;
    while (*pp && before(*pp, op))
        pp = &(*pp)->next;
    op->next = *pp;
    *pp = op;
    ops_busy = 1;
    if (out)
        *out = op;
    cid_progress(); /* send what can be sent now */
    return MPI_SUCCESS;
}

int wh_cid_result(const wh_cid_op_t *op, uint32_t *ctx)
{
    for (int i = 0; i < op->s.nids; i++)
        ctx[i] = op->ctx[i];
    return op->err;
}

typedef struct {
    int finished, err;
    uint32_t *ctx;
} wh_cid_wait_t;

static void wait_done(wh_cid_op_t *op, void *arg)
{
    wh_cid_wait_t *w = arg;
    w->err = wh_cid_result(op, w->ctx);
    w->finished = 1;
}

/* A blocking agreement over the whole of an intracommunicator (MPI_Comm_dup,
 * _split, _create...: every rank of c takes part, the same call everywhere,
 * so every rank picks this path alike): each phase is one allreduce on c,
 * as MPICH agrees on context ids, so it runs hierarchically (node shared
 * memory, then one leader per node over the network) where c spans nodes,
 * instead of the tree of point-to-point messages between every rank.  Same
 * rounds and reservation rules as the state machine; the op is not in the
 * progress list (this loop drives it), but others in flight see its
 * reservations and may take them over while it still proposes.  In twohost
 * (2 hosts x 2 containers on 2 cpus) a dup went from ~5-8 ms to the cost
 * of two allreduces (docs/PERFORMANCE.md). */
static int agree_coll(const wh_cid_spec_t *s, uint32_t *ctx)
{
    wh_cid_op_t op = {0};
    op_init(&op, s);
    wh_dtype_t *dt = wh_dtype_get(MPI_INT32_T);
    wh_op_t *max = wh_op_get(MPI_MAX);
    while (op.step != S_DONE) {
        phase_begin(&op);
        int32_t v[2] = {op.val[0], -op.val[1]}; /* (max, min) as two maxima */
        int rc = wh_allreduce(MPI_IN_PLACE, v, 2, MPI_INT32_T, dt, max, s->comm);
        if (rc != MPI_SUCCESS) {
            drop_mine(&op);
            op.err = rc;
            break;
        }
        op.val[0] = v[0];
        op.val[1] = -v[1];
        phase_end(&op);
    }
    return wh_cid_result(&op, ctx);
}

int wh_cid_agree(const wh_cid_spec_t *s, uint32_t *ctx)
{
    if (wh_tun.cid_coll && !s->xcomm && !s->prank && !s->comm->is_inter && s->n == s->comm->size &&
        s->me == s->comm->rank)
        return agree_coll(s, ctx);
    wh_cid_wait_t w = {0, 0, ctx};
    int rc = wh_cid_start(s, wait_done, &w, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    for (unsigned idle = 0; !w.finished;) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    return w.err;
}
