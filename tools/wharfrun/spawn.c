/* Starting ranks: local ones by fork/exec with an inherited PMI socketpair,
 * remote ones as "AGENT HOST 'cd CWD && exec env VAR=VAL... PROGRAM ARGS'"
 * reaching the PMI server over TCP. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmisrv.h"
#include "wharfrun.h"

extern char **environ;

/* ---- finding executables ---- */

/* 0 and the path in out; or WR_EXIT_NOTFOUND / WR_EXIT_NOEXEC. */
static int wr_find_exec(const char *prog, char *out, size_t outlen)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (stat(prog, &st) != 0)
            return WR_EXIT_NOTFOUND;
        if (!S_ISREG(st.st_mode) || access(prog, X_OK) != 0)
            return WR_EXIT_NOEXEC;
        snprintf(out, outlen, "%s", prog);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int found_noexec = 0;
    while (*prog) {
        const char *colon = strchr(path, ':');
        size_t dl = colon ? (size_t)(colon - path) : strlen(path);
        char cand[PATH_MAX];
        if (dl == 0)
            snprintf(cand, sizeof cand, "%s", prog);
        else
            snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, path, prog);
        if (stat(cand, &st) == 0) {
            if (S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
                snprintf(out, outlen, "%s", cand);
                return 0;
            }
            found_noexec = 1;
        }
        if (!colon)
            break;
        path = colon + 1;
    }
    return found_noexec ? WR_EXIT_NOEXEC : WR_EXIT_NOTFOUND;
}

static char wr_agent_path[PATH_MAX];

/* Does one of the ranks [first, first+n) run on a local (remote) host? */
static int wr_ranks_on(const wr_opts_t *o, int first, int n, int local)
{
    for (int h = 0; h < o->nhosts; h++) {
        const wr_host_t *hp = &o->hosts[h];
        if (!hp->local == !local && hp->nranks > 0 && hp->first_rank < first + n &&
            first < hp->first_rank + hp->nranks)
            return 1;
    }
    return 0;
}

int wr_check_program(const wr_opts_t *o)
{
    if (wr_ranks_on(o, 0, o->np, 0) && wr_find_exec(o->agent[0], wr_agent_path, sizeof wr_agent_path) != 0) {
        wr_error("remote agent '%s' not found or not executable", o->agent[0]);
        return WR_EXIT_USAGE;
    }
    for (int k = 0, first = 0; k < o->napps; first += o->apps[k++].np) {
        wr_app_t *app = &o->apps[k];
        const char *prog = app->prog[0], *wdir = app->wdir ? app->wdir : o->wdir;
        if (!wr_ranks_on(o, first, app->np, 1))
            continue;
        struct stat st;
        if (wdir && (stat(wdir, &st) != 0 || !S_ISDIR(st.st_mode))) {
            wr_error("working directory '%s' does not exist", wdir);
            return WR_EXIT_USAGE;
        }
        /* a relative path with a '/' is the rank's: it runs in wdir */
        char cand[PATH_MAX], path[PATH_MAX];
        if (wdir && prog[0] != '/' && strchr(prog, '/'))
            snprintf(cand, sizeof cand, "%s/%s", wdir, prog);
        else
            snprintf(cand, sizeof cand, "%s", prog);
        int rc = wr_find_exec(cand, path, sizeof path);
        if (rc == WR_EXIT_NOTFOUND)
            wr_error("program '%s' not found", prog);
        else if (rc == WR_EXIT_NOEXEC)
            wr_error("program '%s' is not an executable file", prog);
        if (rc)
            return rc;
        if (!(app->exec_path = strdup(path))) {
            wr_error("out of memory");
            return 1;
        }
    }
    return 0;
}

/* ---- environments ---- */

static const char *const wr_rank_vars[] = {"WHARF_HOST_INDEX", "WHARF_HOST_NAME", "WHARF_PMI_GROUP",
                                           "WHARF_LOCAL_RANK", "WHARF_LOCAL_SIZE",
                                           "WHARF_JOB_ID", WH_PMI_SECRET_VAR,
                                           "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
                                           "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE",
                                           "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"};

