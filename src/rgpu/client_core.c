/* rgpu client driver: connections to the servers, devices, contexts, memory
 * and pointer attributes.  The servers come from WHARF_RGPU_SERVERS
 * ("host:port,host:port") or the file WHARF_RGPU_CONFIG (one host:port a
 * line); each server's GPUs appear as local devices, in server order. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rgpu/client.h"
#include "rgpu/rg_plan.h"
#include "util/tunables.h"

rgc_dev_t rgc_devs[RGC_MAX_DEV];
int rgc_ndev, rgc_inited;
static rgc_server_t servers[RGC_MAX_SERVERS];
static int nservers;
static CUresult init_rc = CUDA_ERROR_NOT_INITIALIZED;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int timeout_ms = 60000;
static int force_remap; /* WHARF_RGPU_REMAP=1: never the server's addresses (tests the translation) */
static pthread_rwlock_t alloc_lock = PTHREAD_RWLOCK_INITIALIZER;
static rgc_alloc_t *allocs;
static uint64_t next_id = 1;
static pthread_mutex_t prim_lock = PTHREAD_MUTEX_INITIALIZER;
/* WHARF_RGPU_STATS=1: at exit, how many requests were sent and how many the
 * caller waited for (round trips) */
static _Atomic long n_sent, n_waited;

/* WHARF_RGPU_TRANSPORT, WHARF_RGPU_PROVIDER (the tunables table) */
static const char *transport = "fabric", *provider = "tcp";

static void print_stats(void)
{
    fprintf(stderr, "rgpu: %ld requests, %ld waited for\n", atomic_load(&n_sent), atomic_load(&n_waited));
    for (int i = 0; i < nservers; i++) {
        const rgc_server_t *sv = &servers[i];
        const char *pv = sv->conn ? rg_conn_provider(sv->conn) : "";
        fprintf(stderr, "rgpu: server %s:%d transport %s%s%s%s, FI_HMEM %s\n", sv->host, sv->port,
                sv->dead ? "(lost)" : *pv ? "fabric" : "socket", *pv ? " (provider " : "", pv, *pv ? ")" : "",
                !*pv ? "n/a: peer copies staged through pinned host buffers"
                : sv->hmem ? "offered but not used: peer copies staged through pinned host buffers"
                           : "not offered by the provider: peer copies staged through pinned host buffers");
    }
}

/* ---- messages ---- */
static CUresult lost(rgc_server_t *sv)
{
    if (!sv->dead) {
        fprintf(stderr, "rgpu: lost the connection to GPU server %s:%d\n", sv->host, sv->port);
        sv->dead = 1;
        rg_conn_close(sv->conn);
        sv->conn = NULL;
    }
    return CUDA_ERROR_DEVICE_UNAVAILABLE;
}

static int flush(rgc_server_t *sv)
{
    if (!sv->batch.len)
        return 0;
    int rc = rg_send_all(sv->conn, sv->batch.p, sv->batch.len);
    sv->batch.len = 0;
    return rc;
}

CUresult rgc_send(rgc_server_t *sv, unsigned op, uint32_t flags, const rg_buf_t *args, const void *data, size_t dn,
                  uint64_t *pseq)
{
    if (sv->dead)
        return CUDA_ERROR_DEVICE_UNAVAILABLE;
    size_t an = args ? args->len : 0;
    if ((args && args->err) || an + dn > RG_MAX_PAYLOAD)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint64_t seq = ++sv->seq;
    if (pseq)
        *pseq = seq;
    atomic_fetch_add(&n_sent, 1);
    if ((flags & RG_F_NOREPLY) && an + dn + RG_HDR_SIZE + sv->batch.len <= RGC_BATCH) {
        uint8_t h[RG_HDR_SIZE];
        rg_hdr_t hd = {RG_MAGIC, RG_VERSION, (uint16_t)op, flags, (uint32_t)(an + dn), seq};
        rg_hdr_encode(h, &hd);
        rg_put_raw(&sv->batch, h, sizeof h);
        if (an)
            rg_put_raw(&sv->batch, args->p, an);
        if (dn)
            rg_put_raw(&sv->batch, data, dn);
        if (sv->batch.err) {
            sv->batch = (rg_buf_t){0};
            return lost(sv);
        }
        return CUDA_SUCCESS;
    }
    if (flush(sv) || rg_send_msg(sv->conn, op, flags, seq, args ? args->p : NULL, an, data, dn))
        return lost(sv);
    return CUDA_SUCCESS;
}

