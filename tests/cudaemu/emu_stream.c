/* cudaemu: streams (one worker thread each, with optional random delays),
 * events (also across processes), copies and memsets in every direction.
 *
 * The legacy default stream of each context is a worker too; work queued on
 * it waits for all blocking streams of the context, and work queued on a
 * blocking stream waits for the legacy stream, as on a GPU.  Synchronous
 * copies are queued on the legacy stream and waited for.
 *
 * A GPU's copy engine starts queued work without a cpu thread waking up; an
 * emulated one would pay a scheduler wake-up per operation (tens of µs on a
 * loaded machine, most of a pipeline chunk).  So a host thread that waits for
 * or queries a stream or event runs the operations at the head of that stream
 * itself ("helping") when they can run at once: no random delay configured,
 * every dependency already complete, not claimed by the worker.  An operation
 * still never runs before the host has queued it and either the worker got to
 * it or the host asked for its completion, so code that forgets to wait still
 * reads stale data.  CUDAEMU_HELP=0 turns helping off. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "emu.h"

enum { OP_COPY, OP_MEMSET, OP_EVREC, OP_EVWAIT, OP_NOP, OP_CALL };

typedef struct emu_dep {
    struct CUstream_st *s;
    uint64_t seq;
} emu_dep_t;

typedef struct emu_op {
    int type, path;
    char *dst;
    const char *src;
    size_t n;
    unsigned char v;
    emu_evstate_t *ev;
    uint64_t target;
    uint64_t seq;
    int ndeps;
    emu_dep_t *deps;
    void (*call)(void *); /* OP_CALL (kernels, emu_module.c) */
    void *arg;
    int moved;            /* its data moved; it completes at t_end (a copy engine busy till then) */
    uint64_t t_queued;    /* when the host queued it */
    uint64_t t_end;
    struct emu_op *next;
} emu_op_t;

struct CUstream_st {
    uint32_t magic;
    CUcontext ctx;
    unsigned flags;
    int legacy;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    emu_op_t *head, *tail;
    uint64_t enq;            /* ops queued (under q_lock) */
    _Atomic uint64_t done;   /* ops completed */
    int stop;
    int running;             /* the head op is being run (by the worker or a helper) */
    pthread_t thr;
    _Atomic int refs;        /* the handle's, plus one per op or waiter naming it in a dependency */
    unsigned rng;
    uint64_t t_free;         /* the modeled end of its last copy or memset, or of a wait (run_op) */
    struct CUstream_st *next; /* in ctx->streams */
    struct CUstream_st *live_next; /* in `live` */
};
#define EMU_STREAM_MAGIC 0x5354524du

/* one lock orders every enqueue (so cross-stream dependencies follow global
 * enqueue order and cannot cycle); one condition announces completions */
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static struct CUstream_st *live; /* every stream not yet stopped (under q_lock) */

/* A stream's struct outlives its handle while an op of another stream (or a
 * context synchronize) still names it in a dependency: cuStreamDestroy drains
 * the stream, but a dependent op may not have looked at its counter yet. */
static struct CUstream_st *stream_ref(struct CUstream_st *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

static void stream_unref(struct CUstream_st *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        free(s);
    }
}

static int help_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("CUDAEMU_HELP");
        on = !(e && *e == '0');
    }
    return on;
}

static void run_op(struct CUstream_st *s, struct emu_op *op);

/* the head op of s was run by whoever claimed it: publish and pop it */
static void op_complete(struct CUstream_st *s, struct emu_op *op);

static int help(struct CUstream_st *s, uint64_t seq, int blocking);
static _Thread_local int in_op; /* a worker or helper running an op does not help */

static void wait_done(struct CUstream_st *s, uint64_t seq)
{
    if (atomic_load(&s->done) >= seq || help(s, seq, 1))
        return;
    /* the caller could not run it (earlier work or a dependency not done,
     * helping off): the worker does, woken here if it was not (enqueue) */
    pthread_mutex_lock(&s->mu);
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    /* yield between polls for the first millisecond (as wait_event), then block */
    uint64_t t0 = emu_now_ns();
    while (emu_now_ns() - t0 < 1000000)
        if (atomic_load(&s->done) >= seq)
            return;
        else
            sched_yield();
    pthread_mutex_lock(&done_mu);
    while (atomic_load(&s->done) < seq)
        pthread_cond_wait(&done_cv, &done_mu);
    pthread_mutex_unlock(&done_mu);
}

