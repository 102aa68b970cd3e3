/* wharf-gpud: copies between GPUs of two servers, streamed from session to
 * session in pipelined chunks (docs/RGPU.md, "Peer copies between servers"). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rgpu/gpud_int.h"

/* ---- peer copies between two servers ---- */
static CUresult peer_bufs(sess_t *s, int ctx, size_t chunk, int nbuf)
{
    if (s->pstream && s->pbuf_ctx != ctx) {
        /* buffers belong to another context: drop them */
        gs_set_ctx(s, s->pbuf_ctx);
        d_cuStreamSynchronize(s->pstream);
        for (int i = 0; i < RG_PEER_MAXBUF; i++) {
            if (s->pbuf[i])
                d_cuMemFreeHost(s->pbuf[i]);
            if (s->pev[i])
                d_cuEventDestroy(s->pev[i]);
            s->pbuf[i] = NULL, s->pev[i] = NULL;
        }
        d_cuEventDestroy(s->porder);
        d_cuEventDestroy(s->pdone);
        d_cuStreamDestroy(s->pstream);
        s->pstream = NULL;
        s->pbuf_size = 0;
    }
    CK(gs_set_ctx(s, ctx));
    if (!s->pstream) {
        CK(d_cuStreamCreate(&s->pstream, CU_STREAM_NON_BLOCKING));
        CK(d_cuEventCreate(&s->porder, CU_EVENT_DISABLE_TIMING));
        CK(d_cuEventCreate(&s->pdone, CU_EVENT_DISABLE_TIMING));
        s->pbuf_ctx = ctx;
    }
    if (s->pbuf_size < chunk) {
        d_cuStreamSynchronize(s->pstream);
        for (int i = 0; i < RG_PEER_MAXBUF; i++)
            if (s->pbuf[i]) {
                d_cuMemFreeHost(s->pbuf[i]);
                s->pbuf[i] = NULL;
            }
        s->pbuf_size = chunk;
    }
    for (int i = 0; i < nbuf; i++) {
        if (!s->pbuf[i])
            CK(d_cuMemAllocHost(&s->pbuf[i], s->pbuf_size));
        if (!s->pev[i])
            CK(d_cuEventCreate(&s->pev[i], CU_EVENT_DISABLE_TIMING));
    }
    return CUDA_SUCCESS;
}

typedef struct {
    uint8_t token[RG_TOKEN_LEN];
    uint64_t copyid, n, chunk;
} peer_hello_t;

static void set_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int gs_peer_hello(sess_t *s, rg_conn_t *c, uint64_t *id, uint64_t *n, uint64_t *chunk)
{
    uint8_t raw[RG_TOKEN_LEN + 24];
    if (rg_recv_all(c, raw, sizeof raw, s->cfg->timeout_ms))
        return -1;
    rg_rd_t r = {raw + RG_TOKEN_LEN, 24, 0, 0};
    *id = rg_get_u64(&r), *n = rg_get_u64(&r), *chunk = rg_get_u64(&r);
    if (!rg_ct_equal(raw, s->token, RG_TOKEN_LEN)) {
        GPUD_LOG(s->cfg, "session %d: peer connection refused (bad token)\n", s->id);
        return -1;
    }
    return 0;
}

/* The connection of the source server of copy `id`: its hello (this
 * session's token and the copy's id, size and chunk) came on a new
 * connection or a kept one (gs_poll stashes it); NULL after the timeout. */
static rg_conn_t *accept_peer(sess_t *s, uint64_t id, uint64_t n, uint64_t chunk)
{
    long long end = now_ms() + s->cfg->timeout_ms;
    for (;;) {
        for (int i = 0; i < s->nstash; i++)
            if (s->stash[i].id == id && s->stash[i].n == n && s->stash[i].chunk == chunk) {
                rg_conn_t *c = s->stash[i].c;
                s->stash[i] = s->stash[--s->nstash];
                return c;
            }
        long long left = end - now_ms();
        if (left <= 0)
            return NULL;
        gs_poll(s, 0, (int)left);
    }
}

/* the part of a peer copy on this server waits for the capture of the
 * copy's stream's last wait on an event of this server (a gate elsewhere) */
