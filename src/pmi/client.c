/* PMI-1 simple-protocol client.  One request line, one reply line (except the
 * initack handshake, which gets four), blocking I/O on one socket.  See pmi.h
 * for the contract and docs/LAUNCHER.md for the protocol as wharfrun serves
 * it. */
#include "pmi/pmi.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmi/auth.h"
#include "pmi/wire.h"
#include "util/log.h"

#define WH_PMI_KVSNAME_MAX 256
#define WH_PMI_SINGLETON_VALLEN 2048 /* what wharfrun offers, too */
#define WH_PMI_CONNECT_TIMEOUT_MS 30000
#define WH_PMI_ABORT_WAIT_MS 10000

enum wh_pmi_mode { WH_PMI_UNINIT, WH_PMI_SINGLETON, WH_PMI_WIRE, WH_PMI_DONE };

typedef struct wh_pmi_kv {
    struct wh_pmi_kv *next;
    char *key;
    char *val;
} wh_pmi_kv_t;

static struct {
    enum wh_pmi_mode mode;
    int fd;
    int rank, size, appnum;
    int keylen_max, vallen_max; /* as the server announced them */
    char kvsname[WH_PMI_KVSNAME_MAX];
    char rbuf[WH_PMI_MAXLINE + 1]; /* received bytes not consumed yet */
    size_t rlen;
    wh_pmi_kv_t *kvs; /* singleton KVS */
    char err[256];
} wh_pmi = {.fd = -1};

static wh_pmi_msg_t wh_pmi_reply; /* last parsed reply (4 KB: kept off the stack) */

__attribute__((format(printf, 1, 2))) static int wh_pmi_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(wh_pmi.err, sizeof wh_pmi.err, fmt, ap);
    va_end(ap);
    WH_DEBUG("pmi", "%s", wh_pmi.err);
    return -1;
}

const char *wh_pmi_error(void)
{
    return wh_pmi.err;
}

/* ---- raw I/O ---- */

static int wh_pmi_write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return wh_pmi_fail("PMI write failed: %s", strerror(errno));
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

__attribute__((format(printf, 1, 2))) static int wh_pmi_send(const char *fmt, ...)
{
    char line[WH_PMI_MAXLINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line)
        return wh_pmi_fail("PMI request too long");
    WH_TRACE("pmi", "-> %.*s", n > 0 ? n - 1 : 0, line);
    return wh_pmi_write_all(wh_pmi.fd, line, (size_t)n);
}

/* Read one line into wh_pmi_reply.  Fails on EOF, error, overlong or
 * malformed line. */
static int wh_pmi_recv(void)
{
    for (;;) {
        char *nl = memchr(wh_pmi.rbuf, '\n', wh_pmi.rlen);
        if (nl) {
            size_t len = (size_t)(nl - wh_pmi.rbuf) + 1;
            int rc = wh_pmi_parse(wh_pmi.rbuf, len, &wh_pmi_reply);
            WH_TRACE("pmi", "<- %.*s", (int)len - 1, wh_pmi.rbuf);
            memmove(wh_pmi.rbuf, wh_pmi.rbuf + len, wh_pmi.rlen - len);
            wh_pmi.rlen -= len;
            if (rc != 0 || !wh_pmi_val(&wh_pmi_reply, "cmd"))
                return wh_pmi_fail("malformed reply from the PMI server");
            return 0;
        }
        if (wh_pmi.rlen >= WH_PMI_MAXLINE)
            return wh_pmi_fail("PMI reply longer than %d bytes", WH_PMI_MAXLINE);
        ssize_t n = read(wh_pmi.fd, wh_pmi.rbuf + wh_pmi.rlen, WH_PMI_MAXLINE - wh_pmi.rlen);
        if (n == 0)
            return wh_pmi_fail("PMI server closed the connection");
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return wh_pmi_fail("PMI read failed: %s", strerror(errno));
        }
        wh_pmi.rlen += (size_t)n;
    }
}

/* Read a reply and check that it is cmd=expect (and rc=0 unless rc_out is
 * given, in which case rc is stored there; a missing rc counts as 0). */
static int wh_pmi_expect(const char *expect, int *rc_out)
{
    if (wh_pmi_recv() != 0)
        return -1;
    const char *cmd = wh_pmi_val(&wh_pmi_reply, "cmd");
    if (strcmp(cmd, expect) != 0)
        return wh_pmi_fail("PMI server replied cmd=%.64s, expected cmd=%s", cmd, expect);
    int rc = 0;
    if (wh_pmi_val(&wh_pmi_reply, "rc") && wh_pmi_int(&wh_pmi_reply, "rc", &rc) != 0)
        return wh_pmi_fail("PMI reply %s has a malformed rc", expect);
    if (rc_out) {
        *rc_out = rc;
        return 0;
    }
    if (rc != 0) {
        const char *m = wh_pmi_val(&wh_pmi_reply, "msg");
        return wh_pmi_fail("PMI %s failed: rc=%d %.128s", expect, rc, m ? m : "");
    }
    return 0;
}