static void wait_event(emu_evstate_t *ev, uint64_t target)
{
    /* The state may live in another process: poll.  As the real driver under
     * CU_CTX_SCHED_AUTO: give the cpu away between polls (sched_yield) for the
     * first millisecond, so a waiter sees the completion within microseconds, as on a
     * GPU; then sleep between polls.  (Sleeping at once cost 60-80 us per
     * cuEventSynchronize: a 20 us nanosleep with the default 50 us timer
     * slack, far from what a GPU's event wait costs.) */
    if (atomic_load(&ev->done) >= target)
        return;
    uint64_t t0 = emu_now_ns();
    while (atomic_load(&ev->done) < target) {
        if (emu_now_ns() - t0 < 1000000) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

/* Move the data of op (its dependencies first) and set when it completes:
 * t_end, the modeled end of a copy or memset.  Whoever completes it
 * (op_complete) does so only once t_end has passed: the worker after
 * waiting for it, or any thread that queries or waits for the stream then.
 * The modeled copy starts when the engine could have started it: when it
 * was queued, the stream's previous copy ended, or a dependency it waited
 * for completed, whichever is last; not when a cpu thread got to it (a
 * GPU's engine takes queued work at once: charging the wake-up of the
 * thread that runs it cost every chunk of a pipeline a few us more than
 * its modeled time on a busy machine).  The data still moves only when
 * that thread runs it, never before. */
static void run_op(struct CUstream_st *s, emu_op_t *op)
{
    in_op = 1;
    uint64_t t_dep = 0;
    for (int i = 0; i < op->ndeps; i++)
        if (atomic_load(&op->deps[i].s->done) < op->deps[i].seq) {
            wait_done(op->deps[i].s, op->deps[i].seq);
            t_dep = emu_now_ns();
        }
    unsigned d = emu_stream_delay_us();
    if (d) {
        struct timespec ts = {0, (long)(rand_r(&s->rng) % (d + 1)) * 1000};
        nanosleep(&ts, NULL);
    }
    uint64_t t0 = emu_now_ns();
    uint64_t start = op->t_queued > s->t_free ? op->t_queued : s->t_free;
    if (start < t_dep)
        start = t_dep;
    if (d || start > t0)
        start = t0; /* random delays: from the delayed start, as configured */
    op->t_end = 0;
    switch (op->type) {
    case OP_COPY:
        memmove(op->dst, op->src, op->n);
        op->t_end = s->t_free = start + emu_model_ns(op->path, op->n);
        break;
    case OP_MEMSET:
        memset(op->dst, op->v, op->n);
        op->t_end = s->t_free = start + emu_model_ns(EMU_D2D, op->n);
        break;
    case OP_EVREC: {
        atomic_store(&op->ev->t_ns, emu_now_ns());
        uint64_t cur = atomic_load(&op->ev->done);
        while (cur < op->target && !atomic_compare_exchange_weak(&op->ev->done, &cur, op->target))
            ;
        break;
    }
    case OP_EVWAIT:
        if (atomic_load(&op->ev->done) < op->target) {
            wait_event(op->ev, op->target);
            s->t_free = emu_now_ns(); /* what follows starts after the event */
        }
        break;
    case OP_CALL:
        op->call(op->arg);
        s->t_free = emu_now_ns(); /* a kernel: run by this cpu, ended now */
        break;
    default:
        break;
    }
    op->moved = 1;
    in_op = 0;
}

static void op_complete(struct CUstream_st *s, emu_op_t *op)
{
    /* done before the pop: once `running` is clear the stream may be stopped
     * and freed, so a helper touches nothing of s after releasing it */
    pthread_mutex_lock(&done_mu);
    atomic_store(&s->done, op->seq);
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&done_mu);
    pthread_mutex_lock(&s->mu);
    s->head = op->next;
    if (!s->head)
        s->tail = NULL;
    s->running = 0;
    /* the worker only needs waking for more work (or to stop): a wake for
     * nothing is a futex call and a context switch on a busy machine */
    if (s->head || s->stop)
        pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < op->ndeps; i++)
        stream_unref(op->deps[i].s);
    free(op->deps);
    free(op);
}

