/* Partitioned point-to-point (MPI-4.1 chapter 4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived, started with
 * MPI_Start(all), completed with MPI_Wait/Test, freed with MPI_Request_free.
 *
 * Built on the internal point-to-point API (proto/p2p.h), on the collective
 * context of the communicator so no user receive can take its messages:
 *
 * Matching.  The n-th MPI_Psend_init to (dest, tag) on a communicator pairs
 * with the n-th MPI_Precv_init from (source, tag) on it (wildcards are not
 * allowed).  The receiver owns a range of data tags, one per partition,
 * unique among its live partitioned receives; at its first MPI_Start it sends
 * a ready-to-receive message (RTR: tag, n, first data tag, its partition
 * count and bytes per partition) on the internal tag PART_TAG_RTR.  A sender
 * that does not know the data tags yet keeps a receive for RTRs from its
 * destination posted; an RTR meant for another request waits in a stash.
 *
 * Data.  One message per RECEIVER partition j, on the internal tag
 * PART_TAG_DATA(U + j); the receiver posts all its partition receives at
 * every MPI_Start (a message of round k+1 that arrives early waits in the
 * unexpected queue).  With the same partitioning on both sides a partition
 * goes out as soon as it is ready, in any order; otherwise receiver
 * partitions go out in order, each once every sender partition overlapping
 * it is ready.  A receiver partition lying on whole elements of the sender's
 * datatype is sent from the user buffer; otherwise its bytes are packed into
 * a temporary.  Send and receive sizes that differ are an error
 * on both sides (MPI_ERR_TRUNCATE), never a hang. */
#include <stdlib.h>
#include <string.h>

#include "mpi/reqapi.h"
#include "proto/p2p.h"
#include "util/log.h"

#define WH_REQ_PART 5
#define PART_TAG_RTR (-(15 << 27))               /* below WH_TAG_FROMGROUPS (comm/comm.h) */
#define PART_TAG_DATA(u) (PART_TAG_RTR - 1 - (int)(u))
#define PART_TAGS (1 << 26)                      /* data tags: one per live receive partition */

typedef struct part {
    wh_req_t *r;                /* the user request */
    int send;
    char *buf;
    int parts;
    MPI_Count count;            /* elements per partition */
    wh_dtype_t *dt;
    int peer, tag;
    wh_comm_t *comm;
    uint32_t seq;               /* n-th init of this side for (comm, peer, tag) */
    int32_t u;                  /* data tag id (sender: -1 until the RTR came) */
    size_t pbytes;              /* bytes per partition (this side) */
    /* the receiver's partitioning (sender: from the RTR) */
    int rparts;
    size_t rbytes;
    int rtr_sent;               /* receiver: RTR sent (first start) */
    int32_t rtr[5];             /* RTR message: tag, seq, u, parts, bytes per partition (low 31 bits) */
    wh_req_t *rtr_req;          /* sender: posted RTR receive; receiver: RTR send in flight */
    /* one round */
    uint8_t *ready;             /* sender: partitions marked ready */
    int nready_prefix;          /* sender: leading partitions all ready */
    int nsent;                  /* sender: receiver partitions handed to wh_isend */
    wh_req_t **reqs;            /* per receiver partition (sender) / partition (receiver) */
    char **tmp;                 /* sender: packed temporaries per message (or NULL) */
    int err;                    /* a failure: the round ends with it */
    int size_err;               /* sizes of the two sides differ: reported, the round still runs */
    int on_list;
    struct part *next;
} part_t;

/* ---------- matching state ---------- */

/* keyed by context id and the communicator's creation serial: a communicator
 * that reuses a freed one's context id starts its own numbering */
typedef struct seqent {
    uint32_t ctx, serial;
    int peer, tag, send;
    uint32_t n;
    struct seqent *next;
} seqent_t;
static seqent_t *seqs;

typedef struct stash {
    uint32_t ctx, serial;
    int src;
    int32_t rtr[5];
    struct stash *next;
} stash_t;
static stash_t *stashed;

