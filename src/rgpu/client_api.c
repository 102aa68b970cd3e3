/* rgpu client driver: copies (every direction, peer copies between servers
 * going directly from server to server), streams, events, modules, kernel
 * launch (errors and cuGetProcAddress: client_proc.c). */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rgpu/client.h"

#define CK(x)                                                                                               \
    do {                                                                                                    \
        CUresult rc_ = (x);                                                                                 \
        if (rc_ != CUDA_SUCCESS)                                                                            \
            return rc_;                                                                                     \
    } while (0)

/* the context and stream handle to use on server sv for stream st: st's own
 * if it lives there, else the legacy stream of the allocation's context */
static void pick(rgc_server_t *sv, struct CUctx_st *sctx, uint64_t srh, struct CUctx_st *actx, uint64_t *ctx,
                 uint64_t *stream)
{
    if (sctx && sctx->sv == sv) {
        *ctx = sctx->rh;
        *stream = srh;
    } else {
        *ctx = actx->rh;
        *stream = 0;
    }
}

static uint64_t copy_ids;

/* the captures each server's part of a peer copy on stream st waits for */
static const uint64_t *stream_xcap(CUstream st, struct CUctx_st *sctx)
{
    if (!sctx)
        return NULL;
    return st && st != CU_STREAM_LEGACY && st != CU_STREAM_PER_THREAD ? st->xcap : sctx->xcap;
}

static CUresult peer_copy(rgc_alloc_t *da, uint64_t dst, rgc_alloc_t *sa, uint64_t src, size_t n,
                          struct CUctx_st *sctx, uint64_t srh, const uint64_t *xcap, int async)
{
    rgc_server_t *ds = da->ctx->sv, *ss = sa->ctx->sv;
    uint64_t dc, dsr, sc, ssr;
    pick(ds, sctx, srh, da->ctx, &dc, &dsr);
    pick(ss, sctx, srh, sa->ctx, &sc, &ssr);
    uint64_t id = __atomic_add_fetch(&copy_ids, 1, __ATOMIC_RELAXED) ^ ((uint64_t)getpid() << 32);
    /* both servers locked, in a fixed order */
    rgc_server_t *first = ds < ss ? ds : ss, *second = ds < ss ? ss : ds;
    pthread_mutex_lock(&first->mu);
    pthread_mutex_lock(&second->mu);
    rg_buf_t ra = {0}, sa_ = {0};
    rg_put_u64(&ra, dc);
    rg_put_u64(&ra, dsr);
    rg_put_u64(&ra, dst);
    rg_put_u64(&ra, n);
    rg_put_u64(&ra, id);
    rg_put_u64(&ra, xcap && sctx->sv != ds ? xcap[ds->idx] : 0);
    rg_put_u64(&sa_, sc);
    rg_put_u64(&sa_, ssr);
    rg_put_u64(&sa_, src);
    rg_put_u64(&sa_, n);
    /* over libfabric when both sessions are on it (the source uses its own provider) */
    int fab = ds->fab_port && ss->fab_port;
    rg_put_bytes(&sa_, ds->host, (uint32_t)strlen(ds->host));
    rg_put_u64(&sa_, (uint64_t)(fab ? ds->fab_port : ds->peer_port));
    rg_put_bytes(&sa_, ds->token, RG_TOKEN_LEN);
    rg_put_u64(&sa_, id);
    rg_put_u64(&sa_, xcap && sctx->sv != ss ? xcap[ss->idx] : 0);
    uint64_t dseq = 0, sseq = 0;
    uint32_t fl = async ? RG_F_ASYNC : 0;
    CUresult rd = rgc_send(ds, RG_OP_PEER_RECV, fl, &ra, NULL, 0, &dseq);
    CUresult rs =
        rd == CUDA_SUCCESS ? rgc_send(ss, RG_OP_PEER_SEND, fl | (fab ? RG_F_FABRIC : 0), &sa_, NULL, 0, &sseq) : rd;
    rgc_reply_t rep;
    if (async && rd == CUDA_SUCCESS && rs == CUDA_SUCCESS) {
        /* answered later: both servers run it in order with their other requests */
        rd = rgc_later_recv(ds, dseq, id, n, ss->idx);
        rs = rgc_later(ss, RG_OP_PEER_SEND, sseq, NULL, 0);
    } else if (rd == CUDA_SUCCESS) {
        /* flush the receiver's request before waiting on the sender */
        if (rs == CUDA_SUCCESS)
            rs = rgc_wait(ss, RG_OP_PEER_SEND, sseq, &rep);
        rd = rgc_wait(ds, RG_OP_PEER_RECV, dseq, &rep);
    }
    pthread_mutex_unlock(&second->mu);
    pthread_mutex_unlock(&first->mu);
    rg_buf_free(&ra);
    rg_buf_free(&sa_);
    return rs != CUDA_SUCCESS ? rs : rd;
}

