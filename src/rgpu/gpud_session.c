/* wharf-gpud: one client's session (a process of its own, forked after
 * accept).  Every handle the client names is an index into this session's
 * own tables, and every device address is checked against this session's own
 * allocations before the driver sees it, so a client can never name another
 * client's resources (they live in another process) nor memory it did not
 * allocate.  When the client goes away the process frees what is left and
 * exits. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "rgpu/gpud_int.h"

/* ---- tables ---- */
static int slot_new(sess_t *s, int t, void *h, int ctx)
{
    for (int i = 0; i < s->cfg->max_handles; i++)
        if (!s->tab[t][i].h) {
            s->tab[t][i] = (slot_t){h, ctx, 0, 0};
            return i;
        }
    return -1;
}

/* the slot named by handle (index + 1) or NULL */
static slot_t *slot_get(sess_t *s, int t, uint64_t handle)
{
    if (!handle || handle > (uint64_t)s->cfg->max_handles)
        return NULL;
    slot_t *sl = &s->tab[t][handle - 1];
    return sl->h ? sl : NULL;
}

slot_t *gs_slot(sess_t *s, int t, uint64_t handle)
{
    return slot_get(s, t, handle);
}

CUresult gs_set_ctx(sess_t *s, int ctx)
{
    return d_cuCtxSetCurrent((CUcontext)s->tab[T_CTX][ctx].h);
}

/* context handle -> make it current */
CUresult gs_use_ctx(sess_t *s, uint64_t h, int *ctx)
{
    slot_t *c = slot_get(s, T_CTX, h);
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    *ctx = (int)(c - s->tab[T_CTX]);
    return gs_set_ctx(s, *ctx);
}

/* stream handle (0: the context's legacy stream) of context ctx */
CUresult gs_get_stream(sess_t *s, uint64_t h, int ctx, CUstream *st)
{
    if (!h) {
        *st = NULL;
        return CUDA_SUCCESS;
    }
    slot_t *sl = slot_get(s, T_STREAM, h);
    if (!sl || sl->ctx != ctx)
        return CUDA_ERROR_INVALID_HANDLE;
    *st = sl->h;
    return CUDA_SUCCESS;
}

/* [p, p+n) inside one of this session's allocations (n > 0) */
int gs_range_ok(sess_t *s, uint64_t p, uint64_t n)
{
    for (int i = 0; i < s->nalloc; i++) {
        alloc_t *a = &s->allocs[i];
        if (p >= a->base && p - a->base < a->size && n <= a->size - (p - a->base))
            return 1;
    }
    return 0;
}

/* ---- staged asynchronous host-to-device data ---- */
static void pend_reap(sess_t *s, int all)
{
    int k = 0;
    for (int i = 0; i < s->npend; i++) {
        pending_t *p = &s->pend[i];
        if (all)
            d_cuEventSynchronize(p->ev);
        if (all || d_cuEventQuery(p->ev) == CUDA_SUCCESS) {
            d_cuEventDestroy(p->ev);
            if (p->reply) /* the data of a device-to-host copy: its answer now */
                rg_send_msg(s->conn, RG_OP_DTOH, 0, p->seq, p->buf, 8 + p->n, NULL, 0);
            free(p->buf);
            s->pend_bytes -= p->n;
        } else {
            s->pend[k++] = *p;
        }
    }
    s->npend = k;
}