/* data tag ranges of live partitioned receives: bump allocation, freed
 * ranges reused first-fit */
typedef struct tblock {
    int32_t base, len;
    struct tblock *next;
} tblock_t;
static tblock_t *tfree;
static int32_t tnext;
static part_t *active;          /* requests the progress hook advances */
static int nactive;
static int hook_on;

static uint32_t next_seq(wh_comm_t *c, int peer, int tag, int send)
{
    /* forget what freed communicators with this context id left behind */
    for (seqent_t **q = &seqs; *q;) {
        seqent_t *e = *q;
        if (e->ctx == c->ctx && e->serial != c->serial) {
            *q = e->next;
            free(e);
        } else {
            q = &e->next;
        }
    }
    for (stash_t **q = &stashed; *q;) {
        stash_t *s = *q;
        if (s->ctx == c->ctx && s->serial != c->serial) {
            *q = s->next;
            free(s);
        } else {
            q = &s->next;
        }
    }
    for (seqent_t *e = seqs; e; e = e->next)
        if (e->ctx == c->ctx && e->peer == peer && e->tag == tag && e->send == send)
            return e->n++;
    seqent_t *e = calloc(1, sizeof *e);
    if (!e)
        return UINT32_MAX;
    *e = (seqent_t){.ctx = c->ctx, .serial = c->serial, .peer = peer, .tag = tag, .send = send, .n = 1, .next = seqs};
    seqs = e;
    return 0;
}

static int32_t tags_take(int n)
{
    for (tblock_t **q = &tfree; *q; q = &(*q)->next)
        if ((*q)->len >= n) {
            tblock_t *b = *q;
            int32_t base = b->base;
            b->base += n;
            b->len -= n;
            if (!b->len) {
                *q = b->next;
                free(b);
            }
            return base;
        }
    if (n > PART_TAGS - tnext)
        return -1;
    tnext += n;
    return tnext - n;
}

static void tags_give(int32_t base, int n)
{
    if (base < 0)
        return;
    if (base + n == tnext) {
        tnext = base;
        return;
    }
    tblock_t *b = malloc(sizeof *b);
    if (b) { /* (without memory the range is simply not reused) */
        *b = (tblock_t){.base = base, .len = n, .next = tfree};
        tfree = b;
    }
}

static int rtr_mine(const part_t *p, const int32_t *m)
{
    return m[0] == p->tag && (uint32_t)m[1] == p->seq;
}

static void rtr_take(part_t *p, const int32_t *m)
{
    p->u = m[2];
    p->rparts = m[3];
    p->rbytes = (size_t)(uint32_t)m[4];
}

/* ---------- sender ---------- */

static void list_add(part_t *p)
{
    if (p->on_list)
        return;
    p->on_list = 1;
    p->next = active;
    active = p;
    nactive++;
}

