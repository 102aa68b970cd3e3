/* rgpu wire protocol: the messages between the remote-GPU client driver
 * (client.c, a libcuda.so.1), the GPU server daemon (wharf-gpud) and between
 * two servers during a peer copy, over a connection (a TCP socket or a
 * libfabric endpoint, see below); every message is a
 * 24-byte header (little-endian) and a bounded payload.  See docs/RGPU.md.
 *
 * Header: magic "RGPU" | u16 version | u16 op | u32 flags | u32 payload
 * length | u64 sequence number.  Requests carry their arguments as a
 * sequence of fields, each either a u64 ('q') or a byte string ('b': u32
 * length + bytes, bounded per op) or a short string ('s': like 'b', at most
 * RG_MAX_NAME bytes, no NUL); rg_decode() checks a payload against the
 * op's signature exactly (no missing or trailing bytes).  Replies start with
 * a u32 CUresult. */
#ifndef WH_RGPU_WIRE_H
#define WH_RGPU_WIRE_H
#include <stddef.h>
#include <stdint.h>

#define RG_MAGIC 0x55504752u /* "RGPU" little-endian */
#define RG_VERSION 2 /* 2: RG_OP_FABRIC, gates and signals, peer copies name their captures */
#define RG_HDR_SIZE 24
#define RG_CHUNK (16u << 20)            /* largest data field in one message */
#define RG_MAX_PAYLOAD (RG_CHUNK + 4096u) /* largest payload accepted */
#define RG_MAX_IMAGE (RG_MAX_PAYLOAD - 64) /* largest module image */
#define RG_MAX_NAME 255
#define RG_MAX_FIELDS 12
#define RG_TOKEN_LEN 32

/* header flags */
#define RG_F_NOREPLY 1u /* asynchronous call: the server answers nothing (errors are deferred) */
#define RG_F_ASYNC 2u   /* the stream-ordered (...Async) variant of a copy */
#define RG_F_LATER 4u   /* (device-to-host, with RG_F_ASYNC) answer when the copy is done, without
                         * holding up the requests after it; the answer may come after later answers */
#define RG_F_FABRIC 8u  /* (peer copies) the source reaches the destination's fabric port */

enum rg_op {
    RG_OP_HELLO = 1,
    RG_OP_PING,
    RG_OP_PRIMARY_RETAIN,
    RG_OP_PRIMARY_RELEASE,
    RG_OP_CTX_CREATE,
    RG_OP_CTX_DESTROY,
    RG_OP_CTX_SYNC,
    RG_OP_MEM_ALLOC,
    RG_OP_MEM_FREE,
    RG_OP_MEM_INFO,
    RG_OP_HTOD,
    RG_OP_DTOH,
    RG_OP_DTOD,
    RG_OP_MEMSET,
    RG_OP_STREAM_CREATE,
    RG_OP_STREAM_DESTROY,
    RG_OP_STREAM_SYNC,
    RG_OP_STREAM_QUERY,
    RG_OP_STREAM_WAIT,
    RG_OP_EVENT_CREATE,
    RG_OP_EVENT_DESTROY,
    RG_OP_EVENT_RECORD,
    RG_OP_EVENT_QUERY,
    RG_OP_EVENT_SYNC,
    RG_OP_EVENT_ELAPSED,
    RG_OP_MOD_LOAD,
    RG_OP_MOD_UNLOAD,
    RG_OP_MOD_FUNC,
    RG_OP_LAUNCH,
    RG_OP_PEER_RECV,
    RG_OP_PEER_SEND,
    RG_OP_FABRIC, /* move this session to a libfabric endpoint (provider name) */
    RG_OP_STREAM_GATE,  /* (ctx << 32 | stream, gate): the stream's later work waits for the gate */
    RG_OP_EVENT_SIGNAL, /* (event, gate, previous gate, host, port, token): open the gate on that
                         * server when the event (as recorded now) completes */
    RG_OP_COUNT
};