static int deps_done(const emu_op_t *op)
{
    for (int i = 0; i < op->ndeps; i++)
        if (atomic_load(&op->deps[i].s->done) < op->deps[i].seq)
            return 0;
    return op->type != OP_EVWAIT || atomic_load(&op->ev->done) >= op->target;
}

/* Run, in the calling thread, the ops of s up to seq that can run at once
 * (blocking: the caller waits anyway, kernels too; otherwise copies, memsets
 * and event operations only), and complete those whose modeled time is up.
 * A query does not wait out a copy's modeled time beyond the spin limit
 * (CUDAEMU_WAIT_SPIN_US): it moves the data and leaves the op to complete
 * at its t_end (so the caller's thread is free meanwhile, as with a GPU's
 * copy engine); a blocking caller waits for it.
 * 1 if s has completed seq. */
static int help(struct CUstream_st *s, uint64_t seq, int blocking)
{
    /* s may be a stream another thread destroyed (an event's last stream):
     * it is only read under q_lock while it is listed; gone = 0, and the
     * caller judges by its own state (the event's counters) */
    int may = help_on() && !emu_stream_delay_us() && !in_op;
    for (;;) {
        pthread_mutex_lock(&q_lock);
        struct CUstream_st *t = live;
        while (t && t != s)
            t = t->live_next;
        int done = t && atomic_load(&s->done) >= seq;
        emu_op_t *op = NULL;
        uint64_t until = 0;
        if (t && !done && may) {
            pthread_mutex_lock(&s->mu);
            op = s->head;
            if (op && (s->running || op->seq > seq))
                op = NULL;
            else if (op && op->moved && op->t_end > emu_now_ns())
                until = op->t_end, op = NULL; /* its engine is still busy */
            else if (op && !op->moved && ((!blocking && op->type == OP_CALL) || !deps_done(op)))
                op = NULL;
            if (op)
                s->running = 1;
            pthread_mutex_unlock(&s->mu);
        }
        pthread_mutex_unlock(&q_lock);
        if (until && blocking) { /* s stays listed while it has queued work */
            emu_wait_until(until);
            continue;
        }
        if (!op)
            return done;
        if (!op->moved)
            run_op(s, op);
        uint64_t now = emu_now_ns();
        if (op->t_end > now && op->t_end - now <= emu_spin_ns())
            emu_wait_until(op->t_end); /* short: spun here (handing it over cost a wake-up) */
        else if (op->t_end > now) {
            pthread_mutex_lock(&s->mu); /* moved: completes at t_end, by whoever looks then */
            s->running = 0;
            pthread_cond_signal(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        op_complete(s, op);
    }
}

static void *worker(void *arg)
{
    struct CUstream_st *s = arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    uint64_t poll_ns = (uint64_t)emu_engine_poll_us() * 1000;
    for (;;) {
        /* a GPU's copy engine starts the next operation at once: an idle worker
         * polls for it (yielding) for CUDAEMU_ENGINE_POLL_US before it sleeps,
         * so operations queued one after another do not each pay a wake-up */
        for (uint64_t t0 = poll_ns ? emu_now_ns() : 0; poll_ns && !__atomic_load_n(&s->head, __ATOMIC_ACQUIRE) &&
                                                       !__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) &&
                                                       emu_now_ns() - t0 < poll_ns;)
            sched_yield();
        pthread_mutex_lock(&s->mu);
        emu_op_t *op;
        for (;;) {
            op = s->head;
            if (s->running || (!op && !s->stop)) {
                pthread_cond_wait(&s->cv, &s->mu);
                continue;
            }
            if (op && op->moved && op->t_end > emu_now_ns()) {
                /* moved by a helper, or by this worker (below): wait for its
                 * end, unless a thread that looks then completes it first
                 * (waiting as before: sleeping through it instead, with
                 * clock_nanosleep, made the device pipeline 20-30% slower,
                 * docs/PERFORMANCE.md) */
                uint64_t end = op->t_end;
                pthread_mutex_unlock(&s->mu);
                emu_wait_until(end);
                pthread_mutex_lock(&s->mu);
                continue;
            }
            break;
        }
        if (op)
            s->running = 1;
        pthread_mutex_unlock(&s->mu);
        if (!op)
            break;
        if (!op->moved)
            run_op(s, op);
        uint64_t now = emu_now_ns();
        if (op->t_end > now && op->t_end - now <= emu_spin_ns())
            emu_wait_until(op->t_end);
        else if (op->t_end > now) { /* a thread that looks at its end may complete it */
            pthread_mutex_lock(&s->mu);
            s->running = 0;
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        op_complete(s, op);
    }
    return NULL;
}

static struct CUstream_st *stream_new(CUcontext ctx, unsigned flags, int legacy)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = EMU_STREAM_MAGIC;
    s->ctx = ctx;
    s->flags = flags;
    s->legacy = legacy;
    const char *seed = getenv("CUDAEMU_SEED");
    s->rng = seed ? (unsigned)atoi(seed) : (unsigned)(emu_now_ns() ^ (uintptr_t)s);
    atomic_init(&s->refs, 1);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thr, NULL, worker, s)) {
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&q_lock);
    s->live_next = live;
    live = s;
    pthread_mutex_unlock(&q_lock);
    return s;
}