/* ---- connecting ---- */

static int wh_pmi_env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *e;
    errno = 0;
    long x = strtol(v, &e, 10);
    if (*e || errno || x < 0 || x > 0x7fffffff)
        return -1;
    *out = (int)x;
    return 0;
}

static int wh_pmi_connect_port(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof host || !colon[1])
        return wh_pmi_fail("PMI_PORT '%.64s' is not host:port", hostport);
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';

    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0)
        return wh_pmi_fail("cannot resolve PMI_PORT '%.64s': %s", hostport, gai_strerror(gai));
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(res);
        return wh_pmi_fail("socket: %s", strerror(errno));
    }
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        do
            rc = poll(&p, 1, WH_PMI_CONNECT_TIMEOUT_MS);
        while (rc < 0 && errno == EINTR);
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (rc == 0)
            soerr = ETIMEDOUT;
        else if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
            soerr = errno;
        rc = soerr ? -1 : 0;
        errno = soerr;
    }
    if (rc != 0) {
        int e = errno;
        close(fd);
        return wh_pmi_fail("cannot connect to PMI server %.64s: %s", hostport, strerror(e));
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(fd);
        return wh_pmi_fail("fcntl: %s", strerror(errno));
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    wh_pmi.fd = fd;
    return 0;
}

/* The replies to an initack: cmd=initack and three cmd=set lines (size,
 * rank, debug; accepted in any order). */
static int wh_pmi_initack_replies(void)
{
    if (wh_pmi_expect("initack", NULL) != 0)
        return -1;
    int got = 0;
    for (int i = 0; i < 3; i++) {
        if (wh_pmi_expect("set", NULL) != 0)
            return -1;
        int v;
        if (wh_pmi_int(&wh_pmi_reply, "size", &v) == 0) {
            wh_pmi.size = v;
            got |= 1;
        } else if (wh_pmi_int(&wh_pmi_reply, "rank", &v) == 0) {
            wh_pmi.rank = v;
            got |= 2;
        } else if (wh_pmi_int(&wh_pmi_reply, "debug", &v) == 0) {
            got |= 4;
        } else {
            return wh_pmi_fail("unexpected cmd=set in the PMI initack handshake");
        }
    }
    return got == 7 ? 0 : wh_pmi_fail("incomplete PMI initack handshake");
}

/* PMI_ID handshake of hydra and of plain PMI-1: cmd=initack pmiid=N. */
static int wh_pmi_initack(int id)
{
    if (wh_pmi_send("cmd=initack pmiid=%d\n", id) != 0)
        return -1;
    return wh_pmi_initack_replies();
}

/* The authenticated handshake of auth.h (wharfrun's remote ranks), then the
 * initack replies. */
static int wh_pmi_auth(int id, const char *secret)
{
    char cn[WH_PMI_NONCE_HEX + 1], sn[WH_PMI_NONCE_HEX + 1], mac[WH_PMI_MAC_HEX + 1];
    if (wh_pmi_random_hex(cn, WH_PMI_NONCE_HEX / 2) != 0)
        return wh_pmi_fail("no random bytes for the PMI handshake");
    if (wh_pmi_send("cmd=auth_hello pmiid=%d cnonce=%s\n", id, cn) != 0)
        return -1;
    char why[sizeof wh_pmi.err];
    if (wh_pmi_expect("auth_challenge", NULL) != 0) {
        snprintf(why, sizeof why, "%s", wh_pmi.err);
        return wh_pmi_fail("the PMI server refused PMI_ID %d (unknown, or already connected): %s",
                           id, why);
    }
    const char *v = wh_pmi_val(&wh_pmi_reply, "snonce");
    if (!wh_pmi_is_hex(v, WH_PMI_NONCE_HEX))
        return wh_pmi_fail("malformed PMI authentication challenge");
    memcpy(sn, v, sizeof sn);
    wh_pmi_auth_mac(secret, "client", id, sn, cn, mac);
    int rc = wh_pmi_send("cmd=auth_response mac=%s\n", mac);
    memset(mac, 0, sizeof mac);
    if (rc != 0)
        return -1;
    if (wh_pmi_expect("auth_ok", NULL) != 0) {
        snprintf(why, sizeof why, "%s", wh_pmi.err);
        return wh_pmi_fail("the PMI server rejected the authentication (wrong %s?): %s",
                           WH_PMI_SECRET_VAR, why);
    }
    if (!wh_pmi_auth_check(secret, "server", id, sn, cn, wh_pmi_val(&wh_pmi_reply, "mac")))
        return wh_pmi_fail("the PMI server at PMI_PORT failed to prove the job's key");
    return wh_pmi_initack_replies();
}

