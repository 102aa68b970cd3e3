/* rgpu wire protocol: headers, field encoding, bounded decoding, socket I/O. */
#include "rgpu/rg_wire.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

static const struct {
    const char *name, *sig;
} ops[RG_OP_COUNT] = {
    [RG_OP_HELLO] = {"hello", ""},
    [RG_OP_PING] = {"ping", ""},
    [RG_OP_PRIMARY_RETAIN] = {"primary_retain", "q"},
    [RG_OP_PRIMARY_RELEASE] = {"primary_release", "q"},
    [RG_OP_CTX_CREATE] = {"ctx_create", "qq"},
    [RG_OP_CTX_DESTROY] = {"ctx_destroy", "q"},
    [RG_OP_CTX_SYNC] = {"ctx_sync", "q"},
    [RG_OP_MEM_ALLOC] = {"mem_alloc", "qq"},
    [RG_OP_MEM_FREE] = {"mem_free", "q"},
    [RG_OP_MEM_INFO] = {"mem_info", "q"},
    [RG_OP_HTOD] = {"htod", "qqqb"},
    [RG_OP_DTOH] = {"dtoh", "qqqq"},
    [RG_OP_DTOD] = {"dtod", "qqqqq"},
    [RG_OP_MEMSET] = {"memset", "qqqqq"},
    [RG_OP_STREAM_CREATE] = {"stream_create", "qq"},
    [RG_OP_STREAM_DESTROY] = {"stream_destroy", "q"},
    [RG_OP_STREAM_SYNC] = {"stream_sync", "q"},
    [RG_OP_STREAM_QUERY] = {"stream_query", "q"},
    [RG_OP_STREAM_WAIT] = {"stream_wait", "qq"},
    [RG_OP_EVENT_CREATE] = {"event_create", "qq"},
    [RG_OP_EVENT_DESTROY] = {"event_destroy", "q"},
    [RG_OP_EVENT_RECORD] = {"event_record", "qq"},
    [RG_OP_EVENT_QUERY] = {"event_query", "q"},
    [RG_OP_EVENT_SYNC] = {"event_sync", "q"},
    [RG_OP_EVENT_ELAPSED] = {"event_elapsed", "qq"},
    [RG_OP_MOD_LOAD] = {"mod_load", "qb"},
    [RG_OP_MOD_UNLOAD] = {"mod_unload", "q"},
    [RG_OP_MOD_FUNC] = {"mod_func", "qs"},
    [RG_OP_LAUNCH] = {"launch", "qqqqqqqqqb"},
    [RG_OP_PEER_RECV] = {"peer_recv", "qqqqqq"},
    [RG_OP_PEER_SEND] = {"peer_send", "qqqqsqbqq"},
    [RG_OP_FABRIC] = {"fabric", "s"},
    [RG_OP_STREAM_GATE] = {"stream_gate", "qq"},
    [RG_OP_EVENT_SIGNAL] = {"event_signal", "qqqsqb"},
};

const char *rg_op_sig(unsigned op)
{
    return op < RG_OP_COUNT ? ops[op].sig : NULL;
}

const char *rg_op_name(unsigned op)
{
    return op < RG_OP_COUNT && ops[op].name ? ops[op].name : "?";
}

static void st16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void st64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint16_t ld16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t ld64(const uint8_t *p)
{
    return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32;
}

void rg_hdr_encode(uint8_t out[RG_HDR_SIZE], const rg_hdr_t *h)
{
    st32(out, h->magic);
    st16(out + 4, h->version);
    st16(out + 6, h->op);
    st32(out + 8, h->flags);
    st32(out + 12, h->len);
    st64(out + 16, h->seq);
}

int rg_hdr_decode(const uint8_t in[RG_HDR_SIZE], rg_hdr_t *h)
{
    h->magic = ld32(in);
    h->version = ld16(in + 4);
    h->op = ld16(in + 6);
    h->flags = ld32(in + 8);
    h->len = ld32(in + 12);
    h->seq = ld64(in + 16);
    if (h->magic != RG_MAGIC || h->version != RG_VERSION || h->len > RG_MAX_PAYLOAD)
        return -1;
    return 0;
}