static _Atomic int deferred;

CUresult rgc_flush(rgc_server_t *sv)
{
    if (sv->dead)
        return CUDA_ERROR_DEVICE_UNAVAILABLE;
    return flush(sv) ? lost(sv) : CUDA_SUCCESS;
}


CUresult rgc_take_deferred(void)
{
    return (CUresult)atomic_exchange(&deferred, 0);
}

static void defer(CUresult rc)
{
    int zero = 0;
    if (rc != CUDA_SUCCESS)
        atomic_compare_exchange_strong(&deferred, &zero, (int)rc);
}

/* an answer for one of sv's later requests: take it (1), or 0 if h is none of them */
static int take_later(rgc_server_t *sv, const rg_hdr_t *h)
{
    for (int i = 0; i < sv->nlater; i++) {
        rgc_later_t *l = &sv->later[i];
        if (l->seq != h->seq || l->op != h->op)
            continue;
        rg_rd_t r = {sv->in.p, sv->in.len, 0, 0};
        CUresult rc = (CUresult)rg_get_u32(&r);
        if (rc == CUDA_SUCCESS && l->dst) {
            uint32_t got;
            const uint8_t *p = rg_get_bytes(&r, &got, RG_CHUNK);
            if (p && got == l->n)
                memcpy(l->dst, p, l->n);
            else
                rc = CUDA_ERROR_UNKNOWN;
        }
        defer(rc);
        *l = sv->later[--sv->nlater];
        return 1;
    }
    return 0;
}

/* sv's receives of peer copies whose source server died before sending
 * them: stand in for the source (its hello: sv's token, the copy, then
 * the end of the connection), so that sv fails each at once, as when a
 * source dies during a copy, instead of waiting for it as long as its
 * timeout before it answers anything else.  The oldest first, a few at a
 * time: sv keeps only RG_PEER_MAXIN early hellos, and runs its requests in
 * order.  Caller holds sv->mu. */
#define RGC_STANDIN_MAX 4
static void abort_orphans(rgc_server_t *sv)
{
    int inflight = 0;
    for (int i = 0; i < sv->nlater; i++)
        inflight += sv->later[i].op == RG_OP_PEER_RECV && sv->later[i].aborted;
    while (inflight < RGC_STANDIN_MAX) {
        rgc_later_t *l = NULL;
        for (int i = 0; i < sv->nlater; i++) {
            rgc_later_t *c = &sv->later[i];
            if (c->op == RG_OP_PEER_RECV && c->peer_src >= 0 && !c->aborted && servers[c->peer_src].dead &&
                (!l || c->seq < l->seq))
                l = c;
        }
        if (!l)
            return;
        l->aborted = 1;
        inflight++;
        size_t chunk;
        int nbuf;
        rg_peer_plan(l->peer_n, &chunk, &nbuf);
        int fd = rg_connect(sv->host, sv->peer_port, timeout_ms);
        rg_conn_t *c = fd >= 0 ? rg_conn_sock(fd) : NULL;
        if (!c)
            continue; /* (then sv waits out its timeout) */
        rg_buf_t b = {0};
        rg_put_raw(&b, sv->token, RG_TOKEN_LEN);
        rg_put_u64(&b, l->peer_id);
        rg_put_u64(&b, l->peer_n);
        rg_put_u64(&b, chunk);
        if (!b.err)
            rg_send_all(c, b.p, b.len);
        rg_buf_free(&b);
        rg_conn_close(c);
    }
}

static CUresult recv_msg(rgc_server_t *sv, unsigned op, uint64_t seq, int *mine);