/* ---- handlers: each returns the CUresult; out gets the reply fields ---- */
static CUresult h_hello(sess_t *s, rg_buf_t *out)
{
    rg_put_u64(out, (uint64_t)s->ndev);
    rg_put_u64(out, (uint64_t)s->peer_port);
    rg_put_bytes(out, s->token, RG_TOKEN_LEN);
    for (int d = 0; d < s->ndev; d++) {
        CUdevice dev;
        char name[256] = "", pci[32] = "";
        CUuuid uu = {{0}};
        size_t tot = 0;
        CK(d_cuDeviceGet(&dev, d));
        d_cuDeviceGetName(name, sizeof name, dev);
        d_cuDeviceGetUuid(&uu, dev);
        d_cuDeviceGetPCIBusId(pci, sizeof pci, dev);
        d_cuDeviceTotalMem(&tot, dev);
        uint64_t peers = 0;
        for (int e = 0; e < s->ndev && e < 64; e++) {
            int can = 0;
            if (e != d && d_cuDeviceCanAccessPeer(&can, dev, e) == CUDA_SUCCESS && can)
                peers |= 1ull << e;
        }
        rg_put_bytes(out, name, (uint32_t)strnlen(name, sizeof name));
        rg_put_bytes(out, uu.bytes, 16);
        rg_put_bytes(out, pci, (uint32_t)strnlen(pci, sizeof pci));
        rg_put_u64(out, tot);
        rg_put_u64(out, peers);
        rg_put_u32(out, CU_DEVICE_ATTRIBUTE_MAX);
        for (int a = 0; a < CU_DEVICE_ATTRIBUTE_MAX; a++) {
            int v = 0;
            CUresult r = a ? d_cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev) : CUDA_ERROR_INVALID_VALUE;
            rg_put_u32(out, r == CUDA_SUCCESS ? (uint32_t)v : 0x80000000u);
        }
    }
    return CUDA_SUCCESS;
}

