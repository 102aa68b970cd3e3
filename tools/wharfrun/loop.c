/* The event loop: one poll() over the signalfd, the PMI listening socket,
 * every PMI connection and every output pipe.  Failure policy: the first
 * failure is reported in one line, then every rank's process group gets
 * SIGTERM and, one second later, SIGKILL. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmi/wire.h"
#include "pmisrv.h"
#include "wharfrun.h"

#define WR_KILL_GRACE 1.0       /* SIGTERM -> SIGKILL */
#define WR_KILL_GIVEUP 4.0      /* after SIGTERM, stop waiting for unkillable ranks */
#define WR_EOF_GRACE_LOCAL 0.5  /* PMI EOF before finalize: wait this long for the exit status */
#define WR_EOF_GRACE_REMOTE 1.0
#define WR_DRAIN_GRACE 1.0      /* after the last rank exited, wait for its pipes' EOF */
#define WR_ANON_IDLE 10.0       /* unidentified TCP connection that did not authenticate */
#define WR_ANON_RAW_MAX(n) (2 * (n) + 64) /* connections that named no rank yet */
#define WR_ANON_PER_RANK 4      /* handshakes in progress naming one rank */
#define WR_DROP_LOG_EVERY 10.0  /* seconds between warnings about dropped connections */
#define WR_OUT_LINE_MAX (1u << 20)

/* ---- failure reporting ---- */

static const char *wr_host_of(const wr_job_t *job, const wr_rank_t *r)
{
    return job->o->hosts[r->host].name;
}

__attribute__((format(printf, 3, 4))) static void wr_fail(wr_job_t *job, int code,
                                                            const char *fmt, ...)
{
    if (job->failed)
        return; /* only the first failure is the cause */
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    wr_msg("%s", line);
    job->failed = 1;
    job->abnormal = 1;
    job->exit_code = code;
    wr_kill_all(job, SIGTERM);
    job->killing = 1;
    job->kill_at = wr_now();
    /* remote ranks learn it from their PMI connection as well */
    for (int i = 0; i < job->n; i++) {
        if (job->ranks[i].pmi_fd >= 0) {
            close(job->ranks[i].pmi_fd);
            job->ranks[i].pmi_fd = -1;
        }
        if (job->ranks[i].adopted)
            job->ranks[i].reaped = 1; /* (killed with the others, not ours to wait for) */
    }
}

static void wr_fail_rank(wr_job_t *job, const wr_rank_t *r, int code, const char *what)
{
    if (r->group > 0)
        wr_fail(job, code, "rank %d of spawned group %d (%s; host %s, pid %d) %s", r->grank, r->group,
                r->prog ? r->prog[0] : "?", wr_host_of(job, r), (int)r->pid, what);
    else if (r->adopted)
        wr_fail(job, code, "the singleton that spawned (pid %d) %s", (int)job->o->adopt_pid, what);
    else
        wr_fail(job, code, "rank %d (host %s, pid %d) %s", r->rank, wr_host_of(job, r), (int)r->pid,
                what);
}

void wr_kill_all(wr_job_t *job, int sig)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].pid > 0)
            kill(-job->ranks[i].pid, sig); /* ESRCH once the group is empty */
    if (job->o->adopt_kvs && job->o->adopt_pid > 1 && job->failed && !job->adopt_killed) {
        kill(job->o->adopt_pid, SIGTERM); /* the singleton: the job failed under it */
        job->adopt_killed = 1;
    }
}

/* ---- output forwarding ---- */

static void wr_emit(const wr_job_t *job, int rank, int to, const char *p, size_t n, int add_nl)
{
    char tag[32];
    int tl = job->o->tag_output ? snprintf(tag, sizeof tag, "[%d] ", rank) : 0;
    wr_buf_t b = {0};
    if (wr_buf_append(&b, tag, (size_t)tl) || wr_buf_append(&b, p, n) ||
        (add_nl && wr_buf_append(&b, "\n", 1))) {
        wr_buf_free(&b);
        return;
    }
    wr_write_all(to, b.data, b.len);
    wr_buf_free(&b);
}