/* Has sv a receive whose source is alive as far as we know? */
static int orphan_candidates(const rgc_server_t *sv)
{
    for (int i = 0; i < sv->nlater; i++)
        if (sv->later[i].op == RG_OP_PEER_RECV && sv->later[i].peer_src >= 0 && !sv->later[i].aborted)
            return 1;
    return 0;
}

/* Is the source of sv's pending receives still there?  Sends its batch and
 * takes the answers it sent (an EOF or a failed send marks it dead).  Only
 * when nobody else holds it (then nobody waits for its answers either). */
static void probe_sources(rgc_server_t *sv)
{
    for (int i = 0; i < sv->nlater; i++) {
        rgc_later_t *l = &sv->later[i];
        if (l->op != RG_OP_PEER_RECV || l->peer_src < 0 || l->aborted)
            continue;
        rgc_server_t *src = &servers[l->peer_src];
        if (src == sv || src->dead || pthread_mutex_trylock(&src->mu) != 0)
            continue;
        if (!src->dead && flush(src))
            lost(src);
        while (!src->dead && rg_wait_any(&src->conn, 1, NULL, 0, 0) == 0) {
            int mine = 0;
            recv_msg(src, 0, 0, &mine); /* an answer for later, or the EOF of a dead server */
        }
        pthread_mutex_unlock(&src->mu);
    }
}

/* receive one answer; later ones are taken on the way.  1: it is (op, seq) */
static CUresult recv_one(rgc_server_t *sv, unsigned op, uint64_t seq, int *mine)
{
    /* while sv may wait for the source of a peer copy, wait in slices and
     * check that source: a dead one is stood in for (abort_orphans) */
    for (int waited = 0; waited < timeout_ms && orphan_candidates(sv); waited += 100) {
        abort_orphans(sv);
        int w = sv->conn ? rg_wait_any(&sv->conn, 1, NULL, 0, 100) : -1;
        if (w == 0)
            break;
        if (w == -1)
            return lost(sv);
        probe_sources(sv);
    }
    abort_orphans(sv);
    return recv_msg(sv, op, seq, mine);
}

static CUresult recv_msg(rgc_server_t *sv, unsigned op, uint64_t seq, int *mine)
{
    rg_hdr_t h;
    int r = rg_recv_msg(sv->conn, &h, &sv->in, timeout_ms);
    if (r || h.len < 4) {
        if (r == -2)
            fprintf(stderr, "rgpu: GPU server %s:%d did not answer %s within %d s\n", sv->host, sv->port,
                    rg_op_name(op), timeout_ms / 1000);
        return lost(sv);
    }
    *mine = h.op == op && h.seq == seq;
    if (!*mine && !take_later(sv, &h))
        return lost(sv); /* an answer nobody asked for */
    return CUDA_SUCCESS;
}