static CUresult wait_capture(sess_t *s, uint64_t gate)
{
    CUevent ev = gs_capture(s, gate);
    return ev ? d_cuStreamWaitEvent(s->pstream, ev, 0) : CUDA_SUCCESS;
}

/* q: ctx, stream, dst, n, copy id, capture gate.  Accepts the source server's connection
 * (which must show this session's token), receives the chunks into the
 * pinned buffers and copies each to the GPU while the next one arrives.
 * A synchronous copy answers when its data is on the GPU.  An asynchronous
 * one answers when the last chunk is received and queued: the client's
 * stream waits for the copies on the GPU (pdone), so the next copy's chunks
 * are received and queued behind this one's and the engine does not idle
 * between copies. */
CUresult h_peer_recv(sess_t *s, const rg_args_t *a)
{
    int ctx;
    CUstream st;
    CK(gs_use_ctx(s, a->q[0], &ctx));
    CK(gs_get_stream(s, a->q[1], ctx, &st));
    uint64_t dst = a->q[2], n = a->q[3];
    if (!n)
        return CUDA_SUCCESS;
    if (!gs_range_ok(s, dst, n) || s->peer_lfd < 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t chunk;
    int nbuf;
    rg_peer_plan(n, &chunk, &nbuf);
    CK(peer_bufs(s, ctx, chunk, nbuf));
    int async = (s->cur_flags & RG_F_ASYNC) != 0;
    CK(d_cuEventRecord(s->porder, st)); /* after the work queued before it on the client's stream */
    CK(d_cuStreamWaitEvent(s->pstream, s->porder, 0));
    CK(wait_capture(s, a->q[5]));
    rg_conn_t *pfd = accept_peer(s, a->q[4], n, chunk);
    if (!pfd)
        return CUDA_ERROR_DEVICE_UNAVAILABLE;
    CUresult rc = CUDA_SUCCESS;
    uint64_t nchunks = rg_peer_npieces(n, chunk);
    for (uint64_t c = 0; c < nchunks && rc == CUDA_SUCCESS; c++) {
        int b = (int)(c % (uint64_t)nbuf);
        uint64_t off, len;
        rg_peer_piece(n, chunk, c, &off, &len);
        rc = d_cuEventSynchronize(s->pev[b]); /* its previous chunk (maybe the last copy's) is on the GPU */
        if (rc == CUDA_SUCCESS && rg_recv_all(pfd, s->pbuf[b], len, s->cfg->timeout_ms))
            rc = CUDA_ERROR_DEVICE_UNAVAILABLE; /* the source server went away */
        if (rc == CUDA_SUCCESS)
            rc = d_cuMemcpyHtoDAsync(dst + off, s->pbuf[b], len, s->pstream);
        if (rc == CUDA_SUCCESS)
            rc = d_cuEventRecord(s->pev[b], s->pstream);
    }
    CUresult r2 = CUDA_SUCCESS;
    if (async && rc == CUDA_SUCCESS) {
        r2 = d_cuEventRecord(s->pdone, s->pstream);
        if (r2 == CUDA_SUCCESS)
            r2 = d_cuStreamWaitEvent(st, s->pdone, 0);
    } else {
        r2 = d_cuStreamSynchronize(s->pstream);
    }
    uint8_t ack = 1;
    if (rc != CUDA_SUCCESS || r2 != CUDA_SUCCESS || rg_send_all(pfd, &ack, 1) || s->npin == RG_PEER_MAXIN)
        rg_conn_close(pfd); /* (the sender sees the connection close: no ack) */
    else
        s->pin[s->npin++] = pfd; /* kept for the next copy from the same server */
    return rc != CUDA_SUCCESS ? rc : r2;
}

/* q: ctx, stream, src, n, port, copy id, capture gate; name: the destination server's
 * host; b[0]: its session token.  Chunk i+1 leaves the GPU while chunk i is
 * sent. */
CUresult h_peer_send(sess_t *s, const rg_args_t *a)
{
    int ctx;
    CUstream st;
    CK(gs_use_ctx(s, a->q[0], &ctx));
    CK(gs_get_stream(s, a->q[1], ctx, &st));
    uint64_t src = a->q[2], n = a->q[3];
    if (!n)
        return CUDA_SUCCESS;
    if (!gs_range_ok(s, src, n) || a->blen[0] != RG_TOKEN_LEN || !a->q[4] || a->q[4] > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    int fab = (s->cur_flags & RG_F_FABRIC) != 0;
    if (fab && !s->fab_l)
        return CUDA_ERROR_INVALID_VALUE; /* (a session on the socket has no provider to use) */
    size_t chunk;
    int nbuf;
    rg_peer_plan(n, &chunk, &nbuf);
    CK(peer_bufs(s, ctx, chunk, nbuf));
    CK(d_cuEventRecord(s->porder, st));
    CK(d_cuStreamWaitEvent(s->pstream, s->porder, 0));
    CK(wait_capture(s, a->q[6]));
    /* the first pieces leave the GPU while the connection is checked and the
     * hello is on its way */
    CUresult rc = CUDA_SUCCESS;
    uint64_t nchunks = rg_peer_npieces(n, chunk);
    for (uint64_t c = 0; c < nchunks && c < (uint64_t)nbuf && rc == CUDA_SUCCESS; c++) {
        uint64_t off, len;
        rg_peer_piece(n, chunk, c, &off, &len);
        rc = d_cuMemcpyDtoHAsync(s->pbuf[c], src + off, len, s->pstream);
        if (rc == CUDA_SUCCESS)
            rc = d_cuEventRecord(s->pev[c], s->pstream);
    }
    rg_conn_t *pfd = NULL;
    if (s->pout && s->pout_port == (int)a->q[4] && s->pout_fab == fab && !strcmp(s->pout_host, a->name)) {
        pfd = s->pout; /* the connection of the last copy to that server */
        s->pout = NULL;
        /* its ack, read only now: the last copy was answered as soon as its data
         * had left (the destination answers for the data being on its GPU);
         * no ack: that server dropped the connection, open a new one */
        uint8_t ack = 0;
        if (s->pout_ack && (rg_recv_all(pfd, &ack, 1, s->cfg->timeout_ms) || ack != 1)) {
            GPUD_LOG(s->cfg, "session %d: no ack of the last peer copy to %s port %d: reconnecting\n", s->id,
                     s->pout_host, s->pout_port);
            rg_conn_close(pfd);
            pfd = NULL;
        }
        s->pout_ack = 0;
    }
    if (!pfd) {
        rg_conn_close(s->pout);
        s->pout = NULL;
        s->pout_ack = 0;
        if (fab) {
            char err[256];
            pfd = rg_fab_connect(s->prov, a->name, (int)a->q[4], s->cfg->timeout_ms, err, sizeof err);
            if (!pfd)
                GPUD_LOG(s->cfg, "session %d: peer copy: %s\n", s->id, err);
            else
                GPUD_LOG(s->cfg, "session %d: peer connection to %s port %d over libfabric (%s)\n", s->id, a->name,
                         (int)a->q[4], rg_conn_provider(pfd));
        } else {
            int fd = rg_connect(a->name, (int)a->q[4], s->cfg->timeout_ms);
            if (fd >= 0)
                set_timeouts(fd, s->cfg->timeout_ms);
            pfd = fd >= 0 ? rg_conn_sock(fd) : NULL;
        }
        if (!pfd) {
            d_cuStreamSynchronize(s->pstream); /* (the first pieces' copies) */
            return CUDA_ERROR_DEVICE_UNAVAILABLE;
        }
    }
    rg_buf_t hb = {0};
    rg_put_raw(&hb, a->b[0], RG_TOKEN_LEN);
    rg_put_u64(&hb, a->q[5]);
    rg_put_u64(&hb, n);
    rg_put_u64(&hb, chunk);
    if (rc == CUDA_SUCCESS && (hb.err || rg_send_all(pfd, hb.p, hb.len)))
        rc = CUDA_ERROR_DEVICE_UNAVAILABLE;
    rg_buf_free(&hb);
    for (uint64_t c = 0; c < nchunks && rc == CUDA_SUCCESS; c++) {
        int b = (int)(c % (uint64_t)nbuf);
        uint64_t off, len;
        rg_peer_piece(n, chunk, c, &off, &len);
        rc = d_cuEventSynchronize(s->pev[b]);
        if (rc == CUDA_SUCCESS && rg_send_all(pfd, s->pbuf[b], len))
            rc = CUDA_ERROR_DEVICE_UNAVAILABLE; /* the destination server went away */
        uint64_t nx = c + (uint64_t)nbuf;
        if (rc == CUDA_SUCCESS && nx < nchunks) {
            uint64_t noff, nlen;
            rg_peer_piece(n, chunk, nx, &noff, &nlen);
            rc = d_cuMemcpyDtoHAsync(s->pbuf[b], src + noff, nlen, s->pstream);
            if (rc == CUDA_SUCCESS)
                rc = d_cuEventRecord(s->pev[b], s->pstream);
        }
    }
    /* every chunk has left this GPU and been handed to the connection: this
     * server's part is done (the destination answers the client when the data
     * is on its GPU); the destination's ack is read when the connection is
     * used next */
    d_cuStreamSynchronize(s->pstream);
    if (rc == CUDA_SUCCESS) { /* kept for the next copy to the same server */
        s->pout = pfd;
        s->pout_ack = 1;
        s->pout_port = (int)a->q[4];
        s->pout_fab = fab;
        snprintf(s->pout_host, sizeof s->pout_host, "%s", a->name);
    } else {
        rg_conn_close(pfd);
    }
    return rc;
}

/* ---- the libfabric transport ---- */
/* name: the provider the client wants.  Answers the passive endpoint's port,
 * a fresh token (the first bytes the client sends there) and whether the
 * provider offers FI_HMEM. */
CUresult h_fabric(sess_t *s, const rg_args_t *a, rg_buf_t *out)
{
    if (s->fab_l || !*a->name)
        return CUDA_ERROR_INVALID_VALUE; /* once per session */
    char err[256];
    s->fab_l = rg_fab_listen(a->name, s->addr, &s->fab_port, err, sizeof err);
    if (!s->fab_l) {
        GPUD_LOG(s->cfg, "session %d: %s: the client stays on the socket\n", s->id, err);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    snprintf(s->prov, sizeof s->prov, "%s", a->name);
    if (rg_random(s->fab_token, RG_TOKEN_LEN)) {
        rg_fab_listen_close(s->fab_l);
        s->fab_l = NULL;
        return CUDA_ERROR_UNKNOWN;
    }
    int hmem = rg_fab_hmem(a->name);
    GPUD_LOG(s->cfg, "session %d: libfabric provider %s on %s port %d; FI_HMEM %s: peer copies staged through pinned "
             "host buffers\n", s->id, a->name, s->addr, s->fab_port, hmem ? "offered (not used yet)" : "not offered");
    rg_put_u64(out, (uint64_t)s->fab_port);
    rg_put_bytes(out, s->fab_token, RG_TOKEN_LEN);
    rg_put_u64(out, (uint64_t)hmem);
    s->upgrade = 1;
    return CUDA_SUCCESS;
}

/* the client's connection to the passive endpoint, proven by the token; the
 * socket is closed then.  Nothing within the timeout: the socket stays. */
void gs_upgrade(sess_t *s)
{
    s->upgrade = 0;
    long long end = now_ms() + s->cfg->timeout_ms;
    for (int tries = 0; tries < 16; tries++) {
        long long left = end - now_ms();
        if (left <= 0)
            break;
        rg_conn_t *c = rg_fab_accept(s->fab_l, (int)left);
        if (!c)
            break;
        uint8_t tok[RG_TOKEN_LEN];
        if (!rg_recv_all(c, tok, sizeof tok, s->cfg->timeout_ms) && rg_ct_equal(tok, s->fab_token, RG_TOKEN_LEN) &&
            !rg_send_all(c, "RGPUFAB1", 8)) {
            rg_conn_close(s->conn);
            s->conn = c;
            GPUD_LOG(s->cfg, "session %d: the client moved to libfabric (%s)\n", s->id, s->prov);
            return;
        }
        GPUD_LOG(s->cfg, "session %d: a libfabric connection without the token: refused\n", s->id);
        rg_conn_close(c);
    }
    GPUD_LOG(s->cfg, "session %d: the client did not come over libfabric: it stays on the socket\n", s->id);
}

