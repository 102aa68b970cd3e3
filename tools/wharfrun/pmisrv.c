/* PMI-1 server state machine and KVS.  Every input is untrusted: a malformed
 * or out-of-order line is reported as WR_PMI_FAIL with a reason (the loop
 * then fails the rank), never crashes or blocks. */
#include "pmisrv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmi/wire.h"

typedef struct wr_pmi_ctx {
    wr_pmisrv_t *s;
    int rank;
    wr_pmi_rank_t *r;
    const wh_pmi_msg_t *m;
    char *why;
    size_t whylen;
} wr_pmi_ctx_t;

__attribute__((format(printf, 2, 3))) static int wr_pmi_fail(wr_pmi_ctx_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (c->why && c->whylen)
        vsnprintf(c->why, c->whylen, fmt, ap);
    va_end(ap);
    return WR_PMI_FAIL;
}

__attribute__((format(printf, 3, 4))) static int wr_pmi_reply(wr_pmi_ctx_t *c, int rank,
                                                                const char *fmt, ...)
{
    char line[WH_PMI_MAXLINE + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line)
        return wr_pmi_fail(c, "reply too long");
    wr_buf_t *out = &c->s->r[rank].out;
    if (out->len + (size_t)n > WR_PMI_OUT_MAX)
        return wr_pmi_fail(c, "rank does not read its PMI replies");
    if (wr_buf_append(out, line, (size_t)n) != 0)
        return wr_pmi_fail(c, "out of memory");
    return WR_PMI_OK;
}

/* ---- KVS ---- */

static size_t wr_kv_hash(const char *k)
{
    size_t h = 1469598103934665603u;
    for (; *k; k++)
        h = (h ^ (unsigned char)*k) * 1099511628211u;
    return h;
}

static wr_pmi_kv_t *wr_kv_find(const wr_pmisrv_t *s, const char *key)
{
    for (wr_pmi_kv_t *kv = s->tab[wr_kv_hash(key) & (s->ntab - 1)]; kv; kv = kv->next)
        if (!strcmp(kv->key, key))
            return kv;
    return NULL;
}

static int wr_kv_grow(wr_pmisrv_t *s)
{
    size_t n = s->ntab * 2;
    wr_pmi_kv_t **t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->ntab; i++) {
        while (s->tab[i]) {
            wr_pmi_kv_t *kv = s->tab[i];
            s->tab[i] = kv->next;
            size_t h = wr_kv_hash(kv->key) & (n - 1);
            kv->next = t[h];
            t[h] = kv;
        }
    }
    free(s->tab);
    s->tab = t;
    s->ntab = n;
    return 0;
}

/* 0, or -1 when the KVS is full or memory runs out. */
static int wr_kv_put(wr_pmisrv_t *s, const char *key, const char *val)
{
    size_t vl = strlen(val), kl = strlen(key);
    wr_pmi_kv_t *kv = wr_kv_find(s, key);
    size_t old = kv ? strlen(kv->val) : 0;
    if (s->kvbytes - old + vl + (kv ? 0 : kl) > WR_PMI_KVS_BYTES_MAX)
        return -1;
    char *v = malloc(vl + 1);
    if (!v)
        return -1;
    memcpy(v, val, vl + 1);
    if (kv) {
        free(kv->val);
        kv->val = v;
        s->kvbytes = s->kvbytes - old + vl;
        return 0;
    }
    if (s->nkv >= s->ntab && wr_kv_grow(s) != 0) {
        free(v);
        return -1;
    }
    kv = calloc(1, sizeof *kv);
    if (!kv || !(kv->key = malloc(kl + 1))) {
        free(kv);
        free(v);
        return -1;
    }
    memcpy(kv->key, key, kl + 1);
    kv->val = v;
    size_t h = wr_kv_hash(key) & (s->ntab - 1);
    kv->next = s->tab[h];
    s->tab[h] = kv;
    s->nkv++;
    s->kvbytes += kl + vl;
    return 0;
}

/* ---- commands ---- */