/* ---- output buffer ---- */
static int buf_room(rg_buf_t *b, size_t n)
{
    if (b->err)
        return -1;
    if (b->len + n <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->err = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void rg_put_raw(rg_buf_t *b, const void *p, size_t n)
{
    if (!n || buf_room(b, n))
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void rg_put_u32(rg_buf_t *b, uint32_t v)
{
    uint8_t t[4];
    st32(t, v);
    rg_put_raw(b, t, 4);
}

void rg_put_u64(rg_buf_t *b, uint64_t v)
{
    uint8_t t[8];
    st64(t, v);
    rg_put_raw(b, t, 8);
}

void rg_put_bytes(rg_buf_t *b, const void *p, uint32_t n)
{
    rg_put_u32(b, n);
    rg_put_raw(b, p, n);
}

void rg_buf_free(rg_buf_t *b)
{
    free(b->p);
    *b = (rg_buf_t){0};
}

/* ---- reader ---- */
uint32_t rg_get_u32(rg_rd_t *r)
{
    if (r->err || r->len - r->off < 4) {
        r->err = 1;
        return 0;
    }
    uint32_t v = ld32(r->p + r->off);
    r->off += 4;
    return v;
}

uint64_t rg_get_u64(rg_rd_t *r)
{
    if (r->err || r->len - r->off < 8) {
        r->err = 1;
        return 0;
    }
    uint64_t v = ld64(r->p + r->off);
    r->off += 8;
    return v;
}

const uint8_t *rg_get_bytes(rg_rd_t *r, uint32_t *n, uint32_t max)
{
    uint32_t k = rg_get_u32(r);
    if (r->err || k > max || r->len - r->off < k) {
        r->err = 1;
        *n = 0;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += k;
    *n = k;
    return p;
}

int rg_decode(unsigned op, const uint8_t *payload, size_t len, rg_args_t *a)
{
    const char *sig = rg_op_sig(op);
    memset(a, 0, sizeof *a);
    if (!sig)
        return -1;
    rg_rd_t r = {payload, len, 0, 0};
    for (const char *s = sig; *s; s++) {
        if (*s == 'q') {
            if (a->nq >= RG_MAX_FIELDS)
                return -1;
            a->q[a->nq++] = rg_get_u64(&r);
        } else if (*s == 'b') {
            if (a->nb >= 2)
                return -1;
            a->b[a->nb] = rg_get_bytes(&r, &a->blen[a->nb], RG_CHUNK);
            a->nb++;
        } else if (*s == 's') {
            uint32_t n;
            const uint8_t *p = rg_get_bytes(&r, &n, RG_MAX_NAME);
            if (!p || memchr(p, 0, n))
                return -1;
            memcpy(a->name, p, n);
            a->name[n] = 0;
        }
        if (r.err)
            return -1;
    }
    return r.off == len ? 0 : -1;
}

/* ---- the socket transport ---- */
static int sock_sendv(rg_conn_t *c, struct iovec *v, int cnt)
{
    while (cnt) {
        /* sendmsg, not writev: no SIGPIPE in the application when the peer is gone */
        struct msghdr mh = {0};
        mh.msg_iov = v;
        mh.msg_iovlen = (size_t)cnt;
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        size_t k = (size_t)w;
        while (cnt && k >= v->iov_len) {
            k -= v->iov_len;
            v++;
            cnt--;
        }
        if (cnt) {
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= k;
        }
    }
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int sock_recv(rg_conn_t *c, void *p, size_t n, int timeout_ms)
{
    char *b = p;
    long long end = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
    while (n) {
        if (timeout_ms >= 0) {
            long long left = end - now_ms();
            if (left <= 0)
                return -2;
            struct pollfd pf = {c->fd, POLLIN, 0};
            int k = poll(&pf, 1, (int)left);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            if (k == 0)
                return -2;
        }
        ssize_t r = recv(c->fd, b, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

static int sock_ready(rg_conn_t *c)
{
    struct pollfd pf = {c->fd, POLLIN, 0};
    return poll(&pf, 1, 0) > 0;
}

static int sock_wait_fds(rg_conn_t *c, struct pollfd *pf, int max)
{
    if (max < 1)
        return 0;
    pf[0] = (struct pollfd){c->fd, POLLIN, 0};
    return 1;
}

static void sock_close(rg_conn_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

static const rg_tx_ops_t sock_ops = {
    .name = "socket",
    .sendv = sock_sendv,
    .recv = sock_recv,
    .ready = sock_ready,
    .wait_fds = sock_wait_fds,
    .close = sock_close,
};

rg_conn_t *rg_conn_sock(int fd)
{
    rg_conn_t *c = malloc(sizeof *c);
    if (!c) {
        close(fd);
        return NULL;
    }
    *c = (rg_conn_t){&sock_ops, fd};
    return c;
}

void rg_conn_close(rg_conn_t *c)
{
    if (c)
        c->ops->close(c);
}

int rg_wait_any(rg_conn_t **conns, int n, const int *xfd, int nx, int timeout_ms)
{
    enum { MAXFD = 64 };
    long long end = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
    for (int round = 0;; round++) {
        struct pollfd pf[MAXFD];
        int owner[MAXFD], np = 0, nosleep = 0;
        for (int i = 0; i < n; i++)
            if (conns[i] && conns[i]->ops->ready(conns[i]))
                return i;
        for (int i = 0; i < n; i++) {
            if (!conns[i])
                continue;
            int k = conns[i]->ops->wait_fds(conns[i], pf + np, MAXFD - np);
            if (k < 0) { /* events may be queued: look again without sleeping */
                nosleep = 1;
                continue;
            }
            for (int j = 0; j < k; j++)
                owner[np++] = i;
        }
        for (int i = 0; i < nx && np < MAXFD; i++) {
            if (xfd[i] == -1)
                continue;
            if (xfd[i] < -1)
                return n + i;
            pf[np] = (struct pollfd){xfd[i], POLLIN, 0};
            owner[np++] = n + i;
        }
        long long left = timeout_ms >= 0 ? end - now_ms() : -1;
        if (timeout_ms >= 0 && left < 0)
            left = 0;
        /* (twice in a row nothing to sleep on: a short nap, not a hot loop) */
        int ms = nosleep ? (round & 1 ? 1 : 0) : (int)left;
        if (timeout_ms >= 0 && ms > left)
            ms = (int)left;
        int k = poll(pf, (nfds_t)np, ms);
        if (k < 0 && errno != EINTR)
            return -1;
        for (int i = 0; k > 0 && i < np; i++) {
            if (!pf[i].revents)
                continue;
            if (owner[i] >= n)
                return owner[i];
            if (conns[owner[i]]->ops->ready(conns[owner[i]]))
                return owner[i];
        }
        if (timeout_ms >= 0 && now_ms() >= end)
            return -2;
    }
}

int rg_send_all(rg_conn_t *c, const void *p, size_t n)
{
    struct iovec v = {(void *)p, n};
    return n ? c->ops->sendv(c, &v, 1) : 0;
}

int rg_recv_all(rg_conn_t *c, void *p, size_t n, int timeout_ms)
{
    return n ? c->ops->recv(c, p, n, timeout_ms) : 0;
}

int rg_send_msg(rg_conn_t *c, unsigned op, uint32_t flags, uint64_t seq, const void *p1, size_t n1, const void *p2,
                size_t n2)
{
    if (n1 + n2 > RG_MAX_PAYLOAD)
        return -1;
    uint8_t h[RG_HDR_SIZE];
    rg_hdr_t hd = {RG_MAGIC, RG_VERSION, (uint16_t)op, flags, (uint32_t)(n1 + n2), seq};
    rg_hdr_encode(h, &hd);
    struct iovec iov[3] = {{h, sizeof h}, {(void *)p1, n1}, {(void *)p2, n2}};
    return c->ops->sendv(c, iov, n2 ? 3 : n1 ? 2 : 1);
}

int rg_recv_msg(rg_conn_t *c, rg_hdr_t *h, rg_buf_t *b, int timeout_ms)
{
    uint8_t raw[RG_HDR_SIZE];
    int rc = rg_recv_all(c, raw, sizeof raw, timeout_ms);
    if (rc)
        return rc;
    if (rg_hdr_decode(raw, h))
        return -1;
    b->len = 0;
    if (buf_room(b, h->len ? h->len : 1))
        return -1;
    rc = rg_recv_all(c, b->p, h->len, timeout_ms);
    if (rc)
        return rc;
    b->len = h->len;
    return 0;
}

/* ---- TCP ---- */
static void tune(int fd)
{
    int one = 1, big = 4 << 20;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
}

int rg_split_hostport(const char *s, char *host, size_t hostlen, int *port)
{
    const char *c = strrchr(s, ':');
    if (!c || c == s || (size_t)(c - s) >= hostlen)
        return -1;
    char *end;
    long p = strtol(c + 1, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return -1;
    memcpy(host, s, (size_t)(c - s));
    host[c - s] = 0;
    *port = (int)p;
    return 0;
}

int rg_connect(const char *host, int port, int timeout_ms)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) || !res)
        return -1;
    int fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc && errno == EINPROGRESS) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int err = 0;
            socklen_t el = sizeof err;
            if (poll(&pf, 1, timeout_ms) == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) && !err)
                rc = 0;
        }
        if (rc) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        tune(fd);
    }
    return fd;
}

int rg_listen(const char *addr, int port, int *bound)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(addr && *addr ? addr : NULL, ps, &hints, &res) || !res)
        return -1;
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd >= 0 && (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64))) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0 && bound) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        getsockname(fd, (struct sockaddr *)&ss, &sl);
        *bound = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                          : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return fd;
}

void rg_tcp_tune(int fd)
{
    tune(fd);
}
