/* The coordinator's device-buffer decisions (see gpu.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "coord/coord.h"
#include "coord/gpu.h"
#include "core/core.h"
#include "locality/locality.h"
#include "mem/cuda/wh_cuda.h"
#include "util/log.h"
#include "util/tunables.h"

const char *const wh_gclass_names[WH_GCLASS_MAX] = {"latency", "bandwidth"};
const char *const wh_ds_names[WH_DS_MAX] = {"gdrcopy", "eager", "staged", "pipeline", "cuda-ipc"};
const char *const wh_grel_names[WH_GREL_SAME + 1] = {"unknown", "GPU not visible here", "visible, no peer access",
                                                     "peer GPUs", "same GPU"};

wh_gsw_t wh_gsw[WH_GCLASS_MAX];
char wh_gsw_source[256] = "defaults";
wh_gpeer_t *wh_gpeers;

/* ---------- pure parts (unit.coord_gpu) ---------- */

static const char *const keys[] = {"gdr_d2h_max", "gdr_h2d_max", "eager_max", "pipeline_min", "ipc_min"};
#define NKEYS 5
static size_t *field(wh_gsw_t *t, int k)
{
    size_t *f[NKEYS] = {&t->gdr_d2h_max, &t->gdr_h2d_max, &t->eager_max, &t->pipe_min, &t->ipc_min};
    return f[k];
}