/* Emit the complete lines of s->line (all of it if flush). */
static void wr_stream_lines(const wr_job_t *job, int rank, wr_stream_t *s, int flush)
{
    size_t start = 0;
    if (!s->line.len)
        return;
    for (;;) {
        char *nl = memchr(s->line.data + start, '\n', s->line.len - start);
        if (!nl)
            break;
        size_t end = (size_t)(nl - s->line.data) + 1;
        wr_emit(job, rank, s->to, s->line.data + start, end - start, 0);
        start = end;
    }
    if ((flush || s->line.len - start >= WR_OUT_LINE_MAX) && s->line.len > start) {
        wr_emit(job, rank, s->to, s->line.data + start, s->line.len - start, 1);
        start = s->line.len;
    }
    wr_buf_consume(&s->line, start);
}

static void wr_stream_read(const wr_job_t *job, int rank, wr_stream_t *s)
{
    char buf[65536];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        close(s->fd);
        s->fd = -1;
        wr_stream_lines(job, rank, s, 1);
        return;
    }
    if (wr_buf_append(&s->line, buf, (size_t)n) != 0) {
        wr_stream_lines(job, rank, s, 1); /* no memory: flush what we have */
        return;
    }
    wr_stream_lines(job, rank, s, 0);
}

/* ---- PMI connections ---- */

static void wr_pmi_closed(wr_job_t *job, wr_rank_t *r)
{
    close(r->pmi_fd);
    r->pmi_fd = -1;
    const wr_pmi_rank_t *p = &job->srv->r[r->rank];
    if (r->adopted && (p->finalized || p->aborted))
        r->reaped = 1; /* the singleton is done with us */
    else if (p->contacted && !p->finalized && !p->aborted && !r->reaped)
        r->pmi_eof_at = wr_now(); /* judged when the exit status is in, or after a grace */
}

/* Handle complete lines in r->pmi_in.  Returns -1 if the connection was
 * closed (failure). */
static int wr_pmi_lines(wr_job_t *job, wr_rank_t *r)
{
    int rank = r->rank;
    size_t start = 0;
    while (r->pmi_fd >= 0) {
        char *nl = memchr(r->pmi_in.data + start, '\n', r->pmi_in.len - start);
        if (!nl)
            break;
        size_t len = (size_t)(nl - r->pmi_in.data) + 1 - start;
        char why[256];
        if (!job->first_contact)
            job->first_contact = wr_now();
        int ev = wr_pmisrv_line(job->srv, &rank, r->pmi_in.data + start, len, why, sizeof why);
        start += len;
        if (ev == WR_PMI_FAIL) {
            char what[320];
            snprintf(what, sizeof what, "broke the PMI protocol: %s", why);
            wr_fail_rank(job, r, 1, what);
            return -1;
        }
        if (ev == WR_PMI_SPAWN && wr_spawn_request(job) != 0) {
            wr_fail_rank(job, r, 1, "asked for processes (MPI_Comm_spawn) that could not be started");
            return -1;
        }
        if (ev == WR_PMI_ABORT) {
            const wr_pmi_rank_t *p = &job->srv->r[r->rank];
            char what[700];
            snprintf(what, sizeof what, "called MPI_Abort with code %d%s%s", p->abort_code,
                     p->abort_msg[0] ? ": " : "", p->abort_msg);
            /* the job's status is the code mod 256, 0 included: MPICH's hydra and
             * Open MPI's mpirun do the same, and programs (OpenCoarrays' STOP on a
             * stopped image) and their test drivers rely on it */
            wr_fail_rank(job, r, p->abort_code & 0xff, what);
            return -1;
        }
    }
    if (r->pmi_fd < 0)
        return -1;
    wr_buf_consume(&r->pmi_in, start);
    if (r->pmi_in.len >= WH_PMI_MAXLINE) {
        wr_fail_rank(job, r, 1, "broke the PMI protocol: line too long");
        return -1;
    }
    return 0;
}

/* Read what is available (all of it if drain) and handle it. */
static void wr_pmi_read(wr_job_t *job, wr_rank_t *r, int drain)
{
    char buf[8192];
    do {
        ssize_t n = recv(r->pmi_fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            wr_pmi_closed(job, r);
            return;
        }
        if (wr_buf_append(&r->pmi_in, buf, (size_t)n) != 0) {
            wr_fail_rank(job, r, 1, "PMI input: out of memory in wharfrun");
            return;
        }
        if (wr_pmi_lines(job, r) != 0)
            return;
    } while (drain && r->pmi_fd >= 0);
}

