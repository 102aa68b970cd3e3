/* Command line of wharfrun. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "wharfrun.h"

#define WR_MAX_RANKS 100000

static const char wr_usage[] =
    "usage: wharfrun -n N [options] PROGRAM [ARGS...] [: -n M [app options] PROGRAM2 [ARGS...]]...\n"
    "       (also installed as mpiexec and mpirun)\n"
    "  -n, -np N            number of ranks (required, >= 1)\n"
    "  --hosts H1[:S],H2..  hosts, optionally with slot counts (default: all local);\n"
    "                       also -hosts, -host, --host, -H\n"
    "  --hostfile FILE      hosts from FILE: lines 'host [slots=K]' or 'host:K', # comments;\n"
    "                       also -hostfile, -f, -machinefile, --machinefile\n"
    "  -ppn N               N ranks per host, in host order (also -perhost, --npernode)\n"
    "  --rsh AGENT          remote agent, run as 'AGENT HOST COMMAND' (default: ssh;\n"
    "                       also -launcher-exec)\n"
    "  -x VAR[=VAL]         export VAR (its value here, or VAL) to every rank; repeatable\n"
    "  -genv VAR VAL        the same as -x VAR=VAL; -genvlist A,B: -x A -x B\n"
    "  -genvall             remote ranks get the whole environment (local ones always do)\n"
    "  -gwdir DIR           working directory of every rank (default: the current one)\n"
    "  --timeout S          kill the job after S seconds (exit status 124; default:\n"
    "                       $MPIEXEC_TIMEOUT if set, else none)\n"
    "  --tag-output         prefix every output line with [rank] (also -l, -prepend-rank)\n"
    "  --iface ADDR|IFNAME  address remote ranks use to reach this launcher (also -iface)\n"
    "  --stdin RANK|none    the rank that reads wharfrun's stdin (default 0; the others\n"
    "                       and spawned processes read /dev/null)\n"
    "  -configfile FILE     the applications, one per line ('-n 2 prog args'; also --app)\n"
    "  --help, --version\n"
    "Options of one application (before its PROGRAM; ':' separates applications, and\n"
    "each application's ranks see MPI_APPNUM = its index):\n"
    "  -n N  -wdir DIR  -env VAR VAL  -envlist A,B\n"
    "Accepted and ignored (other launchers' placement and binding controls):\n"
    "  --oversubscribe --allow-run-as-root --report-bindings -q --bind-to X --map-by X\n"
    "  --rank-by X -launcher X -bootstrap X --mca K V\n"
    "Ranks are placed block-wise over the hosts.  See docs/LAUNCHER.md.\n";

/* Add "VAR=VAL" (VAR alone: its value here) to a NULL-terminated list; a
 * later entry of the same name replaces the earlier one.  0 or -1. */
static int wr_add_var(char ***list, int *n, const char *spec, const char *opt)
{
    const char *eq = strchr(spec, '=');
    size_t nl = eq ? (size_t)(eq - spec) : strlen(spec);
    int ok = nl > 0 && (isalpha((unsigned char)spec[0]) || spec[0] == '_');
    for (size_t i = 0; ok && i < nl; i++)
        ok = isalnum((unsigned char)spec[i]) || spec[i] == '_';
    if (!ok) {
        wr_error("%s '%s': not a variable name", opt, spec);
        return -1;
    }
    char *v;
    if (eq) {
        v = strdup(spec);
    } else {
        const char *cur = getenv(spec);
        if (!cur) {
            wr_error("%s %s: not set in the environment (use %s=VALUE)", opt, spec, spec);
            return -1;
        }
        v = malloc(nl + strlen(cur) + 2);
        if (v)
            sprintf(v, "%s=%s", spec, cur);
    }
    char **x = realloc(*list, (size_t)(*n + 2) * sizeof *x);
    if (!v || !x) {
        free(v);
        wr_error("out of memory");
        return -1;
    }
    *list = x;
    for (int i = 0; i < *n; i++) {
        if (!strncmp(x[i], v, nl + 1)) {
            free(x[i]);
            x[i] = v;
            return 0;
        }
    }
    x[(*n)++] = v;
    x[*n] = NULL;
    return 0;
}