static int parse_size(const char *v, size_t *out)
{
    if (!strcmp(v, "never")) {
        *out = WH_GSW_NEVER;
        return 0;
    }
    if (!isdigit((unsigned char)v[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned long long mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1ull << 10, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1ull << 20, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1ull << 30, end++;
    if (errno || *end || x > (unsigned long long)WH_GSW_NEVER / mul)
        return -1;
    *out = (size_t)(x * mul);
    return 0;
}

int wh_gsw_parse(const char *text, wh_gsw_t t[WH_GCLASS_MAX], char *err, size_t errlen)
{
    wh_gsw_t tmp[WH_GCLASS_MAX];
    memcpy(tmp, t, sizeof tmp);
    int lineno = 0, header = 0;
    const char *p = text;
    while (*p) {
        char line[512];
        size_t n = strcspn(p, "\n");
        lineno++;
        if (n >= sizeof line) {
            snprintf(err, errlen, "line %d: longer than %zu characters", lineno, sizeof line - 1);
            return -1;
        }
        memcpy(line, p, n);
        line[n] = 0;
        p += n + (p[n] == '\n');
        char *save = NULL, *w = strtok_r(line, " \t\r", &save);
        if (!w || w[0] == '#')
            continue;
        if (!header) {
            char *ver = strtok_r(NULL, " \t\r", &save);
            if (strcmp(w, "wharf-gpu-tuning") || !ver || strcmp(ver, "1")) {
                snprintf(err, errlen, "line %d: expected 'wharf-gpu-tuning 1' first", lineno);
                return -1;
            }
            header = 1;
            continue;
        }
        int cls = -1;
        for (int c = 0; c < WH_GCLASS_MAX; c++)
            if (!strcmp(w, wh_gclass_names[c]))
                cls = c;
        if (cls < 0) {
            if (!strcmp(w, "machine") || !strcmp(w, "driver"))
                continue; /* informational */
            snprintf(err, errlen, "line %d: unknown class '%s' (latency or bandwidth)", lineno, w);
            return -1;
        }
        while ((w = strtok_r(NULL, " \t\r", &save))) {
            char *eq = strchr(w, '=');
            int k = -1;
            if (eq) {
                *eq = 0;
                for (int i = 0; i < NKEYS; i++)
                    if (!strcmp(w, keys[i]))
                        k = i;
            }
            if (k < 0) {
                snprintf(err, errlen, "line %d: unknown switch point '%s'", lineno, w);
                return -1;
            }
            if (parse_size(eq + 1, field(&tmp[cls], k))) {
                snprintf(err, errlen, "line %d: %s=%s: expected bytes (k/m/g suffix) or never", lineno, w, eq + 1);
                return -1;
            }
        }
    }
    if (!header) {
        snprintf(err, errlen, "no 'wharf-gpu-tuning 1' line");
        return -1;
    }
    memcpy(t, tmp, sizeof tmp);
    return 0;
}

static void fmt_size(size_t v, char *out, size_t len)
{
    if (v == WH_GSW_NEVER)
        snprintf(out, len, "never");
    else
        snprintf(out, len, "%zu", v);
}

int wh_gsw_write(const char *path, const wh_gsw_t t[WH_GCLASS_MAX], const char *comment)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "wharf-gpu-tuning 1\n%s", comment ? comment : "");
    for (int c = 0; c < WH_GCLASS_MAX; c++) {
        fprintf(f, "%s", wh_gclass_names[c]);
        for (int k = 0; k < NKEYS; k++) {
            char v[32];
            fmt_size(*field((wh_gsw_t *)&t[c], k), v, sizeof v);
            fprintf(f, " %s=%s", keys[k], v);
        }
        fprintf(f, "\n");
    }
    return fclose(f) ? -1 : 0;
}

int wh_gsw_force(wh_gsw_t t[WH_GCLASS_MAX], const char *s)
{
    if (!strcmp(s, "auto"))
        return 0;
    wh_gsw_t f = {0, 0, 0, WH_GSW_NEVER, WH_GSW_NEVER};
    if (!strcmp(s, "gdrcopy"))
        f.gdr_d2h_max = f.gdr_h2d_max = f.eager_max = WH_GSW_NEVER;
    else if (!strcmp(s, "eager"))
        f.eager_max = WH_GSW_NEVER;
    else if (!strcmp(s, "pipeline"))
        f.pipe_min = 0;
    else if (!strcmp(s, "ipc"))
        f.ipc_min = 0;
    else if (strcmp(s, "staged"))
        return -1;
    for (int c = 0; c < WH_GCLASS_MAX; c++)
        t[c] = f;
    return 0;
}

int wh_gsw_rndv(const wh_gsw_t *sw, size_t n, int ipc_ok, int pipe_ok)
{
    if (ipc_ok && sw->ipc_min != WH_GSW_NEVER && n >= sw->ipc_min)
        return WH_DS_IPC;
    if (pipe_ok && sw->pipe_min != WH_GSW_NEVER && n >= sw->pipe_min)
        return WH_DS_PIPE;
    return WH_DS_STAGED;
}

/* the scheme sw gives n bytes where the pair can use every scheme */
static int fit_scheme(const wh_gsw_t *sw, size_t n)
{
    if (n <= sw->eager_max)
        return n <= sw->gdr_d2h_max ? WH_DS_GDR : WH_DS_EAGER;
    return wh_gsw_rndv(sw, n, 1, 1);
}

void wh_gsw_fit(const double *t, const size_t *sizes, int ns, wh_gsw_t *out)
{
    /* candidates: 0 or a measured size for the upper limits (g <= e), a
     * measured size or never for the lower ones */
    enum { MAXS = 32 };
    if (ns > MAXS)
        ns = MAXS;
    size_t lo[MAXS + 1], hi[MAXS + 1];
    lo[0] = 0;
    for (int i = 0; i < ns; i++)
        lo[i + 1] = hi[i] = sizes[i];
    hi[ns] = WH_GSW_NEVER;
    double best[MAXS];
    for (int i = 0; i < ns; i++) {
        best[i] = INFINITY;
        for (int k = 0; k < WH_DS_MAX; k++)
            if (t[k * ns + i] < best[i])
                best[i] = t[k * ns + i];
    }
    wh_gsw_t r = {0, 0, 0, WH_GSW_NEVER, WH_GSW_NEVER};
    double rbest = INFINITY;
    for (int ie = 0; ie <= ns; ie++)
        for (int ig = 0; ig <= ie; ig++)
            for (int ip = 0; ip <= ns; ip++)
                for (int im = 0; im <= ns; im++) {
                    wh_gsw_t cand = {lo[ig], lo[ig], lo[ie], hi[ip], hi[im]};
                    double loss = 0;
                    for (int i = 0; i < ns && loss < rbest; i++) {
                        if (!(best[i] < INFINITY))
                            continue; /* nothing measured at this size */
                        double x = t[fit_scheme(&cand, sizes[i]) * ns + i];
                        loss += x < INFINITY ? x / best[i] - 1 : INFINITY;
                    }
                    if (loss < rbest) {
                        rbest = loss;
                        r = cand;
                    }
                }
    /* say what the fit chose: a scheme no measured size uses is switched off
     * (a pipeline from above the IPC switch is never used); a rendezvous
     * scheme that every measured rendezvous size below the next one's switch
     * uses starts at 0 */
    int used[WH_DS_MAX] = {0}, staged = 0, not_ipc = 0;
    for (int i = 0; i < ns; i++) {
        int k = fit_scheme(&r, sizes[i]);
        used[k] = 1;
        if (sizes[i] > r.eager_max) {
            staged |= k == WH_DS_STAGED;
            not_ipc |= k != WH_DS_IPC;
        }
    }
    if (!used[WH_DS_GDR])
        r.gdr_d2h_max = r.gdr_h2d_max = 0;
    r.pipe_min = !used[WH_DS_PIPE] ? WH_GSW_NEVER : staged ? r.pipe_min : 0;
    r.ipc_min = !used[WH_DS_IPC] ? WH_GSW_NEVER : not_ipc ? r.ipc_min : 0;
    *out = r;
}

int wh_gtrace_class(uint32_t blk, uint32_t nb, int trace_min)
{
    if ((uint64_t)blk + nb < (uint64_t)(trace_min > 0 ? trace_min : 1))
        return WH_GCLASS_LAT;
    return nb > blk ? WH_GCLASS_BW : WH_GCLASS_LAT;
}

/* ---------- live state ---------- */

static int forced_class = -1;

static void load_tuning(void)
{
    const char *path = wh_tun.cuda_tuning;
    if (!path || !path[0])
        return;
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0;
    if (f) {
        buf = malloc(65537);
        len = buf ? fread(buf, 1, 65536, f) : 0;
        fclose(f);
    }
    if (!buf) {
        WH_WARN("gpu", "WHARF_CUDA_TUNING=%s: cannot read it (%s): default switch points", path,
                f ? "out of memory" : strerror(errno));
        return;
    }
    buf[len] = 0;
    char err[160];
    if (wh_gsw_parse(buf, wh_gsw, err, sizeof err))
        WH_WARN("gpu", "WHARF_CUDA_TUNING=%s: %s: default switch points", path, err);
    else
        snprintf(wh_gsw_source, sizeof wh_gsw_source, "%s", path);
    free(buf);
}

static void describe_class(const wh_gsw_t *s, char *out, size_t len) /* len >= 320 */
{
    char v[NKEYS][32];
    for (int k = 0; k < NKEYS; k++)
        fmt_size(*field((wh_gsw_t *)s, k), v[k], sizeof v[k]);
    snprintf(out, len, "gdrcopy d2h<=%s h2d<=%s, eager<=%s, pipeline>=%s, cuda-ipc>=%s", v[0], v[1], v[2], v[3],
             v[4]);
}

void wh_gpu_refresh(void)
{
    wh_reg_rec_t *me = wh_loc_me();
    if (me)
        wh_cuda_describe(me->gpu, sizeof me->gpu);
    if (wh_gpeers)
        for (int p = 0; p < wh_job.size; p++)
            wh_gpeers[p].rel_done = 0;
}

int wh_gpu_coord_init(void)
{
    if (!wh_cuda_on)
        return MPI_SUCCESS;
    wh_gsw_t d = {wh_tun.cuda_gdr_d2h_max, wh_tun.cuda_gdr_h2d_max, wh_tun.cuda_eager_max, wh_tun.cuda_pipe_min,
                  wh_tun.cuda_ipc_min};
    wh_gsw[WH_GCLASS_LAT] = wh_gsw[WH_GCLASS_BW] = d;
    snprintf(wh_gsw_source, sizeof wh_gsw_source, "defaults");
    load_tuning();
    if (strcmp(wh_tun.cuda_scheme, "auto")) {
        wh_gsw_force(wh_gsw, wh_tun.cuda_scheme); /* a tunable choice: the name is valid */
        snprintf(wh_gsw_source, sizeof wh_gsw_source, "WHARF_CUDA_SCHEME=%s", wh_tun.cuda_scheme);
    }
    for (int c = 0; c < WH_GCLASS_MAX; c++) {
        if (!wh_tun.cuda_ipc)
            wh_gsw[c].ipc_min = WH_GSW_NEVER;
        if (!wh_tun.cuda_pipe)
            wh_gsw[c].pipe_min = WH_GSW_NEVER;
    }
    forced_class = !strcmp(wh_tun.cuda_class, "latency") ? WH_GCLASS_LAT
                   : !strcmp(wh_tun.cuda_class, "bandwidth") ? WH_GCLASS_BW
                                                            : -1;
    wh_gpeers = calloc((size_t)wh_peers_cap, sizeof *wh_gpeers);
    if (!wh_gpeers)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int p = 0; p < wh_job.size; p++)
        wh_gpeers[p].cls = (uint8_t)(forced_class >= 0 ? forced_class : WH_GCLASS_LAT);
    wh_gpu_refresh();
    if (wh_job.rank == 0 && wh_tun.report && strstr(wh_tun.report, "gpu")) {
        char a[320], b[320];
        describe_class(&wh_gsw[0], a, sizeof a);
        describe_class(&wh_gsw[1], b, sizeof b);
        printf("wharf: gpu: switch points from %s: latency: %s; bandwidth: %s; classes %s\n", wh_gsw_source, a, b,
               forced_class >= 0 ? wh_tun.cuda_class : "traced per peer");
        fflush(stdout);
    }
    return MPI_SUCCESS;
}