/* the signature of an op's request ("qqb"...), NULL for an unknown op */
const char *rg_op_sig(unsigned op);
const char *rg_op_name(unsigned op);

typedef struct {
    uint32_t magic;
    uint16_t version, op;
    uint32_t flags, len;
    uint64_t seq;
} rg_hdr_t;

void rg_hdr_encode(uint8_t out[RG_HDR_SIZE], const rg_hdr_t *h);
/* 0 if the header is well formed (magic, version, length bound), -1 otherwise */
int rg_hdr_decode(const uint8_t in[RG_HDR_SIZE], rg_hdr_t *h);

/* decoded request arguments: q[] in signature order of the 'q' fields, b[]
 * and blen[] for the 'b'/'s' fields (pointers into the payload; 's' fields
 * are copied NUL-terminated into name) */
typedef struct {
    int nq, nb;
    uint64_t q[RG_MAX_FIELDS];
    const uint8_t *b[2];
    uint32_t blen[2];
    char name[RG_MAX_NAME + 1];
} rg_args_t;

/* 0 if payload matches the op's signature exactly, -1 otherwise */
int rg_decode(unsigned op, const uint8_t *payload, size_t len, rg_args_t *a);

/* growable output buffer; err set (and nothing more appended) on allocation failure */
typedef struct {
    uint8_t *p;
    size_t len, cap;
    int err;
} rg_buf_t;
void rg_put_u32(rg_buf_t *b, uint32_t v);
void rg_put_u64(rg_buf_t *b, uint64_t v);
void rg_put_bytes(rg_buf_t *b, const void *p, uint32_t n); /* u32 length + bytes */
void rg_put_raw(rg_buf_t *b, const void *p, size_t n);
void rg_buf_free(rg_buf_t *b);

/* bounds-checked reader; err set on any overrun */
typedef struct {
    const uint8_t *p;
    size_t len, off;
    int err;
} rg_rd_t;
uint32_t rg_get_u32(rg_rd_t *r);
uint64_t rg_get_u64(rg_rd_t *r);
/* a length-prefixed byte string of at most max bytes (pointer into the buffer) */
const uint8_t *rg_get_bytes(rg_rd_t *r, uint32_t *n, uint32_t max);

/* ---- connections: the transport interface (docs/RGPU.md, "Transports") ----
 * A connection is a reliable, ordered byte stream between two ends: a TCP
 * socket (rg_conn_sock) or a libfabric endpoint (rg_fab.c: FI_EP_MSG, the
 * tcp provider today, any provider with FI_EP_MSG).  Every operation is
 * bounded (timeouts in ms, <0 = none), never raises SIGPIPE, and reports a
 * dead peer as an error. */
struct iovec;
struct pollfd;
typedef struct rg_conn rg_conn_t;
typedef struct {
    const char *name;
    /* all of iov or -1 */
    int (*sendv)(rg_conn_t *c, struct iovec *iov, int cnt);
    /* exactly n bytes: 0, -1 error or EOF, -2 timeout */
    int (*recv)(rg_conn_t *c, void *p, size_t n, int timeout_ms);
    /* 1 if a recv would not block (data or an error waits), else 0 */
    int (*ready)(rg_conn_t *c);
    /* the fds to poll for input (at most max); -1: do not sleep, ready now */
    int (*wait_fds)(rg_conn_t *c, struct pollfd *pf, int max);
    void (*close)(rg_conn_t *c);
} rg_tx_ops_t;
struct rg_conn {
    const rg_tx_ops_t *ops;
    int fd; /* the socket (socket transport), -1 otherwise */
};

/* a connection over the connected socket fd (owned from now on); NULL on ENOMEM (fd closed) */
rg_conn_t *rg_conn_sock(int fd);
void rg_conn_close(rg_conn_t *c);
/* Wait until one of conns (n) or of the plain fds xfd (nx; -1 entries
 * ignored; a negative fd in the middle means "ready now") can be read.
 * Returns the index (conns first, then xfd), -2 on timeout, -1 on error. */
