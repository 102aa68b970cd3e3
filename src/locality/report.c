/* The end of locality setup: every rank's group (wh_job.host_of) and, with
 * WHARF_REPORT=locality, rank 0's report of the pair matrix with the reason
 * for every rejected channel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "locality/loc_impl.h"
#include "mem/cuda/wh_cuda.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

static const char *why_text[WH_WHY_MAX] = {
    [WH_WHY_OK] = "ok",
    [WH_WHY_NOT_LOCAL] = "not in the same node region",
    [WH_WHY_FORCED_NET] = "WHARF_CHANNEL=net",
    [WH_WHY_NO_REGION] = "node region unavailable",
    [WH_WHY_CMA_OFF] = "disabled by WHARF_CMA=0",
    [WH_WHY_KERNEL] = "different kernels (boot_id)",
    [WH_WHY_PIDNS] = "different PID namespaces",
    [WH_WHY_EPERM] = "probe failed: not permitted (Yama ptrace_scope, seccomp or capabilities)",
    [WH_WHY_PROBE] = "probe failed: the peer's probe word could not be read",
    [WH_WHY_NA] = "needs shm",
    [WH_WHY_NO_ENDPOINT] = "no network endpoint",
    [WH_WHY_CMA_SLOW] = "possible, but slower than memcpy here (WHARF_CMA_SLOW_RATIO)",
};

const char *wh_loc_why_text(int why) { return why >= 0 && why < WH_WHY_MAX ? why_text[why] : "?"; }

static int report_wanted(void) { return wh_tun.report && strstr(wh_tun.report, "locality"); }

/* my row: 3 characters per peer (code, shm reason, cma reason) */
static int put_row(void)
{
    int n = wh_job.size, max = wh_pmi_max_vallen();
    if (!report_wanted() || !wh_loc.code || 3 * n + 1 > max)
        return MPI_SUCCESS;
    char *row = malloc((size_t)(3 * n + 1));
    if (!row)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int p = 0; p < n; p++) {
        row[3 * p] = wh_loc.code[p] ? wh_loc.code[p] : '?';
        row[3 * p + 1] = (char)('a' + wh_loc.shm_why[p]);
        row[3 * p + 2] = (char)('a' + wh_loc.cma_why[p]);
    }
    row[3 * n] = 0;
    char key[64];
    snprintf(key, sizeof key, "loc.row.%d", wh_job.rank);
    int rc = wh_pmi_put(key, row) == 0 ? MPI_SUCCESS : wh_error(MPI_ERR_OTHER, "PMI put of %s failed", key);
    free(row);
    return rc;
}