static int wh_pmi_handshake(void)
{
    if (wh_pmi_send("cmd=init pmi_version=1 pmi_subversion=1\n") != 0 ||
        wh_pmi_expect("response_to_init", NULL) != 0)
        return -1;
    int v;
    if (wh_pmi_int(&wh_pmi_reply, "pmi_version", &v) == 0 && v != 1)
        return wh_pmi_fail("PMI server speaks version %d, not 1", v);

    if (wh_pmi_send("cmd=get_maxes\n") != 0 || wh_pmi_expect("maxes", NULL) != 0)
        return -1;
    if (wh_pmi_int(&wh_pmi_reply, "keylen_max", &wh_pmi.keylen_max) != 0 ||
        wh_pmi_int(&wh_pmi_reply, "vallen_max", &wh_pmi.vallen_max) != 0 ||
        wh_pmi.keylen_max < 2 || wh_pmi.vallen_max < 2)
        return wh_pmi_fail("malformed cmd=maxes reply");

    if (wh_pmi_send("cmd=get_appnum\n") != 0 || wh_pmi_expect("appnum", NULL) != 0)
        return -1;
    if (wh_pmi_int(&wh_pmi_reply, "appnum", &wh_pmi.appnum) != 0)
        wh_pmi.appnum = 0;

    if (wh_pmi_send("cmd=get_my_kvsname\n") != 0 || wh_pmi_expect("my_kvsname", NULL) != 0)
        return -1;
    const char *k = wh_pmi_val(&wh_pmi_reply, "kvsname");
    if (!k || !*k || strlen(k) >= sizeof wh_pmi.kvsname)
        return wh_pmi_fail("malformed cmd=my_kvsname reply");
    for (const char *c = k; *c; c++)
        if (*c <= ' ' || *c > '~' || *c == '\\')
            return wh_pmi_fail("unusable kvsname from the PMI server");
    strcpy(wh_pmi.kvsname, k);
    return 0;
}

static void wh_pmi_close(void)
{
    if (wh_pmi.fd >= 0)
        close(wh_pmi.fd);
    wh_pmi.fd = -1;
    wh_pmi.rlen = 0;
}

static void wh_pmi_singleton_name(void)
{
    unsigned int r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (unsigned int)time(NULL) ^ (unsigned int)clock();
    snprintf(wh_pmi.kvsname, sizeof wh_pmi.kvsname, "wharf-%d-%08x", (int)getpid(), r);
}

int wh_pmi_init(int *rank, int *size, char *err, size_t errlen)
{
    if (wh_pmi.mode == WH_PMI_SINGLETON || wh_pmi.mode == WH_PMI_WIRE) {
        *rank = wh_pmi.rank;
        *size = wh_pmi.size;
        return 0;
    }
    wh_pmi.err[0] = '\0';
    if (wh_pmi.mode == WH_PMI_DONE) {
        wh_pmi_fail("PMI already finalized");
        goto fail;
    }
    const char *fdenv = getenv("PMI_FD");
    const char *port = getenv("PMI_PORT");
    if ((!fdenv || !*fdenv) && (!port || !*port)) {
        wh_pmi.mode = WH_PMI_SINGLETON;
        wh_pmi.rank = 0;
        wh_pmi.size = 1;
        wh_pmi.appnum = 0;
        wh_pmi.keylen_max = 256;
        wh_pmi.vallen_max = WH_PMI_SINGLETON_VALLEN;
        wh_pmi_singleton_name();
        WH_DEBUG("pmi", "no PMI environment: singleton, job %s", wh_pmi.kvsname);
        *rank = 0;
        *size = 1;
        return 0;
    }

    int id = -1, have_id = 0;
    if (fdenv && *fdenv) {
        int fd;
        if (wh_pmi_env_int("PMI_FD", &fd) != 0 || fcntl(fd, F_GETFD) < 0) {
            wh_pmi_fail("PMI_FD='%.32s' is not an open file descriptor", fdenv);
            goto fail;
        }
        fcntl(fd, F_SETFD, FD_CLOEXEC); /* children of the rank must not hold it */
        wh_pmi.fd = fd;
    } else {
        if (wh_pmi_connect_port(port) != 0)
            goto fail;
        have_id = (wh_pmi_env_int("PMI_ID", &id) == 0);
    }
    wh_pmi.rank = wh_pmi.size = -1;
    const char *secret = have_id ? getenv(WH_PMI_SECRET_VAR) : NULL;
    if (secret && *secret) {
        if (!wh_pmi_is_hex(secret, WH_PMI_SECRET_HEX)) {
            wh_pmi_fail("%s is not %d hex digits", WH_PMI_SECRET_VAR, WH_PMI_SECRET_HEX);
            goto fail_close;
        }
        if (wh_pmi_auth(id, secret) != 0)
            goto fail_close;
    } else if (have_id) {
        if (wh_pmi_initack(id) != 0)
            goto fail_close;
    } else if (wh_pmi_env_int("PMI_RANK", &wh_pmi.rank) != 0 ||
               wh_pmi_env_int("PMI_SIZE", &wh_pmi.size) != 0) {
        wh_pmi_fail("PMI_RANK/PMI_SIZE missing or malformed");
        goto fail_close;
    }
    if (wh_pmi.size < 1 || wh_pmi.rank < 0 || wh_pmi.rank >= wh_pmi.size) {
        wh_pmi_fail("bad PMI rank %d / size %d", wh_pmi.rank, wh_pmi.size);
        goto fail_close;
    }
    if (wh_pmi_handshake() != 0)
        goto fail_close;
    wh_pmi.mode = WH_PMI_WIRE;
    WH_DEBUG("pmi", "rank %d of %d, job %s, keylen_max %d, vallen_max %d", wh_pmi.rank,
             wh_pmi.size, wh_pmi.kvsname, wh_pmi.keylen_max, wh_pmi.vallen_max);
    *rank = wh_pmi.rank;
    *size = wh_pmi.size;
    return 0;

fail_close:
    wh_pmi_close();
fail:
    if (err && errlen)
        snprintf(err, errlen, "%s", wh_pmi.err);
    return -1;
}

