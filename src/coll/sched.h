/* Schedules: the engine behind nonblocking (MPI_I*) and persistent
 * (MPI_*_init) collectives.
 *
 * A collective becomes a list of steps built once: sends and receives on the
 * collective context, local copies and local reductions.  Steps are grouped;
 * a group's local steps run in order when the group starts, its sends and
 * receives are started then, and the next group begins only when every one
 * of them has completed (a barrier between groups).  Addresses, counts and
 * types are fixed at build time, so a schedule can run again and again
 * (persistent collectives) without being rebuilt.
 *
 * Tags: every schedule gets one tag of its own, WH_TAG_NBC_BASE plus the
 * communicator's collective sequence number (c->coll_seq, advanced by each
 * nonblocking or persistent collective call; MPI requires the same call order
 * on all ranks, so all ranks agree).  Blocking collectives use small fixed
 * tags (algo.h), so no message of one collective can match a receive of
 * another.  Within one schedule the messages between two ranks match in the
 * order both sides post them, which the builders keep identical.  A step may
 * add a small tag offset (0..WH_TAG_NBC_OFFS-1) to tell apart messages between
 * one pair that must not match in posting order (a periodic cartesian
 * dimension of size 1 or 2 makes both neighbours one process): its tag is
 * the schedule's plus offset * WH_TAG_NBC_STEP, which stays clear of every
 * other schedule's tag (those lie below WH_TAG_NBC_STEP).
 *
 * Progress: active schedules advance from every wh_progress() (one hook,
 * registered when the first schedule starts), and from the wait/test on
 * their request.  A schedule completes its request (proto/request.h) itself.
 *
 * Errors: a step that fails (a receive longer or shorter than posted, a
 * local copy between sizes that differ: ranks that passed different counts)
 * does not stop the schedule: the remaining steps run, so peers waiting for
 * this rank's messages are not left hanging, but its sends carry no data
 * from then on; a receiver expecting data sees the empty message and fails
 * too.  The request reports the first error.
 *
 * Memory: temporaries, type and op references live as long as the schedule. */
#ifndef WH_COLL_SCHED_H
#define WH_COLL_SCHED_H
#include <stdint.h>

#include "coll/a2a.h"
#include "coll/coll.h"
#include "proto/request.h"

/* tags of schedules: WH_TAG_NBC_BASE + (seq mod WH_TAG_NBC_SPAN) */
#define WH_TAG_NBC_BASE (1 << 24)
#define WH_TAG_NBC_SPAN (1 << 24)
/* per-step tag offsets: tag + off * WH_TAG_NBC_STEP, off < WH_TAG_NBC_OFFS
 * (the largest is INT_MAX) */
#define WH_TAG_NBC_STEP (1 << 25)
#define WH_TAG_NBC_OFFS 64

enum wh_sstep_kind { WH_SS_SEND = 1, WH_SS_RECV, WH_SS_COPY, WH_SS_REDUCE };

typedef struct wh_sstep {
    uint8_t kind;      /* wh_sstep_kind */
    uint8_t last;      /* the last step of its group */
    uint8_t tagoff;    /* send/recv: tag offset (0..WH_TAG_NBC_OFFS-1) */
    uint8_t local;     /* send/recv: on the intercommunicator's local group (home->local) */
    int peer;          /* send/recv: communicator rank (MPI_PROC_NULL: nothing to do) */
    const void *src;   /* send: data; copy: source; reduce: `in` */
    MPI_Count scount;
    wh_dtype_t *sdt;
    void *dst;         /* recv: buffer; copy: target; reduce: `inout` */
    MPI_Count dcount;
    wh_dtype_t *ddt;
} wh_sstep_t;

typedef struct wh_sched {
    wh_comm_t *comm;   /* the communicator builders address: home, or while building the
                        * intra-group steps of an intercommunicator collective, home->local */
    wh_comm_t *home;   /* the schedule's communicator (referenced) */
    int tag;
    wh_op_t *op;       /* reductions: referenced */
    MPI_Datatype dth;  /* reductions: the user's type handle (for user ops) */
    wh_dtype_t *dt;    /* reductions: the type */
    wh_sstep_t *steps;
    int nsteps, cap;
    int build_err;     /* first error while building */
    int maxreq;        /* most sends/receives in one group */
    int grp_reqs;      /* sends/receives in the group being built */
    void **mem;        /* temporaries to free */
    int nmem, memcap;
    /* running state */
    int pos;           /* first step of the next group */
    int nreq;          /* outstanding requests of the current group */
    wh_req_t **reqs;
    int err;
    int active;        /* on the active list */
    int orphan;        /* its request was freed by the user: free both when done */
    wh_req_t *req;     /* the MPI request this schedule completes */
    int shmbar;        /* a barrier through the node block: no steps, the flags (wh_shmc_arrive) */
    uint64_t shm_k;    /* shmbar: this run's barrier number */
    struct wh_sched *next, *prev;
} wh_sched_t;