static int wr_kvsname_ok(wr_pmi_ctx_t *c)
{
    const char *k = wh_pmi_val(c->m, "kvsname");
    return !k || !strcmp(k, c->s->kvsname); /* optional in PMI 1.1 */
}

static int wr_cmd_init(wr_pmi_ctx_t *c)
{
    int v = -1;
    int ok = wh_pmi_int(c->m, "pmi_version", &v) == 0 && v == 1;
    c->r->inited |= ok;
    return wr_pmi_reply(c, c->rank, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=%d\n",
                        ok ? 0 : -1);
}

static int wr_cmd_maxes(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=maxes rc=0 kvsname_max=%d keylen_max=%d vallen_max=%d\n",
                        WR_PMI_KVSNAME_MAX, WR_PMI_KEYLEN_MAX, WR_PMI_VALLEN_MAX);
}

static int wr_cmd_appnum(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=appnum rc=0 appnum=0\n");
}

static int wr_cmd_kvsname(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=my_kvsname rc=0 kvsname=%s\n", c->s->kvsname);
}

static int wr_cmd_universe(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=universe_size rc=0 size=%d\n", c->s->size);
}

static int wr_cmd_put(wr_pmi_ctx_t *c)
{
    const char *k = wh_pmi_val(c->m, "key"), *v = wh_pmi_val(c->m, "value");
    if (!k || !v)
        return wr_pmi_fail(c, "cmd=put without key or value");
    if (!wr_kvsname_ok(c))
        return wr_pmi_reply(c, c->rank, "cmd=put_result rc=-1 msg=wrong_kvsname\n");
    if (!*k || strlen(k) >= WR_PMI_KEYLEN_MAX || strlen(v) >= WR_PMI_VALLEN_MAX)
        return wr_pmi_reply(c, c->rank, "cmd=put_result rc=-1 msg=key_or_value_too_long\n");
    if (wr_kv_put(c->s, k, v) != 0)
        return wr_pmi_fail(c, "PMI key-value space full (%zu bytes)", c->s->kvbytes);
    return wr_pmi_reply(c, c->rank, "cmd=put_result rc=0 msg=success\n");
}

static int wr_cmd_get(wr_pmi_ctx_t *c)
{
    const char *k = wh_pmi_val(c->m, "key");
    if (!k)
        return wr_pmi_fail(c, "cmd=get without key");
    if (!wr_kvsname_ok(c))
        return wr_pmi_reply(c, c->rank, "cmd=get_result rc=-1 msg=wrong_kvsname\n");
    const wr_pmi_kv_t *kv = wr_kv_find(c->s, k);
    if (!kv)
        return wr_pmi_reply(c, c->rank, "cmd=get_result rc=-1 msg=key_not_found\n");
    char esc[2 * WR_PMI_VALLEN_MAX + 1];
    if (wh_pmi_escape(kv->val, esc, sizeof esc) < 0)
        return wr_pmi_fail(c, "stored value does not fit a reply");
    return wr_pmi_reply(c, c->rank, "cmd=get_result rc=0 msg=success value=%s\n", esc);
}

static int wr_cmd_barrier(wr_pmi_ctx_t *c)
{
    wr_pmisrv_t *s = c->s;
    c->r->in_barrier = 1;
    if (++s->nbarrier < s->size)
        return WR_PMI_OK;
    s->nbarrier = 0;
    s->barriers++;
    int rc = WR_PMI_OK;
    for (int i = 0; i < s->size; i++) {
        s->r[i].in_barrier = 0;
        if (wr_pmi_reply(c, i, "cmd=barrier_out rc=0\n") != WR_PMI_OK)
            rc = WR_PMI_FAIL;
    }
    return rc;
}

static int wr_cmd_abort(wr_pmi_ctx_t *c)
{
    int code = 1;
    if (wh_pmi_int(c->m, "exitcode", &code) != 0)
        code = 1;
    c->r->aborted = 1;
    c->r->abort_code = code;
    const char *msg = wh_pmi_val(c->m, "message");
    wr_sanitize(msg ? msg : "", c->r->abort_msg, sizeof c->r->abort_msg);
    return WR_PMI_ABORT;
}