static void wr_pmi_flush(wr_job_t *job, wr_rank_t *r)
{
    wr_buf_t *out = &job->srv->r[r->rank].out;
    while (out->len > 0 && r->pmi_fd >= 0) {
        ssize_t n = send(r->pmi_fd, out->data, out->len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            wr_pmi_closed(job, r);
            return;
        }
        wr_buf_consume(out, (size_t)n);
    }
}

static void wr_conn_drop(wr_job_t *job, int i)
{
    close(job->conns[i].fd);
    wr_buf_free(&job->conns[i].in);
    job->conns[i] = job->conns[--job->nconns];
}

/* Warn about dropped connections without flooding the terminal: the first
 * three, then at most one summary line every WR_DROP_LOG_EVERY seconds (and
 * one at the end, see wr_conn_summary). */
static void wr_conn_dropped(wr_job_t *job, const char *why)
{
    unsigned long n = ++job->conns_dropped;
    double now = wr_now();
    if (job->drop_lines < 3) {
        wr_msg("warning: dropped a PMI connection: %s", why);
    } else if (now - job->drop_log_at >= WR_DROP_LOG_EVERY) {
        wr_msg("warning: %lu more PMI connections dropped (%lu in all; latest: %s)",
               n - job->drops_logged, n, why);
    } else {
        return;
    }
    job->drop_lines++;
    job->drops_logged = n;
    job->drop_log_at = now;
}

static void wr_conn_summary(wr_job_t *job)
{
    if (job->conns_dropped > job->drops_logged)
        wr_msg("warning: %lu PMI connections dropped in all (failed authentication or idle)",
               job->conns_dropped);
}

/* Index of the oldest connection in the given handshake stage (for stage 1,
 * naming rank), or -1. */
static int wr_conn_oldest(const wr_job_t *job, int stage, int rank, int *count)
{
    int old = -1;
    *count = 0;
    for (int i = 0; i < job->nconns; i++) {
        const wr_conn_t *c = &job->conns[i];
        if (c->auth.stage != stage || (stage == 1 && c->auth.rank != rank))
            continue;
        ++*count;
        if (old < 0 || c->since < job->conns[old].since)
            old = i;
    }
    return old;
}

static void wr_conn_read(wr_job_t *job, int i);

/* Make room for one more connection that named no rank yet: drop the
 * oldest such connection, but read it first if it has sent something (a
 * real rank's hello must not lose to a flood of newer connections). */
static void wr_conn_make_room(wr_job_t *job)
{
    int count, old;
    for (int tries = 0; tries < 8; tries++) {
        old = wr_conn_oldest(job, 0, -1, &count);
        if (count < WR_ANON_RAW_MAX(job->n) || old < 0)
            return;
        char c;
        if (recv(job->conns[old].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
            break;
        wr_conn_read(job, old); /* promoted to stage 1, bound, or dropped */
    }
    /* still full (idle ones, or partial lines): the oldest goes regardless */
    old = wr_conn_oldest(job, 0, -1, &count);
    if (count >= WR_ANON_RAW_MAX(job->n) && old >= 0) {
        wr_conn_drop(job, old);
        wr_conn_dropped(job, "too many unauthenticated connections (the oldest was dropped)");
    }
}

static void wr_accept(wr_job_t *job, int lfd)
{
    /* a bounded batch per poll round, so connections already accepted get
     * read between batches */
    for (int budget = WR_ANON_RAW_MAX(job->n) / 4; budget > 0; budget--) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                job->listen_pause = wr_now() + 0.1; /* do not spin on it */
            return; /* EAGAIN, or a transient error: poll tells us again */
        }
        /* Connections that have not named a real rank yet are capped: when
         * full, the oldest goes, so idle or hostile connections cannot lock
         * a real rank out (a real rank names its pmiid at once, and those
         * connections are counted apart, see wr_conn_read). */
        wr_conn_make_room(job);
        if (job->nconns == job->capconns) {
            int cap = job->capconns ? job->capconns * 2 : 16;
            wr_conn_t *c = realloc(job->conns, (size_t)cap * sizeof *c);
            if (!c) {
                close(fd);
                continue;
            }
            job->conns = c;
            job->capconns = cap;
        }
        wr_conn_t *c = &job->conns[job->nconns];
        *c = (wr_conn_t){.fd = fd, .since = wr_now(), .auth = {.rank = -1}};
        if (wh_pmi_random_hex(c->auth.snonce, WH_PMI_NONCE_HEX / 2) != 0) {
            close(fd);
            wr_conn_dropped(job, "no random bytes for a challenge");
            continue;
        }
        job->nconns++;
    }
}

