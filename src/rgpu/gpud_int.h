/* wharf-gpud: a session's state, shared by gpud_session.c (requests) and
 * gpud_peer.c (copies between two servers). */
#ifndef WH_RGPU_GPUD_INT_H
#define WH_RGPU_GPUD_INT_H
#include <stdint.h>

#include "rgpu/gpud.h"
#include "rgpu/rg_drv.h"
#include "rgpu/rg_wire.h"

enum { T_CTX, T_STREAM, T_EVENT, T_MOD, T_FUNC, T_NTAB };

typedef struct {
    void *h;   /* driver handle (NULL: free slot) */
    int ctx;   /* index of its context (T_CTX: the device) */
    int primary; /* T_CTX: a retained primary context */
} slot_t;

typedef struct {
    CUdeviceptr base;
    size_t size;
    int ctx;
} alloc_t;

typedef struct pending {
    CUevent ev;
    void *buf;
    size_t n;
    int reply;    /* a device-to-host copy answered when done: buf is the answer */
    uint64_t seq;
} pending_t;

#define MAX_PENDING 256

typedef struct {
    const gpud_cfg_t *cfg;
    rg_conn_t *conn; /* to the client: the socket, or a libfabric endpoint after RG_OP_FABRIC */
    int id;
    char addr[128]; /* the address the client reached us at */
    int ndev;
    slot_t *tab[T_NTAB];
    alloc_t *allocs;
    int nalloc;
    size_t mem_used;
    CUresult deferred;
    uint64_t cur_seq;  /* the request being served */
    uint32_t cur_flags;
    int answered;      /* its answer is sent later (RG_F_LATER) */
    pending_t pend[MAX_PENDING];
    int npend;
    size_t pend_bytes;
    int peer_lfd, peer_port;
    /* libfabric (after the client's RG_OP_FABRIC): the passive endpoint the
     * client's connection came through, kept for peer copies */
    rg_flisten_t *fab_l;
    int fab_port, upgrade;
    char prov[RG_MAX_NAME + 1];
    uint8_t fab_token[RG_TOKEN_LEN];
    uint8_t token[RG_TOKEN_LEN];
    void *pbuf[RG_PEER_MAXBUF]; /* pinned intermediate buffers of peer copies */
    size_t pbuf_size;
    int pbuf_ctx;
    CUstream pstream;
    CUevent porder;
    /* peer connections kept between copies: the one this session sends on
     * (to pout_host:pout_port), and the ones it accepted */
    rg_conn_t *pout;
    int pout_port, pout_fab;
    char pout_host[RG_MAX_NAME + 1];
    rg_conn_t *pin[RG_PEER_MAXIN];
    int npin;
    CUevent pev[RG_PEER_MAXBUF];
} sess_t;

#define CK(x)                                                                                               \
    do {                                                                                                    \
        CUresult rc_ = (x);                                                                                 \
        if (rc_ != CUDA_SUCCESS)                                                                            \
            return rc_;                                                                                     \
    } while (0)


/* context handle -> index, made current */
CUresult gs_use_ctx(sess_t *s, uint64_t h, int *ctx);
CUresult gs_set_ctx(sess_t *s, int ctx);
/* stream handle (0: the legacy stream) of context ctx */
CUresult gs_get_stream(sess_t *s, uint64_t h, int ctx, CUstream *st);
/* [p, p+n) inside one of the session's allocations */
int gs_range_ok(sess_t *s, uint64_t p, uint64_t n);
CUresult h_peer_recv(sess_t *s, const rg_args_t *a);
CUresult h_peer_send(sess_t *s, const rg_args_t *a);
/* RG_OP_FABRIC: listen on a libfabric passive endpoint; gs_upgrade (after
 * the answer went out) takes the client's connection there */
CUresult h_fabric(sess_t *s, const rg_args_t *a, rg_buf_t *out);
void gs_upgrade(sess_t *s);
#endif