static void list_del(part_t *p)
{
    if (!p->on_list)
        return;
    for (part_t **q = &active; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    p->on_list = 0;
    nactive--;
}

static size_t total_send(const part_t *p) { return p->pbytes * (size_t)p->parts; }

static int stash_add(const wh_comm_t *c, int src, const int32_t *m)
{
    stash_t *s = malloc(sizeof *s);
    if (!s)
        return wh_error(MPI_ERR_NO_MEM, "out of memory keeping a partitioned-receive announcement");
    WH_DEBUG("part", "announcement of partitioned receive (tag %d, #%u) from rank %d kept for a later request",
             (int)m[0], (unsigned)m[1], src);
    *s = (stash_t){.ctx = c->ctx, .serial = c->serial, .src = src, .next = stashed};
    memcpy(s->rtr, m, sizeof s->rtr);
    stashed = s;
    return MPI_SUCCESS;
}

/* Learn U: from the stash, else from the posted RTR receive. */
static int sender_match(part_t *p)
{
    if (p->u >= 0)
        return 1;
    uint32_t ctx = p->comm->ctx;
    for (stash_t **q = &stashed; *q; q = &(*q)->next)
        if ((*q)->ctx == ctx && (*q)->serial == p->comm->serial && (*q)->src == p->peer && rtr_mine(p, (*q)->rtr)) {
            stash_t *s = *q;
            rtr_take(p, s->rtr);
            *q = s->next;
            free(s);
            break;
        }
    while (p->rtr_req && wh_req_done(p->rtr_req)) {
        wh_req_t *rq = p->rtr_req;
        p->rtr_req = NULL;
        int32_t m[5];
        memcpy(m, p->rtr, sizeof m);
        int rc = wh_wait(rq, NULL);
        if (rc == MPI_SUCCESS) {
            if (p->u < 0 && rtr_mine(p, m))
                rtr_take(p, m);
            else /* another request's: keep it */
                rc = stash_add(p->comm, p->peer, m);
        }
        if (rc != MPI_SUCCESS) {
            p->err = rc;
            return 0;
        }
    }
    if (p->u < 0 && !p->rtr_req) {
        wh_dtype_t *i32 = wh_dtype_get(MPI_INT);
        int rc = wh_irecv(p->rtr, 5, i32, p->peer, PART_TAG_RTR, p->comm, WH_CTX_COLL, &p->rtr_req);
        if (rc != MPI_SUCCESS)
            p->err = rc;
    } else if (p->u >= 0 && p->rtr_req) { /* matched from the stash: withdraw the receive */
        if (wh_cancel_recv(p->rtr_req)) {
            wh_wait(p->rtr_req, NULL);
            p->rtr_req = NULL;
        } /* else it matched meanwhile: a later call (or the release) stashes it */
    }
    return p->u >= 0;
}

/* Send bytes [a, b) of the sender's data as receiver partition j: from the
 * user buffer when they lie on whole elements, else packed. */
static int send_one(part_t *p, int j, size_t a, size_t b)
{
    size_t len = b - a, esz = p->dt->size;
    int rc, tag = PART_TAG_DATA(p->u + j);
    wh_req_t *sr;
    if (len == 0 || (esz && a % esz == 0 && len % esz == 0)) {
        MPI_Count k = esz ? (MPI_Count)(a / esz) : 0;
        rc = wh_isend(p->buf + k * p->dt->extent, esz ? (MPI_Count)(len / esz) : 0, p->dt, p->peer, tag, p->comm,
                      WH_CTX_COLL, WH_MODE_STD, &sr);
    } else {
        char *t = malloc(len);
        rc = t ? wh_dtype_pack(p->buf, (size_t)p->count * (size_t)p->parts, p->dt, a, t, len)
               : wh_error(MPI_ERR_NO_MEM, "out of memory packing a partition");
        if (rc == MPI_SUCCESS)
            rc = wh_isend(t, (MPI_Count)len, wh_dtype_get(MPI_BYTE), p->peer, tag, p->comm, WH_CTX_COLL, WH_MODE_STD,
                          &sr);
        if (rc == MPI_SUCCESS)
            p->tmp[j] = t;
        else
            free(t);
    }
    if (rc == MPI_SUCCESS) {
        p->reqs[j] = sr;
        p->nsent++;
    }
    return rc;
}

/* Hand out every receiver partition whose sender partitions are all ready. */
static int sender_pump(part_t *p)
{
    if (p->err || !sender_match(p))
        return 0;
    if (!p->reqs) {
        if (p->rbytes * (size_t)p->rparts != total_send(p))
            p->size_err = wh_error(MPI_ERR_TRUNCATE, "partitioned send of %zu bytes (%d x %zu) matched a partitioned "
                              "receive of %zu bytes (%d x %zu)", total_send(p), p->parts, p->pbytes,
                              p->rbytes * (size_t)p->rparts, p->rparts, p->rbytes);
        p->reqs = calloc((size_t)p->rparts + 1, sizeof *p->reqs);
        p->tmp = calloc((size_t)p->rparts + 1, sizeof *p->tmp);
        if (!p->reqs || !p->tmp) {
            p->err = wh_error(MPI_ERR_NO_MEM, "out of memory starting a partitioned send");
            return 0;
        }
    }
    int did = 0, rc;
    size_t total = total_send(p);
    if (p->rparts == p->parts && p->rbytes == p->pbytes) {
        /* the same partitioning on both sides: every partition goes out as soon as it is ready */
        for (int j = 0; j < p->parts && p->nsent < p->rparts; j++)
            if (p->ready[j] && !p->reqs[j]) {
                if ((rc = send_one(p, j, (size_t)j * p->pbytes, (size_t)(j + 1) * p->pbytes)) != MPI_SUCCESS) {
                    p->err = rc;
                    return did;
                }
                did = 1;
            }
        return did;
    }
    /* different partitionings: receiver partitions in order, once the sender's bytes are ready */
    size_t readyb = p->nready_prefix == p->parts ? total : (size_t)p->nready_prefix * p->pbytes;
    while (p->nsent < p->rparts) {
        int j = p->nsent;
        size_t a = (size_t)j * p->rbytes, b = a + p->rbytes;
        if (j == p->rparts - 1 || b > total) /* the last message takes what the sender has */
            b = total;
        if (a > total)
            a = total;
        if (b > readyb)
            break;
        if ((rc = send_one(p, j, a, b)) != MPI_SUCCESS) {
            p->err = rc;
            return did;
        }
        did = 1;
    }
    return did;
}

/* ---------- completion ---------- */

static void part_release(wh_req_t *r);

static void round_free(part_t *p)
{
    int n = p->send ? p->rparts : p->parts;
    for (int j = 0; p->reqs && j < n; j++) {
        if (p->reqs[j])
            wh_wait(p->reqs[j], NULL);
        p->reqs[j] = NULL;
        if (p->tmp) {
            free(p->tmp[j]);
            p->tmp[j] = NULL;
        }
    }
}

static void complete(part_t *p)
{
    wh_req_t *r = p->r;
    MPI_Count bytes = 0;
    int err = p->err ? p->err : p->size_err;
    int n = p->send ? p->rparts : p->parts;
    for (int j = 0; j < n && p->reqs; j++) {
        if (!p->reqs[j])
            continue;
        MPI_Status st;
        int rc = wh_wait(p->reqs[j], &st);
        p->reqs[j] = NULL;
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
        bytes += wh_status_bytes(&st);
    }
    if (p->send) {
        round_free(p);
        bytes = (MPI_Count)total_send(p);
    } else if (err == MPI_SUCCESS && p->peer != MPI_PROC_NULL && (size_t)bytes != p->pbytes * (size_t)p->parts) {
        err = wh_error(MPI_ERR_TRUNCATE, "partitioned receive of %zu bytes (%d x %zu) got %lld bytes from the "
                       "matching partitioned send", p->pbytes * (size_t)p->parts, p->parts, p->pbytes,
                       (long long)bytes);
    }
    list_del(p);
    r->err = err;
    wh_status_set(&r->status, p->send ? MPI_ANY_SOURCE : p->peer, p->send ? MPI_ANY_TAG : p->tag, err,
                  p->send ? 0 : bytes, 0);
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    if (r->user_freed) /* MPI_Request_free came first: nobody will wait for it */
        part_release(r);
}

/* Advance p; complete its request when the round is over.  Returns nonzero on progress. */
static int part_advance(part_t *p)
{
    if (wh_req_done(p->r) || !p->r->active)
        return 0;
    int did = 0;
    if (p->peer == MPI_PROC_NULL) {
        complete(p);
        return 1;
    }
    if (p->send) {
        did = sender_pump(p);
        if (p->err) { /* complete() waits for what is in flight */
            complete(p);
            return 1;
        }
        if (p->nsent < p->rparts || !p->reqs)
            return did;
        for (int j = 0; j < p->rparts; j++)
            if (!wh_req_done(p->reqs[j]))
                return did;
    } else {
        if (p->rtr_req && wh_req_done(p->rtr_req)) {
            int rc = wh_wait(p->rtr_req, NULL);
            p->rtr_req = NULL;
            if (rc != MPI_SUCCESS && !p->err)
                p->err = rc;
            did = 1;
        }
        if (p->rtr_req)
            return did;
        for (int j = 0; j < p->parts; j++)
            if (p->reqs[j] && !wh_req_done(p->reqs[j]))
                return did;
    }
    complete(p);
    return 1;
}

static int part_poll(wh_req_t *r)
{
    return part_advance(r->extra);
}

static int part_hook(void)
{
    static int in_hook; /* wh_progress inside an advance must not re-enter */
    if (in_hook)
        return 0;
    in_hook = 1;
    int did = 0;
    for (part_t *p = active, *nx; p; p = nx) {
        nx = p->next;
        did += part_advance(p);
    }
    in_hook = 0;
    return did;
}

/* ---------- request kind hooks ---------- */

static int part_start(wh_req_t *r)
{
    part_t *p = r->extra;
    p->err = MPI_SUCCESS;
    __atomic_store_n(&r->complete, 0, __ATOMIC_RELEASE);
    if (!hook_on) {
        wh_progress_hook_add(part_hook, &nactive);
        hook_on = 1;
    }
    if (p->peer == MPI_PROC_NULL) {
        list_add(p);
        return MPI_SUCCESS;
    }
    if (p->send) {
        memset(p->ready, 0, (size_t)p->parts);
        p->nready_prefix = 0;
        p->nsent = 0;
        list_add(p);
        sender_pump(p); /* posts the RTR receive if U is not known yet */
        return p->err;
    }
    /* receiver: post every partition, then (first round) announce U */
    size_t ext = (size_t)p->dt->extent * (size_t)p->count;
    for (int j = 0; j < p->parts; j++) {
        int rc = wh_irecv(p->buf + (size_t)j * ext, p->count, p->dt, p->peer, PART_TAG_DATA(p->u + j), p->comm,
                          WH_CTX_COLL, &p->reqs[j]);
        if (rc != MPI_SUCCESS) {
            for (int i = 0; i < j; i++) {
                wh_cancel_recv(p->reqs[i]);
                wh_wait(p->reqs[i], NULL);
                p->reqs[i] = NULL;
            }
            return rc;
        }
    }
    if (!p->rtr_sent) {
        p->rtr[0] = p->tag;
        p->rtr[1] = (int32_t)p->seq;
        p->rtr[2] = p->u;
        p->rtr[3] = p->parts;
        p->rtr[4] = (int32_t)p->pbytes;
        int rc = wh_isend(p->rtr, 5, wh_dtype_get(MPI_INT), p->peer, PART_TAG_RTR, p->comm, WH_CTX_COLL,
                          WH_MODE_STD, &p->rtr_req);
        if (rc != MPI_SUCCESS)
            return rc;
        p->rtr_sent = 1;
    }
    list_add(p);
    return MPI_SUCCESS;
}

static void part_release(wh_req_t *r)
{
    part_t *p = r->extra;
    if (p) {
        list_del(p);
        round_free(p);
        if (p->rtr_req) { /* sender: a posted RTR receive; receiver: the RTR send */
            int32_t m[5];
            int matched = p->send && !wh_cancel_recv(p->rtr_req);
            int rc = wh_wait(p->rtr_req, NULL);
            memcpy(m, p->rtr, sizeof m);
            if (matched && rc == MPI_SUCCESS) /* an announcement for another request */
                stash_add(p->comm, p->peer, m);
        }
        if (!p->send)
            tags_give(p->u, p->parts);
        wh_dtype_release(p->dt);
        free(p->ready);
        free(p->reqs);
        free(p->tmp);
        free(p);
        r->extra = NULL;
    }
    wh_req_release(r);
}

/* MPI_Request_free of an active partitioned request: erroneous unless it
 * completes; finish it in the background like other requests */
static void part_abandon(wh_req_t *r)
{
    r->user_freed = 1;
}

static const wh_req_ops_t part_ops = {
    .start = part_start,
    .release = part_release,
    .abandon = part_abandon,
    .no_cancel = "partitioned communication requests cannot be cancelled (MPI-4.1 4.2: erroneous; complete the "
                 "round with MPI_Pready and MPI_Wait, or MPI_Request_free an inactive request)",
};

/* ---------- entry points ---------- */

static int part_init(const char *fname, int send, void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                     int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc;
    if ((rc = wh_chk_comm(fname, comm, &c)))
        return rc;
    if (partitions < 1)
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_ARG, "partitions = %d: at least one partition is needed",
                                               partitions));
    if (count < 0)
        return wh_p2p_bad(fname, c, WH_BAD_COUNT, count, "count");
    if ((rc = wh_chk_data(fname, c, buf, count * partitions, datatype, &dt)))
        return rc;
    if (send ? (rc = wh_chk_dest(fname, c, peer, tag)) : (rc = wh_chk_src(fname, c, peer, tag)))
        return rc;
    if (peer == MPI_ANY_SOURCE || tag == MPI_ANY_TAG)
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_ARG, "partitioned receives take no wildcards (%s)",
                                               peer == MPI_ANY_SOURCE ? "MPI_ANY_SOURCE" : "MPI_ANY_TAG"));
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    WH_CHK_PTR(fname, c, request, "request");
    size_t pbytes = dt->size * (size_t)count;
    if (pbytes > INT32_MAX)
        return wh_p2p_raise(c, fname, wh_error(MPI_ERR_COUNT, "partitions of %zu bytes: wharf takes up to 2 GiB per "
                                               "partition", pbytes));
    wh_req_kind_ops[WH_REQ_PART] = &part_ops;
    part_t *p = calloc(1, sizeof *p);
    wh_req_t *r = p ? wh_req_alloc(WH_REQ_PART) : NULL;
    if (p) {
        p->ready = send ? calloc((size_t)partitions, 1) : NULL;
        p->reqs = send ? NULL : calloc((size_t)partitions, sizeof *p->reqs);
    }
    int32_t u = send ? -1 : tags_take(partitions);
    uint32_t seq = next_seq(c, peer, tag, send);
    if (!r || (send && !p->ready) || (!send && !p->reqs) || (!send && u < 0) || seq == UINT32_MAX) {
        if (p) {
            free(p->ready);
            free(p->reqs);
        }
        free(p);
        if (r)
            wh_req_release(r);
        if (!send)
            tags_give(u, partitions);
        return wh_p2p_raise(c, fname, wh_error(u < 0 && !send ? MPI_ERR_INTERN : MPI_ERR_NO_MEM,
                                               u < 0 && !send ? "more than %d partitions of partitioned receives "
                                               "are live" : "out of memory creating a partitioned request (%d)",
                                               PART_TAGS));
    }
    *p = (part_t){.r = r, .send = send, .buf = buf, .parts = partitions, .count = count, .dt = dt, .peer = peer,
                  .tag = tag, .comm = c, .seq = seq, .u = u, .pbytes = pbytes, .ready = p->ready, .reqs = p->reqs,
                  .rparts = send ? 0 : partitions, .rbytes = send ? 0 : pbytes};
    wh_dtype_addref(dt);
    c->obj.refs++;
    r->comm = c;
    r->extra = p;
    r->poll_fn = part_poll;
    r->persistent = 1;
    r->complete = 1; /* inactive */
    r->rank = peer;
    r->tag = tag;
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Psend_init", 1, (void *)buf, partitions, count, datatype, dest, tag, comm, info, request);
}