CUresult rgc_later(rgc_server_t *sv, unsigned op, uint64_t seq, void *dst, size_t n)
{
    while (sv->nlater == RGC_MAX_LATER) { /* full: take the answers that came */
        int mine = 0;
        if (flush(sv))
            return lost(sv);
        CUresult rc = recv_one(sv, 0, 0, &mine);
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    sv->later[sv->nlater++] = (rgc_later_t){seq, op, dst, n, 0, 0, -1, 0};
    return CUDA_SUCCESS;
}

CUresult rgc_later_recv(rgc_server_t *sv, uint64_t seq, uint64_t id, uint64_t n, int src)
{
    CUresult rc = rgc_later(sv, RG_OP_PEER_RECV, seq, NULL, 0);
    if (rc == CUDA_SUCCESS) {
        rgc_later_t *l = &sv->later[sv->nlater - 1];
        l->peer_id = id, l->peer_n = n, l->peer_src = src;
    }
    return rc;
}

CUresult rgc_wait(rgc_server_t *sv, unsigned op, uint64_t seq, rgc_reply_t *rep)
{
    if (sv->dead)
        return CUDA_ERROR_DEVICE_UNAVAILABLE;
    if (flush(sv))
        return lost(sv);
    atomic_fetch_add(&n_waited, 1);
    for (int i = 0; i <= RGC_MAX_LATER; i++) { /* each round takes one later answer */
        int mine = 0;
        CUresult rc = recv_one(sv, op, seq, &mine);
        if (rc != CUDA_SUCCESS)
            return rc;
        if (mine) {
            rep->r = (rg_rd_t){sv->in.p, sv->in.len, 0, 0};
            rep->rc = (CUresult)rg_get_u32(&rep->r);
            return rep->rc;
        }
    }
    return lost(sv);
}

CUresult rgc_call(rgc_server_t *sv, unsigned op, uint32_t flags, const rg_buf_t *args, const void *data, size_t dn,
                  rgc_reply_t *rep)
{
    uint64_t seq;
    CUresult rc = rgc_send(sv, op, flags, args, data, dn, &seq);
    if (rc != CUDA_SUCCESS || (flags & RG_F_NOREPLY))
        return rc;
    return rgc_wait(sv, op, seq, rep);
}

CUresult rgc_callq(rgc_server_t *sv, unsigned op, uint32_t flags, const uint64_t *q, int nq, const void *data,
                   size_t dn, int with_data, rgc_reply_t *rep)
{
    rg_buf_t a = {0};
    for (int i = 0; i < nq; i++)
        rg_put_u64(&a, q[i]);
    if (with_data)
        rg_put_u32(&a, (uint32_t)dn);
    rgc_reply_t r;
    CUresult rc = rgc_call(sv, op, flags, &a, data, dn, rep ? rep : &r);
    rg_buf_free(&a);
    return rc;
}

CUresult rgc_req(rgc_server_t *sv, unsigned op, uint32_t flags, const uint64_t *q, int nq, uint64_t *out, int nout)
{
    rgc_reply_t rep;
    pthread_mutex_lock(&sv->mu);
    CUresult rc = rgc_callq(sv, op, flags, q, nq, NULL, 0, 0, &rep);
    for (int i = 0; rc == CUDA_SUCCESS && !(flags & RG_F_NOREPLY) && i < nout; i++)
        out[i] = rg_get_u64(&rep.r);
    pthread_mutex_unlock(&sv->mu);
    return rc;
}

/* ---- initialization ---- */
static int hello(rgc_server_t *sv)
{
    rgc_reply_t rep;
    if (rgc_call(sv, RG_OP_HELLO, 0, NULL, NULL, 0, &rep) != CUDA_SUCCESS)
        return -1;
    rg_rd_t *r = &rep.r;
    uint64_t nd = rg_get_u64(r);
    sv->peer_port = (int)rg_get_u64(r);
    uint32_t tl;
    const uint8_t *tok = rg_get_bytes(r, &tl, RG_TOKEN_LEN);
    if (r->err || tl != RG_TOKEN_LEN || nd > 64)
        return -1;
    memcpy(sv->token, tok, RG_TOKEN_LEN);
    sv->dev0 = rgc_ndev;
    for (uint64_t d = 0; d < nd && rgc_ndev < RGC_MAX_DEV; d++) {
        rgc_dev_t *g = &rgc_devs[rgc_ndev];
        uint32_t n;
        const uint8_t *p = rg_get_bytes(r, &n, 255);
        if (p)
            memcpy(g->name, p, n);
        p = rg_get_bytes(r, &n, 16);
        if (p && n == 16)
            memcpy(g->uuid, p, 16);
        p = rg_get_bytes(r, &n, 31);
        if (p)
            memcpy(g->pci, p, n);
        g->total = rg_get_u64(r);
        g->peers = rg_get_u64(r);
        uint32_t na = rg_get_u32(r);
        for (uint32_t a = 0; a < na && !r->err; a++) {
            uint32_t v = rg_get_u32(r);
            if (a < CU_DEVICE_ATTRIBUTE_MAX)
                g->attr[a] = (int32_t)v;
        }
        if (r->err)
            return -1;
        g->sv = sv;
        g->rdev = (int)d;
        rgc_ndev++;
        sv->ndev++;
    }
    return 0;
}

static void add_server(const char *spec, const uint8_t *key, size_t keylen)
{
    if (nservers == RGC_MAX_SERVERS)
        return;
    rgc_server_t *sv = &servers[nservers];
    if (rg_split_hostport(spec, sv->host, sizeof sv->host, &sv->port)) {
        fprintf(stderr, "rgpu: bad server address '%s' (host:port)\n", spec);
        return;
    }
    pthread_mutex_init(&sv->mu, NULL);
    sv->idx = nservers;
    char why[512];
    sv->conn = rg_client_open(sv->host, sv->port, key, keylen, transport, provider, timeout_ms, &sv->fab_port,
                              &sv->hmem, why, sizeof why);
    if (!sv->conn) {
        fprintf(stderr, "rgpu: GPU server %s: %s\n", spec, why);
        return;
    }
    if (*why)
        fprintf(stderr, "rgpu: GPU server %s: %s\n", spec, why);
    nservers++;
    if (hello(sv)) {
        lost(sv);
        fprintf(stderr, "rgpu: GPU server %s: bad hello\n", spec);
    }
}

static void do_init(void)
{
    char err[256];
    if (wh_tunables_load(err, sizeof err))
        fprintf(stderr, "rgpu: %s\n", err);
    if (wh_tun.rgpu_stats)
        atexit(print_stats);
    force_remap = wh_tun.rgpu_remap;
    if (wh_tun.rgpu_timeout > 0)
        timeout_ms = wh_tun.rgpu_timeout * 1000;
    transport = wh_tun.rgpu_transport;
    provider = wh_tun.rgpu_provider;
    uint8_t key[RG_KEY_MAX];
    size_t keylen;
    if (rg_secret_load(NULL, key, &keylen, err, sizeof err)) {
        fprintf(stderr, "rgpu: %s\n", err);
        init_rc = CUDA_ERROR_NO_DEVICE;
        return;
    }
    char list[4096] = "";
    const char *env = wh_tun.rgpu_servers, *cfg = wh_tun.rgpu_config;
    if (*env)
        snprintf(list, sizeof list, "%s", env);
    else if (*cfg) {
        FILE *f = fopen(cfg, "r");
        char line[256];
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "# \t\r\n")] = 0;
            if (*line && strlen(list) + strlen(line) + 2 < sizeof list) {
                strcat(list, ",");
                strcat(list, line);
            }
        }
        if (f)
            fclose(f);
    }
    char *save = NULL;
    for (char *s = strtok_r(list, ", ", &save); s; s = strtok_r(NULL, ", ", &save))
        add_server(s, key, keylen);
    memset(key, 0, sizeof key);
    init_rc = rgc_ndev ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
    rgc_inited = rgc_ndev > 0;
}