void wh_gpu_coord_finalize(void)
{
    free(wh_gpeers);
    wh_gpeers = NULL;
}

const wh_gsw_t *wh_gpu_trace(int wpeer, int how)
{
    if (!wh_gpeers)
        return &wh_gsw[WH_GCLASS_LAT];
    wh_gpeer_t *g = &wh_gpeers[wpeer];
    if (how != WH_TRACE_NONE) {
        if (how == WH_TRACE_BLK)
            g->blk++, g->tblk++;
        else
            g->nb++, g->tnb++;
        uint32_t window = 32u * (uint32_t)(wh_tun.cuda_trace_min > 0 ? wh_tun.cuda_trace_min : 1);
        if (g->blk + g->nb >= window) {
            g->blk /= 2;
            g->nb /= 2;
        }
        int c = forced_class >= 0 ? forced_class : wh_gtrace_class(g->blk, g->nb, wh_tun.cuda_trace_min);
        if (c != g->cls)
            WH_DEBUG("gpu", "peer %d: workload class %s (blocking %u, nonblocking %u)", wpeer, wh_gclass_names[c],
                     g->blk, g->nb);
        g->cls = (uint8_t)c;
    }
    const wh_gsw_t *sw = &wh_gsw[g->cls];
    wh_cuda_gdr_max[0] = sw->gdr_d2h_max;
    wh_cuda_gdr_max[1] = sw->gdr_h2d_max;
    return sw;
}

