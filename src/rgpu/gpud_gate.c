/* wharf-gpud: cuStreamWaitEvent on an event of another server, without a
 * host wait in the client (docs/RGPU.md, "Waits across servers").
 *
 * The client sends EVENT_SIGNAL to the event's server A and STREAM_GATE to
 * the waiting stream's server B, both without waiting for an answer.
 *   A: captures the event as recorded now (a private stream waits for it,
 *      then records a capture event and a signal event), and a signaler
 *      thread opens the gate on B when the signal event completes: it
 *      connects to B's session (the peer-copy listener, with B's token) and
 *      sends the gate's id.  The capture is kept: a later peer copy on the
 *      waiting stream orders its part on A after it.
 *   B: the gate is a bit in the gmask of the stream; a request touching a
 *      stream or event whose gmask is not 0 is held back (queries answer
 *      CUDA_ERROR_NOT_READY) and what it touches inherits its mask; when the
 *      signal comes the bit is cleared everywhere and the held requests
 *      whose masks are 0 run, in arrival order.  Only that stream's work
 *      (and what waits for it) is held: other streams go on. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rgpu/gpud_int.h"

/* ---- masks ---- */
static uint64_t *stream_gmask(sess_t *s, uint64_t ctxh, uint64_t sh)
{
    slot_t *sl = sh ? gs_slot(s, T_STREAM, sh) : gs_slot(s, T_CTX, ctxh);
    return sl ? &sl->gmask : NULL;
}

static uint64_t *event_gmask(sess_t *s, uint64_t eh)
{
    slot_t *sl = gs_slot(s, T_EVENT, eh);
    return sl ? &sl->gmask : NULL;
}

static uint64_t get(const uint64_t *m)
{
    return m ? *m : 0;
}

/* the stream a request runs on (NULL if none or unknown) */
static uint64_t *req_stream(sess_t *s, unsigned op, const rg_args_t *a)
{
    switch (op) {
    case RG_OP_HTOD:
    case RG_OP_DTOH:
    case RG_OP_DTOD:
    case RG_OP_MEMSET:
    case RG_OP_PEER_RECV:
    case RG_OP_PEER_SEND: return stream_gmask(s, a->q[0], a->q[1]);
    case RG_OP_LAUNCH: {
        slot_t *f = gs_slot(s, T_FUNC, a->q[0]);
        return f ? stream_gmask(s, (uint64_t)f->ctx + 1, a->q[8]) : NULL;
    }
    case RG_OP_STREAM_SYNC:
    case RG_OP_STREAM_QUERY:
    case RG_OP_STREAM_DESTROY:
    case RG_OP_STREAM_WAIT:
    case RG_OP_EVENT_RECORD: return stream_gmask(s, a->q[0] >> 32, a->q[0] & 0xffffffffu);
    default: return NULL;
    }
}

uint64_t gs_req_mask(sess_t *s, unsigned op, const rg_args_t *a)
{
    if (!s->gate_used)
        return 0;
    switch (op) {
    case RG_OP_STREAM_WAIT:
    case RG_OP_EVENT_RECORD: return get(req_stream(s, op, a)) | get(event_gmask(s, a->q[1]));
    case RG_OP_EVENT_SYNC:
    case RG_OP_EVENT_QUERY:
    case RG_OP_EVENT_DESTROY:
    case RG_OP_EVENT_SIGNAL: return get(event_gmask(s, a->q[0]));
    case RG_OP_EVENT_ELAPSED: return get(event_gmask(s, a->q[0])) | get(event_gmask(s, a->q[1]));
    case RG_OP_CTX_SYNC:
    case RG_OP_CTX_DESTROY:
    case RG_OP_PRIMARY_RELEASE:
    case RG_OP_MEM_FREE:
    case RG_OP_MOD_UNLOAD: return s->gate_used; /* (device-wide: after every gate) */
    default: return get(req_stream(s, op, a));
    }
}