int rg_wait_any(rg_conn_t **conns, int n, const int *xfd, int nx, int timeout_ms);

int rg_send_all(rg_conn_t *c, const void *p, size_t n);
/* 0 ok, -1 error or EOF, -2 timeout */
int rg_recv_all(rg_conn_t *c, void *p, size_t n, int timeout_ms);
/* one message: header + payload (two buffers, sent as one) */
int rg_send_msg(rg_conn_t *c, unsigned op, uint32_t flags, uint64_t seq, const void *p1, size_t n1, const void *p2,
                size_t n2);
/* reads a header and its payload into *b (reused); 0, -1 (error/EOF/bad header), -2 timeout */
int rg_recv_msg(rg_conn_t *c, rg_hdr_t *h, rg_buf_t *b, int timeout_ms);

/* ---- libfabric transport (rg_fab.c) ---- */
typedef struct rg_flisten rg_flisten_t;
/* a passive endpoint of provider prov on host (the address to listen on),
 * ephemeral port in *port; NULL with a message in err */
rg_flisten_t *rg_fab_listen(const char *prov, const char *host, int *port, char *err, size_t errlen);
/* the fd to poll for a connection request; -1: one may be there now */
int rg_fab_listen_fd(rg_flisten_t *l);
/* accept one connection request (waits up to timeout_ms); NULL on timeout/error */
rg_conn_t *rg_fab_accept(rg_flisten_t *l, int timeout_ms);
void rg_fab_listen_close(rg_flisten_t *l);
rg_conn_t *rg_fab_connect(const char *prov, const char *host, int port, int timeout_ms, char *err, size_t errlen);
/* does provider prov offer FI_HMEM (device memory registration) with
 * FI_EP_MSG?  1 yes, 0 no */
int rg_fab_hmem(const char *prov);
/* the provider's name on a fabric connection ("" for a socket) */
const char *rg_conn_provider(const rg_conn_t *c);

/* Open a client connection to host:port: TCP connect, the HMAC login (on
 * the socket), then, with transport "fabric", the upgrade to a libfabric
 * endpoint of provider prov (RG_OP_FABRIC): on success *fab_port gets the
 * server session's fabric port (peer copies) and *hmem whether the server's
 * provider offers FI_HMEM; when the upgrade fails the socket stays (a note
 * in why).  NULL with the reason in why. */
rg_conn_t *rg_client_open(const char *host, int port, const uint8_t *key, size_t keylen, const char *transport,
                          const char *prov, int timeout_ms, int *fab_port, int *hmem, char *why, size_t whylen);

/* ---- TCP helpers ---- */
/* "host:port" -> connected socket (timeout ms), -1 on failure */
int rg_connect(const char *host, int port, int timeout_ms);
/* listening socket on addr (NULL: any) and port (0: ephemeral); *bound gets the port */
int rg_listen(const char *addr, int port, int *bound);
/* TCP_NODELAY and large socket buffers */
void rg_tcp_tune(int fd);
int rg_split_hostport(const char *s, char *host, size_t hostlen, int *port);

/* ---- authentication (auth.c): HMAC-SHA256 challenge-response, both ways ---- */
#define RG_KEY_MAX 256
/* the shared secret: WHARF_RGPU_SECRET_FILE (must be a regular file of the
 * calling user with mode 0600 or stricter) or WHARF_RGPU_SECRET; 0 or -1 with
 * a message in err */
int rg_secret_load(const char *file, uint8_t *key, size_t *keylen, char *err, size_t errlen);
int rg_auth_client(rg_conn_t *c, const uint8_t *key, size_t keylen, int timeout_ms);
int rg_auth_server(rg_conn_t *c, const uint8_t *key, size_t keylen, int timeout_ms);
int rg_random(void *p, size_t n);
/* constant-time comparison */
int rg_ct_equal(const void *a, const void *b, size_t n);
#endif
