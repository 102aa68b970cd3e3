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
    uint64_t gmask; /* T_STREAM, T_EVENT (T_CTX: its legacy stream): the closed gates its work waits for */
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

/* cross-server stream waits (gpud_gate.c) */
#define RG_MAX_GATES 64  /* gates closed at once in a session (bits of gmask) */
#define RG_MAX_EARLY 256 /* signals come before their gate */
#define RG_MAX_CAPS 256  /* captured events kept for peer copies */
typedef struct {
    rg_hdr_t h;
    rg_buf_t in;
    uint64_t mask; /* the gates it waits for */
} held_t;
typedef struct {
    uint64_t gate;
    CUevent ev;
    int ctx;
} capture_t;
typedef struct {
    rg_conn_t *c;
    uint64_t id, n, chunk;
} stashed_t;
struct gs_signaler;

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
    CUevent pdone;       /* (destination) recorded after an async copy's last HtoD */
    /* peer connections kept between copies: the one this session sends on
     * (to pout_host:pout_port), and the ones it accepted */
    rg_conn_t *pout;
    int pout_port, pout_fab;
    int pout_ack; /* the destination's ack of the last copy on pout is still to be read */
    char pout_host[RG_MAX_NAME + 1];
    rg_conn_t *pin[RG_PEER_MAXIN];
    int npin;
    CUevent pev[RG_PEER_MAXBUF];
    /* gates: this session's streams waiting for events of other servers */
    uint64_t gate_id[RG_MAX_GATES], gate_used;
    uint64_t early[RG_MAX_EARLY];
    int nearly;
    held_t *held; /* requests held back behind closed gates, in arrival order */
    int nheld, held_cap, replay;
    rg_conn_t *gin[RG_PEER_MAXIN]; /* connections other servers signal gates on */
    int ngin;
    stashed_t stash[RG_PEER_MAXIN]; /* peer-copy connections whose hello came before the copy */
    int nstash;
    /* signals: events of this session that open gates elsewhere */
    struct gs_signaler *sig;
    capture_t cap[RG_MAX_CAPS];
    int capnext;
    struct {
        CUstream st;
        int ctx;
    } capst[32]; /* private streams that capture events (4 a context, in turn) */
    unsigned capst_next;
} sess_t;

#define CK(x)                                                                                               \
    do {                                                                                                    \
        CUresult rc_ = (x);                                                                                 \
        if (rc_ != CUDA_SUCCESS)                                                                            \
            return rc_;                                                                                     \
    } while (0)


/* the slot of table t named by handle (index + 1), or NULL */
slot_t *gs_slot(sess_t *s, int t, uint64_t handle);
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
/* a peer connection's hello (token, copy id, size, chunk; chunk 0: a gate
 * signal connection) read and checked; 0 or -1 */
int gs_peer_hello(sess_t *s, rg_conn_t *c, uint64_t *id, uint64_t *n, uint64_t *chunk);

/* ---- gates (gpud_gate.c) ---- */
/* the gates request (op, a) must wait for (0: none) */
uint64_t gs_req_mask(sess_t *s, unsigned op, const rg_args_t *a);
/* hold the request back (takes *in) and mark what it touches as waiting too */
int gs_hold(sess_t *s, const rg_hdr_t *h, rg_buf_t *in, const rg_args_t *a, uint64_t mask);
/* the first held request whose gates are all open, taken out: 1, else 0 */
int gs_take_ready(sess_t *s, rg_hdr_t *h, rg_buf_t *in);
CUresult h_stream_gate(sess_t *s, const rg_args_t *a);
CUresult h_event_signal(sess_t *s, const rg_args_t *a);
/* the captured event of gate (0 or unknown: NULL) */
CUevent gs_capture(sess_t *s, uint64_t gate);
/* wait (up to timeout_ms) for the client (with_client: 1 when it has a
 * request) and meanwhile serve peers: new connections, gate signals, hellos
 * of peer copies (stashed); 0 otherwise, -1 when the client's connection failed */
int gs_poll(sess_t *s, int with_client, int timeout_ms);
/* before context ctx (-1: all) goes: its pending signals sent, its captures dropped */
void gs_drop_ctx(sess_t *s, int ctx);
/* the session ends: the signaler stopped, held requests dropped */
void gs_gates_end(sess_t *s);
#endif