static void stream_stop(struct CUstream_st *s)
{
    pthread_mutex_lock(&q_lock);
    for (struct CUstream_st **pp = &live; *pp; pp = &(*pp)->live_next)
        if (*pp == s) {
            *pp = s->live_next;
            break;
        }
    pthread_mutex_unlock(&q_lock);
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thr, NULL);
    s->magic = 0;
    stream_unref(s);
}

int emu_stream_attach(CUcontext ctx)
{
    ctx->legacy = stream_new(ctx, 0, 1);
    return ctx->legacy ? 0 : -1;
}

void emu_stream_detach(CUcontext ctx)
{
    pthread_mutex_lock(&q_lock);
    struct CUstream_st *list = ctx->streams;
    ctx->streams = NULL;
    pthread_mutex_unlock(&q_lock);
    while (list) {
        struct CUstream_st *n = list->next;
        stream_stop(list);
        list = n;
    }
    stream_stop(ctx->legacy);
    ctx->legacy = NULL;
}

void emu_ctx_sync(CUcontext ctx)
{
    if (!ctx)
        return;
    pthread_mutex_lock(&q_lock);
    int n = 1;
    for (struct CUstream_st *s = ctx->streams; s; s = s->next)
        n++;
    emu_dep_t *w = malloc((size_t)n * sizeof *w);
    int k = 0;
    if (w) {
        w[k++] = (emu_dep_t){stream_ref(ctx->legacy), ctx->legacy->enq};
        for (struct CUstream_st *s = ctx->streams; s; s = s->next)
            w[k++] = (emu_dep_t){stream_ref(s), s->enq};
    }
    pthread_mutex_unlock(&q_lock);
    for (int i = 0; i < k; i++) {
        wait_done(w[i].s, w[i].seq);
        stream_unref(w[i].s);
    }
    free(w);
}

/* resolve a stream handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD:
 * the current context's legacy stream) */
static struct CUstream_st *stream_of(CUstream h, CUresult *rc)
{
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        CUcontext c = emu_ctx_need(rc);
        return c ? c->legacy : NULL;
    }
    if (h->magic != EMU_STREAM_MAGIC) {
        *rc = CUDA_ERROR_INVALID_HANDLE;
        return NULL;
    }
    return h;
}

/* queue op on s with the implicit legacy-stream dependencies; returns its
 * seq.  wake: signal the stream's worker.  A synchronous call passes 0: its
 * caller runs the op itself when it can (wait_done): a GPU's idle engine
 * takes new work at once, and waking a sleeping worker thread for it cost
 * this 2-core VM a cross-cpu wake-up (8 B cuMemcpyDtoH, modeled 2 us: p90
 * 5.0 -> 2.4 us, p99 24 -> 4.9 us).  Asynchronous work still wakes the
 * worker (someone must run it if nobody waits); that wake is the same tail
 * for an async copy followed at once by a synchronize (p99 ~24 us). */