RGC_API CUresult CUDAAPI cuInit(unsigned int Flags)
{
    if (Flags)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_once(&init_once, do_init);
    return init_rc;
}

CUresult rgc_need_init(void)
{
    return rgc_inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

RGC_API CUresult CUDAAPI cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
}

/* ---- devices (from the snapshot taken at cuInit) ---- */
#define NEED_DEV(d)                                                                                         \
    do {                                                                                                    \
        if (!rgc_inited)                                                                                    \
            return CUDA_ERROR_NOT_INITIALIZED;                                                              \
        if ((d) < 0 || (d) >= rgc_ndev)                                                                     \
            return CUDA_ERROR_INVALID_DEVICE;                                                               \
    } while (0)

RGC_API CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    if (!rgc_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    *count = rgc_ndev;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    NEED_DEV(ordinal);
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    NEED_DEV(dev);
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(name, (size_t)len, "%s", rgc_devs[dev].name);
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    NEED_DEV(dev);
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(uuid->bytes, rgc_devs[dev].uuid, 16);
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    return cuDeviceGetUuid(uuid, dev);
}

RGC_API CUresult CUDAAPI cuDeviceGetPCIBusId(char *pci, int len, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pci || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    snprintf(pci, (size_t)len, "%s", rgc_devs[dev].pci);
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
    NEED_DEV(dev);
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    *bytes = rgc_devs[dev].total;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX || rgc_devs[dev].attr[attrib] == INT32_MIN)
        return CUDA_ERROR_INVALID_VALUE;
    *pi = rgc_devs[dev].attr[attrib];
    return CUDA_SUCCESS;
}