static int body_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Precv_init", 0, buf, partitions, count, datatype, source, tag, comm, info, request);
}

/* the partitioned request of handle h, of the side wanted (send: 1, recv: 0) */
static int chk_part(const char *fname, MPI_Request h, int send, part_t **pp)
{
    wh_req_t *r = wh_req_user(h);
    if (!r)
        return wh_p2p_bad(fname, NULL, WH_BAD_REQUEST, h, "request");
    part_t *p = r->kind == WH_REQ_PART ? r->extra : NULL;
    if (!p || p->send != send)
        return wh_p2p_raise(r->comm, fname, wh_error(MPI_ERR_REQUEST, "request 0x%x is not a partitioned %s request",
                                                      (unsigned)h, send ? "send" : "receive"));
    *pp = p;
    return MPI_SUCCESS;
}

static int mark_ready(const char *fname, part_t *p, int i)
{
    if (i < 0 || i >= p->parts)
        return wh_p2p_raise(p->comm, fname, wh_error(MPI_ERR_ARG, "partition %d is not in 0..%d", i, p->parts - 1));
    if (p->ready[i])
        return wh_p2p_raise(p->comm, fname, wh_error(MPI_ERR_ARG, "partition %d was already marked ready in this "
                                                     "round", i));
    p->ready[i] = 1;
    while (p->nready_prefix < p->parts && p->ready[p->nready_prefix])
        p->nready_prefix++;
    return MPI_SUCCESS;
}