int wh_pmi_is_singleton(void)
{
    return wh_pmi.mode == WH_PMI_SINGLETON;
}

const char *wh_pmi_kvsname(void)
{
    return wh_pmi.kvsname;
}

int wh_pmi_appnum(void)
{
    return wh_pmi.appnum;
}

int wh_pmi_fd(void)
{
    return wh_pmi.mode == WH_PMI_WIRE ? wh_pmi.fd : -1;
}

int wh_pmi_lost(void)
{
    if (wh_pmi.mode != WH_PMI_WIRE || wh_pmi.fd < 0)
        return 0;
    struct pollfd p = {.fd = wh_pmi.fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) != 1)
        return 0;
    if (p.revents & (POLLHUP | POLLERR | POLLNVAL | POLLRDHUP))
        return 1;
    char c;
    ssize_t n = recv(wh_pmi.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR && errno != ENOTSOCK))
        return 1;
    return 0; /* unexpected data: leave it for the next reply read */
}

int wh_pmi_max_vallen(void)
{
    if (wh_pmi.mode != WH_PMI_WIRE && wh_pmi.mode != WH_PMI_SINGLETON)
        return 0;
    /* The put line must fit in one wire line as well. */
    int line = WH_PMI_MAXLINE - 1 - (int)sizeof("cmd=put kvsname= key= value=\n") -
               (int)strlen(wh_pmi.kvsname) - wh_pmi.keylen_max;
    int v = wh_pmi.vallen_max - 1;
    return v < line ? v : line;
}

/* ---- KVS ---- */

static int wh_pmi_text_ok(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == '\\')
            return 0;
    return 1;
}

static int wh_pmi_ready(void)
{
    if (wh_pmi.mode == WH_PMI_WIRE || wh_pmi.mode == WH_PMI_SINGLETON)
        return 0;
    return wh_pmi_fail("PMI not initialized");
}

static wh_pmi_kv_t *wh_pmi_local_find(const char *key)
{
    for (wh_pmi_kv_t *kv = wh_pmi.kvs; kv; kv = kv->next)
        if (!strcmp(kv->key, key))
            return kv;
    return NULL;
}

static int wh_pmi_local_put(const char *key, const char *val)
{
    char *v = strdup(val);
    if (!v)
        return wh_pmi_fail("out of memory");
    wh_pmi_kv_t *kv = wh_pmi_local_find(key);
    if (kv) {
        free(kv->val);
        kv->val = v;
        return 0;
    }
    kv = calloc(1, sizeof *kv);
    if (!kv || !(kv->key = strdup(key))) {
        free(kv);
        free(v);
        return wh_pmi_fail("out of memory");
    }
    kv->val = v;
    kv->next = wh_pmi.kvs;
    wh_pmi.kvs = kv;
    return 0;
}

