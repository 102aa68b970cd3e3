/* wharfrun: start N ranks (locally, or through an ssh-like agent), serve them
 * PMI-1, forward their output, and take the whole job down on the first
 * failure.  See docs/LAUNCHER.md. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmisrv.h"
#include "wharfrun.h"

#define WR_CONNECT_TIMEOUT_DEFAULT 30.0
#define WR_REMOTE_CLEANUP_TIMEOUT 5.0

static unsigned int wr_random32(void)
{
    unsigned int r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (unsigned int)t.tv_nsec ^ ((unsigned int)getpid() << 16);
}

/* Descriptors 0-2 must exist, or a socketpair could land on them. */
static void wr_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", O_RDWR);
            if (n >= 0 && n != fd) {
                dup2(n, fd);
                close(n);
            }
        }
    }
}

static void wr_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static double wr_connect_timeout(void)
{
    const char *v = getenv("WHARF_CONNECT_TIMEOUT");
    if (!v || !*v)
        return WR_CONNECT_TIMEOUT_DEFAULT;
    char *e;
    double t = strtod(v, &e);
    if (*e || t < 0 || t != t) {
        wr_msg("warning: ignoring WHARF_CONNECT_TIMEOUT='%s' (seconds >= 0 expected)", v);
        return WR_CONNECT_TIMEOUT_DEFAULT;
    }
    return t;
}

/* Listening sockets: one per distinct address that remote hosts use to
 * reach us (their route's source address, or --iface), ephemeral ports;
 * never the wildcard address.  Local ranks talk over socketpairs. */
static int wr_listen(wr_job_t *job)
{
    wr_opts_t *o = job->o;
    job->listen_fds = calloc((size_t)o->nhosts, sizeof *job->listen_fds);
    if (!job->listen_fds) {
        wr_error("out of memory");
        return -1;
    }
    for (int h = 0; h < o->nhosts; h++) {
        wr_host_t *hp = &o->hosts[h];
        if (hp->local || hp->nranks == 0)
            continue;
        for (int g = 0; g < h && !hp->port; g++)
            if (o->hosts[g].port && !strcmp(o->hosts[g].addr, hp->addr))
                hp->port = o->hosts[g].port;
        if (hp->port)
            continue;
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t al = sizeof a;
        if (inet_pton(AF_INET, hp->addr, &a.sin_addr) != 1) {
            wr_error("PMI listening socket: bad address '%s' for host %s", hp->addr, hp->name);
            return -1;
        }
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 1024) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
            wr_error("PMI listening socket on %s: %s", hp->addr, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        job->listen_fds[job->nlisten++] = fd;
        hp->port = ntohs(a.sin_port);
    }
    return 0;
}

/* MPI_UNIVERSE_SIZE: WHARF_UNIVERSE_SIZE if set; else the slots of the
 * host list when every host has a count, else the cpus of this machine (as
 * hydra counts them) -- never less than the job, never more than the
 * processes MPI_Comm_spawn may add. */
static int wr_universe_size(const wr_job_t *job)
{
    const wr_opts_t *o = job->o;
    long u = 0;
    const char *e = getenv("WHARF_UNIVERSE_SIZE");
    if (e && *e) {
        char *end;
        u = strtol(e, &end, 10);
        if (*end || u < 1) {
            wr_msg("warning: WHARF_UNIVERSE_SIZE=%s is not a positive number; ignored", e);
            u = 0;
        }
    }
    if (!u) {
        long slots = 0;
        for (int h = 0; h < o->nhosts && slots >= 0; h++)
            slots = o->hosts[h].slots > 0 ? slots + o->hosts[h].slots : -1;
        u = slots > 0 ? slots : sysconf(_SC_NPROCESSORS_ONLN);
    }
    if (u < job->n)
        u = job->n;
    if (u > (long)job->n + WR_SPAWN_EXTRA)
        u = (long)job->n + WR_SPAWN_EXTRA;
    return (int)u;
}