/* "A,B,C": each name as wr_add_var (its value here).  0 or -1. */
static int wr_add_list(char ***list, int *n, const char *names, const char *opt)
{
    char *copy = strdup(names);
    int rc = copy && *names ? 0 : -1;
    if (!copy)
        wr_error("out of memory");
    else if (!*names)
        wr_error("%s: empty list of variables", opt);
    for (char *save = NULL, *t = copy ? strtok_r(copy, ",", &save) : NULL; t && !rc;
         t = strtok_r(NULL, ",", &save))
        rc = wr_add_var(list, n, t, opt);
    free(copy);
    return rc;
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

/* ---- the command line ---- */

enum {
    O_NP, O_HOSTS, O_HOSTFILE, O_RSH, O_X, O_TIMEOUT, O_IFACE, O_TAG, O_WDIR, O_GWDIR,
    O_GENV, O_ENV, O_GENVLIST, O_ENVLIST, O_GENVALL, O_PPN, O_CONFIG, O_STDIN, O_HELP, O_VERSION,
    O_IGNORE
};

static const struct wr_opt {
    const char *name;
    int nval; /* values that follow */
    int id;
} wr_optab[] = {
    {"-n", 1, O_NP}, {"-np", 1, O_NP}, {"--np", 1, O_NP},
    {"--hosts", 1, O_HOSTS}, {"--host", 1, O_HOSTS}, {"-hosts", 1, O_HOSTS}, {"-host", 1, O_HOSTS},
    {"-H", 1, O_HOSTS},
    {"--hostfile", 1, O_HOSTFILE}, {"-hostfile", 1, O_HOSTFILE}, {"-f", 1, O_HOSTFILE},
    {"-machinefile", 1, O_HOSTFILE}, {"--machinefile", 1, O_HOSTFILE},
    {"--rsh", 1, O_RSH}, {"-launcher-exec", 1, O_RSH}, {"-x", 1, O_X}, {"--timeout", 1, O_TIMEOUT},
    {"--iface", 1, O_IFACE}, {"-iface", 1, O_IFACE},
    {"--tag-output", 0, O_TAG}, {"-tag-output", 0, O_TAG}, {"-l", 0, O_TAG}, {"-prepend-rank", 0, O_TAG},
    {"-wdir", 1, O_WDIR}, {"--wdir", 1, O_WDIR}, {"-wd", 1, O_WDIR}, {"--wd", 1, O_WDIR},
    {"-gwdir", 1, O_GWDIR},
    {"-genv", 2, O_GENV}, {"-env", 2, O_ENV}, {"-genvlist", 1, O_GENVLIST}, {"-envlist", 1, O_ENVLIST},
    {"-genvall", 0, O_GENVALL}, {"-envall", 0, O_GENVALL},
    {"-ppn", 1, O_PPN}, {"-perhost", 1, O_PPN}, {"--npernode", 1, O_PPN}, {"-npernode", 1, O_PPN},
    {"-configfile", 1, O_CONFIG}, {"--app", 1, O_CONFIG}, {"--stdin", 1, O_STDIN}, {"-stdin", 1, O_STDIN},
    {"--help", 0, O_HELP}, {"-h", 0, O_HELP}, {"--version", 0, O_VERSION}, {"-V", 0, O_VERSION},
    {"--oversubscribe", 0, O_IGNORE}, {"-oversubscribe", 0, O_IGNORE},
    {"--allow-run-as-root", 0, O_IGNORE}, {"--report-bindings", 0, O_IGNORE}, {"-q", 0, O_IGNORE},
    {"--quiet", 0, O_IGNORE}, {"--bind-to", 1, O_IGNORE}, {"-bind-to", 1, O_IGNORE},
    {"-binding", 1, O_IGNORE}, {"--map-by", 1, O_IGNORE}, {"-map-by", 1, O_IGNORE},
    {"--rank-by", 1, O_IGNORE}, {"-launcher", 1, O_IGNORE}, {"-bootstrap", 1, O_IGNORE},
    {"--mca", 2, O_IGNORE}, {"-mca", 2, O_IGNORE},
};

typedef struct wr_cmdline {
    const char *hosts, *hostfile, *rsh;
    int in_config; /* parsing a -configfile line */
} wr_cmdline_t;

static void wr_usage_error(void) { exit(WR_EXIT_USAGE); }

static int wr_parse_count(const char *opt, const char *s, int max, int *out)
{
    if (wr_parse_int(s, 1, max, out) != 0) {
        wr_error("bad %s '%s' (need 1..%d)", opt, s, max);
        return -1;
    }
    return 0;
}

static wr_app_t *wr_new_app(wr_opts_t *o)
{
    wr_app_t *a = realloc(o->apps, (size_t)(o->napps + 1) * sizeof *a);
    if (!a) {
        wr_error("out of memory");
        wr_usage_error();
    }
    o->apps = a;
    memset(&a[o->napps], 0, sizeof *a);
    return &a[o->napps++];
}

static void wr_parse_config(wr_opts_t *o, wr_cmdline_t *c, const char *path);

/* One application: its options (and any global ones), its program and
 * arguments up to ":" or the end.  *i is advanced past them. */
static void wr_parse_app(int argc, char **argv, int *i, wr_opts_t *o, wr_cmdline_t *c)
{
    wr_app_t *app = NULL;
    int have_np = 0, np = 0;
    const char *wdir = NULL;
    char **env = NULL;
    int nenv = 0;
    for (; *i < argc; (*i)++) {
        const char *a = argv[*i];
        if (a[0] != '-' || !strcmp(a, "-"))
            break;
        if (!strcmp(a, "--")) {
            (*i)++;
            break;
        }
        const struct wr_opt *op = NULL;
        const char *val[2] = {NULL, NULL};
        for (size_t k = 0; k < sizeof wr_optab / sizeof wr_optab[0]; k++) {
            size_t l = strlen(wr_optab[k].name);
            if (!strcmp(a, wr_optab[k].name)) {
                op = &wr_optab[k];
                if (*i + op->nval >= argc) {
                    wr_error("option %s needs %s", a, op->nval == 2 ? "two values" : "a value");
                    wr_usage_error();
                }
                for (int v = 0; v < op->nval; v++)
                    val[v] = argv[++*i];
                break;
            }
            if (wr_optab[k].nval == 1 && a[1] == '-' && !strncmp(a, wr_optab[k].name, l) && a[l] == '=') {
                op = &wr_optab[k]; /* --opt=VALUE */
                val[0] = a + l + 1;
                break;
            }
        }
        static const struct wr_opt np_glued = {"-n", 1, O_NP};
        if (!op && a[1] == 'n' && isdigit((unsigned char)a[2])) {
            op = &np_glued; /* -nN */
            val[0] = a + 2;
        }
        if (!op) {
            wr_error("unknown option '%s' (try --help)", a);
            wr_usage_error();
        }
        int bad = 0;
        switch (op->id) {
        case O_HELP:
            fputs(wr_usage, stdout);
            exit(0);
        case O_VERSION:
            printf("wharfrun (wharf) %s\n", WR_VERSION);
            exit(0);
        case O_TAG:
            o->tag_output = 1;
            break;
        case O_NP:
            bad = wr_parse_count("number of ranks", val[0], WR_MAX_RANKS, &np);
            have_np = 1;
            break;
        case O_HOSTS:
        case O_HOSTFILE: {
            const char **slot = op->id == O_HOSTS ? &c->hosts : &c->hostfile;
            if (*slot && strcmp(*slot, val[0])) {
                wr_error("%s given twice with different values: hosts are per job, not per application", a);
                bad = -1;
            }
            *slot = val[0];
            break;
        }
        case O_RSH:
            c->rsh = val[0];
            break;
        case O_X:
            bad = wr_add_var(&o->xvars, &o->nx, val[0], "-x");
            break;
        case O_GENV:
        case O_ENV: {
            char *spec = malloc(strlen(val[0]) + strlen(val[1]) + 2);
            if (!spec) {
                wr_error("out of memory");
                wr_usage_error();
            }
            sprintf(spec, "%s=%s", val[0], val[1]);
            bad = strchr(val[0], '=') ? (wr_error("%s '%s': not a variable name", a, val[0]), -1)
                  : op->id == O_GENV ? wr_add_var(&o->xvars, &o->nx, spec, a)
                                     : wr_add_var(&env, &nenv, spec, a);
            free(spec);
            break;
        }
        case O_GENVLIST:
            bad = wr_add_list(&o->xvars, &o->nx, val[0], a);
            break;
        case O_ENVLIST:
            bad = wr_add_list(&env, &nenv, val[0], a);
            break;
        case O_GENVALL:
            o->envall = 1;
            break;
        case O_WDIR:
        case O_GWDIR:
            if (!*val[0]) {
                wr_error("empty %s", a);
                bad = -1;
            }
            if (op->id == O_WDIR)
                wdir = val[0];
            else
                o->wdir = val[0];
            break;
        case O_PPN:
            bad = wr_parse_count(a, val[0], WR_MAX_RANKS, &o->ppn);
            break;
        case O_CONFIG:
            if (c->in_config || o->napps) {
                wr_error("%s: must be the only application of the command line", a);
                bad = -1;
            } else {
                if (*i + 1 < argc) {
                    wr_error("%s FILE: nothing may follow it ('%s')", a, argv[*i + 1]);
                    wr_usage_error();
                }
                c->in_config = 1;
                wr_parse_config(o, c, val[0]);
                c->in_config = 0;
                *i = argc;
                return;
            }
            break;
        case O_TIMEOUT: {
            char *e;
            errno = 0;
            o->timeout = strtod(val[0], &e);
            if (!*val[0] || *e || errno || !isfinite(o->timeout) || o->timeout <= 0 || o->timeout > 1e8) {
                wr_error("bad --timeout '%s' (need seconds > 0)", val[0]);
                bad = -1;
            }
            o->timeout_text = val[0];
            break;
        }
        case O_STDIN:
            if (!strcmp(val[0], "none")) {
                o->stdin_rank = -1;
            } else if (wr_parse_int(val[0], 0, WR_MAX_RANKS - 1, &o->stdin_rank) != 0) {
                wr_error("bad --stdin '%s' (a rank number or none)", val[0]);
                bad = -1;
            }
            break;
        case O_IFACE:
            if (!*val[0]) {
                wr_error("empty --iface");
                bad = -1;
            }
            o->iface = val[0];
            break;
        default: /* O_IGNORE */
            break;
        }
        if (bad)
            wr_usage_error();
    }
    if (*i >= argc || !strcmp(argv[*i], ":")) {
        wr_error(o->napps ? "missing program of application %d after ':' (try --help)"
                          : "missing program to run (try --help)", o->napps + 1);
        wr_usage_error();
    }
    if (!have_np) {
        wr_error(o->napps ? "missing -n N for application %d (%s)" : "missing -n N", o->napps + 1, argv[*i]);
        wr_usage_error();
    }
    if (o->np + np > WR_MAX_RANKS) {
        wr_error("more than %d ranks in all", WR_MAX_RANKS);
        wr_usage_error();
    }
    app = wr_new_app(o);
    app->np = np;
    app->wdir = wdir;
    app->env = env;
    app->nenv = nenv;
    o->np += np;
    int first = *i, n = 0;
    while (*i < argc && strcmp(argv[*i], ":"))
        (*i)++, n++;
    app->prog = calloc((size_t)n + 1, sizeof *app->prog);
    if (!app->prog) {
        wr_error("out of memory");
        wr_usage_error();
    }
    memcpy(app->prog, argv + first, (size_t)n * sizeof *app->prog);
}

/* -configfile: one application per line ("-n 2 prog args"; words split on
 * blanks; '#' comments; a trailing '\' continues the line). */
static void wr_parse_config(wr_opts_t *o, wr_cmdline_t *c, const char *path)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        wr_error("configfile '%s': %s", path, f ? "not a regular file" : strerror(errno));
        wr_usage_error();
    }
    char line[65536];
    size_t len = 0;
    int lineno = 0;
    while (fgets(line + len, (int)(sizeof line - len), f)) {
        lineno++;
        len = strlen(line);
        if (len + 1 >= sizeof line) {
            wr_error("configfile '%s': line %d too long", path, lineno);
            wr_usage_error();
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len && line[len - 1] == '\\') {
            line[len - 1] = ' '; /* continued */
            continue;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char **w = wr_split_words(line);
        len = 0;
        if (!w)
            continue; /* blank */
        int wn = 0;
        while (w[wn])
            wn++;
        for (int k = 0; k < wn; k++)
            if (!strcmp(w[k], ":")) {
                wr_error("configfile '%s' line %d: one application per line, no ':'", path, lineno);
                wr_usage_error();
            }
        int i = 0;
        wr_parse_app(wn, w, &i, o, c);
    }
    fclose(f);
    if (!o->napps) {
        wr_error("configfile '%s': no application in it", path);
        wr_usage_error();
    }
}