/* the relation char of GPU uuid in a "G=..;B=..;V=uuid:r,..." record, 0 if absent */
static char rel_in(const char *rec, const char *uuid)
{
    const char *v = strstr(rec, ";V=");
    if (!v || strlen(uuid) != 32)
        return 0;
    const char *hit = strstr(v, uuid);
    return hit && hit[32] == ':' ? hit[33] : 0;
}

static int compute_rel(int wpeer)
{
    int lp = wh_job.local_index ? wh_job.local_index[wpeer] : -1;
    const wh_reg_rec_t *me = wh_loc_me(), *peer = lp >= 0 ? wh_loc_rec(lp) : NULL;
    if (wpeer == wh_job.rank)
        return WH_GREL_SAME;
    if (!me || !peer || strncmp(peer->gpu, "G=", 2) || strncmp(me->gpu, "G=", 2))
        return WH_GREL_UNKNOWN;
    char own[40] = "-";
    sscanf(peer->gpu, "G=%39[^;]", own);
    char r = rel_in(me->gpu, own);
    if (r == 's')
        return WH_GREL_SAME;
    if (r == 'p')
        return WH_GREL_PEER;
    if (r == 'v')
        return strncmp(me->gpu, "G=-", 3) ? WH_GREL_VISIBLE : WH_GREL_UNKNOWN;
    /* its GPU is not visible here (or it had none selected): any GPU in common? */
    const char *v = strstr(peer->gpu, ";V=");
    for (const char *u = v ? v + 3 : ""; strlen(u) >= 32; u = strchr(u, ',') ? strchr(u, ',') + 1 : "") {
        char id[33];
        memcpy(id, u, 32);
        id[32] = 0;
        if (rel_in(me->gpu, id))
            return WH_GREL_UNKNOWN; /* its buffers may live on a GPU we share */
    }
    return WH_GREL_NONE;
}

