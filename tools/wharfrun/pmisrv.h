/* The PMI-1 server as a pure state machine: lines in, replies appended to
 * per-rank output buffers, no sockets and no processes, so that it can be
 * fuzzed (tests/fuzz/fuzz_pmi_wire.c).  The event loop (loop.c) moves bytes
 * between sockets and these buffers and acts on the returned events. */
#ifndef WR_PMISRV_H
#define WR_PMISRV_H
#include <stddef.h>

#include "wharfrun.h"

/* What wharfrun announces in cmd=maxes. */
#define WR_PMI_KVSNAME_MAX 256
#define WR_PMI_KEYLEN_MAX 256
#define WR_PMI_VALLEN_MAX 2048
#define WR_PMI_KVS_BYTES_MAX (256u << 20) /* all keys + values of a job */
#define WR_PMI_OUT_MAX (4u << 20)         /* unread replies of one rank */

typedef struct wr_pmi_rank {
    int pmiid;       /* expected in cmd=initack (TCP connections) */
    int bound;       /* a connection belongs to this rank */
    int contacted;   /* sent at least one line */
    int inited;      /* sent cmd=init */
    int in_barrier;  /* sent barrier_in, waiting for barrier_out */
    int finalized;   /* sent cmd=finalize */
    int aborted;     /* sent cmd=abort */
    int abort_code;
    char abort_msg[512]; /* sanitized, printable */
    wr_buf_t out;    /* replies not written yet */
    int group;       /* PMI group (0: the ranks wharfrun started; 1..: spawned) */
    int grank;       /* rank in the group */
    int appnum;      /* command of MPI_Comm_spawn_multiple that started it (0 otherwise) */
    struct wr_spawn_req *spawn; /* an mcmd=spawn request being received */
    int in_mcmd;     /* inside an mcmd=spawn ... endcmd block */
    int info_next;   /* the info value that comes next: 1 host, 2 wdir, 3 path, 0 ignored */
} wr_pmi_rank_t;

/* One command of a spawn request (one mcmd=spawn block). */
typedef struct wr_spawn_cmd {
    int nprocs;
    char *exec;
    char **argv;     /* argcnt arguments (argv[0] is not the program) */
    int argc;
    char *host, *wdir, *path; /* info keys wharfrun honours (NULL: not given) */
} wr_spawn_cmd_t;

/* A complete spawn request: totspawns commands, the preput keys. */
typedef struct wr_spawn_req {
    int total;       /* totspawns */
    int ncmd;
    wr_spawn_cmd_t *cmd;
    int npre;
    char **pre_key, **pre_val;
    int bad;         /* a block was malformed: answer rc=-1 */
    char why[128];
} wr_spawn_req_t;

#define WR_PMI_GROUPS_MAX 1024 /* PMI groups of a job (the first + spawned ones) */

typedef struct wr_pmi_group {
    char kvsname[WR_PMI_KVSNAME_MAX];
    int first, size;  /* flat indexes [first, first + size) */
    int nbarrier;     /* its ranks in the current barrier */
    int barriers;
    int universe;     /* reported by get_universe_size */
} wr_pmi_group_t;

typedef struct wr_pmi_kv {
    struct wr_pmi_kv *next;
    char *key;
    char *val;
} wr_pmi_kv_t;

typedef struct wr_pmisrv {
    int size;           /* processes (flat indexes 0..size-1: every group's ranks) */
    int cap;            /* room in r[] (spawned processes are added up to it) */
    char kvsname[WR_PMI_KVSNAME_MAX];
    wr_pmi_rank_t *r;
    int nbarrier;       /* ranks in a barrier (all groups) */
    int barriers;       /* completed barriers (all groups) */
    wr_pmi_group_t *groups;
    int ngroups;
    wr_spawn_req_t *spawn_req; /* WR_PMI_SPAWN: the complete request (owned by the server) */
    int spawn_rank;            /* and the rank that sent it */
    wr_pmi_kv_t **tab;  /* KVS hash table */
    size_t ntab, nkv, kvbytes;
    char secret[WH_PMI_SECRET_HEX + 1]; /* "": plain cmd=initack accepted */
} wr_pmisrv_t;


enum wr_pmi_event {
    WR_PMI_FAIL = -1, /* protocol violation: the reason is in why */
    WR_PMI_OK = 0,
    WR_PMI_ABORT = 1, /* the rank sent cmd=abort (code and message in r[rank]) */
    WR_PMI_SPAWN = 2, /* a complete spawn request is in s->spawn_req: start it, then
                       * call wr_pmisrv_spawn_done */
};

/* ids: PMI_ID of each rank (NULL: the rank numbers); secret: WH_PMI_SECRET_HEX
 * hex digits that TCP connections must prove (NULL: plain cmd=initack, no
 * authentication).  NULL if out of memory. */
wr_pmisrv_t *wr_pmisrv_new(int size, const char *kvsname, const int *ids, const char *secret);
void wr_pmisrv_free(wr_pmisrv_t *s);
/* Room for cap processes in all (cap >= size); 0 or -1 (no memory).  Call
 * before the first line. */
int wr_pmisrv_reserve(wr_pmisrv_t *s, int cap);
/* Add a group of n processes (kvsname; appnum[i] of each, preput keys of
 * req) after the existing ones: the first flat index, or -1 (no room).
 * The new ranks are bound (socketpairs) unless ids is given. */
int wr_pmisrv_add_group(wr_pmisrv_t *s, const char *kvsname, int n, const int *appnum,
                        const wr_spawn_req_t *req, const int *ids);
/* Answer the spawn request in s->spawn_req (rc 0: started as group kvsname;
 * else failed with msg) and free it. */
int wr_pmisrv_spawn_done(wr_pmisrv_t *s, int rc, const char *kvsname, const char *msg);
void wr_spawn_req_free(wr_spawn_req_t *q);
/* Handle one line (with or without '\n') received on a connection of rank
 * *rank, or of a not yet identified TCP connection if *rank < 0 (then only
 * cmd=initack is accepted and on success *rank is set).  Replies are appended
 * to s->r[rank].out (a completed barrier appends to every rank). */
int wr_pmisrv_line(wr_pmisrv_t *s, int *rank, const char *line, size_t len, char *why,
                   size_t whylen);
/* One line of an unidentified TCP connection (the handshake of auth.h, or a
 * plain cmd=initack if the server has no secret).  WR_PMI_OK: either *rank
 * is now set (the connection belongs to that rank; the replies are in
 * s->r[*rank].out) or reply holds a line to send on the connection.
 * WR_PMI_FAIL (reason in why): drop the connection; nothing changed. */
int wr_pmisrv_anon_line(wr_pmisrv_t *s, wr_pmi_anon_t *a, int *rank, const char *line,
                        size_t len, char *reply, size_t replylen, char *why, size_t whylen);
#endif