/* need: 1 dst must be device memory, 2 src must be */
static CUresult copy(uint64_t dst, uint64_t src, size_t n, CUstream st, int async, int need)
{
    CK(rgc_need_init());
    struct CUctx_st *sctx = NULL;
    uint64_t srh = 0;
    if (async || (st && st != CU_STREAM_LEGACY))
        CK(rgc_stream_ctx(st, &sctx, &srh));
    if (!n)
        return CUDA_SUCCESS;
    rgc_alloc_t *da = rgc_find(dst, n), *sa = rgc_find(src, n);
    if (da == (rgc_alloc_t *)1 || sa == (rgc_alloc_t *)1)
        return CUDA_ERROR_INVALID_VALUE;
    int dd = da && da->kind == RGC_DEVICE, sd = sa && sa->kind == RGC_DEVICE;
    if (((need & 1) && !dd) || ((need & 2) && !sd))
        return CUDA_ERROR_INVALID_VALUE;
    uint32_t fl = async ? RG_F_ASYNC : 0;
    uint64_t q[5];
    /* the server's addresses */
    uint64_t rdst = dd ? da->rbase + (dst - da->base) : dst, rsrc = sd ? sa->rbase + (src - sa->base) : src;
    CUresult rc = CUDA_SUCCESS;
    if (!dd && !sd) {
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
        return CUDA_SUCCESS;
    }
    if (dd && !sd) { /* host to device, in messages of at most RG_CHUNK */
        rgc_server_t *sv = da->ctx->sv;
        pick(sv, sctx, srh, da->ctx, &q[0], &q[1]);
        pthread_mutex_lock(&sv->mu);
        for (size_t off = 0; off < n && rc == CUDA_SUCCESS; off += RG_CHUNK) {
            size_t k = n - off < RG_CHUNK ? n - off : RG_CHUNK;
            q[2] = rdst + off;
            rc = rgc_callq(sv, RG_OP_HTOD, fl | (async ? RG_F_NOREPLY : 0), q, 3, (const char *)(uintptr_t)src + off, k,
                       1, NULL);
        }
        pthread_mutex_unlock(&sv->mu);
        return rc;
    }
    if (!dd && sd) { /* device to host: the data comes in the replies */
        rgc_server_t *sv = sa->ctx->sv;
        pick(sv, sctx, srh, sa->ctx, &q[0], &q[1]);
        pthread_mutex_lock(&sv->mu);
        for (size_t off = 0; off < n && rc == CUDA_SUCCESS; off += RG_CHUNK) {
            size_t k = n - off < RG_CHUNK ? n - off : RG_CHUNK;
            q[2] = rsrc + off;
            q[3] = k;
            rgc_reply_t rep;
            if (async) { /* the data lands when the answer comes: no waiting here */
                uint64_t seq;
                rg_buf_t a = {0};
                for (int i = 0; i < 4; i++)
                    rg_put_u64(&a, q[i]);
                rc = rgc_send(sv, RG_OP_DTOH, fl | RG_F_LATER, &a, NULL, 0, &seq);
                rg_buf_free(&a);
                if (rc == CUDA_SUCCESS)
                    rc = rgc_later(sv, RG_OP_DTOH, seq, (char *)(uintptr_t)dst + off, k);
                continue;
            }
            rc = rgc_callq(sv, RG_OP_DTOH, fl, q, 4, NULL, 0, 0, &rep);
            if (rc == CUDA_SUCCESS) {
                uint32_t got;
                const uint8_t *p = rg_get_bytes(&rep.r, &got, RG_CHUNK);
                if (!p || got != k)
                    rc = CUDA_ERROR_UNKNOWN;
                else
                    memcpy((char *)(uintptr_t)dst + off, p, k);
            }
        }
        pthread_mutex_unlock(&sv->mu);
        return rc;
    }
    /* Device to device, cuMemcpy/cuMemcpyDtoD/cuMemcpyPeer included: "no host-side
     * synchronization is performed" (driver API, "API synchronization behavior";
     * cuMemcpyPeer: "asynchronous with respect to the host, but serialized with
     * respect to all pending and future asynchronous work" of the contexts).  So
     * the synchronous forms are queued like the Async ones on the legacy
     * streams (NULL here: the servers' legacy streams, which their blocking
     * streams wait for and which wait for them), their errors deferred to the
     * next call that waits; a cuMemcpyDtoH after them sees the data. */
    if (da->ctx->sv == sa->ctx->sv) { /* both on one server: its driver copies */
        rgc_server_t *sv = da->ctx->sv;
        pick(sv, sctx, srh, da->ctx, &q[0], &q[1]);
        q[2] = rdst, q[3] = rsrc, q[4] = n;
        pthread_mutex_lock(&sv->mu);
        rc = rgc_callq(sv, RG_OP_DTOD, RG_F_ASYNC | RG_F_NOREPLY, q, 5, NULL, 0, 0, NULL);
        pthread_mutex_unlock(&sv->mu);
        return rc;
    }
    return peer_copy(da, rdst, sa, rsrc, n, sctx, srh, stream_xcap(st, sctx), 1);
}