static int wr_make_ranks(wr_job_t *job)
{
    wr_opts_t *o = job->o;
    job->cap = job->n + WR_SPAWN_EXTRA;
    job->ranks = calloc((size_t)job->cap, sizeof *job->ranks);
    int *ids = calloc((size_t)job->n, sizeof *ids), *appnum = calloc((size_t)job->n, sizeof *appnum);
    if (!job->ranks || !ids || !appnum) {
        free(ids);
        free(appnum);
        wr_error("out of memory");
        return -1;
    }
    /* PMI_IDs of remote ranks: consecutive from a random base, so a stray
     * process of another job cannot claim one by accident */
    unsigned int base = wr_random32() & 0x3fffffff;
    job->pmiid_base = base;
    for (int h = 0; h < o->nhosts; h++) {
        for (int k = 0; k < o->hosts[h].nranks; k++) {
            int i = o->hosts[h].first_rank + k;
            wr_rank_t *r = &job->ranks[i];
            r->rank = i;
            r->host = h;
            r->local_rank = k;
            r->grank = i;
            r->gsize = job->n;
            r->lsize = o->hosts[h].nranks;
            r->remote = !o->hosts[h].local;
            r->pmiid = (int)((base + (unsigned int)i) & 0x7fffffff);
            r->pmi_fd = r->out.fd = r->err.fd = -1;
            int k = 0, upto = o->apps[0].np;
            while (i >= upto)
                upto += o->apps[++k].np;
            r->prog = o->apps[k].prog;
            r->exec_path = o->apps[k].exec_path;
            r->wdir = o->apps[k].wdir ? o->apps[k].wdir : o->wdir;
            r->env = o->apps[k].env;
            r->nenv = o->apps[k].nenv;
            appnum[i] = k;
            r->out.to = 1;
            r->err.to = 2;
            ids[i] = r->pmiid;
        }
    }
    job->srv = wr_pmisrv_new(job->n, job->jobid, ids, job->secret);
    free(ids);
    if (!job->srv || wr_pmisrv_reserve(job->srv, job->cap) != 0) {
        free(appnum);
        wr_error("out of memory");
        return -1;
    }
    for (int i = 0; i < job->n; i++)
        job->srv->r[i].appnum = appnum[i]; /* MPI_APPNUM: the application's index */
    free(appnum);
    if (o->adopt_kvs) { /* rank 0 is the singleton that started us, on its socket */
        wr_rank_t *r = &job->ranks[0];
        r->adopted = 1;
        r->pmi_fd = o->adopt_fd;
        fcntl(r->pmi_fd, F_SETFL, O_NONBLOCK);
        fcntl(r->pmi_fd, F_SETFD, FD_CLOEXEC);
        r->started_at = wr_now();
    }
    for (int i = 0; i < job->n; i++)
        job->srv->r[i].bound = !job->ranks[i].remote; /* local ones come on a socketpair */
    job->srv->groups[0].universe = wr_universe_size(job);
    return 0;
}