static void wh_pmi_local_free(void)
{
    while (wh_pmi.kvs) {
        wh_pmi_kv_t *kv = wh_pmi.kvs;
        wh_pmi.kvs = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
}

int wh_pmi_put(const char *key, const char *val)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (!wh_pmi_text_ok(key) || !wh_pmi_text_ok(val))
        return wh_pmi_fail("PMI key/value must be non-empty printable text without spaces");
    if ((int)strlen(key) >= wh_pmi.keylen_max)
        return wh_pmi_fail("PMI key '%.64s' longer than %d bytes", key, wh_pmi.keylen_max - 1);
    if (strlen(val) > (size_t)wh_pmi_max_vallen())
        return wh_pmi_fail("PMI value for '%.64s' longer than %d bytes", key, wh_pmi_max_vallen());
    if (wh_pmi.mode == WH_PMI_SINGLETON)
        return wh_pmi_local_put(key, val);
    if (wh_pmi_send("cmd=put kvsname=%s key=%s value=%s\n", wh_pmi.kvsname, key, val) != 0)
        return -1;
    return wh_pmi_expect("put_result", NULL);
}

int wh_pmi_get(const char *key, char *val, size_t vallen)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (!wh_pmi_text_ok(key) || (int)strlen(key) >= wh_pmi.keylen_max)
        return wh_pmi_fail("bad PMI key");
    const char *v;
    if (wh_pmi.mode == WH_PMI_SINGLETON) {
        wh_pmi_kv_t *kv = wh_pmi_local_find(key);
        if (!kv)
            return wh_pmi_fail("PMI key '%.64s' not found", key);
        v = kv->val;
    } else {
        int rc;
        if (wh_pmi_send("cmd=get kvsname=%s key=%s\n", wh_pmi.kvsname, key) != 0 ||
            wh_pmi_expect("get_result", &rc) != 0)
            return -1;
        v = wh_pmi_val(&wh_pmi_reply, "value");
        if (rc != 0 || !v)
            return wh_pmi_fail("PMI key '%.64s' not found", key);
    }
    size_t n = strlen(v);
    if (!val || n >= vallen)
        return wh_pmi_fail("PMI value of '%.64s' (%zu bytes) does not fit", key, n);
    memcpy(val, v, n + 1);
    return 0;
}

/* ---- name service ---- */

/* local (singleton) names live in the local KVS under a key no put can name */
static int wh_pmi_name_key(const char *service, char *key, size_t cap)
{
    int n = snprintf(key, cap, " name %s", service);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static int wh_pmi_name_cmd(const char *cmd, const char *result, const char *service, const char *port)
{
    char es[2 * 1024 + 1], ep[2 * 1024 + 1];
    if (!service || strlen(service) >= 1024 || wh_pmi_escape(service, es, sizeof es) < 0 ||
        (port && (strlen(port) >= 1024 || wh_pmi_escape(port, ep, sizeof ep) < 0)))
        return wh_pmi_fail("service name or port too long"), 1;
    int rc;
    if ((port ? wh_pmi_send("cmd=%s service=%s port=%s\n", cmd, es, ep)
              : wh_pmi_send("cmd=%s service=%s\n", cmd, es)) != 0 ||
        wh_pmi_expect(result, &rc) != 0)
        return -1;
    if (rc != 0) {
        const char *m = wh_pmi_val(&wh_pmi_reply, "msg");
        wh_pmi_fail("%.128s", m ? m : "refused by the PMI server");
        return 1;
    }
    return 0;
}

int wh_pmi_publish(const char *service, const char *port)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (wh_pmi.mode != WH_PMI_SINGLETON)
        return wh_pmi_name_cmd("publish_name", "publish_result", service, port);
    char key[1100];
    if (wh_pmi_name_key(service, key, sizeof key) != 0)
        return wh_pmi_fail("service name too long"), 1;
    wh_pmi_kv_t *kv = wh_pmi_local_find(key);
    if (kv && kv->val[0])
        return wh_pmi_fail("service '%.64s' is already published", service), 1;
    return wh_pmi_local_put(key, port) == 0 ? 0 : -1;
}

int wh_pmi_unpublish(const char *service)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (wh_pmi.mode != WH_PMI_SINGLETON)
        return wh_pmi_name_cmd("unpublish_name", "unpublish_result", service, NULL);
    char key[1100];
    wh_pmi_kv_t *kv = wh_pmi_name_key(service, key, sizeof key) == 0 ? wh_pmi_local_find(key) : NULL;
    if (!kv || !kv->val[0])
        return wh_pmi_fail("service '%.64s' is not published", service), 1;
    kv->val[0] = '\0';
    return 0;
}