static int wr_cmd_finalize(wr_pmi_ctx_t *c)
{
    c->r->finalized = 1;
    return wr_pmi_reply(c, c->rank, "cmd=finalize_ack rc=0\n");
}

/* Name service: published names live in the KVS under " name SERVICE" (a
 * key no cmd=put can name: keys on the wire have no spaces); unpublishing
 * empties the value. */
static int wr_cmd_names(wr_pmi_ctx_t *c)
{
    const char *cmd = wh_pmi_val(c->m, "cmd"), *svc = wh_pmi_val(c->m, "service"), *port = wh_pmi_val(c->m, "port");
    int pub = !strcmp(cmd, "publish_name"), unpub = !strcmp(cmd, "unpublish_name");
    const char *res = pub ? "publish_result" : unpub ? "unpublish_result" : "lookup_result";
    char key[WR_PMI_KEYLEN_MAX];
    if (!svc || (pub && !port))
        return wr_pmi_fail(c, "cmd=%s without service%s", cmd, pub ? " or port" : "");
    int n = snprintf(key, sizeof key, " name %s", svc);
    if (n < 0 || (size_t)n >= sizeof key || (pub && strlen(port) >= WR_PMI_VALLEN_MAX))
        return wr_pmi_reply(c, c->rank, "cmd=%s rc=-1 msg=service_name_or_port_too_long\n", res);
    wr_pmi_kv_t *kv = wr_kv_find(c->s, key);
    int live = kv && kv->val[0];
    if (pub) {
        if (live)
            return wr_pmi_reply(c, c->rank, "cmd=%s rc=-1 msg=service_already_published\n", res);
        if (wr_kv_put(c->s, key, port) != 0)
            return wr_pmi_reply(c, c->rank, "cmd=%s rc=-1 msg=name_space_full\n", res);
        return wr_pmi_reply(c, c->rank, "cmd=%s rc=0 msg=success\n", res);
    }
    if (!live)
        return wr_pmi_reply(c, c->rank, "cmd=%s rc=-1 msg=service_not_published\n", res);
    if (unpub) {
        kv->val[0] = '\0';
        return wr_pmi_reply(c, c->rank, "cmd=%s rc=0 msg=success\n", res);
    }
    char esc[2 * WR_PMI_VALLEN_MAX + 1];
    if (wh_pmi_escape(kv->val, esc, sizeof esc) < 0)
        return wr_pmi_fail(c, "stored port does not fit a reply");
    return wr_pmi_reply(c, c->rank, "cmd=%s rc=0 msg=success port=%s\n", res, esc);
}

static int wr_cmd_initack_again(wr_pmi_ctx_t *c)
{
    return wr_pmi_fail(c, "cmd=initack on an identified connection");
}

typedef struct wr_pmi_cmd {
    const char *name;
    int (*fn)(wr_pmi_ctx_t *c);
    int need_init; /* only after cmd=init */
} wr_pmi_cmd_t;

static const wr_pmi_cmd_t wr_pmi_cmds[] = {
    {.name = "init", .fn = wr_cmd_init, .need_init = 0},
    {.name = "initack", .fn = wr_cmd_initack_again, .need_init = 0},
    {.name = "get_maxes", .fn = wr_cmd_maxes, .need_init = 1},
    {.name = "get_appnum", .fn = wr_cmd_appnum, .need_init = 1},
    {.name = "get_my_kvsname", .fn = wr_cmd_kvsname, .need_init = 1},
    {.name = "get_universe_size", .fn = wr_cmd_universe, .need_init = 1},
    {.name = "put", .fn = wr_cmd_put, .need_init = 1},
    {.name = "get", .fn = wr_cmd_get, .need_init = 1},
    {.name = "barrier_in", .fn = wr_cmd_barrier, .need_init = 1},
    {.name = "abort", .fn = wr_cmd_abort, .need_init = 0},
    {.name = "finalize", .fn = wr_cmd_finalize, .need_init = 1},
    {.name = "publish_name", .fn = wr_cmd_names, .need_init = 1},
    {.name = "unpublish_name", .fn = wr_cmd_names, .need_init = 1},
    {.name = "lookup_name", .fn = wr_cmd_names, .need_init = 1},
};