static int chk_active_send(const char *fname, MPI_Request request, part_t **pp)
{
    int rc = chk_part(fname, request, 1, pp);
    if (rc)
        return rc;
    if (!(*pp)->r->active)
        return wh_p2p_raise((*pp)->comm, fname, wh_error(MPI_ERR_REQUEST, "partitioned send request 0x%x is not "
                                                         "active: call MPI_Start first", (unsigned)request));
    return MPI_SUCCESS;
}

static int after_ready(const char *fname, part_t *p)
{
    if (p->peer != MPI_PROC_NULL)
        sender_pump(p);
    wh_progress();
    if (p->err && p->u < 0)
        return wh_p2p_raise(p->comm, fname, p->err);
    return MPI_SUCCESS;
}

static int body_Pready(int partition, MPI_Request request)
{
    static const char fname[] = "MPI_Pready";
    part_t *p = NULL;
    int rc = chk_active_send(fname, request, &p);
    if (rc || (rc = mark_ready(fname, p, partition)))
        return rc;
    return after_ready(fname, p);
}

static int body_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char fname[] = "MPI_Pready_range";
    part_t *p = NULL;
    int rc = chk_active_send(fname, request, &p);
    if (rc)
        return rc;
    if (partition_low > partition_high || partition_low < 0 || partition_high >= p->parts)
        return wh_p2p_raise(p->comm, fname, wh_error(MPI_ERR_ARG, "partition range %d..%d is not within 0..%d",
                                                     partition_low, partition_high, p->parts - 1));
    for (int i = partition_low; i <= partition_high; i++)
        if ((rc = mark_ready(fname, p, i)))
            return rc;
    return after_ready(fname, p);
}

