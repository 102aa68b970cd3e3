/* Communicator creation: the layer above the collectives that agrees on
 * context ids and builds new communicators (dup, idup, split, create,
 * create_group, intercommunicators, topologies).  src/core keeps the
 * objects; this layer may use src/coll, src/proto, src/core and src/dtype.
 * Arguments are assumed checked by the MPI layer; functions return MPI
 * error codes (not raised).  *out is NULL where the calling process gets
 * MPI_COMM_NULL. */
#ifndef WH_COMM_COMM_H
#define WH_COMM_COMM_H
#include <stdint.h>
#include "core/core.h"
#include "proto/p2p.h"

/* ---------- context-id agreement (cid.c) ----------
 * A nonblocking state machine over point-to-point messages on the
 * collective context, advanced by a progress hook, so any MPI call on the
 * rank moves it on.  Every round each participant proposes (and reserves)
 * its lowest id that is free and not reserved by another agreement in
 * flight; the maximum is the candidate; each participant reserves the
 * candidate if it can; if all could, they take it, otherwise the next round
 * starts above the candidate.  An agreement thus never holds more than one
 * id per process, so concurrent agreements over overlapping processes
 * (idups, blocking constructors on other communicators, create_group)
 * cannot pick the same id and cannot block one another.
 *
 * Participants are n processes that form a binomial tree over ranks of
 * `comm` (prank[i] is the comm rank of participant i; NULL: identity); for
 * an intercommunicator, the tree roots of both groups also exchange their
 * values over `xcomm` (rank xpeer).  Nonmembers take part but take no id. */
typedef struct wh_cid_op wh_cid_op_t;
typedef void (*wh_cid_done_fn)(wh_cid_op_t *op, void *arg);

typedef struct wh_cid_spec {
    wh_comm_t *comm;
    int n, me;
    const int *prank;   /* copied */
    int tag;            /* internal tag on comm's collective context */
    wh_comm_t *xcomm;   /* NULL: no exchange between two groups */
    int xpeer, xtag;    /* the other root's rank in xcomm, tag on xcomm's collective context */
    int member;
    int nids;           /* ids to agree on, 1 (0 means 1) or 2 (an intercommunicator and its local group) */
} wh_cid_spec_t;

/* Start an agreement.  done (may be NULL) runs from progress when it has
 * finished (successfully or not); the op is freed after it returns. */
int wh_cid_start(const wh_cid_spec_t *s, wh_cid_done_fn done, void *arg, wh_cid_op_t **op);
/* Result of a finished op (in the done callback): MPI error code, ctx[nids]. */
int wh_cid_result(const wh_cid_op_t *op, uint32_t *ctx);
/* Blocking agreement: start, progress until finished, ctx[nids] (0 for a nonmember). */
int wh_cid_agree(const wh_cid_spec_t *s, uint32_t *ctx);
/* Internal tag for the next agreement that is collective over every rank of c. */
int wh_cid_tag(wh_comm_t *c);
/* Internal tags: MPI_Comm_create_group (user tag) and the leaders of
 * MPI_Intercomm_create (user tag) on the parent / peer collective context. */
#define WH_TAG_CGROUP(tag) (-(1 << 30) - ((tag) & ((1 << 29) - 1)))
#define WH_TAG_ICREATE(tag) (-(3 << 29) - ((tag) & ((1 << 28) - 1)))
#define WH_TAG_FROMGROUPS(h) (-(7 << 28) - (int)((h) & ((1u << 27) - 1)))

/* ---------- constructors (create.c) ---------- */
/* new communicator over wranks[0..n) with my index me, parent's error handler */
int wh_comm_make(wh_comm_t *parent, int n, const int *wranks, int me, uint32_t ctx, wh_comm_t **out);
int wh_comm_dup(wh_comm_t *c, wh_comm_t **out); /* copies attributes, error handler, topology */
/* MPI_Comm_idup: *out at once, usable once fn(arg, error code) has been
 * called from progress (the MPI layer completes its request there) */
typedef void (*wh_comm_idup_done_fn)(void *arg, int err);
int wh_comm_idup(wh_comm_t *c, wh_comm_t **out, wh_comm_idup_done_fn fn, void *arg);
/* strict: MPI_COMM_TYPE_HW_UNGUIDED rule, a split that would keep every rank yields NULL */
int wh_comm_split(wh_comm_t *c, int color, int key, int strict, wh_comm_t **out);
int wh_comm_create(wh_comm_t *c, wh_group_t *g, wh_comm_t **out);
/* collective over the members of g only; tag separates concurrent calls */
int wh_comm_create_group(wh_comm_t *c, wh_group_t *g, int tag, wh_comm_t **out);
/* the same with an internal tag (MPI_Comm_create_from_group: WH_TAG_FROMGROUPS) */
int wh_comm_create_group_itag(wh_comm_t *c, wh_group_t *g, int itag, wh_comm_t **out);
/* collective over c: a communicator of c's ranks 0..n-1 (NULL on the others) */
int wh_comm_create_prefix(wh_comm_t *c, int n, wh_comm_t **out);
/* node and leader sub-communicators of c for src/coll's hierarchical
 * collectives (declared for src/coll in coll/cstate.h) */
int wh_comm_node_split(wh_comm_t *c, const int *node_of, int nnodes, wh_comm_t **node, wh_comm_t **leaders);
/* copy c's topology to n (dup) */
int wh_topo_copy(const wh_comm_t *c, wh_comm_t *n);

/* ---------- intercommunicators (inter.c) ---------- */
/* itag: internal tag of the leaders on peer's collective context (WH_TAG_ICREATE(user tag)) */
int wh_intercomm_create(wh_comm_t *local, int local_leader, wh_comm_t *peer, int remote_leader, int itag,
                        wh_comm_t **out);
int wh_intercomm_merge(wh_comm_t *ic, int high, wh_comm_t **out);
int wh_intercomm_split(wh_comm_t *ic, int color, int key, wh_comm_t **out); /* wh_comm_split does this for intercomms */
#endif