/* The unbound rank with PMI_ID id, or -1 (reason in c->why). */
static int wr_pmi_find_id(wr_pmi_ctx_t *c, int id)
{
    for (int i = 0; i < c->s->size; i++) {
        if (c->s->r[i].pmiid != id)
            continue;
        if (c->s->r[i].bound)
            return wr_pmi_fail(c, "pmiid %d connected twice", id), -1;
        return i;
    }
    return wr_pmi_fail(c, "unknown pmiid %d", id), -1;
}

/* Bind the connection to rank i and queue the initack replies, after
 * prefix (the auth_ok line, or ""). */
static int wr_pmi_bind(wr_pmi_ctx_t *c, int i, const char *prefix, int *rank)
{
    wr_pmisrv_t *s = c->s;
    s->r[i].bound = 1;
    s->r[i].contacted = 1;
    *rank = i;
    return wr_pmi_reply(c, i, "%scmd=initack\ncmd=set size=%d\ncmd=set rank=%d\ncmd=set debug=0\n",
                        prefix, s->size, i);
}

/* First line of a TCP connection without authentication: cmd=initack pmiid=N. */
static int wr_pmi_initack(wr_pmi_ctx_t *c, const char *cmd, int *rank)
{
    int id;
    if (c->s->secret[0])
        return wr_pmi_fail(c, "not authenticated (this job requires cmd=auth_hello)");
    if (strcmp(cmd, "initack") != 0)
        return wr_pmi_fail(c, "first line on a TCP connection is not cmd=initack");
    if (wh_pmi_int(c->m, "pmiid", &id) != 0)
        return wr_pmi_fail(c, "cmd=initack without a valid pmiid");
    int i = wr_pmi_find_id(c, id);
    return i < 0 ? WR_PMI_FAIL : wr_pmi_bind(c, i, "", rank);
}