/* wharfrun --adopt FD PID KVSNAME, as a singleton's library starts it: one
 * job of one rank, that process; no program to start, no stdin to forward. */
static int wr_parse_adopt(int argc, char **argv, wr_opts_t *o)
{
    if (argc != 5) {
        wr_error("--adopt takes FD PID KVSNAME (it is started by a singleton's MPI_Comm_spawn)");
        exit(WR_EXIT_USAGE);
    }
    char *e1, *e2;
    errno = 0;
    long fd = strtol(argv[2], &e1, 10), pid = strtol(argv[3], &e2, 10);
    size_t kl = strlen(argv[4]);
    int ok = !errno && *argv[2] && !*e1 && *argv[3] && !*e2 && fd > 2 && fd < 65536 && pid > 1 &&
             kl > 0 && kl < 64 && fcntl((int)fd, F_GETFD) >= 0;
    for (size_t i = 0; ok && i < kl; i++)
        ok = argv[4][i] > ' ' && argv[4][i] <= '~' && argv[4][i] != '\\' && argv[4][i] != '/';
    if (!ok) {
        wr_error("--adopt %.16s %.16s %.64s: bad descriptor, pid or kvsname", argv[2], argv[3], argv[4]);
        exit(WR_EXIT_USAGE);
    }
    static char *prog[] = {"(singleton)", NULL};
    wr_app_t *app = wr_new_app(o);
    app->np = o->np = 1;
    app->prog = o->prog = prog;
    o->adopt_fd = (int)fd;
    o->adopt_pid = (pid_t)pid;
    o->adopt_kvs = argv[4];
    o->stdin_rank = -1;
    o->agent = wr_split_words("ssh");
    return 0;
}