static uint64_t enqueue(struct CUstream_st *s, emu_op_t *op, int wake)
{
    pthread_mutex_lock(&q_lock);
    CUcontext c = s->ctx;
    if (s->legacy) {
        int n = 0;
        for (struct CUstream_st *t = c->streams; t; t = t->next)
            n += !(t->flags & CU_STREAM_NON_BLOCKING);
        op->deps = n ? malloc((size_t)n * sizeof *op->deps) : NULL;
        if (op->deps)
            for (struct CUstream_st *t = c->streams; t; t = t->next)
                if (!(t->flags & CU_STREAM_NON_BLOCKING))
                    op->deps[op->ndeps++] = (emu_dep_t){stream_ref(t), t->enq};
    } else if (!(s->flags & CU_STREAM_NON_BLOCKING)) {
        op->deps = malloc(sizeof *op->deps);
        if (op->deps)
            op->deps[op->ndeps++] = (emu_dep_t){stream_ref(c->legacy), c->legacy->enq};
    }
    uint64_t seq = op->seq = ++s->enq;
    op->t_queued = emu_now_ns();
    pthread_mutex_lock(&s->mu);
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    if (wake)
        pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&q_lock);
    return seq; /* op may be run and freed by now */
}

static int copy_path(int sdev, int dsdev, int ddev, int dddev)
{
    if (sdev && ddev) {
        if (dsdev == dddev)
            return EMU_D2D;
        return emu_peer_pair(emu_devs[dsdev].host_index, emu_devs[dddev].host_index) ? EMU_P2P : EMU_D2D_STAGED;
    }
    return sdev ? EMU_D2H : ddev ? EMU_H2D : EMU_H2H;
}

/* need: bit 1 = dst must be device memory, bit 2 = src must be */
static CUresult copy_common(uintptr_t dst, uintptr_t src, size_t n, CUstream h, int sync, int need)
{
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(h, &rc);
    if (!s)
        return rc;
    if (!n)
        return CUDA_SUCCESS;
    if (emu_fault(sync ? "cuMemcpy" : "cuMemcpyAsync"))
        return CUDA_ERROR_LAUNCH_FAILED;
    /* "cuMemcpyAsync:oom": the driver found no memory for the copy's staging
     * (what a real driver reports as out of memory) */
    if (!sync && emu_fault("cuMemcpyAsync:oom"))
        return CUDA_ERROR_OUT_OF_MEMORY;
    int sd, ssdev, dd, dddev;
    const char *ps = emu_xlate(src, n, &sd, &ssdev, &rc);
    char *pd = emu_xlate(dst, n, &dd, &dddev, &rc);
    if (!ps || !pd)
        return rc;
    if (((need & 1) && !dd) || ((need & 2) && !sd))
        return CUDA_ERROR_INVALID_VALUE;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->type = OP_COPY;
    op->dst = pd;
    op->src = ps;
    op->n = n;
    op->path = copy_path(sd, ssdev, dd, dddev);
    uint64_t seq = enqueue(s, op, !sync);
    if (sync)
        wait_done(s, seq);
    return CUDA_SUCCESS;
}

CUresult emu_enqueue_call(CUstream h, void (*fn)(void *), void *arg, int sync)
{
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(h, &rc);
    if (!s)
        return rc;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->type = OP_CALL;
    op->call = fn;
    op->arg = arg;
    uint64_t seq = enqueue(s, op, !sync);
    if (sync)
        wait_done(s, seq);
    return CUDA_SUCCESS;
}

CUresult emu_copy(uintptr_t dst, uintptr_t src, size_t n, CUstream s, int sync)
{
    return copy_common(dst, src, n, s, sync, 0);
}

EMU_API CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    return copy_common(dst, src, ByteCount, NULL, 1, 0);
}

EMU_API CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    return copy_common(dst, src, ByteCount, hStream, 0, 0);
}

EMU_API CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return copy_common(dstDevice, (uintptr_t)srcHost, ByteCount, NULL, 1, 1);
}

EMU_API CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_common((uintptr_t)dstHost, srcDevice, ByteCount, NULL, 1, 2);
}

EMU_API CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_common(dstDevice, srcDevice, ByteCount, NULL, 1, 3);
}

EMU_API CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                           CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    if (!dstContext || !srcContext)
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy_common(dstDevice, srcDevice, ByteCount, hStream, 0, 3);
}

EMU_API CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                           CUstream hStream)
{
    return copy_common(dstDevice, (uintptr_t)srcHost, ByteCount, hStream, 0, 1);
}