/* peers only within one server (what its driver says); GPUs of different
 * servers are never peers (copies between them work, through the servers) */
RGC_API CUresult CUDAAPI cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    NEED_DEV(dev);
    NEED_DEV(peer);
    if (!can)
        return CUDA_ERROR_INVALID_VALUE;
    const rgc_dev_t *a = &rgc_devs[dev], *b = &rgc_devs[peer];
    *can = dev != peer && a->sv == b->sv && b->rdev < 64 && ((a->peers >> b->rdev) & 1);
    return CUDA_SUCCESS;
}

/* ---- contexts: the current-context stack is the client's ---- */
#define RGC_STACK 16
static __thread struct CUctx_st *cstack[RGC_STACK];
static __thread int cdepth;

struct CUctx_st *rgc_ctx_current(void)
{
    return cdepth ? cstack[cdepth - 1] : NULL;
}

int rgc_valid_ctx(CUcontext c)
{
    return c && c->magic == RGC_CTX_MAGIC;
}

static CUresult ctx_new(int dev, int primary, unsigned flags, CUcontext *out)
{
    rgc_dev_t *g = &rgc_devs[dev];
    uint64_t rh = 0, q[2] = {(uint64_t)g->rdev, flags};
    CUresult rc = rgc_req(g->sv, primary ? RG_OP_PRIMARY_RETAIN : RG_OP_CTX_CREATE, 0, q, primary ? 1 : 2, &rh, 1);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct CUctx_st){RGC_CTX_MAGIC, g->sv, dev, rh, primary};
    *out = c;
    return CUDA_SUCCESS;
}

static CUresult ctx_drop(CUcontext c)
{
    CUresult rc = rgc_req(c->sv, c->primary ? RG_OP_PRIMARY_RELEASE : RG_OP_CTX_DESTROY, 0,
                          RGC_Q(c->primary ? (uint64_t)rgc_devs[c->dev].rdev : c->rh), NULL, 0);
    /* forget the allocations of the context (the server freed them) */
    pthread_rwlock_wrlock(&alloc_lock);
    for (rgc_alloc_t **pp = &allocs; *pp;) {
        rgc_alloc_t *x = *pp;
        if (x->ctx == c && x->kind == RGC_DEVICE) {
            *pp = x->next;
            munmap((void *)(uintptr_t)x->base, x->mapsz);
            free(x);
        } else {
            pp = &x->next;
        }
    }
    pthread_rwlock_unlock(&alloc_lock);
    for (int i = 0; i < cdepth; i++)
        if (cstack[i] == c)
            cstack[i] = NULL;
    c->magic = 0;
    free(c);
    return rc == CUDA_ERROR_DEVICE_UNAVAILABLE ? CUDA_SUCCESS : rc; /* a dead server's contexts are gone anyway */
}

RGC_API CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&prim_lock);
    rgc_dev_t *g = &rgc_devs[dev];
    if (!g->primary)
        rc = ctx_new(dev, 1, 0, &g->primary);
    if (rc == CUDA_SUCCESS) {
        g->prim_refs++;
        *pctx = g->primary;
    }
    pthread_mutex_unlock(&prim_lock);
    return rc;
}

RGC_API CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    NEED_DEV(dev);
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&prim_lock);
    rgc_dev_t *g = &rgc_devs[dev];
    if (!g->prim_refs)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else if (!--g->prim_refs) {
        rc = ctx_drop(g->primary);
        g->primary = NULL;
    }
    pthread_mutex_unlock(&prim_lock);
    return rc;
}

RGC_API CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    NEED_DEV(dev);
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = rgc_devs[dev].prim_flags;
    *active = rgc_devs[dev].prim_refs > 0;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    NEED_DEV(dev);
    rgc_devs[dev].prim_flags = flags; /* scheduling flags mean nothing through the network */
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    NEED_DEV(dev);
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = ctx_new(dev, 0, flags, pctx);
    if (rc == CUDA_SUCCESS) {
        if (cdepth == RGC_STACK)
            cstack[cdepth - 1] = *pctx;
        else
            cstack[cdepth++] = *pctx;
    }
    return rc;
}