int wr_pmisrv_anon_line(wr_pmisrv_t *s, wr_pmi_anon_t *a, int *rank, const char *line,
                        size_t len, char *reply, size_t replylen, char *why, size_t whylen)
{
    static wh_pmi_msg_t m;
    wr_pmi_ctx_t c = {.s = s, .rank = -1, .m = &m, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = '\0';
    if (reply && replylen)
        reply[0] = '\0';
    *rank = -1;
    if (wh_pmi_parse(line, len, &m) != 0)
        return wr_pmi_fail(&c, "malformed PMI line");
    const char *cmd = wh_pmi_val(&m, "cmd");
    if (!cmd)
        return wr_pmi_fail(&c, "PMI line without cmd=");
    if (!s->secret[0])
        return wr_pmi_initack(&c, cmd, rank);
    if (a->stage == 0) {
        int id;
        const char *cn = wh_pmi_val(&m, "cnonce");
        if (strcmp(cmd, "auth_hello") != 0)
            return wr_pmi_fail(&c, "not authenticated (first line is not cmd=auth_hello)");
        if (wh_pmi_int(&m, "pmiid", &id) != 0 || !wh_pmi_is_hex(cn, WH_PMI_NONCE_HEX) ||
            !wh_pmi_is_hex(a->snonce, WH_PMI_NONCE_HEX))
            return wr_pmi_fail(&c, "malformed cmd=auth_hello");
        int i = wr_pmi_find_id(&c, id);
        if (i < 0)
            return WR_PMI_FAIL;
        int n = snprintf(reply, replylen, "cmd=auth_challenge snonce=%s\n", a->snonce);
        if (n < 0 || (size_t)n >= replylen)
            return wr_pmi_fail(&c, "reply too long");
        memcpy(a->cnonce, cn, WH_PMI_NONCE_HEX + 1);
        a->rank = i;
        a->stage = 1;
        return WR_PMI_OK;
    }
    if (strcmp(cmd, "auth_response") != 0)
        return wr_pmi_fail(&c, "not authenticated (expected cmd=auth_response)");
    if (a->rank < 0 || a->rank >= s->size)
        return wr_pmi_fail(&c, "bad handshake state");
    int i = a->rank, id = s->r[i].pmiid;
    if (!wh_pmi_auth_check(s->secret, "client", id, a->snonce, a->cnonce, wh_pmi_val(&m, "mac")))
        return wr_pmi_fail(&c, "authentication failed for pmiid %d (wrong key)", id);
    if (s->r[i].bound) /* another connection proved it first */
        return wr_pmi_fail(&c, "pmiid %d connected twice", id);
    char ok[32 + WH_PMI_MAC_HEX], mac[WH_PMI_MAC_HEX + 1];
    wh_pmi_auth_mac(s->secret, "server", id, a->snonce, a->cnonce, mac);
    snprintf(ok, sizeof ok, "cmd=auth_ok mac=%s\n", mac);
    return wr_pmi_bind(&c, i, ok, rank);
}

int wr_pmisrv_line(wr_pmisrv_t *s, int *rank, const char *line, size_t len, char *why,
                   size_t whylen)
{
    static wh_pmi_msg_t m; /* 4 KB; the server is single-threaded */
    wr_pmi_ctx_t c = {.s = s, .rank = *rank, .m = &m, .why = why, .whylen = whylen};
    if (why && whylen)
        why[0] = '\0';
    if (wh_pmi_parse(line, len, &m) != 0)
        return wr_pmi_fail(&c, "malformed PMI line");
    const char *cmd = wh_pmi_val(&m, "cmd");
    if (!cmd)
        return wr_pmi_fail(&c, "PMI line without cmd=");
    if (*rank < 0 || *rank >= s->size)
        return wr_pmi_initack(&c, cmd, rank);
    c.r = &s->r[*rank];
    c.r->contacted = 1;
    if (c.r->aborted)
        return WR_PMI_OK; /* the job is going down anyway */
    if (c.r->finalized)
        return wr_pmi_fail(&c, "cmd=%.32s after cmd=finalize", cmd);
    if (c.r->in_barrier)
        return wr_pmi_fail(&c, "cmd=%.32s while waiting in a barrier", cmd);
    for (size_t i = 0; i < sizeof wr_pmi_cmds / sizeof wr_pmi_cmds[0]; i++) {
        if (strcmp(cmd, wr_pmi_cmds[i].name) != 0)
            continue;
        if (wr_pmi_cmds[i].need_init && !c.r->inited)
            return wr_pmi_fail(&c, "cmd=%s before cmd=init", cmd);
        return wr_pmi_cmds[i].fn(&c);
    }
    char safe[64];
    wr_sanitize(cmd, safe, sizeof safe);
    return wr_pmi_fail(&c, "unknown PMI command '%s'", safe);
}

wr_pmisrv_t *wr_pmisrv_new(int size, const char *kvsname, const int *ids, const char *secret)
{
    wr_pmisrv_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->size = size;
    snprintf(s->kvsname, sizeof s->kvsname, "%s", kvsname);
    if (secret)
        snprintf(s->secret, sizeof s->secret, "%s", secret);
    s->ntab = 64;
    s->r = calloc((size_t)size, sizeof *s->r);
    s->tab = calloc(s->ntab, sizeof *s->tab);
    if (!s->r || !s->tab) {
        wr_pmisrv_free(s);
        return NULL;
    }
    for (int i = 0; i < size; i++)
        s->r[i].pmiid = ids ? ids[i] : i;
    return s;
}

void wr_pmisrv_free(wr_pmisrv_t *s)
{
    if (!s)
        return;
    if (s->r)
        for (int i = 0; i < s->size; i++)
            wr_buf_free(&s->r[i].out);
    if (s->tab) {
        for (size_t i = 0; i < s->ntab; i++) {
            while (s->tab[i]) {
                wr_pmi_kv_t *kv = s->tab[i];
                s->tab[i] = kv->next;
                free(kv->key);
                free(kv->val);
                free(kv);
            }
        }
    }
    free(s->tab);
    free(s->r);
    memset(s->secret, 0, sizeof s->secret);
    free(s);
}