/* Data on an unidentified connection: the handshake (auth.h).  Any failure
 * closes it at once, costing no more than the line that failed. */
static void wr_conn_read(wr_job_t *job, int i)
{
    wr_conn_t *c = &job->conns[i];
    char buf[WH_PMI_MAXLINE];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0 || wr_buf_append(&c->in, buf, (size_t)n) != 0) {
        wr_conn_drop(job, i);
        return;
    }
    while (i < job->nconns && job->conns[i].fd >= 0) {
        c = &job->conns[i];
        char *nl = memchr(c->in.data, '\n', c->in.len);
        if (!nl) {
            if (c->in.len >= WH_PMI_MAXLINE) {
                wr_conn_dropped(job, "line too long");
                wr_conn_drop(job, i);
            }
            return;
        }
        size_t len = (size_t)(nl - c->in.data) + 1;
        int rank = -1, stage = c->auth.stage;
        char why[256], reply[128];
        if (wr_pmisrv_anon_line(job->srv, &c->auth, &rank, c->in.data, len, reply, sizeof reply,
                                why, sizeof why) != WR_PMI_OK ||
            (rank >= 0 && (!job->ranks[rank].remote || job->ranks[rank].pmi_fd >= 0))) {
            wr_conn_dropped(job, why[0] ? why : "not a remote rank");
            wr_conn_drop(job, i);
            return;
        }
        wr_buf_consume(&c->in, len);
        if (rank < 0) {
            if (reply[0] && send(c->fd, reply, strlen(reply), MSG_DONTWAIT | MSG_NOSIGNAL) !=
                                (ssize_t)strlen(reply)) {
                wr_conn_drop(job, i);
                return;
            }
            if (stage == 0 && c->auth.stage == 1) {
                /* it named a real rank: at most WR_ANON_PER_RANK such
                 * connections per rank, the oldest goes */
                int count, old = wr_conn_oldest(job, 1, c->auth.rank, &count);
                if (count > WR_ANON_PER_RANK && old >= 0 && old != i) {
                    wr_conn_drop(job, old);
                    wr_conn_dropped(job, "too many handshakes for one rank (the oldest was dropped)");
                    if (i == job->nconns) /* we were moved into its slot */
                        i = old;
                }
            }
            continue;
        }
        wr_rank_t *r = &job->ranks[rank];
        if (!job->first_contact)
            job->first_contact = wr_now();
        r->pmi_fd = c->fd;
        r->pmi_in = c->in;
        c->in = (wr_buf_t){0};
        c->fd = -1;
        job->conns[i] = job->conns[--job->nconns];
        wr_pmi_lines(job, r);
        return;
    }
}

/* ---- children ---- */

static wr_rank_t *wr_rank_by_pid(wr_job_t *job, pid_t pid)
{
    for (int i = 0; i < job->n; i++)
        if (job->ranks[i].pid == pid)
            return &job->ranks[i];
    return NULL;
}