EMU_API CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    return copy_common((uintptr_t)dstHost, srcDevice, ByteCount, hStream, 0, 2);
}

EMU_API CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream)
{
    return copy_common(dstDevice, srcDevice, ByteCount, hStream, 0, 3);
}

EMU_API CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                      CUcontext srcContext, size_t ByteCount)
{
    if (!dstContext || !srcContext)
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy_common(dstDevice, srcDevice, ByteCount, NULL, 1, 3);
}

static CUresult memset_common(uintptr_t dst, unsigned char v, size_t n, CUstream h, int sync)
{
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(h, &rc);
    if (!s)
        return rc;
    int dd, dev;
    char *pd = emu_xlate(dst, n, &dd, &dev, &rc);
    if (!pd)
        return rc;
    if (!dd)
        return CUDA_ERROR_INVALID_VALUE;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->type = OP_MEMSET;
    op->dst = pd;
    op->v = v;
    op->n = n;
    uint64_t seq = enqueue(s, op, !sync);
    if (sync)
        wait_done(s, seq);
    return CUDA_SUCCESS;
}

CUresult emu_memset(uintptr_t dst, unsigned char v, size_t n, CUstream s, int sync)
{
    return memset_common(dst, v, n, s, sync);
}

EMU_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return memset_common(dstDevice, uc, N, NULL, 1);
}

EMU_API CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return memset_common(dstDevice, uc, N, hStream, 0);
}

/* ---- streams ---- */
EMU_API CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = stream_new(c, Flags, 0);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&q_lock);
    s->next = c->streams;
    c->streams = s;
    pthread_mutex_unlock(&q_lock);
    *phStream = s;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    (void)priority;
    return cuStreamCreate(phStream, flags);
}

EMU_API CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD ||
        hStream->magic != EMU_STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    CUcontext c = hStream->ctx;
    pthread_mutex_lock(&q_lock);
    for (struct CUstream_st **pp = &c->streams; *pp; pp = &(*pp)->next)
        if (*pp == hStream) {
            *pp = hStream->next;
            break;
        }
    pthread_mutex_unlock(&q_lock);
    stream_stop(hStream); /* queued work completes first */
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(hStream, &rc);
    if (!s)
        return rc;
    pthread_mutex_lock(&q_lock);
    uint64_t seq = s->enq;
    pthread_mutex_unlock(&q_lock);
    wait_done(s, seq);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(hStream, &rc);
    if (!s)
        return rc;
    pthread_mutex_lock(&q_lock);
    uint64_t seq = s->enq;
    pthread_mutex_unlock(&q_lock);
    /* the caller's stream is alive: done needs no look at the live list */
    return atomic_load(&s->done) >= seq || help(s, seq, 0) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* ---- events ---- */
static int ev_ok(CUevent e)
{
    return e && e->magic == EMU_EV_MAGIC;
}