int wh_gpu_rel(int wpeer)
{
    if (!wh_gpeers)
        return WH_GREL_UNKNOWN;
    wh_gpeer_t *g = &wh_gpeers[wpeer];
    if (!g->rel_done) {
        g->rel = (uint8_t)compute_rel(wpeer);
        int lp = wh_job.local_index ? wh_job.local_index[wpeer] : -1;
        const wh_reg_rec_t *me = wh_loc_me(), *peer = lp >= 0 ? wh_loc_rec(lp) : NULL;
        g->other_pidns = me && peer && me->ns[WH_NS_PID] && peer->ns[WH_NS_PID] &&
                         me->ns[WH_NS_PID] != peer->ns[WH_NS_PID];
        g->rel_done = 1;
    }
    return g->rel;
}

/* can the receiver map a co-resident sender's device memory (by locality)?
 * Legacy handles do not cross PID namespaces; VMM file descriptors do. */
static int ipc_reachable(int wpeer, int vmm)
{
    int r = wh_gpu_rel(wpeer);
    return r != WH_GREL_NONE && r != WH_GREL_VISIBLE && (vmm || !wh_gpeers[wpeer].other_pidns);
}

int wh_coord_dev_send(int wpeer, size_t bytes, int how)
{
    const wh_gsw_t *sw = wh_gpu_trace(wpeer, how);
    int chan = wh_coord_peers[wpeer].chan;
    if (bytes > wh_coord_lim.eager_max[chan] || bytes > sw->eager_max)
        return WH_PROTO_RNDV;
    if (how != WH_TRACE_NONE && wh_gpeers)
        wh_gpeers[wpeer].msgs[bytes && bytes <= sw->gdr_d2h_max && wh_cuda_gdr_on() ? WH_DS_GDR : WH_DS_EAGER]++;
    return WH_PROTO_EAGER;
}

void wh_coord_dev_recv(int wpeer, size_t bytes, int how)
{
    const wh_gsw_t *sw = wh_gpu_trace(wpeer, how);
    if (how != WH_TRACE_NONE && wh_gpeers)
        wh_gpeers[wpeer].msgs[bytes <= sw->gdr_h2d_max && wh_cuda_gdr_on() ? WH_DS_GDR : WH_DS_EAGER]++;
}

wh_coord_choice_t wh_coord_dev_rndv(int wpeer, size_t bytes, int mem, int remote, int how)
{
    const wh_gsw_t *sw = wh_gpu_trace(wpeer, how);
    const wh_coord_peer_t *p = &wh_coord_peers[wpeer];
    int shm = p->chan == WH_CHAN_SHM;
    int ipc_ok = (remote & WH_REMOTE_CUDA_IPC) && shm && ipc_reachable(wpeer, remote & WH_REMOTE_CUDA_VMM);
    int ds = wh_gsw_rndv(sw, bytes, ipc_ok, shm);
    wh_coord_choice_t c = {.chan = p->chan, .proto = WH_PROTO_FRAG};
    if (ds == WH_DS_IPC)
        c.proto = WH_PROTO_CUDA_IPC;
    else if (ds == WH_DS_PIPE)
        c.proto = WH_PROTO_PIPE;
    else
        c = wh_coord_decide_pure(p, &wh_coord_lim, bytes, mem, WH_OPK_RNDV, remote & ~WH_REMOTE_CUDA_IPC);
    return c;
}

