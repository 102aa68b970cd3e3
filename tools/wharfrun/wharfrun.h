/* wharfrun: launcher and PMI-1 server.  Layout:
 *   main.c     orchestration, exit status, cleanup of /dev/shm leftovers
 *   options.c  command line and -x variables
 *   hosts.c    host list / hostfile, placement, locality, route addresses
 *   spawn.c    environments, shell quoting, fork/exec of ranks and agents
 *   loop.c     the one poll() event loop: PMI sockets, output pipes,
 *              signals, timers, failure handling and killing the job
 *   pmisrv.c   the PMI protocol state machine and KVS (no sockets: fuzzed)
 *   util.c     buffers, clocks, messages
 * See docs/LAUNCHER.md for the user-visible behaviour. */
#ifndef WR_WHARFRUN_H
#define WR_WHARFRUN_H
#include <stddef.h>
#include <sys/types.h>

#include "pmi/auth.h"

#define WR_VERSION "0.1.0"

/* Exit statuses of wharfrun itself. */
#define WR_EXIT_USAGE 2      /* bad command line, host, agent */
#define WR_EXIT_NOEXEC 126   /* program found but not executable */
#define WR_EXIT_NOTFOUND 127 /* program not found */
#define WR_EXIT_TIMEOUT 124

/* ---- util.c ---- */
typedef struct wr_buf {
    char *data;
    size_t len, cap;
} wr_buf_t;
int wr_buf_append(wr_buf_t *b, const void *p, size_t n); /* 0 or -1 (no memory) */
int wr_buf_printf(wr_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void wr_buf_consume(wr_buf_t *b, size_t n); /* drop the first n bytes */
void wr_buf_free(wr_buf_t *b);
double wr_now(void); /* monotonic seconds */
/* "wharfrun: error: ..." on stderr. */
void wr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "wharfrun: ..." on stderr. */
void wr_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write all of buf to fd (blocking fd); errors are ignored (reader gone). */
void wr_write_all(int fd, const char *buf, size_t len);
/* Printable copy of an untrusted string (control bytes become '?'). */
void wr_sanitize(const char *in, char *out, size_t outlen);
/* a whole decimal string in [lo, hi] (lo, hi within int): 0, or -1 */
int wr_parse_int(const char *s, long lo, long hi, int *out);

/* ---- options.c ---- */
typedef struct wr_host {
    char *name;        /* as given */
    int slots;         /* -1: not given */
    int local;         /* fork/exec here instead of through the agent */
    char addr[64];     /* address of the launcher as seen from this host */
    int port;          /* the PMI port listening on addr (remote hosts) */
    int nranks;        /* placed ranks */
    int first_rank;
} wr_host_t;

/* One application of the command line (MPMD: "A ARGS : -n 2 B ARGS"; rank
 * order follows the applications; each one's MPI_APPNUM is its index). */
typedef struct wr_app {
    int np;
    char **prog;       /* PROGRAM ARGS..., NULL-terminated */
    const char *wdir;  /* -wdir: its working directory (NULL: the global one) */
    char **env;        /* -env VAR VAL, -envlist: "VAR=VAL" for its ranks only */
    int nenv;
    char *exec_path;   /* its program, resolved (when it has local ranks) */
} wr_app_t;

typedef struct wr_opts {
    int np;           /* ranks of all applications */
    wr_app_t *apps;
    int napps;
    const char *wdir; /* -gwdir (or -wdir of a single application) */
    int ppn;          /* -ppn: ranks per host (0: slots or even split) */
    int envall;       /* -genvall: remote ranks get the whole environment */
    int stdin_rank;   /* --stdin: the rank that gets wharfrun's stdin (-1: none; default 0) */
    /* --adopt FD PID KVSNAME: the process manager of a singleton that spawns
     * (started by its library, src/pmi/client.c): rank 0 is that process,
     * already running, speaking PMI on FD; its kvsname is the job id */
    const char *adopt_kvs;
    int adopt_fd;
    pid_t adopt_pid;
    wr_host_t *hosts; /* NULL/0: all local */
    int nhosts;
    char **agent;     /* --rsh split on blanks, NULL-terminated */
    char **xvars;     /* "VAR=VAL", resolved from -x */
    int nx;
    double timeout;   /* 0: none */
    const char *timeout_text;
    int tag_output;
    const char *iface;
    char **prog;      /* apps[0].prog */
} wr_opts_t;

/* Parse argv.  Returns 0; or exits: --help/--version (0), bad input (2). */
int wr_parse_options(int argc, char **argv, wr_opts_t *o);

/* ---- hosts.c ---- */
/* Parse "h1[:slots],h2,..." or a hostfile into o->hosts (duplicates merged).
 * 0 or -1 (message printed). */
int wr_hosts_from_list(wr_opts_t *o, const char *list);
int wr_hosts_from_file(wr_opts_t *o, const char *path);
/* Fill nranks/first_rank of every host (creates one local host if none),
 * mark local hosts, resolve the launcher address for remote ones.
 * 0 or -1 (message printed). */
int wr_hosts_place(wr_opts_t *o);

/* ---- the job ---- */
typedef struct wr_stream {
    int fd;         /* read end of the rank's stdout/stderr pipe, -1 at EOF */
    int to;         /* 1 or 2 */
    wr_buf_t line;  /* partial line */
} wr_stream_t;

typedef struct wr_rank {
    int rank, host, local_rank;
    int remote;
    int pmiid;         /* PMI_ID of a remote rank (random, unique) */
    int adopted;       /* the singleton of --adopt: not our child (pid 0), gone when its PMI connection is */
    pid_t pid;         /* the rank (local) or its agent (remote); also the pgid */
    int pmi_fd;        /* our end of the PMI connection, -1 if none */
    wr_buf_t pmi_in;   /* received partial PMI line */
    wr_stream_t out, err;
    int reaped;        /* waitpid() collected it */
    int wstatus;
    double pmi_eof_at; /* when the PMI connection dropped before finalize; 0 if not */
    /* its PMI group: 0 for the ranks of the command line, 1.. for MPI_Comm_spawn's */
    int group, grank, gsize, lsize; /* lsize: ranks of the group on its host */
    char **prog;       /* PROGRAM ARGS of a spawned process (NULL: the command line's) */
    char *exec_path;   /* its resolved program (local) */
    const char *wdir;  /* its working directory (NULL: wharfrun's): argv, or a spawn's copy kept to the end */
    char **env;        /* its application's -env variables (NULL: none) */
    int nenv;
    double started_at; /* spawned: when it was started (its connect clock starts then) */
} wr_rank_t;

struct wr_pmisrv;

/* Handshake state of a TCP connection not yet bound to a rank (pmisrv.c). */
typedef struct wr_pmi_anon {
    int stage; /* 0: expects cmd=auth_hello; 1: challenged, expects cmd=auth_response */
    int rank;  /* stage 1: the rank whose pmiid the hello named */
    char snonce[WH_PMI_NONCE_HEX + 1]; /* fresh, set by the caller before the first line */
    char cnonce[WH_PMI_NONCE_HEX + 1];
} wr_pmi_anon_t;

typedef struct wr_conn { /* a TCP connection not yet bound to a rank */
    int fd;
    wr_buf_t in;
    double since;
    wr_pmi_anon_t auth; /* handshake state (stage 1: named a real rank's pmiid) */
} wr_conn_t;

typedef struct wr_job {
    wr_opts_t *o;
    char jobid[64];
    char secret[WH_PMI_SECRET_HEX + 1]; /* per-job key remote ranks must prove */
    int n;
    int cap;                /* room in ranks[] for processes MPI_Comm_spawn adds */
    unsigned int pmiid_base;
    wr_rank_t *ranks;
    struct wr_pmisrv *srv;
    int *listen_fds;        /* one per distinct address remote hosts use */
    int nlisten;
    double listen_pause;    /* accept() ran out of descriptors: retry after this */
    wr_conn_t *conns;
    int nconns, capconns;
    unsigned long conns_dropped; /* PMI connections dropped (bad handshake, evicted) */
    unsigned long drops_logged;  /* conns_dropped when the last warning was printed */
    double drop_log_at;          /* when it was printed */
    int drop_lines;              /* warnings printed */
    int sigfd;
    double start;
    double first_contact;   /* first PMI message of any rank; 0 before */
    double connect_timeout; /* WHARF_CONNECT_TIMEOUT, 0 disables */
    /* failure and shutdown */
    int failed;             /* a failure was reported: job is being killed */
    int exit_code;
    int killing;            /* 0 none, 1 SIGTERM sent, 2 SIGKILL sent */
    double kill_at;         /* when SIGTERM was sent */
    int abnormal;           /* run the remote /dev/shm cleanup */
    int adopt_killed;       /* the --adopt singleton was sent SIGTERM */
    /* wharfrun's stdin, forwarded to rank o->stdin_rank (loop.c) */
    int stdin_fd;           /* 0 while forwarding, -1 after EOF or when not forwarding */
    int fwd_fd;             /* write end of that rank's stdin (pipe, or its agent's), -1 none */
    wr_buf_t fwd;           /* read from stdin, not yet written to fwd_fd */
} wr_job_t;

/* ---- spawn.c ---- */
/* Check that the program can be executed here (for local ranks) and that the
 * agent exists (for remote ones).  0, or an exit status (message printed). */
int wr_check_program(const wr_opts_t *o);
/* Start every rank.  0, or -1 (message printed; started ranks are in
 * job->ranks with pid > 0 so the caller can kill them). */
int wr_spawn_all(wr_job_t *job);
/* Run "AGENT HOST rm -f /dev/shm/wharf.<jobid>.*" once per remote host with
 * ranks, in parallel, bounded by timeout seconds in total. */
void wr_remote_cleanup(const wr_job_t *job, double timeout);
/* Start the processes of the spawn request in job->srv->spawn_req (sent by
 * flat index `parent`) as a new PMI group and answer the request.  A
 * request that cannot start (program not found, no room) is answered with
 * an error; the job goes on.  Returns -1 only when starting failed half way
 * (the job must fail: message printed). */
int wr_spawn_request(wr_job_t *job);
#define WR_SPAWN_EXTRA 1024 /* processes MPI_Comm_spawn may add to a job */
/* Shell-quote word into b ('...' with '\'' for quotes).  0 or -1. */
int wr_shell_quote(wr_buf_t *b, const char *word);

/* ---- loop.c ---- */
/* Run until every rank is gone.  Returns wharfrun's exit status. */
int wr_loop(wr_job_t *job);
/* Signal every rank's process group. */
void wr_kill_all(wr_job_t *job, int sig);
#endif