int gs_hold(sess_t *s, const rg_hdr_t *h, rg_buf_t *in, const rg_args_t *a, uint64_t mask)
{
    if (s->nheld == s->held_cap) {
        int cap = s->held_cap ? 2 * s->held_cap : 64;
        held_t *n = realloc(s->held, (size_t)cap * sizeof *n);
        if (!n)
            return -1;
        s->held = n;
        s->held_cap = cap;
    }
    /* what it touches waits for the same gates: work queued after it on its
     * stream, a wait on its event */
    uint64_t *m = NULL;
    if (h->op == RG_OP_EVENT_RECORD)
        m = event_gmask(s, a->q[1]);
    else if (h->op != RG_OP_STREAM_SYNC && h->op != RG_OP_STREAM_QUERY)
        m = req_stream(s, h->op, a);
    if (m)
        *m |= mask;
    s->held[s->nheld++] = (held_t){*h, *in, mask};
    *in = (rg_buf_t){0};
    return 0;
}

int gs_take_ready(sess_t *s, rg_hdr_t *h, rg_buf_t *in)
{
    for (int i = 0; i < s->nheld; i++)
        if (!s->held[i].mask) {
            *h = s->held[i].h;
            *in = s->held[i].in;
            memmove(&s->held[i], &s->held[i + 1], (size_t)(s->nheld - i - 1) * sizeof *s->held);
            s->nheld--;
            return 1;
        }
    return 0;
}

static void open_gate(sess_t *s, uint64_t id)
{
    for (int g = 0; g < RG_MAX_GATES; g++) {
        uint64_t bit = 1ull << g;
        if (!(s->gate_used & bit) || s->gate_id[g] != id)
            continue;
        s->gate_used &= ~bit;
        for (int t = T_CTX; t <= T_EVENT; t++)
            for (int i = 0; i < s->cfg->max_handles; i++)
                s->tab[t][i].gmask &= ~bit;
        for (int i = 0; i < s->nheld; i++)
            s->held[i].mask &= ~bit;
        s->replay = 1;
        return;
    }
    /* the signal came before the gate (the client batches the gate) */
    if (s->nearly == RG_MAX_EARLY) {
        GPUD_LOG(s->cfg, "session %d: too many early gate signals: the oldest dropped\n", s->id);
        memmove(s->early, s->early + 1, (RG_MAX_EARLY - 1) * sizeof *s->early);
        s->nearly--;
    }
    s->early[s->nearly++] = id;
}

/* q: ctx << 32 | stream, gate */
CUresult h_stream_gate(sess_t *s, const rg_args_t *a)
{
    uint64_t *m = stream_gmask(s, a->q[0] >> 32, a->q[0] & 0xffffffffu);
    if (!m || !a->q[1])
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < s->nearly; i++)
        if (s->early[i] == a->q[1]) { /* already signalled: nothing to wait for */
            s->early[i] = s->early[--s->nearly];
            return CUDA_SUCCESS;
        }
    for (int g = 0; g < RG_MAX_GATES; g++)
        if (!(s->gate_used & (1ull << g))) {
            s->gate_used |= 1ull << g;
            s->gate_id[g] = a->q[1];
            *m |= 1ull << g;
            return CUDA_SUCCESS;
        }
    GPUD_LOG(s->cfg, "session %d: more than %d cross-server waits open: this one is not kept\n", s->id, RG_MAX_GATES);
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- the signaler: a thread that opens gates elsewhere ---- */
typedef struct {
    CUcontext ctx;
    CUevent ev;
    uint64_t gate;
    char host[RG_MAX_NAME + 1];
    int port, fab;
    uint8_t token[RG_TOKEN_LEN];
} sigjob_t;

#define SIG_JOBS 256
#define SIG_CONNS 4
struct gs_signaler {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sigjob_t q[SIG_JOBS];
    int head, n, quit;
    sess_t *s;
    struct {
        rg_conn_t *c;
        char host[RG_MAX_NAME + 1];
        int port, fab;
    } out[SIG_CONNS];
};