EMU_API CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE; /* interprocess events must disable timing */
    CUevent e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = EMU_EV_MAGIC;
    e->flags = Flags;
    e->fd = -1;
    e->st = &e->local;
    if (Flags & CU_EVENT_INTERPROCESS) {
        int fd = memfd_create("cudaemu-event", MFD_CLOEXEC);
        void *p = MAP_FAILED;
        if (fd >= 0 && !ftruncate(fd, (off_t)sizeof(emu_evstate_t)))
            p = mmap(NULL, sizeof(emu_evstate_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            if (fd >= 0)
                close(fd);
            free(e);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        e->fd = fd;
        e->st = p;
    }
    *phEvent = e;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    if (!ev_ok(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    /* pending records still point at the state: wait for them */
    wait_event(hEvent->st, atomic_load(&hEvent->st->recorded));
    if (hEvent->st != &hEvent->local)
        munmap(hEvent->st, sizeof(emu_evstate_t));
    if (hEvent->fd >= 0)
        close(hEvent->fd);
    hEvent->magic = 0;
    free(hEvent);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    if (!ev_ok(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(hStream, &rc);
    if (!s)
        return rc;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->type = OP_EVREC;
    op->ev = hEvent->st;
    op->target = atomic_fetch_add(&hEvent->st->recorded, 1) + 1;
    uint64_t seq = enqueue(s, op, 1);
    __atomic_store_n(&hEvent->rec_s, s, __ATOMIC_RELAXED);
    __atomic_store_n(&hEvent->rec_seq, seq, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

/* run the work before hEvent's last record on this process's stream */
static void ev_help(CUevent e, int blocking)
{
    struct CUstream_st *s = __atomic_load_n(&e->rec_s, __ATOMIC_RELAXED);
    if (s && atomic_load(&e->st->done) < atomic_load(&e->st->recorded))
        help(s, __atomic_load_n(&e->rec_seq, __ATOMIC_RELAXED), blocking);
}

EMU_API CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    if (!ev_ok(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    ev_help(hEvent, 0);
    return atomic_load(&hEvent->st->done) >= atomic_load(&hEvent->st->recorded) ? CUDA_SUCCESS
                                                                                : CUDA_ERROR_NOT_READY;
}

EMU_API CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    if (!ev_ok(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    ev_help(hEvent, 1);
    wait_event(hEvent->st, atomic_load(&hEvent->st->recorded));
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    if (!ev_ok(hEvent))
        return CUDA_ERROR_INVALID_HANDLE;
    (void)Flags;
    CUresult rc = CUDA_SUCCESS;
    struct CUstream_st *s = stream_of(hStream, &rc);
    if (!s)
        return rc;
    uint64_t target = atomic_load(&hEvent->st->recorded);
    if (!target)
        return CUDA_SUCCESS;
    emu_op_t *op = calloc(1, sizeof *op);
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    op->type = OP_EVWAIT;
    op->ev = hEvent->st;
    op->target = target;
    enqueue(s, op, 1);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    if (!ev_ok(hStart) || !ev_ok(hEnd) || !pMilliseconds)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!atomic_load(&hStart->st->recorded) || !atomic_load(&hEnd->st->recorded))
        return CUDA_ERROR_INVALID_HANDLE;
    if (cuEventQuery(hStart) || cuEventQuery(hEnd))
        return CUDA_ERROR_NOT_READY;
    double ms = ((double)atomic_load(&hEnd->st->t_ns) - (double)atomic_load(&hStart->st->t_ns)) / 1e6;
    *pMilliseconds = (float)ms;
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime(pMilliseconds, hStart, hEnd);
}

typedef struct {
    uint32_t magic;
    int32_t pid;
    int32_t fd;
    uint32_t pad;
    uint64_t pidns;
    uint64_t ino;
} emu_ipc_ev_t;

static uint64_t pidns_ino(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
}

EMU_API CUresult CUDAAPI cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event)
{
    if (!ev_ok(event) || event->fd < 0 || !pHandle)
        return CUDA_ERROR_INVALID_HANDLE;
    struct stat st;
    if (fstat(event->fd, &st))
        return CUDA_ERROR_OPERATING_SYSTEM;
    emu_ipc_ev_t h = {.magic = EMU_IPC_MAGIC, .pid = getpid(), .fd = event->fd, .pidns = pidns_ino(),
                      .ino = (uint64_t)st.st_ino};
    memset(pHandle, 0, sizeof *pHandle);
    memcpy(pHandle->reserved, &h, sizeof h);
    return CUDA_SUCCESS;
}

EMU_API CUresult CUDAAPI cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle)
{
    CUresult rc;
    CUcontext c = emu_ctx_need(&rc);
    if (!c)
        return rc;
    emu_ipc_ev_t h;
    memcpy(&h, handle.reserved, sizeof h);
    if (!phEvent || h.magic != EMU_IPC_MAGIC)
        return CUDA_ERROR_INVALID_VALUE;
    if (h.pidns != pidns_ino() || h.pid == getpid())
        return CUDA_ERROR_INVALID_CONTEXT;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)h.pid, (int)h.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fstat(fd, &st) || (uint64_t)st.st_ino != h.ino) {
        close(fd);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    void *p = mmap(NULL, sizeof(emu_evstate_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    CUevent e = p == MAP_FAILED ? NULL : calloc(1, sizeof *e);
    if (!e) {
        if (p != MAP_FAILED)
            munmap(p, sizeof(emu_evstate_t));
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e->magic = EMU_EV_MAGIC;
    e->flags = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING;
    e->st = p;
    e->fd = -1;
    e->opened = 1;
    *phEvent = e;
    return CUDA_SUCCESS;
}