int wr_parse_options(int argc, char **argv, wr_opts_t *o)
{
    wr_cmdline_t c = {.rsh = "ssh"};
    memset(o, 0, sizeof *o);
    if (argc > 1 && !strcmp(argv[1], "--adopt"))
        return wr_parse_adopt(argc, argv, o);
    int i = 1;
    for (;;) {
        wr_parse_app(argc, argv, &i, o, &c);
        if (i >= argc)
            break;
        i++; /* ":" */
        if (i >= argc) {
            wr_error("missing application after ':' (try --help)");
            wr_usage_error();
        }
    }
    o->prog = o->apps[0].prog;
    if (o->stdin_rank >= o->np) {
        wr_error("--stdin %d: the job has ranks 0..%d", o->stdin_rank, o->np - 1);
        exit(WR_EXIT_USAGE);
    }
    if (o->napps == 1 && !o->wdir)
        o->wdir = o->apps[0].wdir;
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
    if (c.hosts && c.hostfile) {
        wr_error("use either --hosts or --hostfile, not both");
        exit(WR_EXIT_USAGE);
    }
    o->agent = wr_split_words(c.rsh);
    if (!o->agent) {
        wr_error("empty --rsh agent");
        exit(WR_EXIT_USAGE);
    }
    if ((c.hosts && wr_hosts_from_list(o, c.hosts) != 0) ||
        (c.hostfile && wr_hosts_from_file(o, c.hostfile) != 0))
        exit(WR_EXIT_USAGE);
    return 0;
}