RGC_API CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dst, src, n, NULL, 0, 0);
}
RGC_API CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s, 1, 0);
}
RGC_API CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
    return copy(dst, (uintptr_t)src, n, NULL, 0, 1);
}
RGC_API CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
    return copy((uintptr_t)dst, src, n, NULL, 0, 2);
}
RGC_API CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy(dst, src, n, NULL, 0, 3);
}
RGC_API CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dst, (uintptr_t)src, n, s, 1, 1);
}
RGC_API CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t)dst, src, n, s, 1, 2);
}
RGC_API CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s, 1, 3);
}
RGC_API CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n)
{
    if (!rgc_valid_ctx(dctx) || !rgc_valid_ctx(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy(dst, src, n, NULL, 0, 3);
}
RGC_API CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                                           size_t n, CUstream s)
{
    if (!rgc_valid_ctx(dctx) || !rgc_valid_ctx(sctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy(dst, src, n, s, 1, 3);
}

static CUresult memset8(CUdeviceptr dst, unsigned char v, size_t n, CUstream st, int async)
{
    CK(rgc_need_init());
    struct CUctx_st *sctx = NULL;
    uint64_t srh = 0, q[5];
    if (async)
        CK(rgc_stream_ctx(st, &sctx, &srh));
    if (!n)
        return CUDA_SUCCESS;
    rgc_alloc_t *da = rgc_find(dst, n);
    if (!da || da == (rgc_alloc_t *)1 || da->kind != RGC_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    rgc_server_t *sv = da->ctx->sv;
    pick(sv, sctx, srh, da->ctx, &q[0], &q[1]);
    q[2] = da->rbase + (dst - da->base), q[3] = v, q[4] = n;
    pthread_mutex_lock(&sv->mu);
    CUresult rc = rgc_callq(sv, RG_OP_MEMSET, async ? RG_F_ASYNC | RG_F_NOREPLY : 0, q, 5, NULL, 0, 0, NULL);
    pthread_mutex_unlock(&sv->mu);
    return rc;
}
RGC_API CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char uc, size_t n)
{
    return memset8(dst, uc, n, NULL, 0);
}
RGC_API CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char uc, size_t n, CUstream s)
{
    return memset8(dst, uc, n, s, 1);
}

/* ---- streams and events ---- */
RGC_API CUresult CUDAAPI cuStreamCreate(CUstream *ph, unsigned int flags)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ph || (flags & ~1u))
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t rh;
    CK(rgc_req(c->sv, RG_OP_STREAM_CREATE, 0, RGC_Q(c->rh, flags), &rh, 1));
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *s = (struct CUstream_st){RGC_STREAM_MAGIC, c, rh};
    *ph = s;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority)
{
    (void)priority;
    return cuStreamCreate(ph, flags);
}