static void wr_judge_exit(wr_job_t *job, wr_rank_t *r)
{
    if (r->pmi_fd >= 0)
        wr_pmi_read(job, r, 1); /* an abort or finalize may still be queued */
    if (job->failed)
        return;
    const wr_pmi_rank_t *p = &job->srv->r[r->rank];
    char what[160];
    int st = r->wstatus;
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        const char *abbr = sigabbrev_np(sig);
        snprintf(what, sizeof what, "killed by signal %d (%s%s)", sig, abbr ? "SIG" : "",
                 abbr ? abbr : "unknown");
        wr_fail_rank(job, r, 128 + sig, what);
    } else if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
        snprintf(what, sizeof what, "exited with status %d%s", WEXITSTATUS(st),
                 r->remote && !p->contacted ? " (before contacting the PMI server; check the agent)"
                                            : "");
        wr_fail_rank(job, r, WEXITSTATUS(st), what);
    } else if (p->inited && !p->finalized) {
        wr_fail_rank(job, r, 1, "exited with status 0 without calling PMI finalize (MPI_Finalize)");
    }
}

static void wr_reap(wr_job_t *job)
{
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        wr_rank_t *r = wr_rank_by_pid(job, pid);
        if (!r)
            continue;
        r->reaped = 1;
        r->wstatus = st;
        wr_judge_exit(job, r);
    }
}

static void wr_signal(wr_job_t *job)
{
    struct signalfd_siginfo si;
    while (read(job->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue; /* reaped below */
        if (job->failed) {
            wr_kill_all(job, SIGKILL); /* second signal: no more patience */
            job->killing = 2;
            continue;
        }
        const char *abbr = sigabbrev_np(sig);
        wr_fail(job, 128 + sig, "caught SIG%s, killing the job", abbr ? abbr : "?");
    }
    wr_reap(job);
}

/* ---- timers ---- */

static void wr_timers(wr_job_t *job, double now)
{
    if (job->o->timeout > 0 && !job->failed && now - job->start >= job->o->timeout)
        wr_fail(job, WR_EXIT_TIMEOUT, "timeout after %s s", job->o->timeout_text);
    if (job->killing == 1 && now - job->kill_at >= WR_KILL_GRACE) {
        wr_kill_all(job, SIGKILL);
        job->killing = 2;
    }
    for (int i = 0; i < job->n && !job->failed; i++) {
        wr_rank_t *r = &job->ranks[i];
        if (r->pmi_eof_at > 0 && !r->reaped)
            wr_reap(job); /* an exit status beats "closed its connection" */
        double grace = r->remote ? WR_EOF_GRACE_REMOTE : WR_EOF_GRACE_LOCAL;
        if (r->pmi_eof_at > 0 && !r->reaped && now - r->pmi_eof_at >= grace)
            wr_fail_rank(job, r, 1, "closed its PMI connection before PMI finalize");
    }
    if (!job->failed && job->first_contact > 0 && job->connect_timeout > 0 &&
        now - job->first_contact >= job->connect_timeout) {
        for (int i = 0; i < job->n; i++) {
            wr_rank_t *r = &job->ranks[i];
            if (job->srv->r[i].contacted || r->reaped || now - r->started_at < job->connect_timeout)
                continue;
            char what[256];
            snprintf(what, sizeof what,
                     "did not contact the PMI server within %g s of the first rank%s%s%s",
                     job->connect_timeout, r->remote ? " (can it reach " : "",
                     r->remote ? job->o->hosts[r->host].addr : "", r->remote ? "?)" : "");
            wr_fail_rank(job, r, 1, what);
            break;
        }
    }
    /* A barrier that can never complete. */
    if (!job->failed && job->srv->nbarrier > 0) {
        for (int i = 0; i < job->n; i++) {
            const wr_pmi_rank_t *p = &job->srv->r[i];
            wr_rank_t *r = &job->ranks[i];
            if (p->in_barrier || (!r->reaped && !p->finalized) || !job->srv->groups[p->group].nbarrier)
                continue;
            wr_fail_rank(job, r, 1,
                         r->reaped ? "exited while other ranks wait in a PMI barrier"
                                   : "finalized PMI while other ranks wait in a PMI barrier");
            break;
        }
    }
}

/* ---- the loop ---- */

enum { WR_FD_SIG, WR_FD_LISTEN, WR_FD_CONN, WR_FD_PMI, WR_FD_OUT, WR_FD_ERR, WR_FD_STDIN, WR_FD_FWD };

/* ---- wharfrun's stdin, forwarded to one rank ---- */

static void wr_fwd_stop(wr_job_t *job)
{
    if (job->fwd_fd >= 0)
        close(job->fwd_fd); /* the rank reads EOF */
    job->fwd_fd = -1;
    job->stdin_fd = -1;
    wr_buf_free(&job->fwd);
}

/* stdin is readable: take what is there (never more than one read, so a
 * blocking stdin never blocks us; poll said it would not) */
static void wr_stdin_read(wr_job_t *job)
{
    char b[65536];
    ssize_t n = read(job->stdin_fd, b, sizeof b);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) { /* EOF (or an error): the rank reads EOF once it has the rest */
        job->stdin_fd = -1;
        if (!job->fwd.len)
            wr_fwd_stop(job);
        return;
    }
    if (wr_buf_append(&job->fwd, b, (size_t)n) != 0)
        wr_fwd_stop(job);
}

