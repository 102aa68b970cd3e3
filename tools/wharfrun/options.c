/* Command line of wharfrun. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wharfrun.h"

#define WR_MAX_RANKS 100000

static const char wr_usage[] =
    "usage: wharfrun -n N [options] PROGRAM [ARGS...]\n"
    "  -n, -np N            number of ranks (required, >= 1)\n"
    "  --hosts H1[:S],H2..  hosts, optionally with slot counts (default: all local)\n"
    "  --hostfile FILE      hosts from FILE: lines 'host [slots=K]' or 'host:K', # comments\n"
    "  --rsh AGENT          remote agent, run as 'AGENT HOST COMMAND' (default: ssh)\n"
    "  -x VAR[=VAL]         export VAR (its value here, or VAL) to every rank; repeatable\n"
    "  --timeout S          kill the job after S seconds (exit status 124; default:\n"
    "                       $MPIEXEC_TIMEOUT if set, else none)\n"
    "  --tag-output         prefix every output line with [rank]\n"
    "  --iface ADDR|IFNAME  address remote ranks use to reach this launcher\n"
    "  --help, --version\n"
    "Ranks are placed block-wise over the hosts; stdin is /dev/null.  See docs/LAUNCHER.md.\n";

static int wr_add_x(wr_opts_t *o, const char *spec)
{
    const char *eq = strchr(spec, '=');
    size_t nl = eq ? (size_t)(eq - spec) : strlen(spec);
    int ok = nl > 0 && (isalpha((unsigned char)spec[0]) || spec[0] == '_');
    for (size_t i = 0; ok && i < nl; i++)
        ok = isalnum((unsigned char)spec[i]) || spec[i] == '_';
    if (!ok) {
        wr_error("-x '%s': not a variable name", spec);
        return -1;
    }
    char *v;
    if (eq) {
        v = strdup(spec);
    } else {
        const char *cur = getenv(spec);
        if (!cur) {
            wr_error("-x %s: not set in the environment (use -x %s=VALUE)", spec, spec);
            return -1;
        }
        v = malloc(nl + strlen(cur) + 2);
        if (v)
            sprintf(v, "%s=%s", spec, cur);
    }
    char **x = realloc(o->xvars, (size_t)(o->nx + 2) * sizeof *x);
    if (!v || !x) {
        free(v);
        wr_error("out of memory");
        return -1;
    }
    o->xvars = x;
    /* a later -x of the same name replaces the earlier one */
    for (int i = 0; i < o->nx; i++) {
        if (!strncmp(x[i], v, nl + 1)) {
            free(x[i]);
            x[i] = v;
            return 0;
        }
    }
    x[o->nx++] = v;
    x[o->nx] = NULL;
    return 0;
}

static char **wr_split_words(const char *s)
{
    size_t cap = 4, n = 0;
    char **w = malloc(cap * sizeof *w);
    char *copy = strdup(s);
    if (!w || !copy) {
        free(w);
        free(copy);
        return NULL;
    }
    for (char *save = NULL, *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n + 2 > cap) {
            char **nw = realloc(w, (cap *= 2) * sizeof *w);
            if (!nw) {
                free(w);
                free(copy);
                return NULL;
            }
            w = nw;
        }
        w[n++] = t; /* words point into copy, which lives as long as the process */
    }
    w[n] = NULL;
    if (n == 0) {
        free(w);
        free(copy);
        return NULL;
    }
    return w;
}

static int wr_parse_np(const char *s, int *np)
{
    char *e;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (!*s || *e || errno || v < 1 || v > WR_MAX_RANKS) {
        wr_error("bad number of ranks '%s' (need 1..%d)", s, WR_MAX_RANKS);
        return -1;
    }
    *np = (int)v;
    return 0;
}