static void print_report(char **grp, char **rows)
{
    int n = wh_job.size, ng = 0;
    for (int r = 0; r < n; r++)
        ng += wh_job.host_of[r] == r;
    printf("wharf: locality: %d ranks, %d node groups (%s)\n", n, ng,
           wh_loc_launcher_mode() ? "WHARF_LOCALITY=launcher" : "node registry");
    if (wh_loc_region_bytes())
        printf("wharf: locality: node region of rank %d's group: %.1f MiB for %d co-resident ranks\n", wh_job.rank,
               (double)wh_loc_region_bytes() / 1048576.0, wh_job.local_size);
    for (int g = 0, gi = 0; g < n; g++) {
        if (wh_job.host_of[g] != g)
            continue;
        char ranks[512] = "", hosts[512] = "", boot[128] = "";
        size_t ro = 0, ho = 0, bo = 0;
        for (int r = 0; r < n; r++) {
            if (wh_job.host_of[r] != g)
                continue;
            char b[16] = "", h[128] = "";
            if (grp[r])
                sscanf(grp[r], "%*d/%15[^/]/%127s", b, h);
            if (bo < sizeof boot && !strstr(boot, b))
                bo += (size_t)snprintf(boot + bo, sizeof boot - bo, "%s%s", bo ? "," : "", b);
            if (ro < sizeof ranks)
                ro += (size_t)snprintf(ranks + ro, sizeof ranks - ro, "%s%d", ro ? "," : "", r);
            if (ho < sizeof hosts && !strstr(hosts, h))
                ho += (size_t)snprintf(hosts + ho, sizeof hosts - ho, "%s%s", ho ? "," : "", h);
        }
        printf("wharf: locality: group %d: ranks %s (boot_id%s %s, hostnames %s)\n", gi++, ranks,
               strchr(boot, ',') ? "s" : "", boot, hosts);
    }
    if (!rows)
        return;
    printf("wharf: locality: matrix (row sends to column; C = shm + CMA single-copy, S = shm with pipelined copy, "
           "N = net, . = self)\n");
    char line[4096];
    size_t o = (size_t)snprintf(line, sizeof line, "wharf: locality:      ");
    for (int j = 0; j < n && o < sizeof line; j++)
        o += (size_t)snprintf(line + o, sizeof line - o, " %d", j % 10);
    printf("%s\n", line);
    /* entry (i, j): how i's messages reach j = j's view of i as the receiver */
    for (int i = 0; i < n; i++) {
        o = (size_t)snprintf(line, sizeof line, "wharf: locality: %4d ", i);
        for (int j = 0; j < n && o < sizeof line; j++)
            o += (size_t)snprintf(line + o, sizeof line - o, " %c", rows[j] ? rows[j][3 * i] : '?');
        printf("%s\n", line);
    }
    if (n > 32)
        return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || !rows[j])
                continue;
            char c = rows[j][3 * i];
            int sw = rows[j][3 * i + 1] - 'a', cw = rows[j][3 * i + 2] - 'a';
            if (c == 'C')
                printf("wharf: locality: pair %d->%d: shm cma\n", i, j);
            else if (c == 'S')
                printf("wharf: locality: pair %d->%d: shm; rejected cma: %s\n", i, j, wh_loc_why_text(cw));
            else
                printf("wharf: locality: pair %d->%d: net; rejected shm: %s\n", i, j, wh_loc_why_text(sw));
        }
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from 32 hex digits */
static void uuid_text(const char *hex, char *out, size_t len)
{
    if (strlen(hex) < 32) {
        snprintf(out, len, "%s", hex);
        return;
    }
    snprintf(out, len, "GPU-%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
}

/* GPU locality (WHARF_REPORT=locality with a CUDA driver): each rank's GPU and,
 * for co-resident pairs, whether the receiver can map the sender's GPU memory. */
static void print_gpus(char **gpu)
{
    int n = wh_job.size, any = 0;
    for (int r = 0; r < n; r++)
        any |= gpu[r] && strncmp(gpu[r], "G=", 2) == 0;
    if (!any)
        return;
    char own[64][40], txt[64];
    int numas[64];
    for (int r = 0; r < n; r++) {
        char g[40] = "-", b[32] = "-", numa[32] = "";
        int nn = -1;
        const char *np = gpu[r] ? strstr(gpu[r], ";N=") : NULL;
        if (gpu[r])
            sscanf(gpu[r], "G=%39[^;];B=%31[^;]", g, b);
        if (np && sscanf(np, ";N=%d", &nn) == 1 && nn >= 0)
            snprintf(numa, sizeof numa, ", NUMA node %d", nn);
        if (r < 64) {
            snprintf(own[r], sizeof own[r], "%s", g);
            numas[r] = nn;
        }
        const char *v = gpu[r] ? strstr(gpu[r], ";V=") : NULL;
        int nv = v && v[3] ? 1 : 0;
        for (const char *c = v ? v + 3 : ""; *c; c++)
            nv += *c == ',';
        uuid_text(g, txt, sizeof txt);
        printf("wharf: locality: gpu rank %d: %s (pci %s%s), %d GPU(s) visible\n", r,
               strcmp(g, "-") ? txt : "no GPU selected at MPI_Init", b, numa, nv);
    }
    if (n > 32)
        return;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || wh_job.host_of[i] != wh_job.host_of[j] || !strcmp(own[i], "-") || !strcmp(own[j], "-"))
                continue;
            const char *v = gpu[i] ? strstr(gpu[i], own[j]) : NULL;
            char rel = v && v[32] == ':' ? v[33] : 0;
            char nx[64] = "";
            if (rel != 's' && numas[i] >= 0 && numas[j] >= 0 && numas[i] == numas[j])
                snprintf(nx, sizeof nx, "; both GPUs on NUMA node %d", numas[i]);
            else if (rel != 's' && numas[i] >= 0 && numas[j] >= 0)
                snprintf(nx, sizeof nx, "; GPUs on NUMA nodes %d and %d", numas[i], numas[j]);
            printf("wharf: locality: gpu pair %d<-%d: %s%s\n", i, j,
                   rel == 's'   ? "same GPU: CUDA IPC where the PID namespace is shared, VMM file descriptors "
                                  "(cuMemCreate memory) where the node directory is"
                   : rel == 'p' ? "peer GPUs: CUDA IPC (device to device) where the PID namespace is shared, VMM "
                                  "file descriptors (cuMemCreate memory) where the node directory is"
                   : rel == 'v' ? "no peer access between the GPUs: device buffers staged through host memory"
                                : "the sender's GPU is not visible here: device buffers staged through host memory",
                   nx);
        }
}

