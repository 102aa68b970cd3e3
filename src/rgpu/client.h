/* rgpu client driver internals: a libcuda.so.1 that forwards the CUDA
 * driver API to wharf-gpud servers (docs/RGPU.md). */
#ifndef WH_RGPU_CLIENT_H
#define WH_RGPU_CLIENT_H
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>

#include "rgpu/rg_wire.h"

#define RGC_API __attribute__((visibility("default")))
#define RGC_MAX_SERVERS 16
#define RGC_MAX_DEV 64
#define RGC_BATCH (16u << 10) /* asynchronous calls are sent in batches up to this size */

/* a request whose answer comes later (asynchronous device-to-host copies and
 * peer copies): where its data goes */
typedef struct {
    uint64_t seq;
    unsigned op;
    void *dst;
    size_t n;
    /* a peer copy's receive (op RG_OP_PEER_RECV): the copy, and its source
     * server (-1: none); aborted: its source died and the client stood in */
    uint64_t peer_id, peer_n;
    int peer_src, aborted;
} rgc_later_t;
#define RGC_MAX_LATER 256

typedef struct rgc_server {
    char host[128];
    int port;
    rg_conn_t *conn; /* a socket or a libfabric endpoint (WHARF_RGPU_TRANSPORT) */
    int fab_port;    /* the session's libfabric port (peer copies), 0: socket transport */
    int hmem;        /* its provider offers FI_HMEM (not used: copies are staged, docs/RGPU.md) */
    int dead, idx;
    pthread_mutex_t mu;
    int ndev, dev0; /* its devices are global ordinals dev0 .. dev0+ndev-1 */
    int peer_port;
    uint8_t token[RG_TOKEN_LEN];
    uint64_t seq;
    rg_buf_t batch; /* encoded asynchronous messages not yet sent */
    rg_buf_t in;
    rgc_later_t later[RGC_MAX_LATER];
    int nlater;
} rgc_server_t;

typedef struct {
    rgc_server_t *sv;
    int rdev; /* ordinal on its server */
    char name[256];
    uint8_t uuid[16];
    char pci[32];
    uint64_t total, peers;
    int32_t attr[CU_DEVICE_ATTRIBUTE_MAX];
    struct CUctx_st *primary;
    int prim_refs;
    unsigned prim_flags;
} rgc_dev_t;

/* xcap[i]: the gate of the stream's last wait on an event of server i (0:
 * none); that server keeps the event as captured then, and its part of a
 * later peer copy on the stream waits for it */
struct CUctx_st {
    uint32_t magic;
    rgc_server_t *sv;
    int dev;     /* global ordinal */
    uint64_t rh; /* the server's handle */
    int primary;
    uint64_t xcap[RGC_MAX_SERVERS]; /* (its legacy stream's) */
};
struct CUstream_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    uint64_t rh;
    uint64_t xcap[RGC_MAX_SERVERS];
};
struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    uint64_t rh;
};
struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    uint64_t rh;
    struct CUfunc_st *funcs; /* freed with the module */
    pthread_mutex_t mu;
};
struct CUfunc_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    uint64_t rh;
    unsigned np;
    size_t off[64], size[64], total;
    struct CUfunc_st *next;
};
#define RGC_CTX_MAGIC 0x52435458u
#define RGC_STREAM_MAGIC 0x52535452u
#define RGC_EVENT_MAGIC 0x52455654u
#define RGC_MOD_MAGIC 0x524d4f44u
#define RGC_FUNC_MAGIC 0x52465543u

enum { RGC_DEVICE = 1, RGC_HOST };
/* base: the address the application sees (a PROT_NONE reservation here:
 * the server's own address when it is free in this process, another one
 * otherwise); rbase: the address on the server */
typedef struct rgc_alloc {
    uint64_t base, size, mapsz, rbase;
    int kind;
    struct CUctx_st *ctx;
    uint64_t id;
    struct rgc_alloc *next;
} rgc_alloc_t;

extern rgc_dev_t rgc_devs[RGC_MAX_DEV];
extern int rgc_ndev, rgc_inited;

/* a reply: rc and a reader over its fields */
typedef struct {
    CUresult rc;
    rg_rd_t r;
} rgc_reply_t;

/* Send one request.  flags RG_F_NOREPLY: queued in the server's batch (sent
 * before the next call that waits, or when the batch is full), rep may be
 * NULL.  Otherwise waits for the answer (the server's lock is held from send
 * to receive, so answers match requests).  data/dn: a large trailing byte
 * field sent without copying (the payload must then end with its length). */
CUresult rgc_call(rgc_server_t *sv, unsigned op, uint32_t flags, const rg_buf_t *args, const void *data, size_t dn,
                  rgc_reply_t *rep);
/* one request whose arguments are the u64 q[0..nq) and, with with_data,
 * a trailing byte field data/dn (sent without copying); caller holds sv->mu */
CUresult rgc_callq(rgc_server_t *sv, unsigned op, uint32_t flags, const uint64_t *q, int nq, const void *data,
                   size_t dn, int with_data, rgc_reply_t *rep);
/* the same for u64 arguments only, taking sv->mu; the answer's first nout
 * u64 fields go to out (not with RG_F_NOREPLY).  RGC_Q(a, b...): q and nq. */
CUresult rgc_req(rgc_server_t *sv, unsigned op, uint32_t flags, const uint64_t *q, int nq, uint64_t *out, int nout);
#define RGC_Q(...) (const uint64_t[]){__VA_ARGS__}, (int)(sizeof((const uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))
/* send sv's batch of asynchronous calls now (caller holds sv->mu) */
CUresult rgc_flush(rgc_server_t *sv);
/* the two halves of rgc_call (a peer copy talks to two servers at once) */
CUresult rgc_send(rgc_server_t *sv, unsigned op, uint32_t flags, const rg_buf_t *args, const void *data, size_t dn,
                  uint64_t *seq);
CUresult rgc_wait(rgc_server_t *sv, unsigned op, uint64_t seq, rgc_reply_t *rep);
/* the reply buffer stays valid until the next call on sv: callers copy out
 * while holding it, so they take sv->mu around rgc_call + reading */

/* the request seq on sv (sent) is answered later; dst/n: where the data of a
 * device-to-host copy goes.  Caller holds sv->mu. */
CUresult rgc_later(rgc_server_t *sv, unsigned op, uint64_t seq, void *dst, size_t n);
/* the same for a peer copy's receive on sv (copy id of n bytes from server
 * src): if src dies before sending, the client stands in for it (a hello that
 * ends at once), so sv fails that copy at once instead of waiting for a
 * source that never comes.  Caller holds sv->mu. */
CUresult rgc_later_recv(rgc_server_t *sv, uint64_t seq, uint64_t id, uint64_t n, int src);
/* the first error of an asynchronous call answered later (0 if none), cleared;
 * the synchronizing calls return it */
CUresult rgc_take_deferred(void);
CUresult rgc_need_init(void);
struct CUctx_st *rgc_ctx_current(void);
/* the allocation containing [p, p+n) or NULL (p unknown: host memory) */
rgc_alloc_t *rgc_find(uint64_t p, uint64_t n);
/* for a stream argument: its context (or the current one for the legacy
 * stream), and the stream's server handle (0: legacy) */
CUresult rgc_stream_ctx(CUstream s, struct CUctx_st **ctx, uint64_t *rh);
int rgc_valid_ctx(CUcontext c);
#endif