static CUresult h_ctx_new(sess_t *s, const rg_args_t *a, int primary, rg_buf_t *out)
{
    if (a->q[0] >= (uint64_t)s->ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    CUdevice dev;
    CUcontext c;
    CK(d_cuDeviceGet(&dev, (int)a->q[0]));
    if (primary)
        CK(d_cuDevicePrimaryCtxRetain(&c, dev));
    else
        CK(d_cuCtxCreate(&c, (unsigned)a->q[1], dev));
    int i = slot_new(s, T_CTX, c, (int)a->q[0]);
    if (i < 0) {
        if (primary)
            d_cuDevicePrimaryCtxRelease(dev);
        else
            d_cuCtxDestroy(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    s->tab[T_CTX][i].primary = primary;
    rg_put_u64(out, (uint64_t)i + 1);
    return CUDA_SUCCESS;
}

/* free everything of context ctx (or every context if ctx < 0) */
static void free_ctx_objects(sess_t *s, int ctx)
{
    pend_reap(s, 1);
    gs_drop_ctx(s, ctx);
    for (int t = T_FUNC; t >= T_STREAM; t--)
        for (int i = 0; i < s->cfg->max_handles; i++) {
            slot_t *sl = &s->tab[t][i];
            if (!sl->h || (ctx >= 0 && sl->ctx != ctx))
                continue;
            gs_set_ctx(s, sl->ctx);
            if (t == T_STREAM)
                d_cuStreamDestroy(sl->h);
            else if (t == T_EVENT)
                d_cuEventDestroy(sl->h);
            else if (t == T_MOD)
                d_cuModuleUnload(sl->h);
            sl->h = NULL;
        }
    for (int i = 0; i < s->nalloc;) {
        if (ctx < 0 || s->allocs[i].ctx == ctx) {
            gs_set_ctx(s, s->allocs[i].ctx);
            d_cuMemFree(s->allocs[i].base);
            s->mem_used -= s->allocs[i].size;
            s->allocs[i] = s->allocs[--s->nalloc];
        } else {
            i++;
        }
    }
    if (s->pstream && (ctx < 0 || s->pbuf_ctx == ctx)) {
        gs_set_ctx(s, s->pbuf_ctx);
        d_cuStreamSynchronize(s->pstream);
        for (int i = 0; i < RG_PEER_MAXBUF; i++) {
            if (s->pbuf[i])
                d_cuMemFreeHost(s->pbuf[i]);
            if (s->pev[i])
                d_cuEventDestroy(s->pev[i]);
            s->pbuf[i] = NULL;
            s->pev[i] = NULL;
        }
        d_cuEventDestroy(s->porder);
        d_cuEventDestroy(s->pdone);
        d_cuStreamDestroy(s->pstream);
        s->pstream = NULL;
        s->pbuf_size = 0;
    }
}

static CUresult h_ctx_del(sess_t *s, const rg_args_t *a, int primary)
{
    slot_t *c = slot_get(s, T_CTX, a->q[0]);
    if (primary) {
        /* release: the client names the device; drop one retained primary context of it */
        c = NULL;
        for (int i = 0; i < s->cfg->max_handles && !c; i++)
            if (s->tab[T_CTX][i].h && s->tab[T_CTX][i].primary && (uint64_t)s->tab[T_CTX][i].ctx == a->q[0])
                c = &s->tab[T_CTX][i];
        if (!c)
            return CUDA_ERROR_INVALID_CONTEXT;
    } else if (!c || c->primary) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    int idx = (int)(c - s->tab[T_CTX]);
    int last = 1; /* objects die with the last reference to the context */
    for (int i = 0; i < s->cfg->max_handles; i++)
        if (i != idx && s->tab[T_CTX][i].h == c->h)
            last = 0;
    if (last)
        free_ctx_objects(s, idx);
    else /* move the objects to another handle of the same context */
        for (int t = T_STREAM; t < T_NTAB; t++)
            for (int i = 0; i < s->cfg->max_handles; i++)
                for (int j = 0; j < s->cfg->max_handles; j++)
                    if (s->tab[t][i].h && s->tab[t][i].ctx == idx && j != idx && s->tab[T_CTX][j].h == c->h) {
                        s->tab[t][i].ctx = j;
                        break;
                    }
    for (int i = 0; i < s->nalloc && !last; i++)
        for (int j = 0; j < s->cfg->max_handles; j++)
            if (s->allocs[i].ctx == idx && j != idx && s->tab[T_CTX][j].h == c->h) {
                s->allocs[i].ctx = j;
                break;
            }
    CUresult rc;
    if (primary) {
        CUdevice dev;
        d_cuDeviceGet(&dev, c->ctx);
        rc = d_cuDevicePrimaryCtxRelease(dev);
    } else {
        rc = d_cuCtxDestroy(c->h);
    }
    c->h = NULL;
    d_cuCtxSetCurrent(NULL);
    return rc;
}

static CUresult h_mem(sess_t *s, unsigned op, const rg_args_t *a, rg_buf_t *out)
{
    int ctx;
    if (op == RG_OP_MEM_FREE) {
        for (int i = 0; i < s->nalloc; i++)
            if (s->allocs[i].base == a->q[0]) {
                pend_reap(s, 1);
                CK(gs_set_ctx(s, s->allocs[i].ctx));
                CUresult rc = d_cuMemFree(a->q[0]);
                s->mem_used -= s->allocs[i].size;
                s->allocs[i] = s->allocs[--s->nalloc];
                return rc;
            }
        return CUDA_ERROR_INVALID_VALUE;
    }
    CK(gs_use_ctx(s, a->q[0], &ctx));
    if (op == RG_OP_MEM_INFO) {
        size_t fr = 0, tot = 0;
        CK(d_cuMemGetInfo(&fr, &tot));
        if (s->cfg->max_mem) {
            tot = tot < s->cfg->max_mem ? tot : s->cfg->max_mem;
            size_t left = s->cfg->max_mem - s->mem_used;
            fr = fr < left ? fr : left;
        }
        rg_put_u64(out, fr);
        rg_put_u64(out, tot);
        return CUDA_SUCCESS;
    }
    uint64_t n = a->q[1];
    if (!n)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->nalloc >= s->cfg->max_handles || (s->cfg->max_mem && n > s->cfg->max_mem - s->mem_used))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUdeviceptr p;
    CK(d_cuMemAlloc(&p, (size_t)n));
    s->allocs[s->nalloc++] = (alloc_t){p, (size_t)n, ctx};
    s->mem_used += n;
    rg_put_u64(out, p);
    return CUDA_SUCCESS;
}

/* copies and memset: q = ctx, stream, ... */
static CUresult h_copy(sess_t *s, unsigned op, int async, const rg_args_t *a, rg_buf_t *in, rg_buf_t *out)
{
    int ctx;
    CUstream st;
    CK(gs_use_ctx(s, a->q[0], &ctx));
    CK(gs_get_stream(s, a->q[1], ctx, &st));
    switch (op) {
    case RG_OP_HTOD: {
        uint64_t n = a->blen[0];
        if (!n)
            return CUDA_SUCCESS;
        if (!gs_range_ok(s, a->q[2], n))
            return CUDA_ERROR_INVALID_VALUE;
        if (!async)
            return d_cuMemcpyHtoD(a->q[2], a->b[0], n);
        /* the data stays in the message buffer (taken over) until the copy is done */
        if (s->npend == MAX_PENDING || s->pend_bytes > (256u << 20))
            pend_reap(s, 1);
        CUevent ev;
        CK(d_cuMemcpyHtoDAsync(a->q[2], a->b[0], n, st));
        CK(d_cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
        CUresult rc = d_cuEventRecord(ev, st);
        if (rc != CUDA_SUCCESS) {
            d_cuStreamSynchronize(st);
            d_cuEventDestroy(ev);
            return rc;
        }
        s->pend[s->npend++] = (pending_t){ev, in->p, n, 0, 0};
        s->pend_bytes += n;
        *in = (rg_buf_t){0};
        return CUDA_SUCCESS;
    }
    case RG_OP_DTOH: {
        uint64_t n = a->q[3];
        if (n > RG_CHUNK)
            return CUDA_ERROR_INVALID_VALUE;
        if (n && !gs_range_ok(s, a->q[2], n))
            return CUDA_ERROR_INVALID_VALUE;
        if (async && (s->cur_flags & RG_F_LATER) && n) {
            /* answered when the copy is done (pend_reap), the next requests served meanwhile */
            if (s->npend == MAX_PENDING || s->pend_bytes > (256u << 20))
                pend_reap(s, 1);
            uint8_t *buf = malloc(8 + n);
            CUevent ev;
            if (!buf)
                return CUDA_ERROR_OUT_OF_MEMORY;
            CUresult rc = d_cuMemcpyDtoHAsync(buf + 8, a->q[2], n, st);
            if (rc == CUDA_SUCCESS && (rc = d_cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING)) == CUDA_SUCCESS &&
                (rc = d_cuEventRecord(ev, st)) != CUDA_SUCCESS) {
                d_cuStreamSynchronize(st);
                d_cuEventDestroy(ev);
            }
            if (rc != CUDA_SUCCESS) {
                free(buf);
                return rc;
            }
            memset(buf, 0, 4);
            buf[4] = (uint8_t)n, buf[5] = (uint8_t)(n >> 8), buf[6] = (uint8_t)(n >> 16), buf[7] = (uint8_t)(n >> 24);
            s->pend[s->npend++] = (pending_t){ev, buf, n, 1, s->cur_seq};
            s->pend_bytes += n;
            s->answered = 1;
            return CUDA_SUCCESS;
        }
        rg_put_u32(out, (uint32_t)n);
        size_t at = out->len;
        if (out->err)
            return CUDA_ERROR_OUT_OF_MEMORY;
        if (out->cap < at + n + 1) { /* grow the buffer, then copy straight into it */
            uint8_t *tmp = realloc(out->p, at + n + 1);
            if (!tmp)
                return CUDA_ERROR_OUT_OF_MEMORY;
            out->p = tmp;
            out->cap = at + n + 1;
        }
        if (!n)
            return CUDA_SUCCESS;
        CUresult rc = async ? d_cuMemcpyDtoHAsync(out->p + at, a->q[2], n, st) : d_cuMemcpyDtoH(out->p + at, a->q[2], n);
        if (rc == CUDA_SUCCESS && async)
            rc = d_cuStreamSynchronize(st);
        if (rc == CUDA_SUCCESS)
            out->len = at + n;
        return rc;
    }
    case RG_OP_DTOD: {
        uint64_t n = a->q[4];
        if (!n)
            return CUDA_SUCCESS;
        if (!gs_range_ok(s, a->q[2], n) || !gs_range_ok(s, a->q[3], n))
            return CUDA_ERROR_INVALID_VALUE;
        return async ? d_cuMemcpyDtoDAsync(a->q[2], a->q[3], n, st) : d_cuMemcpyDtoD(a->q[2], a->q[3], n);
    }
    default: { /* memset */
        uint64_t n = a->q[4];
        if (!n)
            return CUDA_SUCCESS;
        if (!gs_range_ok(s, a->q[2], n))
            return CUDA_ERROR_INVALID_VALUE;
        return async ? d_cuMemsetD8Async(a->q[2], (unsigned char)a->q[3], n, st)
                     : d_cuMemsetD8(a->q[2], (unsigned char)a->q[3], n);
    }
    }
}

static CUresult h_stream_event(sess_t *s, unsigned op, const rg_args_t *a, rg_buf_t *out)
{
    int ctx;
    slot_t *sl;
    switch (op) {
    case RG_OP_STREAM_CREATE:
    case RG_OP_EVENT_CREATE: {
        CK(gs_use_ctx(s, a->q[0], &ctx));
        void *h;
        if (op == RG_OP_STREAM_CREATE)
            CK(d_cuStreamCreate((CUstream *)&h, (unsigned)a->q[1]));
        else
            CK(d_cuEventCreate((CUevent *)&h, (unsigned)a->q[1]));
        int i = slot_new(s, op == RG_OP_STREAM_CREATE ? T_STREAM : T_EVENT, h, ctx);
        if (i < 0) {
            if (op == RG_OP_STREAM_CREATE)
                d_cuStreamDestroy(h);
            else
                d_cuEventDestroy(h);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        rg_put_u64(out, (uint64_t)i + 1);
        return CUDA_SUCCESS;
    }
    case RG_OP_STREAM_DESTROY:
    case RG_OP_STREAM_SYNC:
    case RG_OP_STREAM_QUERY:
        /* stream handle 0 needs a context: q[0] is then ignored and the
         * client sends the stream of a context as (ctx << 32 | stream) */
        {
            uint64_t ch = a->q[0] >> 32, sh = a->q[0] & 0xffffffffu;
            CK(gs_use_ctx(s, ch, &ctx));
            CUstream st;
            CK(gs_get_stream(s, sh, ctx, &st));
            if (op == RG_OP_STREAM_SYNC)
                return d_cuStreamSynchronize(st);
            if (op == RG_OP_STREAM_QUERY)
                return d_cuStreamQuery(st);
            if (!sh)
                return CUDA_ERROR_INVALID_HANDLE;
            pend_reap(s, 1);
            CUresult rc = d_cuStreamDestroy(st);
            s->tab[T_STREAM][sh - 1].h = NULL;
            return rc;
        }
    case RG_OP_STREAM_WAIT:
    case RG_OP_EVENT_RECORD: {
        /* q[0]: (ctx << 32 | stream), q[1]: event */
        uint64_t ch = a->q[0] >> 32, sh = a->q[0] & 0xffffffffu;
        CK(gs_use_ctx(s, ch, &ctx));
        CUstream st;
        CK(gs_get_stream(s, sh, ctx, &st));
        sl = slot_get(s, T_EVENT, a->q[1]);
        if (!sl)
            return CUDA_ERROR_INVALID_HANDLE;
        return op == RG_OP_EVENT_RECORD ? d_cuEventRecord(sl->h, st) : d_cuStreamWaitEvent(st, sl->h, 0);
    }
    case RG_OP_EVENT_ELAPSED: {
        slot_t *e2 = slot_get(s, T_EVENT, a->q[1]);
        sl = slot_get(s, T_EVENT, a->q[0]);
        if (!sl || !e2)
            return CUDA_ERROR_INVALID_HANDLE;
        float ms = 0;
        CK(gs_set_ctx(s, sl->ctx));
        CK(d_cuEventElapsedTime(&ms, sl->h, e2->h));
        uint32_t bits;
        memcpy(&bits, &ms, 4);
        rg_put_u32(out, bits);
        return CUDA_SUCCESS;
    }
    default: /* EVENT_DESTROY, EVENT_QUERY, EVENT_SYNC */
        sl = slot_get(s, T_EVENT, a->q[0]);
        if (!sl)
            return CUDA_ERROR_INVALID_HANDLE;
        CK(gs_set_ctx(s, sl->ctx));
        if (op == RG_OP_EVENT_QUERY)
            return d_cuEventQuery(sl->h);
        if (op == RG_OP_EVENT_SYNC)
            return d_cuEventSynchronize(sl->h);
        {
            CUresult rc = d_cuEventDestroy(sl->h);
            sl->h = NULL;
            return rc;
        }
    }
}

static CUresult h_module(sess_t *s, unsigned op, const rg_args_t *a, rg_buf_t *out)
{
    int ctx;
    if (op == RG_OP_MOD_LOAD) {
        CK(gs_use_ctx(s, a->q[0], &ctx));
        if (a->blen[0] < 64)
            return CUDA_ERROR_INVALID_IMAGE;
        CUmodule m;
        void *img = malloc(a->blen[0] + 1); /* aligned, and NUL-terminated for PTX text */
        if (!img)
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(img, a->b[0], a->blen[0]);
        ((char *)img)[a->blen[0]] = 0;
        CUresult lrc = d_cuModuleLoadData(&m, img);
        free(img);
        if (lrc != CUDA_SUCCESS)
            return lrc;
        int i = slot_new(s, T_MOD, m, ctx);
        if (i < 0) {
            d_cuModuleUnload(m);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        rg_put_u64(out, (uint64_t)i + 1);
        return CUDA_SUCCESS;
    }
    slot_t *m = slot_get(s, T_MOD, a->q[0]);
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    CK(gs_set_ctx(s, m->ctx));
    int mi = (int)(m - s->tab[T_MOD]);
    if (op == RG_OP_MOD_UNLOAD) {
        for (int i = 0; i < s->cfg->max_handles; i++)
            if (s->tab[T_FUNC][i].h && s->tab[T_FUNC][i].primary == mi)
                s->tab[T_FUNC][i].h = NULL;
        CUresult rc = d_cuModuleUnload(m->h);
        m->h = NULL;
        return rc;
    }
    CUfunction f;
    CK(d_cuModuleGetFunction(&f, m->h, a->name));
    int i = slot_new(s, T_FUNC, f, m->ctx);
    if (i < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->tab[T_FUNC][i].primary = mi; /* (T_FUNC: its module) */
    rg_put_u64(out, (uint64_t)i + 1);
    /* parameter layout, for the client to pack kernelParams */
    uint64_t np = 0;
    size_t offs[64], sizes[64];
    while (np < 64 && d_cuFuncGetParamInfo(f, np, &offs[np], &sizes[np]) == CUDA_SUCCESS)
        np++;
    rg_put_u64(out, np);
    for (uint64_t k = 0; k < np; k++) {
        rg_put_u64(out, offs[k]);
        rg_put_u64(out, sizes[k]);
    }
    return CUDA_SUCCESS;
}

static CUresult h_launch(sess_t *s, const rg_args_t *a)
{
    slot_t *f = slot_get(s, T_FUNC, a->q[0]);
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    CK(gs_set_ctx(s, f->ctx));
    CUstream st;
    CK(gs_get_stream(s, a->q[8], f->ctx, &st));
    for (int i = 1; i < 8; i++)
        if (a->q[i] > 0xffffffffu)
            return CUDA_ERROR_INVALID_VALUE;
    size_t n = a->blen[0];
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, (void *)a->b[0], CU_LAUNCH_PARAM_BUFFER_SIZE, &n,
                     CU_LAUNCH_PARAM_END};
    return d_cuLaunchKernel(f->h, (unsigned)a->q[1], (unsigned)a->q[2], (unsigned)a->q[3], (unsigned)a->q[4],
                            (unsigned)a->q[5], (unsigned)a->q[6], (unsigned)a->q[7], st, NULL, extra);
}

static CUresult dispatch(sess_t *s, unsigned op, int async, const rg_args_t *a, rg_buf_t *in, rg_buf_t *out)
{
    switch (op) {
    case RG_OP_HELLO: return h_hello(s, out);
    case RG_OP_PING: return CUDA_SUCCESS;
    case RG_OP_PRIMARY_RETAIN: return h_ctx_new(s, a, 1, out);
    case RG_OP_CTX_CREATE: return h_ctx_new(s, a, 0, out);
    case RG_OP_PRIMARY_RELEASE: return h_ctx_del(s, a, 1);
    case RG_OP_CTX_DESTROY: return h_ctx_del(s, a, 0);
    case RG_OP_CTX_SYNC: {
        int ctx;
        CK(gs_use_ctx(s, a->q[0], &ctx));
        return d_cuCtxSynchronize();
    }
    case RG_OP_MEM_ALLOC:
    case RG_OP_MEM_FREE:
    case RG_OP_MEM_INFO: return h_mem(s, op, a, out);
    case RG_OP_HTOD:
    case RG_OP_DTOH:
    case RG_OP_DTOD:
    case RG_OP_MEMSET: return h_copy(s, op, async, a, in, out);
    case RG_OP_MOD_LOAD:
    case RG_OP_MOD_UNLOAD:
    case RG_OP_MOD_FUNC: return h_module(s, op, a, out);
    case RG_OP_LAUNCH: return h_launch(s, a);
    case RG_OP_PEER_RECV: return h_peer_recv(s, a);
    case RG_OP_PEER_SEND: return h_peer_send(s, a);
    case RG_OP_FABRIC: return h_fabric(s, a, out);
    case RG_OP_STREAM_GATE: return h_stream_gate(s, a);
    case RG_OP_EVENT_SIGNAL: return h_event_signal(s, a);
    default: return h_stream_event(s, op, a, out);
    }
}

/* One request: decoded, held back behind a closed gate (gpud_gate.c) or
 * served, and answered unless RG_F_NOREPLY.  replay: a held one whose gates
 * opened.  -1 when the answer cannot be sent (the client is gone). */
static int serve(sess_t *s, rg_hdr_t *h, rg_buf_t *in, rg_buf_t *out, int replay)
{
    rg_args_t a;
    out->len = 0;
    rg_put_u32(out, 0);
    CUresult r;
    if (rg_decode(h->op, in->p, in->len, &a)) {
        GPUD_LOG(s->cfg, "session %d: malformed %s message (%u bytes)\n", s->id, rg_op_name(h->op), h->len);
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        uint64_t mask = replay ? 0 : gs_req_mask(s, h->op, &a);
        if (mask && (h->op == RG_OP_STREAM_QUERY || h->op == RG_OP_EVENT_QUERY)) {
            r = CUDA_ERROR_NOT_READY; /* waits for a gate */
        } else if (mask) {
            if (!gs_hold(s, h, in, &a, mask))
                return 0;
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            s->cur_seq = h->seq;
            s->cur_flags = h->flags;
            s->answered = 0;
            r = dispatch(s, h->op, (h->flags & RG_F_ASYNC) != 0, &a, in, out);
            if (s->answered)
                return 0;
        }
    }
    if (h->flags & RG_F_NOREPLY) {
        if (r != CUDA_SUCCESS && s->deferred == CUDA_SUCCESS)
            s->deferred = r;
        return 0;
    }
    if (r == CUDA_SUCCESS && s->deferred != CUDA_SUCCESS &&
        (h->op == RG_OP_CTX_SYNC || h->op == RG_OP_STREAM_SYNC || h->op == RG_OP_EVENT_SYNC)) {
        r = s->deferred;
        s->deferred = CUDA_SUCCESS;
    }
    if (out->err) {
        r = CUDA_ERROR_OUT_OF_MEMORY;
        out->err = 0;
        out->len = 4;
    }
    if (r != CUDA_SUCCESS)
        out->len = 4; /* no partial results */
    if (s->npend)
        pend_reap(s, 0); /* device-to-host data done by now goes before this answer */
    out->p[0] = (uint8_t)r, out->p[1] = (uint8_t)(r >> 8), out->p[2] = (uint8_t)(r >> 16), out->p[3] = (uint8_t)(r >> 24);
    return rg_send_msg(s->conn, h->op, 0, h->seq, out->p, out->len, NULL, 0) ? -1 : 0;
}

int gpud_session(int fd, const gpud_cfg_t *cfg, int id)
{
    char err[256];
    rg_conn_t *conn = rg_conn_sock(fd);
    if (!conn || rg_auth_server(conn, cfg->key, cfg->keylen, cfg->timeout_ms)) {
        GPUD_LOG(cfg, "session %d: authentication failed, closing\n", id);
        rg_conn_close(conn);
        return 2;
    }
    if (rg_drv_load(err, sizeof err)) {
        fprintf(stderr, "wharf-gpud: %s\n", err);
        return 1;
    }
    static sess_t S;
    sess_t *s = &S;
    s->cfg = cfg;
    s->conn = conn;
    s->id = id;
    for (int t = 0; t < T_NTAB; t++)
        s->tab[t] = calloc((size_t)cfg->max_handles, sizeof(slot_t));
    s->allocs = calloc((size_t)cfg->max_handles, sizeof(alloc_t));
    if (d_cuInit(0) != CUDA_SUCCESS || d_cuDeviceGetCount(&s->ndev) != CUDA_SUCCESS)
        s->ndev = 0;
    /* the peer-copy listener, on the address the client reached us at */
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
        getnameinfo((struct sockaddr *)&ss, sl, s->addr, sizeof s->addr, NULL, 0, NI_NUMERICHOST);
    s->peer_lfd = rg_listen(s->addr, 0, &s->peer_port);
    rg_random(s->token, sizeof s->token);
    GPUD_LOG(cfg, "session %d: authenticated, %d GPUs, peer port %d\n", id, s->ndev, s->peer_port);

    rg_buf_t in = {0}, out = {0}, held = {0};
    rg_hdr_t h;
    long nmsg = 0;
    for (;;) {
        if (s->replay) { /* gates opened: the held requests whose gates are all open, in order */
            s->replay = 0;
            while (gs_take_ready(s, &h, &held)) {
                int r = serve(s, &h, &held, &out, 1);
                rg_buf_free(&held);
                if (r)
                    goto gone;
            }
        }
        /* idle clients may wait forever; a message begun must complete in time */
        int pr = gs_poll(s, 1, s->npend ? 1 : -1);
        if (pr < 0)
            break;
        if (s->npend)
            pend_reap(s, 0);
        if (pr == 0)
            continue;
        if (rg_recv_msg(s->conn, &h, &in, cfg->timeout_ms))
            break;
        nmsg++;
        if (serve(s, &h, &in, &out, 0))
            break;
        if (s->upgrade)
            gs_upgrade(s);
    }
gone:
    gs_gates_end(s);
    /* the client is gone: free what it left */
    int nleft = s->nalloc;
    size_t bytes = s->mem_used;
    free_ctx_objects(s, -1);
    for (int i = 0; i < cfg->max_handles; i++) {
        slot_t *c = &s->tab[T_CTX][i];
        if (!c->h)
            continue;
        if (c->primary) {
            CUdevice dev;
            d_cuDeviceGet(&dev, c->ctx);
            d_cuDevicePrimaryCtxRelease(dev);
        } else {
            d_cuCtxDestroy(c->h);
        }
        c->h = NULL;
    }
    GPUD_LOG(cfg, "session %d: client gone after %ld messages, freed %d allocations (%zu bytes)\n", id, nmsg, nleft,
             bytes);
    rg_buf_free(&in);
    rg_buf_free(&out);
    rg_conn_close(s->conn);
    return 0;
}
