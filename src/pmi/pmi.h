/* PMI-1 client ("simple" wire protocol, as MPICH's simple PMI speaks it).
 * Works under wharfrun, MPICH's hydra (PMI_FD, or PMI_PORT[+PMI_ID]) and as a
 * singleton (no PMI_FD/PMI_PORT in the environment: rank 0 of 1 with a local
 * in-memory KVS).  Not thread-safe: call from one thread (init/finalize path).
 *
 * Every call that talks to the server fails (-1) instead of hanging or
 * crashing when the connection closes or a reply is malformed; barrier and
 * get block only as long as the server keeps the connection open.
 * wh_pmi_error() returns the reason of the last failure. */
#ifndef WH_PMI_PMI_H
#define WH_PMI_PMI_H
#include <stddef.h>

/* Connect and handshake (init, get_maxes, get_appnum, get_my_kvsname).
 * Fills rank/size.  Returns 0, or -1 with a message in err.  Calling it
 * again after success returns the same rank/size. */
int wh_pmi_init(int *rank, int *size, char *err, size_t errlen);
/* 1 while no process manager serves this process: not launched, and not
 * adopted (wh_pmi_need_manager) */
int wh_pmi_is_singleton(void);
const char *wh_pmi_kvsname(void); /* the job id ("" before init) */
int wh_pmi_appnum(void);
/* Publish key=val (visible to others after the next barrier).  Keys and
 * values must be non-empty printable ASCII without spaces or backslashes
 * (0x21-0x7e except '\\'), keys shorter than the server's keylen_max and
 * values at most wh_pmi_max_vallen() bytes; anything else returns -1.  Values
 * are text: hex- or base64-encode binary data. */
int wh_pmi_put(const char *key, const char *val);
/* Blocking get of a key put by any rank before the last barrier.  0, or -1
 * if the key does not exist, the value does not fit in vallen bytes
 * (including the NUL), or the connection failed. */
int wh_pmi_get(const char *key, char *val, size_t vallen);
/* Get "<prefix>.<r>" for every r in [0, n) except `skip` into
 * vals + r * stride (NUL-terminated, at most stride - 1 bytes), pipelining
 * the requests (PMI-1 answers in order) so n keys cost one round trip per
 * window instead of n.  0, or -1 (wh_pmi_error() says why) when the
 * connection failed or some key was missing or too long: the others are
 * still filled in, the missing ones are "". */
int wh_pmi_get_ranks(const char *prefix, int n, int skip, char *vals, size_t stride);
int wh_pmi_barrier(void); /* commits puts and waits for all ranks */
/* Name service (MPI_Publish_name/Lookup_name/Unpublish_name; PMI-1's
 * publish_name/unpublish_name/lookup_name commands, answered by wharfrun and
 * hydra; a singleton keeps its names locally).  Service names and ports are
 * any text without newlines, shorter than wh_pmi_max_vallen().  0 on success,
 * 1 when the server refused (name already published / not published / not
 * found: wh_pmi_error() has its message), -1 when the connection failed. */
int wh_pmi_publish(const char *service, const char *port);
int wh_pmi_unpublish(const char *service);
int wh_pmi_lookup(const char *service, char *port, size_t portlen);
/* MPI_UNIVERSE_SIZE as the launcher reports it (cmd=get_universe_size; the
 * job size for a singleton or when the launcher does not say). */
int wh_pmi_universe_size(void);
/* Spawning (MPI_Comm_spawn_multiple): one command per entry. */
typedef struct wh_pmi_spawn_cmd {
    const char *exec;
    int argc;
    char *const *argv;   /* arguments after the program name */
    int nprocs;
    const char *host, *wdir, *path; /* info keys, NULL: not given */
} wh_pmi_spawn_cmd_t;
/* Ask the launcher to start the commands as one new group (MPICH's simple
 * PMI "mcmd=spawn" blocks); npre keys/values are put into the new group's
 * key-value space before it starts.  0 (kvsname = the group's), 1 when the
 * launcher refused (wh_pmi_error() says why; a singleton gets a launcher
 * first: wh_pmi_need_manager),
 * -1 when the connection failed. */
int wh_pmi_spawn(int count, const wh_pmi_spawn_cmd_t *cmds, int npre, const char *const *pre_keys,
                 const char *const *pre_vals, char *kvsname, size_t kvslen);
/* A singleton about to spawn gets a process manager, as MPICH's singletons
 * get hydra: it starts `wharfrun --adopt` (WHARF_LAUNCHER, else the wharfrun
 * in ../bin beside this library, else the one in PATH) on a socketpair, which
 * takes it as rank 0 of a job of one under its own kvsname; its local keys and
 * names move to that server.  0 (also when not a singleton), or -1 (still a
 * singleton; wh_pmi_error() says why). */
int wh_pmi_need_manager(void);
/* Tells the launcher (cmd=abort exitcode=code message=msg; msg may be NULL)
 * and waits up to 10 s to be killed, then exits with code (1 if code is a
 * multiple of 256).  Does not return. */
_Noreturn void wh_pmi_abort(int code, const char *msg);
int wh_pmi_finalize(void);
/* Async-signal-safe: send cmd=abort exitcode=code message=msg (msg escaped
 * and cut to fit) and return at once, without waiting; nothing for a
 * singleton.  For fatal-signal handlers, which then _exit. */
void wh_pmi_abort_from_signal(int code, const char *msg);
/* File descriptor of the PMI connection (-1 for singleton).  To notice a
 * dead launcher use wh_pmi_lost(): over TCP (remote ranks) a closed
 * connection shows as POLLIN with EOF, not as POLLHUP. */
int wh_pmi_fd(void);
/* Non-blocking check for a rare slow path: 1 if the launcher closed the PMI
 * connection (or it failed), else 0 (always 0 for a singleton and outside a
 * PMI call; nothing is consumed from the connection). */
int wh_pmi_lost(void);
/* Longest value (bytes, without the NUL) wh_pmi_put accepts; 0 before init. */
int wh_pmi_max_vallen(void);
/* Reason of the last failed call ("" if none). */
const char *wh_pmi_error(void);
#endif