static rg_conn_t *sig_connect(struct gs_signaler *g, const sigjob_t *j)
{
    sess_t *s = g->s;
    rg_conn_t *c = NULL;
    if (j->fab) {
        char err[256];
        c = rg_fab_connect(s->prov, j->host, j->port, s->cfg->timeout_ms, err, sizeof err);
        if (!c)
            GPUD_LOG(s->cfg, "session %d: gate signal: %s\n", s->id, err);
    } else {
        int fd = rg_connect(j->host, j->port, s->cfg->timeout_ms);
        c = fd >= 0 ? rg_conn_sock(fd) : NULL;
    }
    rg_buf_t hb = {0};
    rg_put_raw(&hb, j->token, RG_TOKEN_LEN);
    for (int i = 0; i < 3; i++)
        rg_put_u64(&hb, 0); /* copy id, size, chunk 0: a gate connection */
    if (c && (hb.err || rg_send_all(c, hb.p, hb.len))) {
        rg_conn_close(c);
        c = NULL;
    }
    rg_buf_free(&hb);
    return c;
}

static void sig_send(struct gs_signaler *g, const sigjob_t *j)
{
    int k = -1;
    for (int i = 0; i < SIG_CONNS; i++)
        if (g->out[i].c && g->out[i].port == j->port && g->out[i].fab == j->fab && !strcmp(g->out[i].host, j->host))
            k = i;
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(j->gate >> (8 * i));
    for (int round = 0; round < 2; round++) {
        if (k < 0) {
            k = (int)(j->gate % SIG_CONNS);
            rg_conn_close(g->out[k].c);
            g->out[k].c = sig_connect(g, j);
            snprintf(g->out[k].host, sizeof g->out[k].host, "%s", j->host);
            g->out[k].port = j->port;
            g->out[k].fab = j->fab;
        }
        if (g->out[k].c && !rg_send_all(g->out[k].c, b, sizeof b))
            return;
        rg_conn_close(g->out[k].c); /* (a kept connection the other side closed: once more, new) */
        g->out[k].c = NULL;
        k = -1;
    }
    GPUD_LOG(g->s->cfg, "session %d: cannot signal gate %llu to %s port %d\n", g->s->id, (unsigned long long)j->gate,
             j->host, j->port);
}