static int body_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char fname[] = "MPI_Pready_list";
    part_t *p = NULL;
    int rc = chk_active_send(fname, request, &p);
    if (rc)
        return rc;
    if (length < 0)
        return wh_p2p_bad(fname, p->comm, WH_BAD_COUNT, length, "length");
    if (length > 0)
        WH_CHK_PTR(fname, p->comm, array_of_partitions, "array_of_partitions");
    for (int i = 0; i < length; i++)
        if ((rc = mark_ready(fname, p, array_of_partitions[i])))
            return rc;
    return after_ready(fname, p);
}

static int body_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char fname[] = "MPI_Parrived";
    if (request == MPI_REQUEST_NULL) { /* MPI-4.1: true for the null request */
        WH_CHK_PTR(fname, NULL, flag, "flag");
        *flag = 1;
        return MPI_SUCCESS;
    }
    part_t *p = NULL;
    int rc = chk_part(fname, request, 0, &p);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, p->comm, flag, "flag");
    if (partition < 0 || partition >= p->parts)
        return wh_p2p_raise(p->comm, fname, wh_error(MPI_ERR_ARG, "partition %d is not in 0..%d", partition,
                                                     p->parts - 1));
    /* inactive (never started or already completed): everything has arrived */
    if (!p->r->active || wh_req_done(p->r) || p->peer == MPI_PROC_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    wh_req_t *pr = p->reqs[partition];
    if (!(*flag = !pr || wh_req_done(pr))) {
        wh_progress();
        if (!(*flag = wh_req_done(pr)))
            wh_test_idle();
    }
    return MPI_SUCCESS;
}

#include "entry/part.h"