static int wr_setup_signals(wr_job_t *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    /* A signal we inherited as ignored stays ignored (nohup, background
     * jobs of a shell without job control). */
    static const int stop[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof stop / sizeof stop[0]; i++) {
        struct sigaction sa;
        if (sigaction(stop[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            sigaddset(&set, stop[i]);
    }
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0 ||
        (job->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
        wr_error("signalfd: %s", strerror(errno));
        return -1;
    }
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

static void wr_cleanup_local_shm(const wr_job_t *job)
{
    char pat[1024];
    const char *dir = getenv("WHARF_NODE_DIR"); /* where the ranks' node regions live */
    snprintf(pat, sizeof pat, "%s/wharf.%s.*", dir && *dir ? dir : "/dev/shm", job->jobid); /* spawned groups' too */
    glob_t g;
    if (glob(pat, GLOB_NOSORT, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
        globfree(&g);
    }
}

/* A sentinel process removes the job's node regions once wharfrun is gone,
 * however it went (kill -9 included: the ranks die with it through
 * PR_SET_PDEATHSIG and cannot clean up themselves).  It waits for the end of
 * a pipe whose only writer is wharfrun, then cleans twice (a rank killed
 * inside open(O_CREAT) may finish creating its file a moment later). */
static void wr_start_sentinel(const wr_job_t *job)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid != 0) {
        close(p[0]);
        if (pid < 0)
            close(p[1]);
        return; /* wharfrun keeps the write end until it exits */
    }
    close(p[1]);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd); /* whoever reads wharfrun's output must not wait for the sentinel */
    if (null > 2)
        close(null);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    char c;
    while (read(p[0], &c, 1) < 0 && errno == EINTR)
        ;
    usleep(100 * 1000);
    wr_cleanup_local_shm(job);
    usleep(500 * 1000);
    wr_cleanup_local_shm(job);
    _exit(0);
}

/* Options and job live in static storage: what they point to stays
 * reachable until exit (wharfrun exits from several places). */
static wr_opts_t o;
static wr_job_t job;

int main(int argc, char **argv)
{
    wr_std_fds();
    wr_parse_options(argc, argv, &o); /* exits on bad input */
    if (o.adopt_kvs) {
        /* started by a singleton's library: keep none of its descriptors but
         * the PMI socket (its node region, its network endpoints) */
        if (o.adopt_fd != 3 && dup2(o.adopt_fd, 3) == 3)
            o.adopt_fd = 3;
        close_range(4, ~0U, 0);
    }
    if (wr_hosts_place(&o) != 0)
        return WR_EXIT_USAGE;
    int rc = o.adopt_kvs ? 0 : wr_check_program(&o);
    if (rc)
        return rc;
    wr_raise_nofile();

    job = (wr_job_t){.o = &o, .n = o.np, .sigfd = -1, .stdin_fd = -1, .fwd_fd = -1};
    /* wharfrun's stdin goes to one rank, as under hydra and mpirun; not a
     * terminal we do not own (a job started in the background must not
     * stop on SIGTTIN) */
    if (o.stdin_rank >= 0 && fcntl(0, F_GETFD) >= 0 && !(isatty(0) && tcgetpgrp(0) != getpgrp()))
        job.stdin_fd = 0;
    if (o.adopt_kvs)
        snprintf(job.jobid, sizeof job.jobid, "%s", o.adopt_kvs); /* the singleton's own */
    else
        snprintf(job.jobid, sizeof job.jobid, "wharf-%d-%08x", (int)getpid(), wr_random32());
    if (wh_pmi_random_hex(job.secret, WH_PMI_SECRET_HEX / 2) != 0) {
        wr_error("no random bytes from the kernel for the job's PMI key");
        return 1;
    }
    job.connect_timeout = wr_connect_timeout();
    wr_start_sentinel(&job);
    if (wr_make_ranks(&job) != 0)
        return 1;
    int any_remote = 0;
    for (int i = 0; i < job.n; i++)
        any_remote |= job.ranks[i].remote;
    if ((any_remote && wr_listen(&job) != 0) || wr_setup_signals(&job) != 0)
        return 1;

    job.start = wr_now();
    if (wr_spawn_all(&job) != 0) {
        /* message printed; take down what was started */
        wr_kill_all(&job, SIGKILL);
        for (int i = 0; i < job.n; i++)
            if (job.ranks[i].pid > 0)
                waitpid(job.ranks[i].pid, NULL, 0);
        job.abnormal = 1;
        rc = 1;
    } else {
        rc = wr_loop(&job);
    }
    wr_cleanup_local_shm(&job);
    if (job.abnormal && any_remote)
        wr_remote_cleanup(&job, WR_REMOTE_CLEANUP_TIMEOUT);
    wr_pmisrv_free(job.srv);
    return rc;
}
