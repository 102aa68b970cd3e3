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

static wr_pmi_group_t *wr_group(wr_pmi_ctx_t *c)
{
    return &c->s->groups[c->r->group];
}

static int wr_kvsname_ok(wr_pmi_ctx_t *c)
{
    const char *k = wh_pmi_val(c->m, "kvsname");
    return !k || !strcmp(k, wr_group(c)->kvsname); /* optional in PMI 1.1 */
}

/* Keys of a spawned group live under " gG KEY" (no put can name a key with
 * spaces); keys starting with "wharf-global-" are shared by every group (the
 * library's endpoint names, which connect processes of different groups). */
static const char *wr_scoped_key(int group, const char *k, char *buf, size_t len)
{
    if (group == 0 || !strncmp(k, "wharf-global-", 13))
        return k;
    int n = snprintf(buf, len, " g%d %s", group, k);
    return n < 0 || (size_t)n >= len ? NULL : buf;
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
    return wr_pmi_reply(c, c->rank, "cmd=appnum rc=0 appnum=%d\n", c->r->appnum);
}

static int wr_cmd_kvsname(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=my_kvsname rc=0 kvsname=%s\n", wr_group(c)->kvsname);
}

static int wr_cmd_universe(wr_pmi_ctx_t *c)
{
    return wr_pmi_reply(c, c->rank, "cmd=universe_size rc=0 size=%d\n", wr_group(c)->universe);
}

