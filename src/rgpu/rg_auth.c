/* rgpu authentication: mutual HMAC-SHA256 challenge-response over a shared
 * secret (OpenSSL's libcrypto).  The secret never crosses the network; each
 * side proves it knows it by a MAC over both sides' fresh random nonces.
 * Nothing is encrypted afterwards (docs/RGPU.md, "Security model"). */
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rgpu/rg_wire.h"

#define RG_NONCE 32
#define RG_MAC 32
static const char hello_tag[8] = {'R', 'G', 'P', 'U', 'A', 'U', 'T', 'H'};

int rg_random(void *p, size_t n)
{
    return RAND_bytes(p, (int)n) == 1 ? 0 : -1;
}

int rg_ct_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

int rg_secret_load(const char *file, uint8_t *key, size_t *keylen, char *err, size_t errlen)
{
    if (!file || !*file)
        file = getenv("WHARF_RGPU_SECRET_FILE");
    if (file && *file) {
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st)) {
            snprintf(err, errlen, "cannot open the secret file %s", file);
            if (fd >= 0)
                close(fd);
            return -1;
        }
        if (!S_ISREG(st.st_mode) || (st.st_mode & 077) || st.st_uid != geteuid()) {
            snprintf(err, errlen, "the secret file %s must be a regular file of this user with mode 0600", file);
            close(fd);
            return -1;
        }
        ssize_t n = read(fd, key, RG_KEY_MAX);
        close(fd);
        while (n > 0 && (key[n - 1] == '\n' || key[n - 1] == '\r'))
            n--;
        if (n < 16) {
            snprintf(err, errlen, "the secret in %s is shorter than 16 bytes", file);
            return -1;
        }
        *keylen = (size_t)n;
        return 0;
    }
    const char *s = getenv("WHARF_RGPU_SECRET");
    if (s && strlen(s) >= 16 && strlen(s) <= RG_KEY_MAX) {
        *keylen = strlen(s);
        memcpy(key, s, *keylen);
        return 0;
    }
    snprintf(err, errlen, "no shared secret: set WHARF_RGPU_SECRET_FILE (a 0600 file, >= 16 bytes) or WHARF_RGPU_SECRET");
    return -1;
}

static int mac(const uint8_t *key, size_t keylen, char who, const uint8_t *n1, const uint8_t *n2, uint8_t out[RG_MAC])
{
    uint8_t msg[1 + 2 * RG_NONCE];
    msg[0] = (uint8_t)who;
    memcpy(msg + 1, n1, RG_NONCE);
    memcpy(msg + 1 + RG_NONCE, n2, RG_NONCE);
    unsigned ol = 0;
    return HMAC(EVP_sha256(), key, (int)keylen, msg, sizeof msg, out, &ol) && ol == RG_MAC ? 0 : -1;
}

int rg_auth_server(rg_conn_t *fd, const uint8_t *key, size_t keylen, int timeout_ms)
{
    uint8_t out[sizeof hello_tag + 4 + RG_NONCE], ns[RG_NONCE], in[RG_NONCE + RG_MAC], m[RG_MAC];
    if (rg_random(ns, sizeof ns))
        return -1;
    memcpy(out, hello_tag, sizeof hello_tag);
    out[8] = RG_VERSION, out[9] = out[10] = out[11] = 0;
    memcpy(out + 12, ns, RG_NONCE);
    if (rg_send_all(fd, out, sizeof out) || rg_recv_all(fd, in, sizeof in, timeout_ms))
        return -1;
    if (mac(key, keylen, 'c', ns, in, m) || !rg_ct_equal(m, in + RG_NONCE, RG_MAC))
        return -1;
    if (mac(key, keylen, 's', in, ns, m))
        return -1;
    return rg_send_all(fd, m, sizeof m);
}