static void *sig_main(void *arg)
{
    struct gs_signaler *g = arg;
    pthread_mutex_lock(&g->mu);
    for (;;) {
        while (!g->n && !g->quit)
            pthread_cond_wait(&g->cv, &g->mu);
        if (g->quit)
            break;
        sigjob_t j = g->q[g->head];
        pthread_mutex_unlock(&g->mu);
        /* polled, not cuEventSynchronize: the session can stop this thread */
        d_cuCtxSetCurrent(j.ctx);
        long ns = 20000;
        CUresult r;
        while ((r = d_cuEventQuery(j.ev)) == CUDA_ERROR_NOT_READY && !__atomic_load_n(&g->quit, __ATOMIC_RELAXED)) {
            struct timespec ts = {0, ns};
            nanosleep(&ts, NULL);
            ns = ns < 1000000 ? 2 * ns : 1000000;
        }
        d_cuEventDestroy(j.ev);
        if (r != CUDA_ERROR_NOT_READY)
            sig_send(g, &j); /* (an event that failed opens the gate too: the error shows on A) */
        pthread_mutex_lock(&g->mu);
        g->head = (g->head + 1) % SIG_JOBS;
        g->n--;
        pthread_cond_broadcast(&g->cv);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

CUevent gs_capture(sess_t *s, uint64_t gate)
{
    if (!gate)
        return NULL;
    for (int i = 0; i < RG_MAX_CAPS; i++)
        if (s->cap[i].ev && s->cap[i].gate == gate)
            return s->cap[i].ev;
    return NULL;
}

/* one of the (up to 4) capture streams of context ctx, in turn (streams are
 * kept: destroying one waits for its work) */
static CUresult capture_stream(sess_t *s, int ctx, CUstream *st)
{
    int have[4], nh = 0, fr = -1;
    for (int i = 0; i < 32; i++) {
        if (s->capst[i].st && s->capst[i].ctx == ctx && nh < 4)
            have[nh++] = i;
        else if (!s->capst[i].st && fr < 0)
            fr = i;
    }
    if (nh < 4 && fr >= 0) {
        CK(d_cuStreamCreate(&s->capst[fr].st, CU_STREAM_NON_BLOCKING));
        s->capst[fr].ctx = ctx;
        *st = s->capst[fr].st;
        return CUDA_SUCCESS;
    }
    if (!nh)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *st = s->capst[have[s->capst_next++ % (unsigned)nh]].st;
    return CUDA_SUCCESS;
}

/* q: event, gate, previous gate of the same waiting stream, port; name: the
 * waiting server's host; b[0]: its session token.  RG_F_FABRIC: over libfabric. */
CUresult h_event_signal(sess_t *s, const rg_args_t *a)
{
    slot_t *e = gs_slot(s, T_EVENT, a->q[0]);
    if (!e)
        return CUDA_ERROR_INVALID_HANDLE;
    int fab = (s->cur_flags & RG_F_FABRIC) != 0;
    if (!a->q[1] || a->blen[0] != RG_TOKEN_LEN || !a->q[3] || a->q[3] > 65535 || (fab && !s->fab_l))
        return CUDA_ERROR_INVALID_VALUE;
    if (!s->sig) {
        struct gs_signaler *g = calloc(1, sizeof *g);
        if (!g)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->s = s;
        pthread_mutex_init(&g->mu, NULL);
        pthread_cond_init(&g->cv, NULL);
        if (pthread_create(&g->th, NULL, sig_main, g)) {
            free(g);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->sig = g;
    }
    struct gs_signaler *g = s->sig;
    if (g->n == SIG_JOBS) {
        GPUD_LOG(s->cfg, "session %d: %d gate signals pending: refused\n", s->id, SIG_JOBS);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CK(gs_set_ctx(s, e->ctx));
    /* the event as recorded now: a private stream waits for it (and for the
     * previous capture of the same waiting stream), then records the capture */
    CUstream ps;
    CUevent cap = NULL, sig = NULL, prev = gs_capture(s, a->q[2]);
    CK(capture_stream(s, e->ctx, &ps));
    CUresult rc = d_cuStreamWaitEvent(ps, e->h, 0);
    if (rc == CUDA_SUCCESS && prev)
        rc = d_cuStreamWaitEvent(ps, prev, 0);
    if (rc == CUDA_SUCCESS)
        rc = d_cuEventCreate(&cap, CU_EVENT_DISABLE_TIMING);
    if (rc == CUDA_SUCCESS)
        rc = d_cuEventCreate(&sig, CU_EVENT_DISABLE_TIMING);
    if (rc == CUDA_SUCCESS)
        rc = d_cuEventRecord(cap, ps);
    if (rc == CUDA_SUCCESS)
        rc = d_cuEventRecord(sig, ps);
    if (rc != CUDA_SUCCESS) {
        if (cap)
            d_cuEventDestroy(cap);
        if (sig)
            d_cuEventDestroy(sig);
        return rc;
    }
    capture_t *c = &s->cap[s->capnext];
    if (c->ev)
        d_cuEventDestroy(c->ev);
    *c = (capture_t){a->q[1], cap, e->ctx};
    s->capnext = (s->capnext + 1) % RG_MAX_CAPS;
    sigjob_t j = {(CUcontext)s->tab[T_CTX][e->ctx].h, sig, a->q[1], "", (int)a->q[3], fab, {0}};
    snprintf(j.host, sizeof j.host, "%s", a->name);
    memcpy(j.token, a->b[0], RG_TOKEN_LEN);
    pthread_mutex_lock(&g->mu);
    g->q[(g->head + g->n) % SIG_JOBS] = j;
    g->n++;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return CUDA_SUCCESS;
}

/* ---- peers: connections, gate signals, early peer-copy hellos ---- */
static void classify(sess_t *s, rg_conn_t *c)
{
    uint64_t id, n, chunk;
    if (gs_peer_hello(s, c, &id, &n, &chunk)) {
        rg_conn_close(c);
        return;
    }
    if (!chunk) { /* a gate connection */
        if (s->ngin == RG_PEER_MAXIN) {
            rg_conn_close(s->gin[0]);
            s->gin[0] = s->gin[--s->ngin];
        }
        s->gin[s->ngin++] = c;
        return;
    }
    if (s->nstash == RG_PEER_MAXIN) {
        rg_conn_close(s->stash[0].c);
        s->stash[0] = s->stash[--s->nstash];
    }
    s->stash[s->nstash++] = (stashed_t){c, id, n, chunk};
}

int gs_poll(sess_t *s, int with_client, int timeout_ms)
{
    rg_conn_t *cs[1 + 2 * RG_PEER_MAXIN];
    int n = 0;
    if (with_client)
        cs[n++] = s->conn;
    int pin0 = n;
    for (int i = 0; i < s->npin; i++)
        cs[n++] = s->pin[i];
    int gin0 = n;
    for (int i = 0; i < s->ngin; i++)
        cs[n++] = s->gin[i];
    int xfd[2] = {s->peer_lfd, s->fab_l ? rg_fab_listen_fd(s->fab_l) : -1};
    int w = rg_wait_any(cs, n, xfd, 2, timeout_ms);
    if (w < 0)
        return w == -1 && with_client ? -1 : 0;
    if (with_client && w == 0)
        return 1;
    if (w < gin0) { /* a kept peer-copy connection: the hello of the next copy */
        rg_conn_t *c = s->pin[w - pin0];
        s->pin[w - pin0] = s->pin[--s->npin];
        classify(s, c);
    } else if (w < n) { /* a gate signal */
        int k = w - gin0;
        uint8_t b[8];
        if (rg_recv_all(s->gin[k], b, sizeof b, s->cfg->timeout_ms)) {
            rg_conn_close(s->gin[k]);
            s->gin[k] = s->gin[--s->ngin];
            return 0;
        }
        uint64_t id = 0;
        for (int i = 7; i >= 0; i--)
            id = id << 8 | b[i];
        open_gate(s, id);
    } else if (w == n) {
        int fd = accept4(s->peer_lfd, NULL, NULL, SOCK_CLOEXEC);
        rg_conn_t *c = fd >= 0 ? rg_conn_sock(fd) : NULL;
        if (c) {
            rg_tcp_tune(fd);
            classify(s, c);
        }
    } else {
        rg_conn_t *c = rg_fab_accept(s->fab_l, 0);
        if (c)
            classify(s, c);
    }
    return 0;
}

void gs_drop_ctx(sess_t *s, int ctx)
{
    if (s->sig) { /* signals of its events first (bounded: they need no gate of this session) */
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pthread_mutex_lock(&s->sig->mu);
        while (s->sig->n) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000 > s->cfg->timeout_ms)
                break;
            pthread_mutex_unlock(&s->sig->mu);
            poll(NULL, 0, 1);
            pthread_mutex_lock(&s->sig->mu);
        }
        pthread_mutex_unlock(&s->sig->mu);
    }
    for (int i = 0; i < RG_MAX_CAPS; i++)
        if (s->cap[i].ev && (ctx < 0 || s->cap[i].ctx == ctx)) {
            gs_set_ctx(s, s->cap[i].ctx);
            d_cuEventDestroy(s->cap[i].ev);
            s->cap[i].ev = NULL;
        }
    for (int i = 0; i < 32; i++)
        if (s->capst[i].st && (ctx < 0 || s->capst[i].ctx == ctx)) {
            gs_set_ctx(s, s->capst[i].ctx);
            d_cuStreamDestroy(s->capst[i].st);
            s->capst[i].st = NULL;
        }
}

void gs_gates_end(sess_t *s)
{
    if (s->sig) {
        pthread_mutex_lock(&s->sig->mu);
        s->sig->quit = 1;
        pthread_cond_broadcast(&s->sig->cv);
        pthread_mutex_unlock(&s->sig->mu);
        pthread_join(s->sig->th, NULL);
        for (int i = 0; i < SIG_CONNS; i++)
            rg_conn_close(s->sig->out[i].c);
        free(s->sig);
        s->sig = NULL;
    }
    for (int i = 0; i < s->nheld; i++)
        rg_buf_free(&s->held[i].in);
    free(s->held);
    s->held = NULL;
    s->nheld = 0;
}