/* ---------- building (sched.c) ---------- */
/* New empty schedule on c; takes the next sequence number of c for its tag.
 * NULL when out of memory. */
wh_sched_t *wh_sched_new(wh_comm_t *c);
/* Reductions: the op and type every reduce step uses (references taken). */
void wh_sched_set_op(wh_sched_t *s, wh_op_t *op, MPI_Datatype dth, wh_dtype_t *dt);
/* Append steps.  Errors (out of memory) are remembered in s->build_err and
 * reported by wh_sched_commit, so builders need not check every call. */
void wh_sched_send(wh_sched_t *s, const void *buf, MPI_Count count, wh_dtype_t *dt, int peer);
void wh_sched_recv(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int peer);
/* the same with a tag offset (0..WH_TAG_NBC_OFFS-1; others are a build error) */
void wh_sched_send_tag(wh_sched_t *s, const void *buf, MPI_Count count, wh_dtype_t *dt, int peer, int tagoff);
void wh_sched_recv_tag(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int peer, int tagoff);
void wh_sched_copy(wh_sched_t *s, const void *src, MPI_Count scount, wh_dtype_t *sdt, void *dst, MPI_Count dcount,
                   wh_dtype_t *ddt);
/* zero-byte message to `to`, and one expected from `from` (barriers) */
void wh_sched_signal(wh_sched_t *s, int to, int from);
/* inout = in op inout (count elements of the schedule's type) */
void wh_sched_reduce(wh_sched_t *s, const void *in, void *inout, MPI_Count count);
/* Intercommunicator collectives: on = 1 makes s->comm the local group's
 * intracommunicator (home->local), so the builders below add intra-group
 * steps; on = 0 goes back to the intercommunicator.  Commit goes back too. */
void wh_sched_local(wh_sched_t *s, int on);
/* End the current group (no-op if it is empty). */
void wh_sched_fence(wh_sched_t *s);
/* A temporary for count elements of dt (see wh_coll_tmp), freed with the
 * schedule; NULL when out of memory (also recorded in build_err). */
void *wh_sched_tmp(wh_sched_t *s, MPI_Count count, const wh_dtype_t *dt);
/* A temporary of `bytes` bytes. */
void *wh_sched_bytes(wh_sched_t *s, size_t bytes);
/* Finish building; returns the first build error or MPI_SUCCESS. */
int wh_sched_commit(wh_sched_t *s);
/* Release everything (the schedule must not be active). */
void wh_sched_free(wh_sched_t *s);

/* ---------- running (sched.c) ---------- */
/* Start (or restart) s for its request s->req (complete is cleared; set
 * again, with req->err and an empty status, when the schedule is done). */
int wh_sched_start(wh_sched_t *s);
/* Advance s; nonzero if anything happened.  For the request's poll_fn. */
int wh_sched_poll(wh_req_t *r);
/* MPI_Request_free of an active schedule's request: finish in the
 * background, then free the schedule and release the request. */
void wh_sched_abandon(wh_sched_t *s);
/* Number of schedules running (for tests and finalize checks). */
int wh_sched_active_count(void);

/* ---------- builders (sched_move.c, sched_red.c) ----------
 * Same arguments and conventions as the blocking calls of coll.h, appended
 * to s (on s->comm).  Return MPI_SUCCESS or the build error. */
int wh_sched_barrier(wh_sched_t *s);
int wh_sched_bcast(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int root);
int wh_sched_gatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                     const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt, int root);
int wh_sched_scatterv(wh_sched_t *s, const void *sbuf, const MPI_Count *scounts, MPI_Count scount,
                      const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                      int root);
int wh_sched_allgatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                        const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt);
/* alltoall (counts NULL: count per peer at j*count), v (displs in elements)
 * and w (types arrays, displs in bytes): coll/a2a.h */
typedef wh_a2a_side_t wh_sched_a2a_t;
int wh_sched_alltoall(wh_sched_t *s, const void *sbuf, const wh_sched_a2a_t *ss, void *rbuf,
                      const wh_sched_a2a_t *rs);
int wh_sched_reduce_to(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int root);
int wh_sched_allreduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count);
int wh_sched_reduce_scatter(wh_sched_t *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts);
int wh_sched_scan(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int exclusive);
/* Neighbourhood exchange (sched_nbr.c): the blocks of wh_neighbor_exchange
 * (coll/neighbor.h), every receive then every send, as one group; the tag
 * offsets become step tag offsets, folded modulo WH_TAG_NBC_OFFS (a
 * cartesian topology of more than 32 dimensions whose size-1/2 periodic
 * dimensions put one process on several sides may then match two directions
 * in posting order). */
struct wh_nbr_blk;
int wh_sched_neighbor(wh_sched_t *s, int nsend, const struct wh_nbr_blk *send, int nrecv,
                      const struct wh_nbr_blk *recv);
#endif