int wh_pmi_lookup(const char *service, char *port, size_t portlen)
{
    if (wh_pmi_ready() != 0)
        return -1;
    const char *v;
    if (wh_pmi.mode != WH_PMI_SINGLETON) {
        int rc = wh_pmi_name_cmd("lookup_name", "lookup_result", service, NULL);
        if (rc != 0)
            return rc;
        if (!(v = wh_pmi_val(&wh_pmi_reply, "port")))
            return wh_pmi_fail("lookup_result without a port"), -1;
    } else {
        char key[1100];
        wh_pmi_kv_t *kv = wh_pmi_name_key(service, key, sizeof key) == 0 ? wh_pmi_local_find(key) : NULL;
        if (!kv || !kv->val[0])
            return wh_pmi_fail("service '%.64s' is not published", service), 1;
        v = kv->val;
    }
    if (strlen(v) >= portlen)
        return wh_pmi_fail("published port of '%.64s' is too long", service), 1;
    snprintf(port, portlen, "%s", v);
    return 0;
}

#define WH_PMI_WINDOW 32 /* requests in flight: ~2.5 KB, below any socket buffer */

/* One get_result: 0, 1 when the key is missing or too long for vallen (val
 * set to ""; the stream stays in step), -1 when the connection failed. */
/* ---------- spawning (MPICH's simple PMI: one mcmd=spawn block per command) ---------- */

int wh_pmi_universe_size(void)
{
    if (wh_pmi_ready() != 0 || wh_pmi.mode == WH_PMI_SINGLETON)
        return wh_pmi.size > 0 ? wh_pmi.size : 1;
    static int cached;
    int rc, n;
    if (cached > 0)
        return cached;
    if (wh_pmi_send("cmd=get_universe_size\n") != 0 || wh_pmi_expect("universe_size", &rc) != 0 || rc != 0 ||
        wh_pmi_int(&wh_pmi_reply, "size", &n) != 0 || n < 1)
        return wh_pmi.size;
    return cached = n;
}

/* one "key=value" line of a block, the value escaped */
static int wh_pmi_spawn_kv(const char *key, int idx, const char *val)
{
    static char esc[2 * WH_PMI_MAXLINE];
    if (wh_pmi_escape(val, esc, sizeof esc) < 0 || strlen(esc) + strlen(key) + 16 >= WH_PMI_MAXLINE)
        return wh_pmi_fail("spawn: '%.32s...' is too long for a PMI line", val), -1;
    return idx >= 0 ? wh_pmi_send("%s%d=%s\n", key, idx, esc) : wh_pmi_send("%s=%s\n", key, esc);
}

/* ---------- a process manager for a singleton ---------- */

/* wharfrun for a singleton: $WHARF_LAUNCHER, else bin/wharfrun beside the
 * lib/ directory of this library (the build tree and an install prefix both
 * look like that; lib/compat/ for the full-export library), else "wharfrun"
 * (found in PATH by execvp). */
static void wh_pmi_launcher_path(char *out, size_t cap)
{
    const char *env = getenv("WHARF_LAUNCHER");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return;
    }
    Dl_info di;
    if (dladdr((void *)wh_pmi_launcher_path, &di) && di.dli_fname && strchr(di.dli_fname, '/')) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof lib, "%s", di.dli_fname);
        char *slash = strrchr(lib, '/');
        *slash = '\0';
        snprintf(out, cap, "%s/../bin/wharfrun", lib);
        if (access(out, X_OK) == 0)
            return;
        snprintf(out, cap, "%s/../../bin/wharfrun", lib); /* lib/compat/ */
        if (access(out, X_OK) == 0)
            return;
    }
    snprintf(out, cap, "wharfrun");
}

/* Move the singleton's keys and published names to the server. */
static int wh_pmi_local_move(void)
{
    int rc = 0;
    for (wh_pmi_kv_t *kv = wh_pmi.kvs; kv && rc == 0; kv = kv->next) {
        if (strncmp(kv->key, " name ", 6) != 0)
            rc = wh_pmi_put(kv->key, kv->val);
        else if (kv->val[0])
            rc = wh_pmi_name_cmd("publish_name", "publish_result", kv->key + 6, kv->val) != 0 ? -1 : 0;
    }
    wh_pmi_local_free();
    return rc;
}