int rg_auth_client(rg_conn_t *fd, const uint8_t *key, size_t keylen, int timeout_ms)
{
    uint8_t in[sizeof hello_tag + 4 + RG_NONCE], out[RG_NONCE + RG_MAC], m[RG_MAC], sm[RG_MAC];
    if (rg_recv_all(fd, in, sizeof in, timeout_ms) || memcmp(in, hello_tag, sizeof hello_tag) || in[8] != RG_VERSION)
        return -1;
    const uint8_t *ns = in + 12;
    if (rg_random(out, RG_NONCE) || mac(key, keylen, 'c', ns, out, out + RG_NONCE))
        return -1;
    if (rg_send_all(fd, out, sizeof out) || rg_recv_all(fd, sm, sizeof sm, timeout_ms))
        return -1;
    if (mac(key, keylen, 's', out, ns, m) || !rg_ct_equal(m, sm, RG_MAC))
        return -1;
    return 0;
}

rg_conn_t *rg_client_open(const char *host, int port, const uint8_t *key, size_t keylen, const char *transport,
                          const char *prov, int timeout_ms, int *fab_port, int *hmem, char *why, size_t whylen)
{
    *fab_port = 0;
    *hmem = 0;
    *why = 0;
    int fd = rg_connect(host, port, timeout_ms < 10000 ? timeout_ms : 10000);
    rg_conn_t *c = fd >= 0 ? rg_conn_sock(fd) : NULL;
    if (!c) {
        snprintf(why, whylen, "cannot connect");
        return NULL;
    }
    if (rg_auth_client(c, key, keylen, timeout_ms)) {
        snprintf(why, whylen, "authentication failed (wrong secret?)");
        rg_conn_close(c);
        return NULL;
    }
    if (!transport || strcmp(transport, "fabric"))
        return c;
    /* the upgrade: the session listens on a libfabric passive endpoint and
     * tells us its port and a fresh token; the first bytes on the new
     * connection must be that token (the login happened on the socket) */
    rg_buf_t a = {0}, in = {0};
    rg_put_bytes(&a, prov, (uint32_t)strnlen(prov, RG_MAX_NAME));
    rg_hdr_t h;
    int bad = a.err || rg_send_msg(c, RG_OP_FABRIC, 0, 0, a.p, a.len, NULL, 0) ||
              rg_recv_msg(c, &h, &in, timeout_ms) || h.op != RG_OP_FABRIC || h.seq != 0;
    rg_buf_free(&a);
    rg_rd_t r = {in.p, in.len, 0, 0};
    uint32_t rc = bad ? 1 : rg_get_u32(&r), tl = 0;
    uint64_t fport = rc ? 0 : rg_get_u64(&r);
    const uint8_t *tok = rc ? NULL : rg_get_bytes(&r, &tl, RG_TOKEN_LEN);
    uint64_t hm = rc ? 0 : rg_get_u64(&r);
    uint8_t token[RG_TOKEN_LEN];
    if (tok && tl == RG_TOKEN_LEN)
        memcpy(token, tok, RG_TOKEN_LEN);
    rg_buf_free(&in);
    if (bad) {
        snprintf(why, whylen, "no answer to the libfabric upgrade");
        rg_conn_close(c);
        return NULL;
    }
    if (rc || r.err || tl != RG_TOKEN_LEN || !fport || fport > 65535) {
        snprintf(why, whylen, "the server cannot serve libfabric provider \"%s\": staying on the socket", prov);
        return c;
    }
    char err[256];
    rg_conn_t *fc = rg_fab_connect(prov, host, (int)fport, timeout_ms < 10000 ? timeout_ms : 10000, err, sizeof err);
    if (!fc) {
        /* the session gives up waiting for us after its timeout and stays on the socket */
        snprintf(why, whylen, "libfabric: %s: staying on the socket", err);
        return c;
    }
    uint8_t ok[8];
    if (rg_send_all(fc, token, RG_TOKEN_LEN) || rg_recv_all(fc, ok, sizeof ok, timeout_ms) ||
        memcmp(ok, "RGPUFAB1", 8)) {
        snprintf(why, whylen, "the libfabric upgrade did not complete");
        rg_conn_close(fc);
        rg_conn_close(c);
        return NULL;
    }
    rg_conn_close(c);
    *fab_port = (int)fport;
    *hmem = hm != 0;
    return fc;
}