static CUresult stream_op(CUstream st, unsigned op)
{
    CK(rgc_need_init());
    struct CUctx_st *c;
    uint64_t rh;
    CK(rgc_stream_ctx(st, &c, &rh));
    CUresult rc = rgc_req(c->sv, op, 0, RGC_Q(c->rh << 32 | rh), NULL, 0);
    if (op == RG_OP_STREAM_SYNC) {
        CUresult d = rgc_take_deferred();
        rc = rc != CUDA_SUCCESS ? rc : d;
    }
    return rc;
}

RGC_API CUresult CUDAAPI cuStreamDestroy(CUstream st)
{
    if (!st || st == CU_STREAM_LEGACY || st == CU_STREAM_PER_THREAD || st->magic != RGC_STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = stream_op(st, RG_OP_STREAM_DESTROY);
    st->magic = 0;
    free(st);
    return rc;
}
RGC_API CUresult CUDAAPI cuStreamSynchronize(CUstream st)
{
    return stream_op(st, RG_OP_STREAM_SYNC);
}
RGC_API CUresult CUDAAPI cuStreamQuery(CUstream st)
{
    return stream_op(st, RG_OP_STREAM_QUERY);
}

static int ev_ok(CUevent e)
{
    return e && e->magic == RGC_EVENT_MAGIC;
}

RGC_API CUresult CUDAAPI cuEventCreate(CUevent *ph, unsigned int flags)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ph || (flags & CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_VALUE; /* interprocess events do not cross the network */
    uint64_t rh;
    CK(rgc_req(c->sv, RG_OP_EVENT_CREATE, 0, RGC_Q(c->rh, flags), &rh, 1));
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (struct CUevent_st){RGC_EVENT_MAGIC, c, rh};
    *ph = e;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuEventDestroy(CUevent e)
{
    if (!ev_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = rgc_req(e->ctx->sv, RG_OP_EVENT_DESTROY, 0, RGC_Q(e->rh), NULL, 0);
    e->magic = 0;
    free(e);
    return rc;
}

/* asynchronous: queued without waiting for an answer */
RGC_API CUresult CUDAAPI cuEventRecord(CUevent e, CUstream st)
{
    if (!ev_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUctx_st *c;
    uint64_t rh;
    CK(rgc_stream_ctx(st, &c, &rh));
    if (c->sv != e->ctx->sv)
        return CUDA_ERROR_INVALID_HANDLE; /* an event records on a stream of its own server */
    return rgc_req(c->sv, RG_OP_EVENT_RECORD, RG_F_NOREPLY, RGC_Q(c->rh << 32 | rh, e->rh), NULL, 0);
}

RGC_API CUresult CUDAAPI cuEventQuery(CUevent e)
{
    return ev_ok(e) ? rgc_req(e->ctx->sv, RG_OP_EVENT_QUERY, 0, RGC_Q(e->rh), NULL, 0) : CUDA_ERROR_INVALID_HANDLE;
}

RGC_API CUresult CUDAAPI cuEventSynchronize(CUevent e)
{
    if (!ev_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = rgc_req(e->ctx->sv, RG_OP_EVENT_SYNC, 0, RGC_Q(e->rh), NULL, 0);
    CUresult d = rgc_take_deferred();
    return rc != CUDA_SUCCESS ? rc : d;
}

RGC_API CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    if (!ev_ok(a) || !ev_ok(b) || a->ctx->sv != b->ctx->sv)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t q[2] = {a->rh, b->rh};
    rgc_reply_t rep;
    rgc_server_t *sv = a->ctx->sv;
    pthread_mutex_lock(&sv->mu);
    CUresult rc = rgc_callq(sv, RG_OP_EVENT_ELAPSED, 0, q, 2, NULL, 0, 0, &rep);
    if (rc == CUDA_SUCCESS) {
        uint32_t bits = rg_get_u32(&rep.r);
        memcpy(ms, &bits, 4);
    }
    pthread_mutex_unlock(&sv->mu);
    return rc;
}

RGC_API CUresult CUDAAPI cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
    return cuEventElapsedTime(ms, a, b);
}

static uint64_t gate_ids;

/* Same server: the server's stream waits.  An event of another server A:
 * no host wait either — A is told to open a gate on the stream's server B
 * when the event, as recorded now, completes, and B holds the stream's
 * later work until then (gpud_gate.c). */
RGC_API CUresult CUDAAPI cuStreamWaitEvent(CUstream st, CUevent e, unsigned int flags)
{
    (void)flags;
    if (!ev_ok(e))
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUctx_st *c;
    uint64_t rh;
    CK(rgc_stream_ctx(st, &c, &rh));
    rgc_server_t *a = e->ctx->sv, *b = c->sv;
    if (a == b)
        return rgc_req(b, RG_OP_STREAM_WAIT, RG_F_NOREPLY, RGC_Q(c->rh << 32 | rh, e->rh), NULL, 0);
    uint64_t *xcap = (uint64_t *)stream_xcap(st, c);
    uint64_t gate = __atomic_add_fetch(&gate_ids, 1, __ATOMIC_RELAXED);
    int fab = a->fab_port && b->fab_port;
    rg_buf_t q = {0};
    rg_put_u64(&q, e->rh);
    rg_put_u64(&q, gate);
    rg_put_u64(&q, xcap[a->idx]);
    rg_put_bytes(&q, b->host, (uint32_t)strlen(b->host));
    rg_put_u64(&q, (uint64_t)(fab ? b->fab_port : b->peer_port));
    rg_put_bytes(&q, b->token, RG_TOKEN_LEN);
    /* A first, sent now (its batch too: the record of the event): B may get
     * the signal before the gate, which it remembers */
    pthread_mutex_lock(&a->mu);
    CUresult rc = rgc_send(a, RG_OP_EVENT_SIGNAL, RG_F_NOREPLY | (fab ? RG_F_FABRIC : 0), &q, NULL, 0, NULL);
    if (rc == CUDA_SUCCESS)
        rc = rgc_flush(a);
    pthread_mutex_unlock(&a->mu);
    rg_buf_free(&q);
    if (rc != CUDA_SUCCESS)
        return rc;
    xcap[a->idx] = gate;
    return rgc_req(b, RG_OP_STREAM_GATE, RG_F_NOREPLY, RGC_Q(c->rh << 32 | rh, gate), NULL, 0);
}

/* ---- modules and kernels ---- */
/* the size of a module image: ELF (cubin or the emulator's shared objects),
 * fatbin (its header says), else PTX text */
static size_t image_size(const void *image)
{
    const unsigned char *b = image;
    if (!memcmp(b, ELFMAG, SELFMAG) && b[EI_CLASS] == ELFCLASS64) {
        Elf64_Ehdr e; /* copied: images need not be aligned */
        memcpy(&e, b, sizeof e);
        size_t end = (size_t)e.e_shoff + (size_t)e.e_shnum * e.e_shentsize;
        size_t ph = (size_t)e.e_phoff + (size_t)e.e_phnum * e.e_phentsize;
        if (ph > end)
            end = ph;
        if (e.e_phentsize == sizeof(Elf64_Phdr) && e.e_phnum < 256 && e.e_phoff < RG_MAX_IMAGE)
            for (unsigned i = 0; i < e.e_phnum; i++) {
                Elf64_Phdr p;
                memcpy(&p, b + e.e_phoff + i * sizeof(Elf64_Phdr), sizeof p);
                if ((size_t)p.p_offset + p.p_filesz > end)
                    end = (size_t)p.p_offset + p.p_filesz;
            }
        return end;
    }
    uint32_t magic;
    memcpy(&magic, b, 4);
    if (magic == 0xBA55ED50u) { /* fatbin: u32 magic, u16 version, u16 header size, u64 payload size */
        uint16_t hs;
        uint64_t fs;
        memcpy(&hs, b + 6, 2);
        memcpy(&fs, b + 8, 8);
        return hs + fs;
    }
    return strnlen(image, RG_MAX_IMAGE) + 1;
}

RGC_API CUresult CUDAAPI cuModuleLoadData(CUmodule *pm, const void *image)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!pm || !image)
        return CUDA_ERROR_INVALID_VALUE;
    size_t n = image_size(image);
    if (n > RG_MAX_IMAGE)
        return CUDA_ERROR_INVALID_IMAGE;
    uint64_t q[1] = {c->rh};
    rgc_reply_t rep;
    pthread_mutex_lock(&c->sv->mu);
    CUresult rc = rgc_callq(c->sv, RG_OP_MOD_LOAD, 0, q, 1, image, n, 1, &rep);
    uint64_t rh = rc == CUDA_SUCCESS ? rg_get_u64(&rep.r) : 0;
    pthread_mutex_unlock(&c->sv->mu);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *m = (struct CUmod_st){RGC_MOD_MAGIC, c, rh, NULL, PTHREAD_MUTEX_INITIALIZER};
    *pm = m;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *pm, const void *image, unsigned int n, CUjit_option *o,
                                            void **v)
{
    (void)n, (void)o, (void)v;
    return cuModuleLoadData(pm, image);
}

RGC_API CUresult CUDAAPI cuModuleLoad(CUmodule *pm, const char *fname)
{
    if (!pm || !fname)
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(fname, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = malloc(RG_MAX_IMAGE + 1);
    size_t n = buf ? fread(buf, 1, RG_MAX_IMAGE, f) : 0;
    fclose(f);
    CUresult rc = CUDA_ERROR_INVALID_IMAGE;
    if (buf && n >= 4 && n < RG_MAX_IMAGE) {
        buf[n] = 0;
        rc = cuModuleLoadData(pm, buf);
    }
    free(buf);
    return rc;
}

RGC_API CUresult CUDAAPI cuModuleUnload(CUmodule m)
{
    if (!m || m->magic != RGC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult rc = rgc_req(m->ctx->sv, RG_OP_MOD_UNLOAD, 0, RGC_Q(m->rh), NULL, 0);
    m->magic = 0;
    for (struct CUfunc_st *f = m->funcs, *nx; f; f = nx) {
        nx = f->next;
        f->magic = 0;
        free(f);
    }
    free(m);
    return rc;
}

RGC_API CUresult CUDAAPI cuModuleGetFunction(CUfunction *pf, CUmodule m, const char *name)
{
    if (!m || m->magic != RGC_MOD_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!pf || !name || strlen(name) > RG_MAX_NAME)
        return CUDA_ERROR_INVALID_VALUE;
    rg_buf_t a = {0};
    rg_put_u64(&a, m->rh);
    rg_put_bytes(&a, name, (uint32_t)strlen(name));
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f) {
        rg_buf_free(&a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    rgc_reply_t rep;
    rgc_server_t *sv = m->ctx->sv;
    pthread_mutex_lock(&sv->mu);
    CUresult rc = rgc_call(sv, RG_OP_MOD_FUNC, 0, &a, NULL, 0, &rep);
    if (rc == CUDA_SUCCESS) {
        f->rh = rg_get_u64(&rep.r);
        uint64_t np = rg_get_u64(&rep.r);
        for (uint64_t i = 0; i < np && i < 64; i++) {
            f->off[i] = rg_get_u64(&rep.r);
            f->size[i] = rg_get_u64(&rep.r);
            if (f->off[i] + f->size[i] > f->total)
                f->total = f->off[i] + f->size[i];
        }
        f->np = (unsigned)(np < 64 ? np : 64);
        if (rep.r.err || f->total > 4096)
            rc = CUDA_ERROR_INVALID_IMAGE;
    }
    pthread_mutex_unlock(&sv->mu);
    rg_buf_free(&a);
    if (rc != CUDA_SUCCESS) {
        free(f);
        return rc;
    }
    f->magic = RGC_FUNC_MAGIC;
    f->ctx = m->ctx;
    pthread_mutex_lock(&m->mu);
    f->next = m->funcs;
    m->funcs = f;
    pthread_mutex_unlock(&m->mu);
    *pf = f; /* (functions live as long as their module) */
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
    if (!f || f->magic != RGC_FUNC_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (i >= f->np)
        return CUDA_ERROR_INVALID_VALUE;
    if (off)
        *off = f->off[i];
    if (size)
        *size = f->size[i];
    return CUDA_SUCCESS;
}

/* asynchronous: the parameters are packed here (layout from
 * cuFuncGetParamInfo on the server) and the launch is queued */
RGC_API CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                        CUstream st, void **params, void **extra)
{
    if (!f || f->magic != RGC_FUNC_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    struct CUctx_st *c = f->ctx;
    uint64_t srh = 0;
    if (st && st != CU_STREAM_LEGACY && st != CU_STREAM_PER_THREAD) {
        if (st->magic != RGC_STREAM_MAGIC || st->ctx->sv != c->sv)
            return CUDA_ERROR_INVALID_HANDLE;
        srh = st->rh;
    }
    unsigned char buf[4096];
    size_t n = f->total;
    memset(buf, 0, sizeof buf);
    if (params) {
        for (unsigned i = 0; i < f->np; i++)
            memcpy(buf + f->off[i], params[i], f->size[i]);
    } else if (extra) {
        const void *pb = NULL;
        size_t pn = 0;
        for (int i = 0; i < 32 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
                pb = extra[i + 1];
            else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
                pn = *(const size_t *)extra[i + 1];
        }
        if (pn < n || (n && !pb))
            return CUDA_ERROR_INVALID_VALUE;
        memcpy(buf, pb, n);
    } else if (f->np) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    /* 8-byte parameters pointing into a device allocation whose address here
     * differs from the server's: the server's address */
    for (unsigned i = 0; i < f->np; i++)
        if (f->size[i] == 8) {
            uint64_t v;
            memcpy(&v, buf + f->off[i], 8);
            rgc_alloc_t *a = v ? rgc_find(v, 1) : NULL;
            if (a && a != (rgc_alloc_t *)1 && a->kind == RGC_DEVICE && a->rbase != a->base) {
                v = a->rbase + (v - a->base);
                memcpy(buf + f->off[i], &v, 8);
            }
        }
    uint64_t q[9] = {f->rh, gx, gy, gz, bx, by, bz, shmem, srh};
    pthread_mutex_lock(&c->sv->mu);
    CUresult rc = rgc_callq(c->sv, RG_OP_LAUNCH, RG_F_NOREPLY, q, 9, buf, n, 1, NULL);
    pthread_mutex_unlock(&c->sv->mu);
    return rc;
}

/* ---- not forwarded: CUDA IPC has no meaning across the network ---- */
RGC_API CUresult CUDAAPI cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    (void)h, (void)p;
    return CUDA_ERROR_NOT_SUPPORTED;
}
RGC_API CUresult CUDAAPI cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
{
    (void)p, (void)h, (void)flags;
    return CUDA_ERROR_NOT_SUPPORTED;
}
RGC_API CUresult CUDAAPI cuIpcCloseMemHandle(CUdeviceptr p)
{
    (void)p;
    return CUDA_ERROR_NOT_SUPPORTED;
}