int wh_pmi_need_manager(void)
{
    if (wh_pmi.mode != WH_PMI_SINGLETON)
        return wh_pmi_ready();
    char path[PATH_MAX], fdarg[16], pidarg[24];
    wh_pmi_launcher_path(path, sizeof path);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return wh_pmi_fail("socketpair for the process manager: %s", strerror(errno));
    snprintf(fdarg, sizeof fdarg, "%d", sv[1]);
    snprintf(pidarg, sizeof pidarg, "%d", (int)getpid());
    char *argv[] = {"wharfrun", "--adopt", fdarg, pidarg, wh_pmi.kvsname, NULL};
    /* forked twice: wharfrun is not our child (nothing for the program to
     * reap or to wait for); it sees our end of the socket close when we exit */
    pid_t c = fork();
    if (c < 0) {
        close(sv[0]);
        close(sv[1]);
        return wh_pmi_fail("fork for the process manager: %s", strerror(errno));
    }
    if (c == 0) {
        if (fork() == 0) {
            fcntl(sv[1], F_SETFD, 0);
            if (strchr(path, '/'))
                execv(path, argv);
            else
                execvp(path, argv);
            _exit(127);
        }
        _exit(0);
    }
    close(sv[1]);
    while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
        ;
    wh_pmi.fd = sv[0];
    wh_pmi.rlen = 0;
    /* a launcher that never answers (WHARF_LAUNCHER naming something else) is
     * an error after WH_PMI_CONNECT_TIMEOUT_MS, not a hang */
    struct timeval tv = {WH_PMI_CONNECT_TIMEOUT_MS / 1000, 0}, none = {0, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    enum wh_pmi_mode was = wh_pmi.mode;
    int keylen = wh_pmi.keylen_max, vallen = wh_pmi.vallen_max;
    char name[WH_PMI_KVSNAME_MAX];
    snprintf(name, sizeof name, "%s", wh_pmi.kvsname);
    if (wh_pmi_handshake() != 0 || strcmp(wh_pmi.kvsname, name) != 0) {
        char why[256];
        snprintf(why, sizeof why, "%s", wh_pmi.err);
        wh_pmi_close();
        wh_pmi.mode = was;
        wh_pmi.keylen_max = keylen;
        wh_pmi.vallen_max = vallen;
        snprintf(wh_pmi.kvsname, sizeof wh_pmi.kvsname, "%s", name);
        return wh_pmi_fail("this singleton could not start a process manager (%s --adopt): %s", path, why);
    }
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
    wh_pmi.mode = WH_PMI_WIRE;
    WH_DEBUG("pmi", "singleton adopted by %s: job %s", path, wh_pmi.kvsname);
    return wh_pmi_local_move();
}

int wh_pmi_spawn(int count, const wh_pmi_spawn_cmd_t *cmds, int npre, const char *const *pre_keys,
                 const char *const *pre_vals, char *kvsname, size_t kvslen)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (wh_pmi.mode == WH_PMI_SINGLETON && wh_pmi_need_manager() != 0)
        return 1;
    for (int c = 0; c < count; c++) {
        const wh_pmi_spawn_cmd_t *k = &cmds[c];
        int ninfo = (k->host != NULL) + (k->wdir != NULL) + (k->path != NULL);
        if (wh_pmi_send("mcmd=spawn\nnprocs=%d\n", k->nprocs) != 0 || wh_pmi_spawn_kv("execname", -1, k->exec) ||
            wh_pmi_send("totspawns=%d\nspawnssofar=%d\nargcnt=%d\n", count, c + 1, k->argc) != 0)
            return -1;
        for (int a = 0; a < k->argc; a++)
            if (wh_pmi_spawn_kv("arg", a + 1, k->argv[a]) != 0)
                return -1;
        if (wh_pmi_send("preput_num=%d\n", npre) != 0)
            return -1;
        for (int i = 0; i < npre; i++)
            if (wh_pmi_spawn_kv("preput_key_", i, pre_keys[i]) || wh_pmi_spawn_kv("preput_val_", i, pre_vals[i]))
                return -1;
        if (wh_pmi_send("info_num=%d\n", ninfo) != 0)
            return -1;
        const char *ik[3] = {"host", "wdir", "path"}, *iv[3] = {k->host, k->wdir, k->path};
        for (int i = 0, n = 0; i < 3; i++)
            if (iv[i] && (wh_pmi_spawn_kv("info_key_", n, ik[i]) || wh_pmi_spawn_kv("info_val_", n++, iv[i])))
                return -1;
        if (wh_pmi_send("endcmd\n") != 0)
            return -1;
    }
    int rc;
    if (wh_pmi_expect("spawn_result", &rc) != 0)
        return -1;
    if (rc != 0) {
        const char *m = wh_pmi_val(&wh_pmi_reply, "msg");
        wh_pmi_fail("%.200s", m ? m : "the launcher refused to spawn");
        return 1;
    }
    const char *k = wh_pmi_val(&wh_pmi_reply, "kvsname");
    snprintf(kvsname, kvslen, "%s", k ? k : "");
    return 0;
}

static int wh_pmi_get_reply(char *val, size_t vallen)
{
    int rc;
    if (wh_pmi_expect("get_result", &rc) != 0)
        return -1;
    const char *v = wh_pmi_val(&wh_pmi_reply, "value");
    size_t n = v ? strlen(v) : 0;
    if (rc != 0 || !v || n >= vallen) {
        val[0] = '\0';
        return 1;
    }
    memcpy(val, v, n + 1);
    return 0;
}