int wr_parse_options(int argc, char **argv, wr_opts_t *o)
{
    const char *hosts = NULL, *hostfile = NULL, *rsh = "ssh";
    int have_np = 0;
    memset(o, 0, sizeof *o);
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || !strcmp(a, "-"))
            break;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(wr_usage, stdout);
            exit(0);
        }
        if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("wharfrun (wharf) %s\n", WR_VERSION);
            exit(0);
        }
        if (!strcmp(a, "--tag-output")) {
            o->tag_output = 1;
            continue;
        }
        /* options with a value: "-opt VALUE", "--opt=VALUE", "-nN" */
        static const char *const with_value[] = {"-n", "-np", "--np", "--hosts", "--host",
                                                 "--hostfile", "--rsh", "-x", "--timeout",
                                                 "--iface"};
        const char *name = NULL, *val = NULL;
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) {
            size_t l = strlen(with_value[k]);
            if (!strcmp(a, with_value[k])) {
                name = with_value[k];
                if (i + 1 >= argc) {
                    wr_error("option %s needs a value", a);
                    exit(WR_EXIT_USAGE);
                }
                val = argv[++i];
                break;
            }
            if (!strncmp(a, with_value[k], l) && a[1] == '-' && a[l] == '=') {
                name = with_value[k];
                val = a + l + 1;
                break;
            }
        }
        if (!name && a[1] == 'n' && isdigit((unsigned char)a[2])) {
            name = "-n";
            val = a + 2;
        }
        if (!name) {
            wr_error("unknown option '%s' (try --help)", a);
            exit(WR_EXIT_USAGE);
        }
        int bad = 0;
        if (!strcmp(name, "-n") || !strcmp(name, "-np") || !strcmp(name, "--np")) {
            bad = wr_parse_np(val, &o->np);
            have_np = 1;
        } else if (!strcmp(name, "--hosts") || !strcmp(name, "--host")) {
            hosts = val;
        } else if (!strcmp(name, "--hostfile")) {
            hostfile = val;
        } else if (!strcmp(name, "--rsh")) {
            rsh = val;
        } else if (!strcmp(name, "-x")) {
            bad = wr_add_x(o, val);
        } else if (!strcmp(name, "--timeout")) {
            char *e;
            errno = 0;
            o->timeout = strtod(val, &e);
            if (!*val || *e || errno || !isfinite(o->timeout) || o->timeout <= 0 ||
                o->timeout > 1e8) {
                wr_error("bad --timeout '%s' (need seconds > 0)", val);
                bad = -1;
            }
            o->timeout_text = val;
        } else if (!strcmp(name, "--iface")) {
            if (!*val) {
                wr_error("empty --iface");
                bad = -1;
            }
            o->iface = val;
        }
        if (bad)
            exit(WR_EXIT_USAGE);
    }
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT"); /* as MPICH's and Open MPI's launchers */
    if (!o->timeout_text && env_timeout && *env_timeout) {
        char *e;
        errno = 0;
        double t = strtod(env_timeout, &e);
        if (*e || errno || !isfinite(t) || t <= 0 || t > 1e8) {
            wr_error("bad MPIEXEC_TIMEOUT '%s' (need seconds > 0)", env_timeout);
            exit(WR_EXIT_USAGE);
        }
        o->timeout = t;
        o->timeout_text = env_timeout;
    }
    if (i >= argc) {
        wr_error("missing program to run (try --help)");
        exit(WR_EXIT_USAGE);
    }
    if (!have_np) {
        wr_error("missing -n N");
        exit(WR_EXIT_USAGE);
    }
    if (hosts && hostfile) {
        wr_error("use either --hosts or --hostfile, not both");
        exit(WR_EXIT_USAGE);
    }
    o->agent = wr_split_words(rsh);
    if (!o->agent) {
        wr_error("empty --rsh agent");
        exit(WR_EXIT_USAGE);
    }
    if ((hosts && wr_hosts_from_list(o, hosts) != 0) ||
        (hostfile && wr_hosts_from_file(o, hostfile) != 0))
        exit(WR_EXIT_USAGE);
    o->prog = argv + i;
    return 0;
}