static int wr_cmd_put(wr_pmi_ctx_t *c)
{
    const char *k = wh_pmi_val(c->m, "key"), *v = wh_pmi_val(c->m, "value");
    if (!k || !v)
        return wr_pmi_fail(c, "cmd=put without key or value");
    if (!wr_kvsname_ok(c))
        return wr_pmi_reply(c, c->rank, "cmd=put_result rc=-1 msg=wrong_kvsname\n");
    char kb[WR_PMI_KEYLEN_MAX + 16];
    if (!*k || strlen(k) >= WR_PMI_KEYLEN_MAX || strlen(v) >= WR_PMI_VALLEN_MAX ||
        !(k = wr_scoped_key(c->r->group, k, kb, sizeof kb)))
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
    char kb[WR_PMI_KEYLEN_MAX + 16];
    if (strlen(k) >= WR_PMI_KEYLEN_MAX || !(k = wr_scoped_key(c->r->group, k, kb, sizeof kb)))
        return wr_pmi_reply(c, c->rank, "cmd=get_result rc=-1 msg=key_not_found\n");
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
    wr_pmi_group_t *g = wr_group(c);
    c->r->in_barrier = 1;
    s->nbarrier++;
    if (++g->nbarrier < g->size)
        return WR_PMI_OK;
    s->nbarrier -= g->nbarrier;
    g->nbarrier = 0;
    g->barriers++;
    s->barriers++;
    int rc = WR_PMI_OK;
    for (int i = g->first; i < g->first + g->size; i++) {
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

/* ---- spawning: mcmd=spawn blocks (MPICH's simple PMI) ---- */

void wr_spawn_req_free(wr_spawn_req_t *q)
{
    if (!q)
        return;
    for (int i = 0; i < q->ncmd; i++) {
        wr_spawn_cmd_t *k = &q->cmd[i];
        for (int a = 0; a < k->argc; a++)
            free(k->argv[a]);
        free(k->argv);
        free(k->exec);
        free(k->host);
        free(k->wdir);
        free(k->path);
    }
    for (int i = 0; i < q->npre; i++) {
        free(q->pre_key[i]);
        free(q->pre_val[i]);
    }
    free(q->pre_key);
    free(q->pre_val);
    free(q->cmd);
    free(q);
}

#define WR_SPAWN_ARGS_MAX 4096
#define WR_SPAWN_PROCS_MAX 100000

__attribute__((format(printf, 2, 3))) static void wr_spawn_bad(wr_spawn_req_t *q, const char *fmt, ...)
{
    if (q->bad)
        return;
    q->bad = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q->why, sizeof q->why, fmt, ap);
    va_end(ap);
}

static char **wr_grow_strs(char **v, int n)
{
    return realloc(v, (size_t)(n + 1) * sizeof *v);
}

/* The index in "<prefix><N>" (N >= base, < limit) or -1. */
static int wr_key_index(const char *key, const char *prefix, int base, int limit)
{
    size_t pl = strlen(prefix);
    if (strncmp(key, prefix, pl) != 0 || !key[pl])
        return -1;
    char *end;
    long v = strtol(key + pl, &end, 10);
    return *end || v < base || v >= limit ? -1 : (int)v - base;
}

/* One line inside a block: key=value. */
static int wr_mcmd_line(wr_pmi_ctx_t *c)
{
    wr_spawn_req_t *q = c->r->spawn;
    const wh_pmi_msg_t *m = c->m;
    if (m->npairs != 1)
        return wr_pmi_fail(c, "malformed line in an mcmd=spawn block");
    const char *k = m->pair[0].key, *v = m->pair[0].val;
    if (!strcmp(k, "endcmd")) {
        c->r->in_mcmd = 0;
        if (q->ncmd >= q->total || q->bad)
            return WR_PMI_OK; /* answered once the last block is in */
        return WR_PMI_OK;
    }
    wr_spawn_cmd_t *cmd = &q->cmd[q->ncmd - 1];
    char *end;
    long iv = strtol(v, &end, 10);
    int isnum = *v && !*end;
    int idx;
    if (!strcmp(k, "nprocs")) {
        if (!isnum || iv < 1 || iv > WR_SPAWN_PROCS_MAX)
            wr_spawn_bad(q, "nprocs=%.16s is not 1..%d", v, WR_SPAWN_PROCS_MAX);
        else
            cmd->nprocs = (int)iv;
    } else if (!strcmp(k, "execname")) {
        free(cmd->exec);
        if (!(cmd->exec = strdup(v)))
            return wr_pmi_fail(c, "out of memory");
    } else if (!strcmp(k, "totspawns") || !strcmp(k, "spawnssofar")) {
        if (!isnum || iv < 1 || iv > 4096)
            wr_spawn_bad(q, "%s=%.16s is out of range", k, v);
        else if (k[0] == 't' && q->ncmd == 1)
            q->total = (int)iv;
        else if (k[0] == 't' && iv != q->total)
            wr_spawn_bad(q, "totspawns changed within one request");
        else if (k[0] == 's' && iv != q->ncmd)
            wr_spawn_bad(q, "spawnssofar=%ld, expected %d", iv, q->ncmd);
    } else if (!strcmp(k, "argcnt") || !strcmp(k, "preput_num") || !strcmp(k, "info_num")) {
        if (!isnum || iv < 0 || iv > WR_SPAWN_ARGS_MAX)
            wr_spawn_bad(q, "%s=%.16s is out of range", k, v);
    } else if ((idx = wr_key_index(k, "arg", 1, WR_SPAWN_ARGS_MAX + 1)) >= 0) {
        if (idx != cmd->argc) {
            wr_spawn_bad(q, "%s out of order", k);
        } else {
            char **a = wr_grow_strs(cmd->argv, cmd->argc + 1);
            if (!a)
                return wr_pmi_fail(c, "out of memory");
            cmd->argv = a;
            if (!(a[cmd->argc] = strdup(v)))
                return wr_pmi_fail(c, "out of memory");
            a[++cmd->argc] = NULL;
        }
    } else if ((idx = wr_key_index(k, "preput_key_", 0, WR_SPAWN_ARGS_MAX)) >= 0) {
        if (q->ncmd == 1) { /* every block repeats them: keep the first's */
            char **kk = wr_grow_strs(q->pre_key, q->npre + 1), **vv = kk ? wr_grow_strs(q->pre_val, q->npre + 1) : NULL;
            if (kk)
                q->pre_key = kk;
            if (vv)
                q->pre_val = vv;
            if (!kk || !vv || !(q->pre_key[q->npre] = strdup(v)))
                return wr_pmi_fail(c, "out of memory");
            q->pre_val[q->npre++] = NULL;
        }
    } else if ((idx = wr_key_index(k, "preput_val_", 0, WR_SPAWN_ARGS_MAX)) >= 0) {
        if (q->ncmd == 1) {
            if (idx != q->npre - 1 || q->pre_val[idx])
                wr_spawn_bad(q, "%s without its key", k);
            else if (!(q->pre_val[idx] = strdup(v)))
                return wr_pmi_fail(c, "out of memory");
        }
    } else if ((idx = wr_key_index(k, "info_key_", 0, WR_SPAWN_ARGS_MAX)) >= 0) {
        c->r->info_next = !strcmp(v, "host") ? 1 : !strcmp(v, "wdir") ? 2 : !strcmp(v, "path") ? 3 : 0;
    } else if ((idx = wr_key_index(k, "info_val_", 0, WR_SPAWN_ARGS_MAX)) >= 0) {
        char **slots[3] = {&cmd->host, &cmd->wdir, &cmd->path};
        int which = c->r->info_next;
        c->r->info_next = 0;
        if (which >= 1 && which <= 3) {
            free(*slots[which - 1]);
            if (!(*slots[which - 1] = strdup(v)))
                return wr_pmi_fail(c, "out of memory");
        }
    } /* other keys (MPICH adds some) are ignored */
    return WR_PMI_OK;
}

/* mcmd=spawn: a block starts.  After the last block of a request (and its
 * endcmd) the request is handed to the loop. */
static int wr_mcmd_start(wr_pmi_ctx_t *c)
{
    if (c->r->group < 0)
        return wr_pmi_fail(c, "bad group");
    wr_spawn_req_t *q = c->r->spawn;
    if (!q) {
        if (!(q = calloc(1, sizeof *q)))
            return wr_pmi_fail(c, "out of memory");
        q->total = 1;
        c->r->spawn = q;
    }
    if (q->ncmd >= q->total)
        return wr_pmi_fail(c, "more mcmd=spawn blocks than totspawns");
    wr_spawn_cmd_t *k = realloc(q->cmd, (size_t)(q->ncmd + 1) * sizeof *k);
    if (!k)
        return wr_pmi_fail(c, "out of memory");
    q->cmd = k;
    memset(&q->cmd[q->ncmd++], 0, sizeof *k);
    c->r->in_mcmd = 1;
    c->r->info_next = 0;
    return WR_PMI_OK;
}

int wr_pmisrv_spawn_done(wr_pmisrv_t *s, int rc, const char *kvsname, const char *msg)
{
    int i = s->spawn_rank;
    wr_spawn_req_free(s->spawn_req);
    s->spawn_req = NULL;
    if (i < 0 || i >= s->size)
        return WR_PMI_OK;
    wr_pmi_ctx_t c = {.s = s, .rank = i, .r = &s->r[i]};
    char esc[512];
    if (rc == 0)
        return wr_pmi_reply(&c, i, "cmd=spawn_result rc=0 kvsname=%s\n", kvsname);
    if (wh_pmi_escape(msg ? msg : "spawn failed", esc, sizeof esc) < 0)
        snprintf(esc, sizeof esc, "spawn\\ failed");
    return wr_pmi_reply(&c, i, "cmd=spawn_result rc=-1 msg=%s\n", esc);
}

int wr_pmisrv_reserve(wr_pmisrv_t *s, int cap)
{
    if (cap <= s->cap)
        return 0;
    wr_pmi_rank_t *r = realloc(s->r, (size_t)cap * sizeof *r);
    if (!r)
        return -1;
    memset(r + s->cap, 0, (size_t)(cap - s->cap) * sizeof *r);
    s->r = r;
    s->cap = cap;
    return 0;
}

int wr_pmisrv_add_group(wr_pmisrv_t *s, const char *kvsname, int n, const int *appnum,
                        const wr_spawn_req_t *req, const int *ids)
{
    if (n < 1 || s->ngroups >= WR_PMI_GROUPS_MAX || n > s->cap - s->size)
        return -1;
    int g = s->ngroups, first = s->size;
    wr_pmi_group_t *G = &s->groups[g];
    memset(G, 0, sizeof *G);
    snprintf(G->kvsname, sizeof G->kvsname, "%s", kvsname);
    G->first = first;
    G->size = n;
    G->universe = s->groups[0].universe;
    for (int i = 0; req && i < req->npre; i++) {
        char kb[WR_PMI_KEYLEN_MAX + 16];
        const char *k = req->pre_val[i] && strlen(req->pre_key[i]) < WR_PMI_KEYLEN_MAX
                        ? wr_scoped_key(g, req->pre_key[i], kb, sizeof kb) : NULL;
        if (k && wr_kv_put(s, k, req->pre_val[i]) != 0)
            return -1;
    }
    for (int i = 0; i < n; i++) {
        wr_pmi_rank_t *r = &s->r[first + i];
        memset(r, 0, sizeof *r);
        r->group = g;
        r->grank = i;
        r->appnum = appnum ? appnum[i] : 0;
        r->pmiid = ids ? ids[i] : first + i;
        r->bound = !ids;
    }
    s->ngroups++;
    s->size += n;
    return first;
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
                        prefix, s->groups[s->r[i].group].size, s->r[i].grank);
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
    int endcmd = len >= 6 && !strncmp(line, "endcmd", 6) && (len == 6 || (len == 7 && line[6] == '\n'));
    if (endcmd) /* the bare word that ends an mcmd block */
        line = "endcmd=", len = 7;
    if (wh_pmi_parse(line, len, &m) != 0)
        return wr_pmi_fail(&c, "malformed PMI line");
    if (*rank >= 0 && *rank < s->size && s->r[*rank].in_mcmd && !s->r[*rank].aborted) {
        c.r = &s->r[*rank];
        int ev = wr_mcmd_line(&c);
        wr_spawn_req_t *q = c.r->spawn;
        if (ev == WR_PMI_OK && !c.r->in_mcmd && q && (q->ncmd >= q->total || q->bad)) {
            c.r->spawn = NULL; /* complete (or hopeless): hand it over */
            s->spawn_req = q;
            s->spawn_rank = *rank;
            if (q->bad)
                return wr_pmisrv_spawn_done(s, -1, NULL, q->why);
            for (int i = 0; i < q->ncmd; i++)
                if (!q->cmd[i].exec || q->cmd[i].nprocs < 1)
                    return wr_pmisrv_spawn_done(s, -1, NULL, "a spawn command without execname or nprocs");
            return WR_PMI_SPAWN;
        }
        return ev;
    }
    const char *cmd = wh_pmi_val(&m, "cmd");
    const char *mcmd = cmd ? NULL : wh_pmi_val(&m, "mcmd");
    if (!cmd && !mcmd)
        return wr_pmi_fail(&c, "PMI line without cmd=");
    if (*rank < 0 || *rank >= s->size)
        return wr_pmi_initack(&c, cmd ? cmd : "mcmd", rank);
    c.r = &s->r[*rank];
    c.r->contacted = 1;
    if (c.r->aborted)
        return WR_PMI_OK; /* the job is going down anyway */
    if (!cmd)
        cmd = "mcmd";
    if (c.r->finalized)
        return wr_pmi_fail(&c, "cmd=%.32s after cmd=finalize", cmd);
    if (c.r->in_barrier)
        return wr_pmi_fail(&c, "cmd=%.32s while waiting in a barrier", cmd);
    if (mcmd) {
        if (strcmp(mcmd, "spawn") != 0)
            return wr_pmi_fail(&c, "unknown PMI multi-line command");
        if (!c.r->inited)
            return wr_pmi_fail(&c, "mcmd=spawn before cmd=init");
        return wr_mcmd_start(&c);
    }
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
    s->cap = size;
    snprintf(s->kvsname, sizeof s->kvsname, "%s", kvsname);
    if (secret)
        snprintf(s->secret, sizeof s->secret, "%s", secret);
    s->ntab = 64;
    s->r = calloc((size_t)size, sizeof *s->r);
    s->tab = calloc(s->ntab, sizeof *s->tab);
    s->groups = calloc(WR_PMI_GROUPS_MAX, sizeof *s->groups);
    if (!s->r || !s->tab || !s->groups) {
        wr_pmisrv_free(s);
        return NULL;
    }
    for (int i = 0; i < size; i++) {
        s->r[i].pmiid = ids ? ids[i] : i;
        s->r[i].grank = i;
    }
    s->ngroups = 1;
    s->spawn_rank = -1;
    snprintf(s->groups[0].kvsname, sizeof s->groups[0].kvsname, "%s", kvsname);
    s->groups[0].size = size;
    s->groups[0].universe = size;
    return s;
}

void wr_pmisrv_free(wr_pmisrv_t *s)
{
    if (!s)
        return;
    if (s->r)
        for (int i = 0; i < s->size; i++) {
            wr_buf_free(&s->r[i].out);
            wr_spawn_req_free(s->r[i].spawn);
        }
    wr_spawn_req_free(s->spawn_req);
    free(s->groups);
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
