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
} wr_pmi_rank_t;

typedef struct wr_pmi_kv {
    struct wr_pmi_kv *next;
    char *key;
    char *val;
} wr_pmi_kv_t;

typedef struct wr_pmisrv {
    int size;
    char kvsname[WR_PMI_KVSNAME_MAX];
    wr_pmi_rank_t *r;
    int nbarrier;       /* ranks in the current barrier */
    int barriers;       /* completed barriers */
    wr_pmi_kv_t **tab;  /* KVS hash table */
    size_t ntab, nkv, kvbytes;
    char secret[WH_PMI_SECRET_HEX + 1]; /* "": plain cmd=initack accepted */
} wr_pmisrv_t;


enum wr_pmi_event {
    WR_PMI_FAIL = -1, /* protocol violation: the reason is in why */
    WR_PMI_OK = 0,
    WR_PMI_ABORT = 1, /* the rank sent cmd=abort (code and message in r[rank]) */
};

/* ids: PMI_ID of each rank (NULL: the rank numbers); secret: WH_PMI_SECRET_HEX
 * hex digits that TCP connections must prove (NULL: plain cmd=initack, no
 * authentication).  NULL if out of memory. */
wr_pmisrv_t *wr_pmisrv_new(int size, const char *kvsname, const int *ids, const char *secret);
void wr_pmisrv_free(wr_pmisrv_t *s);
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