static int wr_name_is(const char *entry, const char *name)
{
    size_t l = strlen(name);
    return !strncmp(entry, name, l) && entry[l] == '=';
}

/* Is entry's variable one of list's "VAR=VAL"? */
static int wr_in_vars(const char *entry, char **list, int n)
{
    for (int i = 0; i < n; i++) {
        size_t nl = strcspn(list[i], "=");
        if (!strncmp(entry, list[i], nl) && entry[nl] == '=')
            return 1;
    }
    return 0;
}

/* Variables set per rank by us (or by -env for its application): never
 * copied from the launcher. */
static int wr_ours(const char *entry, const wr_opts_t *o, const wr_rank_t *r)
{
    if (wr_in_vars(entry, r->env, r->nenv))
        return 1;
    if (!strncmp(entry, "PMI_", 4))
        return 1; /* a parent launcher's PMI_* are not for our ranks */
    for (size_t i = 0; i < sizeof wr_rank_vars / sizeof wr_rank_vars[0]; i++)
        if (wr_name_is(entry, wr_rank_vars[i]))
            return 1;
    return wr_in_vars(entry, o->xvars, o->nx);
}

typedef struct wr_env {
    char **v;
    int n, cap;
} wr_env_t;

__attribute__((format(printf, 2, 3))) static int wr_env_add(wr_env_t *e, const char *fmt, ...)
{
    if (e->n + 2 > e->cap) {
        int cap = e->cap ? e->cap * 2 : 64;
        char **v = realloc(e->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        e->v = v;
        e->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&e->v[e->n], fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    e->v[++e->n] = NULL;
    return 0;
}

static void wr_env_free(wr_env_t *e)
{
    for (int i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

/* The per-rank variables, common to local and remote ranks. */
static int wr_env_rank(wr_env_t *e, const wr_job_t *job, const wr_rank_t *r)
{
    const wr_host_t *h = &job->o->hosts[r->host];
    int rc = wr_env_add(e, "PMI_RANK=%d", r->grank) | wr_env_add(e, "PMI_SIZE=%d", r->gsize) |
             wr_env_add(e, "WHARF_HOST_INDEX=%d", r->host) |
             wr_env_add(e, "WHARF_HOST_NAME=%s", h->name) |
             wr_env_add(e, "WHARF_LOCAL_RANK=%d", r->local_rank) |
             wr_env_add(e, "WHARF_LOCAL_SIZE=%d", r->lsize) |
             /* what programs read before MPI_Init to pick a GPU per rank, as
              * MPICH's hydra and MVAPICH's launchers set them */
             wr_env_add(e, "MPI_LOCALRANKID=%d", r->local_rank) | wr_env_add(e, "MPI_LOCALNRANKS=%d", r->lsize) |
             wr_env_add(e, "MV2_COMM_WORLD_RANK=%d", r->grank) | wr_env_add(e, "MV2_COMM_WORLD_SIZE=%d", r->gsize) |
             wr_env_add(e, "MV2_COMM_WORLD_LOCAL_RANK=%d", r->local_rank) |
             wr_env_add(e, "MV2_COMM_WORLD_LOCAL_SIZE=%d", r->lsize);
    if (r->group == 0)
        return rc | wr_env_add(e, "WHARF_JOB_ID=%s", job->jobid);
    return rc | wr_env_add(e, "WHARF_JOB_ID=%s", job->srv->groups[r->group].kvsname) |
           wr_env_add(e, "WHARF_PMI_GROUP=%d", r->group);
}

/* -x (-genv) variables, then the rank's application's -env ones, which win. */
static int wr_env_vars(wr_env_t *e, const wr_job_t *job, const wr_rank_t *r)
{
    int rc = 0;
    for (int i = 0; i < job->o->nx; i++)
        if (!wr_in_vars(job->o->xvars[i], r->env, r->nenv))
            rc |= wr_env_add(e, "%s", job->o->xvars[i]);
    for (int i = 0; i < r->nenv; i++)
        rc |= wr_env_add(e, "%s", r->env[i]);
    return rc;
}

/* Local rank: the launcher's environment (minus ours), -x, per-rank vars. */
static int wr_env_local(wr_env_t *e, const wr_job_t *job, const wr_rank_t *r, int pmi_fd)
{
    int rc = 0;
    for (char **p = environ; *p; p++)
        if (!wr_ours(*p, job->o, r))
            rc |= wr_env_add(e, "%s", *p);
    rc |= wr_env_vars(e, job, r);
    rc |= wr_env_add(e, "PMI_FD=%d", pmi_fd);
    return rc | wr_env_rank(e, job, r);
}

static int wr_env_shell_ok(const char *entry);

/* Remote rank: WHARF_* of the launcher, LD_LIBRARY_PATH, -x, per-rank vars. */
static int wr_env_remote(wr_env_t *e, const wr_job_t *job, const wr_rank_t *r)
{
    const wr_host_t *h = &job->o->hosts[r->host];
    int rc = 0;
    for (char **p = environ; *p; p++)
        if ((!strncmp(*p, "WHARF_", 6) || wr_name_is(*p, "LD_LIBRARY_PATH") ||
             (job->o->envall && wr_env_shell_ok(*p))) && /* (-genvall: what a shell can pass) */
            !wr_ours(*p, job->o, r))
            rc |= wr_env_add(e, "%s", *p);
    rc |= wr_env_vars(e, job, r);
    rc |= wr_env_add(e, "PMI_PORT=%s:%d", h->addr, h->port);
    rc |= wr_env_add(e, "PMI_ID=%d", r->pmiid);
    rc |= wr_env_add(e, "%s=%s", WH_PMI_SECRET_VAR, job->secret);
    return rc | wr_env_rank(e, job, r);
}

int wr_shell_quote(wr_buf_t *b, const char *word)
{
    int rc = wr_buf_append(b, "'", 1);
    for (const char *c = word; *c; c++) {
        if (*c == '\'')
            rc |= wr_buf_append(b, "'\\''", 4);
        else
            rc |= wr_buf_append(b, c, 1);
    }
    return rc | wr_buf_append(b, "'", 1);
}

/* ---- fork/exec ---- */

/* In the child, before exec: own session and process group (no controlling
 * terminal: an agent asking for a password fails at once instead of being
 * stopped by SIGTTIN), die with the launcher, default signal state, stdin
 * from /dev/null. */
static void wr_child_setup(pid_t parent, int in, int out, int err)
{
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127); /* the launcher died before we could ask */
    for (int sig = 1; sig < NSIG; sig++) /* pristine signal state, whatever ours is */
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int nul = in >= 0 ? in : open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(127);
    if (nul > 2)
        close(nul);
}

/* Fork and exec path with argv/envp; output pipes into r->out/r->err.
 * keep_fd (>= 0) is inherited by the child; in_fd (>= 0) becomes its stdin
 * (else /dev/null).  exec errors come back through a close-on-exec pipe.
 * 0 or -1 (message printed). */
static int wr_fork_exec(wr_rank_t *r, const char *path, char **argv, char **envp, int keep_fd,
                        int in_fd, const char *what, const char *cwd)
{
    int out[2] = {-1, -1}, err[2] = {-1, -1}, ex[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
        wr_error("pipe: %s", strerror(errno));
        goto fail;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        wr_error("fork: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        wr_child_setup(parent, in_fd, out[1], err[1]);
        if (keep_fd >= 0)
            fcntl(keep_fd, F_SETFD, 0);
        if (cwd && chdir(cwd) != 0) {
            int e = errno;
            ssize_t wn = write(ex[1], &e, sizeof e);
            (void)wn;
            _exit(127);
        }
        execve(path, argv, envp);
        int e = errno;
        ssize_t wn = write(ex[1], &e, sizeof e);
        (void)wn;
        _exit(127);
    }
    /* (no setpgid here: the child's setsid would fail on a group leader;
     * the exec-status read below waits until the child has its session) */
    close(out[1]);
    close(err[1]);
    close(ex[1]);
    int e = 0;
    ssize_t n;
    do
        n = read(ex[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(ex[0]);
    if (n == (ssize_t)sizeof e) {
        waitpid(pid, NULL, 0);
        wr_error("cannot execute %s '%s': %s", what, path, strerror(e));
        close(out[0]);
        close(err[0]);
        return -1;
    }
    r->pid = pid;
    r->out.fd = out[0];
    r->err.fd = err[0];
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
        if (ex[i] >= 0)
            close(ex[i]);
    }
    return -1;
}

static int wr_spawn_local(wr_job_t *job, wr_rank_t *r)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        wr_error("socketpair: %s", strerror(errno));
        return -1;
    }
    wr_env_t env = {0};
    int rc = -1, in[2] = {-1, -1};
    if (r->group == 0 && r->rank == job->o->stdin_rank && job->stdin_fd >= 0) {
        if (pipe2(in, O_CLOEXEC) != 0) {
            wr_error("stdin pipe: %s", strerror(errno));
            close(sv[0]);
            close(sv[1]);
            return -1;
        }
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        job->fwd_fd = in[1];
    }
    if (wr_env_local(&env, job, r, sv[1]) != 0)
        wr_error("out of memory");
    else
        rc = wr_fork_exec(r, r->exec_path, r->prog,
                          env.v, sv[1], in[0], "program", r->wdir);
    wr_env_free(&env);
    close(sv[1]);
    if (in[0] >= 0)
        close(in[0]);
    if (rc != 0) {
        close(sv[0]);
        return -1;
    }
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    r->pmi_fd = sv[0];
    return 0;
}

/* The remote command: a POSIX-shell bootstrap that reads the rank's
 * environment from stdin ("VAR=VAL" lines, then an empty line), so that
 * nothing secret is on any command line, then runs the program with stdin
 * from /dev/null (the rank that reads wharfrun's stdin: the rest of the
 * agent's stdin, which wharfrun forwards after the environment).  Only double quotes inside, so the whole is one
 * single-quoted-word-safe string. */
static const char wr_boot[] =
    " || exit 1; ok=; while IFS= read -r l; do if [ -z \"$l\" ]; then ok=1; break; fi;"
    " export \"$l\" || exit 1; done; if [ -z \"$ok\" ]; then"
    " echo \"wharfrun bootstrap: no environment on stdin\" >&2; exit 1; fi; exec";

/* 1 if entry is NAME=VALUE with a shell identifier as NAME and no newline. */
static int wr_env_shell_ok(const char *entry)
{
    const char *eq = strchr(entry, '=');
    if (!eq || eq == entry || (entry[0] >= '0' && entry[0] <= '9'))
        return 0;
    for (const char *c = entry; c < eq; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_'))
            return 0;
    return strchr(eq, '\n') == NULL;
}

/* A pipe holding the environment lines, its read end returned (or -1,
 * message printed).  The whole payload sits in the pipe buffer, so writing
 * it never waits for the agent. */
static int wr_env_pipe(const wr_env_t *env, int *keep_w)
{
    wr_buf_t b = {0};
    int rc = 0;
    for (int i = 0; i < env->n; i++) {
        if (!wr_env_shell_ok(env->v[i])) {
            char safe[80];
            wr_sanitize(env->v[i], safe, sizeof safe);
            wr_error("cannot pass '%s' to a remote rank (the name must be a shell identifier "
                     "and the value must not contain a newline)", safe);
            wr_buf_free(&b);
            return -1;
        }
        rc |= wr_buf_append(&b, env->v[i], strlen(env->v[i])) | wr_buf_append(&b, "\n", 1);
    }
    rc |= wr_buf_append(&b, "\n", 1);
    int p[2] = {-1, -1};
    if (rc != 0 || pipe2(p, O_CLOEXEC) != 0) {
        wr_error("environment pipe: %s", rc ? "out of memory" : strerror(errno));
        wr_buf_free(&b);
        return -1;
    }
    if (b.len > 65536)
        fcntl(p[1], F_SETPIPE_SZ, (int)b.len);
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    ssize_t n = write(p[1], b.data, b.len);
    int e = errno;
    if (keep_w && n == (ssize_t)b.len)
        *keep_w = p[1]; /* the rank's stdin follows its environment */
    else
        close(p[1]);
    memset(b.data, 0, b.len); /* the key */
    size_t want = b.len;
    wr_buf_free(&b);
    if (n != (ssize_t)want) {
        wr_error("environment of remote ranks too large (%zu bytes): %s", want,
                 n < 0 ? strerror(e) : "does not fit a pipe");
        close(p[0]);
        return -1;
    }
    return p[0];
}

static int wr_spawn_remote(wr_job_t *job, wr_rank_t *r, const char *cwd)
{
    wr_env_t env = {0};
    wr_buf_t cmd = {0};
    int rc = wr_env_remote(&env, job, r);
    rc |= wr_buf_append(&cmd, "cd ", 3) | wr_shell_quote(&cmd, r->wdir ? r->wdir : cwd) |
          wr_buf_append(&cmd, wr_boot, sizeof wr_boot - 1);
    for (char **a = r->prog; *a; a++)
        rc |= wr_buf_append(&cmd, " ", 1) | wr_shell_quote(&cmd, *a);
    int fwd = r->group == 0 && r->rank == job->o->stdin_rank && job->stdin_fd >= 0;
    if (!fwd)
        rc |= wr_buf_append(&cmd, " </dev/null", 11);
    int na = 0;
    while (job->o->agent[na])
        na++;
    char **argv = calloc((size_t)na + 3, sizeof *argv);
    int in = -1;
    if (rc != 0 || !argv) {
        wr_error("out of memory");
        rc = -1;
    } else if ((in = wr_env_pipe(&env, fwd ? &job->fwd_fd : NULL)) < 0) {
        rc = -1;
    } else {
        for (int i = 0; i < na; i++)
            argv[i] = job->o->agent[i];
        argv[na] = job->o->hosts[r->host].name;
        argv[na + 1] = cmd.data;
        /* the agent gets the launcher's environment unchanged */
        rc = wr_fork_exec(r, wr_agent_path, argv, environ, -1, in, "agent", NULL);
        close(in);
    }
    free(argv);
    wr_buf_free(&cmd);
    for (int i = 0; i < env.n; i++)
        memset(env.v[i], 0, strlen(env.v[i]));
    wr_env_free(&env);
    return rc;
}

int wr_spawn_all(wr_job_t *job)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    for (int i = 0; i < job->n; i++) {
        wr_rank_t *r = &job->ranks[i];
        if (!r->adopted && (r->remote ? wr_spawn_remote(job, r, cwd) : wr_spawn_local(job, r)) != 0)
            return -1;
    }
    return 0;
}

void wr_remote_cleanup(const wr_job_t *job, double timeout)
{
    const wr_opts_t *o = job->o;
    pid_t *pids = calloc((size_t)o->nhosts, sizeof *pids);
    int na = 0;
    while (o->agent[na])
        na++;
    char **argv = calloc((size_t)na + 3, sizeof *argv);
    char cmd[1024];
    const char *dir = getenv("WHARF_NODE_DIR"); /* where the ranks' node regions live */
    if (!dir || !*dir || strpbrk(dir, "'\\\n"))
        dir = "/dev/shm";
    snprintf(cmd, sizeof cmd, "rm -f '%s'/wharf.%s.*", dir, job->jobid);
    if (!pids || !argv) {
        free(pids);
        free(argv);
        return;
    }
    for (int i = 0; i < na; i++)
        argv[i] = o->agent[i];
    argv[na + 1] = cmd;
    pid_t parent = getpid();
    for (int h = 0; h < o->nhosts; h++) {
        if (o->hosts[h].local || o->hosts[h].nranks == 0)
            continue;
        argv[na] = o->hosts[h].name;
        pid_t pid = fork();
        if (pid == 0) {
            int nul = open("/dev/null", O_RDWR);
            wr_child_setup(parent, -1, nul, nul);
            execve(wr_agent_path, argv, environ);
            _exit(127);
        }
        if (pid > 0)
            pids[h] = pid;
    }
    double end = wr_now() + timeout;
    for (;;) {
        int left = 0;
        for (int h = 0; h < o->nhosts; h++) {
            if (pids[h] > 0 && waitpid(pids[h], NULL, WNOHANG) == 0)
                left++;
            else
                pids[h] = 0;
        }
        if (!left)
            break;
        if (wr_now() >= end) {
            for (int h = 0; h < o->nhosts; h++) {
                if (pids[h] > 0) {
                    kill(-pids[h], SIGKILL);
                    waitpid(pids[h], NULL, 0);
                }
            }
            break;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(pids);
    free(argv);
}

/* ---- MPI_Comm_spawn: a new PMI group at run time ---- */

/* Resolve a spawned command's program: relative names with a '/' against
 * wdir, bare names in the info "path" (colon-separated) first, then PATH. */
static int wr_spawn_exec(const wr_spawn_cmd_t *k, char *out, size_t outlen)
{
    char cand[PATH_MAX];
    if (strchr(k->exec, '/')) {
        if (k->exec[0] != '/' && k->wdir)
            snprintf(cand, sizeof cand, "%s/%s", k->wdir, k->exec);
        else
            snprintf(cand, sizeof cand, "%s", k->exec);
        return wr_find_exec(cand, out, outlen);
    }
    for (const char *p = k->path; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t dl = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(cand, sizeof cand, "%.*s/%s", (int)dl, p, k->exec);
        if (dl && wr_find_exec(cand, out, outlen) == 0)
            return 0;
        if (!colon)
            break;
        p = colon + 1;
    }
    return wr_find_exec(k->exec, out, outlen);
}

/* The host of a spawned process: the host the info key names (a host of the
 * job, by name, or "localhost" for the first local one), else round-robin
 * over the hosts that have ranks, starting at the parent's. */
static int wr_spawn_host(const wr_job_t *job, const wr_spawn_cmd_t *k, int parent_host, int i)
{
    const wr_opts_t *o = job->o;
    if (k->host) {
        for (int h = 0; h < o->nhosts; h++)
            if (!strcasecmp(o->hosts[h].name, k->host) && o->hosts[h].nranks > 0)
                return h;
        for (int h = 0; h < o->nhosts; h++)
            if (o->hosts[h].local && o->hosts[h].nranks > 0 &&
                (!strcasecmp(k->host, "localhost") || !strcmp(k->host, "127.0.0.1")))
                return h;
    }
    int with = 0, at = 0;
    for (int h = 0; h < o->nhosts; h++) {
        if (h == parent_host)
            at = with;
        with += o->hosts[h].nranks > 0;
    }
    int want = (at + i) % (with ? with : 1);
    for (int h = 0; h < o->nhosts; h++)
        if (o->hosts[h].nranks > 0 && want-- == 0)
            return h;
    return parent_host;
}

static int wr_spawn_fail(wr_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wr_spawn_fail(wr_job_t *job, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wr_pmisrv_spawn_done(job->srv, -1, NULL, msg);
    return 0;
}

int wr_spawn_request(wr_job_t *job)
{
    wr_pmisrv_t *srv = job->srv;
    const wr_spawn_req_t *q = srv->spawn_req;
    int total = 0;
    for (int c = 0; c < q->ncmd; c++)
        total += q->cmd[c].nprocs;
    if (total > job->cap - job->n || srv->ngroups >= WR_PMI_GROUPS_MAX)
        return wr_spawn_fail(job, "wharfrun can add %d more processes (and %d groups) to this job, not %d",
                             job->cap - job->n, WR_PMI_GROUPS_MAX - srv->ngroups, total);
    char (*paths)[PATH_MAX] = calloc((size_t)q->ncmd, sizeof *paths);
    int *appnum = calloc((size_t)total, sizeof *appnum), *ids = calloc((size_t)total, sizeof *ids);
    int *hostof = calloc((size_t)total, sizeof *hostof), *lrank = calloc((size_t)total, sizeof *lrank);
    int *lsize = calloc((size_t)job->o->nhosts, sizeof *lsize);
    int rc = 0;
    if (!paths || !appnum || !ids || !hostof || !lrank || !lsize) {
        rc = wr_spawn_fail(job, "out of memory in wharfrun");
        goto out;
    }
    const wr_rank_t *parent = &job->ranks[srv->spawn_rank];
    for (int c = 0, i = 0; c < q->ncmd; c++) {
        const wr_spawn_cmd_t *k = &q->cmd[c];
        int erc = wr_spawn_exec(k, paths[c], sizeof paths[c]);
        int any_local = 0;
        for (int j = 0; j < k->nprocs; j++, i++) {
            appnum[i] = c;
            hostof[i] = wr_spawn_host(job, k, parent->host, i);
            lrank[i] = lsize[hostof[i]]++;
            ids[i] = (int)((job->pmiid_base + (unsigned int)(job->n + i)) & 0x7fffffff);
            any_local |= job->o->hosts[hostof[i]].local;
        }
        /* a path with a '/' is checked here for remote hosts too: remote
         * processes start in the same directory, so wharfrun assumes the
         * launch directory and the programs are shared */
        if (erc && (any_local || strchr(k->exec, '/'))) {
            rc = wr_spawn_fail(job, "program '%.100s' %s", k->exec,
                               erc == WR_EXIT_NOEXEC ? "is not an executable file" : "not found");
            goto out;
        }
        if (k->wdir && any_local) {
            struct stat st;
            if (stat(k->wdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
                rc = wr_spawn_fail(job, "working directory '%.100s' does not exist", k->wdir);
                goto out;
            }
        }
        if (erc) /* remote only: the agent finds it there */
            snprintf(paths[c], sizeof paths[c], "%s", k->exec);
    }
    char kvs[WR_PMI_KVSNAME_MAX];
    snprintf(kvs, sizeof kvs, "%s.s%d", job->jobid, srv->ngroups);
    int g = srv->ngroups, first = wr_pmisrv_add_group(srv, kvs, total, appnum, q, ids);
    if (first < 0) {
        rc = wr_spawn_fail(job, "wharfrun's key-value space is full");
        goto out;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, "/");
    for (int c = 0, i = 0; c < q->ncmd; c++) {
        const wr_spawn_cmd_t *k = &q->cmd[c];
        char **argv = calloc((size_t)k->argc + 2, sizeof *argv);
        if (!argv || !(argv[0] = strdup(paths[c]))) {
            free(argv);
            wr_error("out of memory");
            rc = -1;
            goto out;
        }
        for (int a = 0; a < k->argc; a++)
            if (!(argv[a + 1] = strdup(k->argv[a]))) {
                wr_error("out of memory");
                rc = -1;
                goto out;
            }
        for (int j = 0; j < k->nprocs; j++, i++) {
            wr_rank_t *r = &job->ranks[first + i];
            memset(r, 0, sizeof *r);
            r->rank = first + i;
            r->host = hostof[i];
            r->local_rank = lrank[i];
            r->remote = !job->o->hosts[r->host].local;
            r->pmiid = ids[i];
            r->pmi_fd = r->out.fd = r->err.fd = -1;
            r->out.to = 1;
            r->err.to = 2;
            r->group = g;
            r->grank = i;
            r->gsize = total;
            r->lsize = lsize[r->host];
            r->prog = argv; /* shared by the command's processes; lives as long as the job */
            r->exec_path = r->prog[0];
            r->wdir = k->wdir ? strdup(k->wdir) : NULL;
            r->started_at = wr_now();
            srv->r[first + i].bound = !r->remote;
            job->n = first + i + 1;
            if ((r->remote ? wr_spawn_remote(job, r, cwd) : wr_spawn_local(job, r)) != 0) {
                rc = -1;
                goto out;
            }
        }
    }
    wr_pmisrv_spawn_done(srv, 0, kvs, NULL);
out:
    if (rc < 0 && srv->spawn_req)
        wr_pmisrv_spawn_done(srv, -1, NULL, "starting the processes failed");
    free(paths);
    free(appnum);
    free(ids);
    free(hostof);
    free(lrank);
    free(lsize);
    return rc;
}