int wh_pmi_get_ranks(const char *prefix, int n, int skip, char *vals, size_t stride)
{
    if (wh_pmi_ready() != 0)
        return -1;
    char key[128];
    if (wh_pmi.mode == WH_PMI_SINGLETON) {
        for (int r = 0; r < n; r++) {
            snprintf(key, sizeof key, "%s.%d", prefix, r);
            if (r != skip && wh_pmi_get(key, vals + (size_t)r * stride, stride) != 0)
                return -1;
        }
        return 0;
    }
    int sent = 0, got = 0, bad = -1;
    while (got < n) {
        while (sent < n && sent - got < WH_PMI_WINDOW) {
            if (sent != skip) {
                snprintf(key, sizeof key, "%s.%d", prefix, sent);
                if (!wh_pmi_text_ok(key) || (int)strlen(key) >= wh_pmi.keylen_max)
                    return wh_pmi_fail("bad PMI key");
                if (wh_pmi_send("cmd=get kvsname=%s key=%s\n", wh_pmi.kvsname, key) != 0)
                    return -1;
            }
            sent++;
        }
        if (got != skip) {
            int rc = wh_pmi_get_reply(vals + (size_t)got * stride, stride);
            if (rc < 0)
                return -1;
            if (rc > 0 && bad < 0)
                bad = got;
        }
        got++;
    }
    if (bad >= 0)
        return wh_pmi_fail("PMI key '%.64s.%d' not found or longer than %zu bytes", prefix, bad, stride - 1);
    return 0;
}

int wh_pmi_barrier(void)
{
    if (wh_pmi_ready() != 0)
        return -1;
    if (wh_pmi.mode == WH_PMI_SINGLETON)
        return 0;
    if (wh_pmi_send("cmd=barrier_in\n") != 0)
        return -1;
    return wh_pmi_expect("barrier_out", NULL);
}

int wh_pmi_finalize(void)
{
    if (wh_pmi_ready() != 0)
        return -1;
    int rc = 0;
    if (wh_pmi.mode == WH_PMI_WIRE) {
        if (wh_pmi_send("cmd=finalize\n") != 0 || wh_pmi_expect("finalize_ack", NULL) != 0)
            rc = -1;
        wh_pmi_close();
    }
    wh_pmi_local_free();
    wh_pmi.mode = WH_PMI_DONE;
    return rc;
}

void wh_pmi_abort_from_signal(int code, const char *msg)
{
    if (wh_pmi.mode != WH_PMI_WIRE || wh_pmi.fd < 0)
        return;
    char line[1024], digits[16];
    size_t n = 0, d = 0;
    static const char head[] = "cmd=abort exitcode=", mid[] = " message=";
    memcpy(line, head, sizeof head - 1);
    n = sizeof head - 1;
    unsigned v = code < 0 ? 1u : (unsigned)code;
    do
        digits[d++] = (char)('0' + v % 10);
    while ((v /= 10) && d < sizeof digits);
    while (d)
        line[n++] = digits[--d];
    memcpy(line + n, mid, sizeof mid - 1);
    n += sizeof mid - 1;
    for (const char *c = msg ? msg : ""; *c && n < sizeof line - 3; c++) {
        unsigned char b = (unsigned char)*c;
        if (b == ' ' || b == '\\')
            line[n++] = '\\';
        line[n++] = (b < 0x20 || b == 0x7f) ? '?' : (char)b;
    }
    line[n++] = '\n';
    ssize_t w = write(wh_pmi.fd, line, n);
    (void)w;
}

_Noreturn void wh_pmi_abort(int code, const char *msg)
{
    int status = (code & 0xff) ? (code & 0xff) : 1;
    if (wh_pmi.mode != WH_PMI_WIRE)
        _exit(status);
    char esc[1024];
    if (!msg || wh_pmi_escape(msg, esc, sizeof esc) < 0) {
        /* too long: keep the first half, which always fits escaped */
        esc[0] = '\0';
        if (msg) {
            char cut[sizeof esc / 2];
            snprintf(cut, sizeof cut, "%s", msg);
            if (wh_pmi_escape(cut, esc, sizeof esc) < 0)
                esc[0] = '\0';
        }
    }
    if (esc[0])
        wh_pmi_send("cmd=abort exitcode=%d message=%s\n", code, esc);
    else
        wh_pmi_send("cmd=abort exitcode=%d\n", code);
    /* The launcher now kills the job; wait for that (or for it to go away). */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = WH_PMI_ABORT_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
                                           (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            break;
        struct pollfd p = {.fd = wh_pmi.fd, .events = POLLIN};
        int n = poll(&p, 1, (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        char sink[256];
        ssize_t r = read(wh_pmi.fd, sink, sizeof sink);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            break;
    }
    _exit(status);
}