/* the rank's stdin can take more */
static void wr_fwd_write(wr_job_t *job)
{
    ssize_t n = write(job->fwd_fd, job->fwd.data, job->fwd.len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0) { /* EPIPE: it closed its stdin or exited; what is left goes nowhere */
        wr_fwd_stop(job);
        return;
    }
    memmove(job->fwd.data, job->fwd.data + n, job->fwd.len - (size_t)n);
    job->fwd.len -= (size_t)n;
    if (!job->fwd.len && job->stdin_fd < 0)
        wr_fwd_stop(job);
}

int wr_loop(wr_job_t *job)
{
    size_t cap = (size_t)job->n * 3 + (size_t)job->nlisten + 16;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    int *kind = calloc(cap, sizeof *kind), *idx = calloc(cap, sizeof *idx);
    if (!pfd || !kind || !idx) {
        wr_error("out of memory");
        wr_kill_all(job, SIGKILL);
        return 1;
    }
    double all_reaped_at = 0;
    for (;;) {
        double now = wr_now();
        wr_timers(job, now);
        int live = 0, open_streams = 0;
        for (int i = 0; i < job->n; i++) {
            live += !job->ranks[i].reaped && (job->ranks[i].pid > 0 || job->ranks[i].adopted);
            open_streams += (job->ranks[i].out.fd >= 0) + (job->ranks[i].err.fd >= 0);
        }
        if (!live && !all_reaped_at)
            all_reaped_at = now;
        if (!live && (!open_streams || now - all_reaped_at >= WR_DRAIN_GRACE))
            break;
        if (live && job->killing == 2 && now - job->kill_at >= WR_KILL_GIVEUP) {
            wr_msg("warning: %d process(es) did not die after SIGKILL; giving up on them", live);
            break;
        }

        size_t np = 0;
#define WR_ADD(fd_, ev_, kind_, idx_)                                                              \
    do {                                                                                           \
        pfd[np] = (struct pollfd){.fd = (fd_), .events = (ev_)};                                   \
        kind[np] = (kind_);                                                                        \
        idx[np++] = (idx_);                                                                        \
    } while (0)
        WR_ADD(job->sigfd, POLLIN, WR_FD_SIG, 0);
        if (job->fwd_fd >= 0 && job->fwd.len)
            WR_ADD(job->fwd_fd, POLLOUT, WR_FD_FWD, 0);
        else if (job->fwd_fd >= 0 && job->stdin_fd >= 0)
            WR_ADD(job->stdin_fd, POLLIN, WR_FD_STDIN, 0);
        for (int l = 0; l < job->nlisten && !job->failed && now >= job->listen_pause; l++)
            WR_ADD(job->listen_fds[l], POLLIN, WR_FD_LISTEN, l);
        if (np + (size_t)job->nconns + 3 * (size_t)job->n > cap) { /* grow: conns vary */
            size_t nc = np + (size_t)job->nconns + 3 * (size_t)job->n + 64;
            struct pollfd *p2 = realloc(pfd, nc * sizeof *pfd);
            if (p2)
                pfd = p2;
            int *k2 = p2 ? realloc(kind, nc * sizeof *kind) : NULL;
            if (k2)
                kind = k2;
            int *i2 = k2 ? realloc(idx, nc * sizeof *idx) : NULL;
            if (i2) {
                idx = i2;
                cap = nc;
            }
        }
        for (int i = 0; i < job->nconns && np + 3 * (size_t)job->n < cap; i++)
            WR_ADD(job->conns[i].fd, POLLIN, WR_FD_CONN, i);
        for (int i = 0; i < job->n; i++) {
            wr_rank_t *r = &job->ranks[i];
            if (r->pmi_fd >= 0)
                WR_ADD(r->pmi_fd, POLLIN | (job->srv->r[i].out.len ? POLLOUT : 0), WR_FD_PMI, i);
            if (r->out.fd >= 0)
                WR_ADD(r->out.fd, POLLIN, WR_FD_OUT, i);
            if (r->err.fd >= 0)
                WR_ADD(r->err.fd, POLLIN, WR_FD_ERR, i);
        }
#undef WR_ADD
        /* sleep until the next timer can fire (at most 100 ms) */
        int timeout_ms = 100;
        if (!live)
            timeout_ms = 20;
        int rc = poll(pfd, (nfds_t)np, timeout_ms);
        if (rc < 0 && errno != EINTR) {
            wr_error("poll: %s", strerror(errno));
            wr_kill_all(job, SIGKILL);
            break;
        }
        if (rc <= 0)
            continue;
        /* Output and PMI first, then exits: an exit is judged with all the
         * rank said before it. Connections in reverse, since dropping one
         * moves the last into its slot. */
        for (size_t k = np; k-- > 0;) {
            if (!pfd[k].revents)
                continue;
            wr_rank_t *r = &job->ranks[idx[k]];
            switch (kind[k]) {
            case WR_FD_LISTEN:
                wr_accept(job, job->listen_fds[idx[k]]);
                break;
            case WR_FD_STDIN:
                if (job->stdin_fd >= 0 && job->fwd_fd >= 0 && !job->fwd.len)
                    wr_stdin_read(job);
                break;
            case WR_FD_FWD:
                if (job->fwd_fd == pfd[k].fd && job->fwd.len)
                    wr_fwd_write(job);
                break;
            case WR_FD_CONN:
                if (idx[k] < job->nconns && job->conns[idx[k]].fd == pfd[k].fd)
                    wr_conn_read(job, idx[k]);
                break;
            case WR_FD_PMI:
                if (r->pmi_fd != pfd[k].fd)
                    break; /* closed meanwhile */
                if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                    wr_pmi_read(job, r, 0);
                break;
            case WR_FD_OUT:
                if (r->out.fd == pfd[k].fd)
                    wr_stream_read(job, r->rank, &r->out);
                break;
            case WR_FD_ERR:
                if (r->err.fd == pfd[k].fd)
                    wr_stream_read(job, r->rank, &r->err);
                break;
            default:
                break;
            }
        }
        for (int i = 0; i < job->n; i++)
            if (job->ranks[i].pmi_fd >= 0 && job->srv->r[i].out.len)
                wr_pmi_flush(job, &job->ranks[i]);
        if (pfd[0].revents)
            wr_signal(job);
        /* idle unidentified connections */
        now = wr_now();
        for (int i = job->nconns; i-- > 0;)
            if (now - job->conns[i].since > WR_ANON_IDLE) {
                wr_conn_drop(job, i);
                wr_conn_dropped(job, "idle without authenticating");
            }
    }
    /* leftovers: grandchildren holding the pipes, unread output */
    wr_fwd_stop(job);
    wr_kill_all(job, SIGKILL);
    for (int i = 0; i < job->n; i++) {
        wr_rank_t *r = &job->ranks[i];
        wr_stream_t *ss[2] = {&r->out, &r->err};
        for (int k = 0; k < 2; k++) {
            if (ss[k]->fd >= 0) {
                close(ss[k]->fd);
                ss[k]->fd = -1;
            }
            wr_stream_lines(job, r->rank, ss[k], 1);
            wr_buf_free(&ss[k]->line);
        }
        if (r->pmi_fd >= 0)
            close(r->pmi_fd);
        r->pmi_fd = -1;
        wr_buf_free(&r->pmi_in);
    }
    while (job->nconns > 0)
        wr_conn_drop(job, job->nconns - 1);
    wr_conn_summary(job);
    free(pfd);
    free(kind);
    free(idx);
    return job->failed ? job->exit_code : 0;
}