RGC_API CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    if (!rgc_valid_ctx(ctx) || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    return ctx_drop(ctx);
}

RGC_API CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!rgc_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    *pctx = rgc_ctx_current();
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    if (!rgc_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ctx && !rgc_valid_ctx(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {
        if (cdepth)
            cdepth--;
        return CUDA_SUCCESS;
    }
    if (cdepth)
        cstack[cdepth - 1] = ctx;
    else
        cstack[cdepth++] = ctx;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
    if (!rgc_valid_ctx(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (cdepth == RGC_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    cstack[cdepth++] = ctx;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
    if (!cdepth)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUctx_st *c = cstack[--cdepth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->dev;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuCtxSynchronize(void)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = rgc_req(c->sv, RG_OP_CTX_SYNC, 0, RGC_Q(c->rh), NULL, 0);
    CUresult d = rgc_take_deferred();
    return rc != CUDA_SUCCESS ? rc : d;
}

/* ---- memory ---- */
rgc_alloc_t *rgc_find(uint64_t p, uint64_t n)
{
    rgc_alloc_t *hit = NULL;
    pthread_rwlock_rdlock(&alloc_lock);
    for (rgc_alloc_t *a = allocs; a; a = a->next)
        if (p >= a->base && p - a->base < (a->size ? a->size : 1)) {
            hit = a;
            break;
        }
    pthread_rwlock_unlock(&alloc_lock);
    if (hit && n > hit->size - (p - hit->base) && hit->size)
        return (rgc_alloc_t *)1; /* overflows the allocation */
    return hit;
}

static void add_alloc(uint64_t base, uint64_t size, uint64_t mapsz, int kind, struct CUctx_st *c)
{
    rgc_alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return;
    *a = (rgc_alloc_t){base, size, mapsz, base, kind, c, 0, NULL};
    pthread_rwlock_wrlock(&alloc_lock);
    a->id = next_id++;
    a->next = allocs;
    allocs = a;
    pthread_rwlock_unlock(&alloc_lock);
}

static rgc_alloc_t *take_alloc(uint64_t base, int kind)
{
    pthread_rwlock_wrlock(&alloc_lock);
    rgc_alloc_t *hit = NULL;
    for (rgc_alloc_t **pp = &allocs; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base && (*pp)->kind == kind) {
            hit = *pp;
            *pp = hit->next;
            break;
        }
    pthread_rwlock_unlock(&alloc_lock);
    return hit;
}

static CUresult remote_free(struct CUctx_st *c, uint64_t p)
{
    return rgc_req(c->sv, RG_OP_MEM_FREE, 0, RGC_Q(p), NULL, 0);
}

/* Device memory lives on the server; its address range is reserved here too
 * (PROT_NONE), so no host allocation of this process can ever alias it and
 * a CPU access to a remote device pointer faults as on a GPU.  The reserved
 * range is at the server's own address when that range is free here (the
 * usual case: pointers inside kernel arguments then need no translation);
 * otherwise anywhere, and the client translates the addresses it sends
 * (copies, memset, and 8-byte kernel parameters that point into an
 * allocation; pointers inside structures passed by value are not). */
RGC_API CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return rgc_inited ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_NOT_INITIALIZED;
    if (!dptr || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    long pg = sysconf(_SC_PAGESIZE);
    uint64_t p = 0;
    CUresult rc = rgc_req(c->sv, RG_OP_MEM_ALLOC, 0, RGC_Q(c->rh, bytesize), &p, 1);
    if (rc != CUDA_SUCCESS)
        return rc;
    uint64_t mapsz = (bytesize + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    int fl = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void *m = p % (uint64_t)pg || force_remap ? MAP_FAILED : mmap((void *)(uintptr_t)p, mapsz, PROT_NONE, fl | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED && (uint64_t)(uintptr_t)m != p) {
        munmap(m, mapsz); /* old kernels ignore MAP_FIXED_NOREPLACE */
        m = MAP_FAILED;
    }
    if (m == MAP_FAILED)
        m = mmap(NULL, mapsz, PROT_NONE, fl, -1, 0);
    if (m == MAP_FAILED) {
        remote_free(c, p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    add_alloc((uintptr_t)m, bytesize, mapsz, RGC_DEVICE, c);
    pthread_rwlock_wrlock(&alloc_lock);
    allocs->rbase = p; /* (the record just added is first) */
    pthread_rwlock_unlock(&alloc_lock);
    *dptr = (uintptr_t)m;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
    if (!dptr)
        return CUDA_SUCCESS;
    rgc_alloc_t *a = take_alloc(dptr, RGC_DEVICE);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = remote_free(a->ctx, a->rbase);
    munmap((void *)(uintptr_t)a->base, a->mapsz);
    free(a);
    return rc;
}

RGC_API CUresult CUDAAPI cuMemGetInfo(size_t *fr, size_t *total)
{
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!fr || !total)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t ft[2] = {0, 0};
    CUresult rc = rgc_req(c->sv, RG_OP_MEM_INFO, 0, RGC_Q(c->rh), ft, 2);
    *fr = ft[0];
    *total = ft[1];
    return rc;
}

/* pinned host memory is the client's own memory (page-aligned, locked when
 * the system allows); the network path stages it like any host buffer */
RGC_API CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    (void)Flags;
    struct CUctx_st *c = rgc_ctx_current();
    if (!c)
        return rgc_inited ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_NOT_INITIALIZED;
    if (!pp || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    long pg = sysconf(_SC_PAGESIZE);
    size_t mapsz = (bytesize + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    void *p = mmap(NULL, mapsz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    mlock(p, mapsz); /* best effort */
    add_alloc((uintptr_t)p, bytesize, mapsz, RGC_HOST, c);
    *pp = p;
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
    return cuMemHostAlloc(pp, bytesize, 0);
}

RGC_API CUresult CUDAAPI cuMemFreeHost(void *p)
{
    rgc_alloc_t *a = take_alloc((uintptr_t)p, RGC_HOST);
    if (!a)
        return CUDA_ERROR_INVALID_VALUE;
    munmap(p, a->mapsz);
    free(a);
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    rgc_alloc_t *a = rgc_find(dptr, 1);
    if (!a || a == (rgc_alloc_t *)1 || a->kind != RGC_DEVICE)
        return CUDA_ERROR_NOT_FOUND;
    if (pbase)
        *pbase = a->base;
    if (psize)
        *psize = a->size;
    return CUDA_SUCCESS;
}

static CUresult ptr_attr(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    rgc_alloc_t *a = rgc_find(p, 1);
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    if (!a || a == (rgc_alloc_t *)1)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = a->kind == RGC_DEVICE;
    switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = a->ctx; break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned *)data = dev ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (dev)
            return CUDA_ERROR_INVALID_VALUE;
        *(void **)data = (void *)(uintptr_t)p;
        break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *)data = a->id; break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->ctx ? a->ctx->dev : 0; break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = a->base; break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = a->size; break;
    case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = 1; break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(int *)data = 0; break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE: *(int *)data = 0; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

RGC_API CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (!rgc_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    return ptr_attr(data, attribute, ptr);
}

RGC_API CUresult CUDAAPI cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                                CUdeviceptr ptr)
{
    if (!rgc_inited)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++)
        if (ptr_attr(data[i], attrs[i], ptr) != CUDA_SUCCESS && data[i])
            memset(data[i], 0, attrs[i] == CU_POINTER_ATTRIBUTE_CONTEXT || attrs[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER ||
                                       attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_POINTER
                                   ? 8
                                   : 4);
    return CUDA_SUCCESS;
}

CUresult rgc_stream_ctx(CUstream s, struct CUctx_st **ctx, uint64_t *rh)
{
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
        *ctx = rgc_ctx_current();
        *rh = 0;
        return *ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    }
    if (s->magic != RGC_STREAM_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    *ctx = s->ctx;
    *rh = s->rh;
    return CUDA_SUCCESS;
}