/* the scheme ranges a class gives a peer, as text */
static void ranges(const wh_gsw_t *sw, size_t eager_cap, int ipc_ok, int pipe_ok, char *out, size_t len)
{
    size_t o = 0;
    size_t eager = sw->eager_max < eager_cap ? sw->eager_max : eager_cap;
    size_t gdr = wh_cuda_gdr_on() ? (sw->gdr_d2h_max < eager ? sw->gdr_d2h_max : eager) : 0;
    out[0] = 0;
    if (gdr)
        o += (size_t)snprintf(out + o, len - o, "1..%zu B gdrcopy, ", gdr);
    if (eager > gdr)
        o += (size_t)snprintf(out + o, len - o, "%zu..%zu B eager, ", gdr + 1, eager);
    /* rendezvous sizes: staged below the first switch point that applies */
    size_t pmin = pipe_ok ? sw->pipe_min : WH_GSW_NEVER, imin = ipc_ok ? sw->ipc_min : WH_GSW_NEVER;
    size_t lo = eager + 1, first = pmin < imin ? pmin : imin;
    if (first > lo)
        o += (size_t)snprintf(out + o, len - o, first == WH_GSW_NEVER ? "%zu B.. staged" : "%zu..%zu B staged, ", lo,
                              first - 1);
    if (pmin < imin && o < len)
        o += (size_t)snprintf(out + o, len - o, imin == WH_GSW_NEVER ? "%zu B.. pipeline" : "%zu..%zu B pipeline, ",
                              pmin > lo ? pmin : lo, imin - 1);
    if (imin != WH_GSW_NEVER && o < len)
        snprintf(out + o, len - o, "%zu B.. cuda-ipc", imin > lo ? imin : lo);
}

void wh_gpu_report(void)
{
    if (!wh_gpeers || !wh_tun.report || !strstr(wh_tun.report, "gpu"))
        return;
    size_t cap = 16384, o = 0;
    char *buf = malloc(cap);
    if (!buf)
        return;
    buf[0] = 0;
    for (int p = 0; p < wh_job.size && o + 1024 < cap; p++) {
        wh_gpeer_t *g = &wh_gpeers[p];
        if (p == wh_job.rank || !(g->tblk + g->tnb))
            continue;
        int shm = wh_coord_peers[p].chan == WH_CHAN_SHM, rel = shm ? wh_gpu_rel(p) : WH_GREL_UNKNOWN;
        char rg[400];
        ranges(&wh_gsw[g->cls], wh_coord_lim.eager_max[wh_coord_peers[p].chan], shm && ipc_reachable(p, 0), shm, rg,
               sizeof rg);
        o += (size_t)snprintf(buf + o, cap - o,
                              "wharf: rank %d gpu peer %d: class %s (device messages: %llu blocking, %llu nonblocking); "
                              "%s%s; schemes: %s; messages:",
                              wh_job.rank, p, wh_gclass_names[g->cls], (unsigned long long)g->tblk,
                              (unsigned long long)g->tnb, shm ? wh_grel_names[rel] : "network peer",
                              shm && g->other_pidns ? " (another PID namespace: no CUDA IPC)" : "", rg);
        for (int s = 0; s < WH_DS_MAX; s++)
            if (g->msgs[s])
                o += (size_t)snprintf(buf + o, cap - o, " %s %llu", wh_ds_names[s], (unsigned long long)g->msgs[s]);
        o += (size_t)snprintf(buf + o, cap - o, "\n");
    }
    fputs(buf, stdout);
    fflush(stdout);
    free(buf);
}