int wh_loc_finish(void)
{
    wh_loc_heap_open();
    int n = wh_job.size, rc = put_row();
    if (rc != MPI_SUCCESS)
        return rc;
    char gkey[64], gval[1024];
    int gmax = wh_pmi_max_vallen();
    if (gmax > 0 && report_wanted()) {
        wh_cuda_describe(gval, (size_t)gmax + 1 < sizeof gval ? (size_t)gmax + 1 : sizeof gval);
        if (!gval[0])
            snprintf(gval, sizeof gval, "none");
        snprintf(gkey, sizeof gkey, "loc.gpu.%d", wh_job.rank);
        if (wh_pmi_put(gkey, gval) != 0)
            return wh_error(MPI_ERR_OTHER, "PMI put of %s failed", gkey);
    }
    if (wh_pmi_barrier() != 0)
        return wh_error(MPI_ERR_OTHER, "PMI barrier failed: %s", wh_pmi_error());
    int report = report_wanted() && wh_job.rank == 0;
    char **grp = calloc((size_t)n, sizeof(char *));
    char **rows = report ? calloc((size_t)n, sizeof(char *)) : NULL;
    if (!grp || (report && !rows)) {
        free(grp);
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    }
    char val[160];
    int ng = 0;
    char *all = malloc((size_t)n * sizeof val);
    if (!all || wh_pmi_get_ranks("loc.grp", n, -1, all, sizeof val) != 0)
        rc = all ? wh_error(MPI_ERR_OTHER, "PMI get of loc.grp.* failed: %s", wh_pmi_error())
                 : wh_error(MPI_ERR_NO_MEM, "out of memory");
    for (int r = 0; r < n && rc == MPI_SUCCESS; r++) {
        memcpy(val, all + (size_t)r * sizeof val, sizeof val);
        int g = atoi(val);
        if (!wh_loc_launcher_mode())
            wh_job.host_of[r] = g;
        ng += g == r;
        if (report)
            grp[r] = strdup(val);
    }
    if (!wh_loc_launcher_mode())
        wh_job.nhosts = ng;
    if (rc == MPI_SUCCESS && report) {
        /* one pipelined PMI round per key family (a get per rank in turn cost
         * seconds at 128 ranks) */
        int vl = wh_pmi_max_vallen(), fit = vl > 0 && 3 * n + 1 <= vl;
        size_t rstride = (size_t)3 * (size_t)n + 1;
        char *rv = fit ? malloc((size_t)n * rstride) : NULL;
        if (rv && wh_pmi_get_ranks("loc.row", n, -1, rv, rstride) == 0)
            for (int r = 0; r < n; r++)
                if (strlen(rv + (size_t)r * rstride) == rstride - 1)
                    rows[r] = strdup(rv + (size_t)r * rstride);
        free(rv);
        print_report(grp, fit ? rows : NULL);
        char **gpu = vl > 0 ? calloc((size_t)n, sizeof(char *)) : NULL;
        char *gv = gpu ? malloc((size_t)n * sizeof gval) : NULL;
        if (gv && wh_pmi_get_ranks("loc.gpu", n, -1, gv, sizeof gval) == 0)
            for (int r = 0; r < n; r++)
                gpu[r] = strdup(gv + (size_t)r * sizeof gval);
        free(gv);
        if (gpu) {
            print_gpus(gpu);
            for (int r = 0; r < n; r++)
                free(gpu[r]);
            free(gpu);
        }
        fflush(stdout);
    }
    for (int r = 0; r < n; r++) {
        free(grp[r]);
        if (rows)
            free(rows[r]);
    }
    free(grp);
    free(rows);
    free(all);
    return rc;
}
