/* One-sided communication (MPI windows).  See docs/RMA.md.
 *
 * A window is a wh_win_t in a handle table of WH_H_WIN objects over a private
 * communicator (built from the user's with wh_comm_create, so the window's
 * collectives never meet the user's).  At creation every rank publishes its
 * window's base, size, displacement unit, node-heap offset and local id
 * (allgather), so an origin checks ranges itself and addresses the target's
 * window by id.
 *
 * Operations travel as active messages of three handlers registered by
 * wh_rma_init (rma.op, rma.reply, rma.ctl).  The origin flattens the target
 * layout into runs (offset, elements) that travel with the data, split to the
 * channel's active-message size; the target applies a message in one handler
 * call (accumulates element-wise with src/op, so they are atomic per element
 * with respect to each other).  Replies (get data, acks, lock grants) that meet
 * a busy channel wait in a per-peer FIFO pushed by a progress hook: handlers
 * never block.  Messages between two ranks on one channel stay in order, so
 * a flush is one request answered after everything sent before it.
 *
 * Where the target's window lies in the node region (Win_allocate_shared, and
 * Win_allocate among co-residents when the node heap has room) puts and gets
 * are plain memcpy into the mapped memory (no target involvement), and
 * accumulates are applied by the origin under a lock word that lies ahead of
 * the memory (the target's handler takes it too). */
#ifndef WH_RMA_RMA_H
#define WH_RMA_RMA_H
#include <mpi.h>
#include <sched.h>
#include <stdint.h>

#include "chan/chan.h"
#include "core/core.h"
#include "dtype/dtype.h"
#include "op/op.h"
#include "proto/p2p.h"
#include "proto/request.h"

#define WH_REQ_RMA 7 /* request kind of MPI_Rput/Rget/Raccumulate/Rget_accumulate */

/* what one rank knows of another's part of the window */
typedef struct wh_win_peer {
    uint64_t base;      /* address in the target's process (dynamic: 0) */
    uint64_t size;
    int64_t disp_unit;
    uint64_t heap_off;  /* node-heap offset of its memory, UINT64_MAX if none */
    uint32_t id;        /* its window id (handle index) */
    int wrank;          /* world rank */
    char *ptr;          /* its memory mapped here (node region), or NULL */
    uint32_t *lockp;    /* its accumulate lock word in the node region, or NULL */
    uint64_t rkey;      /* key of its memory registered with the net channel (has_rkey) */
    uint64_t rbase;     /* the address the channel wants for its byte 0 */
    int has_rkey;
    int dev;            /* its memory is device memory: every operation goes to its handlers */
} wh_win_peer_t;

/* Node-region windows carry a lock word ahead of the memory: every
 * accumulate to that memory (a co-resident origin applying it directly, or
 * the target's handler applying a remote one) holds it, so accumulates stay
 * atomic per element whichever path they take.  Bit 0: held exclusively
 * (elements updated with plain loads and stores: non-atomic classes, and
 * bulk accumulates of atomic classes, atomic.c); the bits above count the
 * holders in shared mode (elements updated with CPU atomics, which are
 * atomic among themselves but not against plain stores).  A waiting
 * exclusive holder sets bit 0 first, so new shared holders back off.
 * The next word (lk[1]) is the bulk gate: raised while a bulk pass is in
 * flight; on acc_fast windows atomics look only at it (atomic.c). */
#define WH_RMA_LOCKPAD 64
/* one step of a wait on the lock word: spin briefly, then give the CPU away (a holder that
 * lost its core to another process — oversubscribed nodes — needs it to finish) */
static inline void wh_rma_relax(unsigned *spins)
{
    if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else
        sched_yield();
}
static inline void wh_rma_acc_lock(uint32_t *l)
{
    unsigned spins = 0;
    while (__atomic_fetch_or(l, 1u, __ATOMIC_ACQUIRE) & 1u)
        while (__atomic_load_n(l, __ATOMIC_RELAXED) & 1u)
            wh_rma_relax(&spins);
    while (__atomic_load_n(l, __ATOMIC_ACQUIRE) != 1u) /* shared holders drain */
        wh_rma_relax(&spins);
}
static inline void wh_rma_acc_unlock(uint32_t *l)
{
    __atomic_fetch_sub(l, 1u, __ATOMIC_RELEASE); /* shared holders backing off may still count */
}
static inline void wh_rma_acc_share(uint32_t *l)
{
    unsigned spins = 0;
    while (__atomic_fetch_add(l, 2u, __ATOMIC_ACQUIRE) & 1u) {
        __atomic_fetch_sub(l, 2u, __ATOMIC_RELAXED);
        while (__atomic_load_n(l, __ATOMIC_RELAXED) & 1u)
            wh_rma_relax(&spins);
    }
}
static inline void wh_rma_acc_unshare(uint32_t *l)
{
    __atomic_fetch_sub(l, 2u, __ATOMIC_RELEASE);
}

/* an attached region of a dynamic window */
typedef struct wh_win_region {
    struct wh_win_region *next;
    char *base;
    size_t size;
    int dev;          /* device memory (the target's handlers stage it) */
} wh_win_region_t;

/* a queued lock request at the target */
typedef struct wh_win_lockq {
    struct wh_win_lockq *next;
    int origin, excl;
    int wpeer;        /* world rank to answer */
    wh_hdr_t req;     /* the request (names the origin's window) */
} wh_win_lockq_t;

typedef struct wh_win {
    wh_obj_t obj;
    wh_comm_t *comm;          /* private communicator */
    int flavor;               /* MPI_WIN_FLAVOR_* */
    void *base;
    MPI_Aint size, disp_unit;
    int errh;                 /* MPI_Errhandler */
    int errh_default;         /* never set: errors go to MPI_COMM_WORLD's current handler (as MPICH) */
    wh_attr_t *attrs;
    char name[MPI_MAX_OBJECT_NAME];
    MPI_Info info;            /* hints as given (a private copy), MPI_INFO_NULL if none */
    wh_win_peer_t *peers;     /* per comm rank */
    int own_mem;              /* 1: base was malloc'ed by us; 2: node heap (heap_off); 3: shared segment */
    uint64_t heap_off;        /* own node-heap allocation (own_mem 2) or the shared segment (3) */
    uint32_t *lockw;          /* my memory's accumulate lock word (node-region windows), or NULL */
    int acc_atomic;           /* integer accumulates use CPU atomics (WHARF_RMA_ATOMICS, agreed by all ranks) */
    int acc_fast;             /* CPU atomics pass the bulk gate instead of holding the lock word (atomic.c) */
    int nslots;               /* acc_fast: the atomic-update slots of every co-resident rank (mapped) */
    uint64_t **slots;
    void *reg;                /* my memory's registration with the net channel (mem_reg), or NULL */
    uint32_t fab_classes;     /* element classes whose accumulates use libfabric atomics (fabric.c; agreed by all) */
    wh_win_region_t *regions; /* dynamic windows */
    int dev;                  /* MPI_Win_create: my memory is device memory; dynamic: how many attached
                                 regions are.  The handlers copy it through host memory (target.c) */
    int rank, size_c;         /* my rank and the comm size (copies) */
    MPI_Aint attr_size;       /* values handed out by MPI_Win_get_attr (by address) */
    int attr_disp_unit, attr_flavor, attr_model;

    /* ---- origin side (per target comm rank) ---- */
    int fence_open;           /* a fence opened an epoch */
    int lock_all;
    int nlocked;              /* targets locked by MPI_Win_lock */
    uint8_t *lock_mode;       /* per target: 0, MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE */
    uint8_t *in_start;        /* per target: in the access group of MPI_Win_start */
    int start_active;
    uint8_t *dirty;           /* per target: operations sent since its last flush */
    int64_t *npend;           /* per target: operations waiting for replies */
    uint64_t *flush_sent, *flush_done; /* per target: flush/unlock requests sent and acks received */
    uint64_t *grants;         /* per target: lock grants received */
    uint64_t *posts, *posts_used; /* per target: MPI_Win_post messages received / consumed by start */
    int remote_err;           /* error class a target reported in an ack (0: none) */

    /* ---- target side ---- */
    int lk_shared, lk_excl;   /* holders of my lock */
    wh_win_lockq_t *lk_head, *lk_tail;
    int post_active;
    uint8_t *in_post;         /* per origin: in the exposure group of MPI_Win_post */
    uint64_t *completes, *completes_used; /* per origin: MPI_Win_complete messages received / consumed */
    int *tgt_err;             /* per origin: error class of a failed access, reported in the next ack */
} wh_win_t;

extern wh_tab_t wh_win_tab;

/* handle -> window, NULL if invalid */
wh_win_t *wh_win_get(MPI_Win h);
/* MPI layer (src/mpi/win.c): resolve a window argument or raise MPI_ERR_WIN */
int wh_win_arg(const char *fname, MPI_Win h, wh_win_t **w);
/* Raise code on the window's error handler (like wh_raise_comm). */
int wh_raise_win(wh_win_t *w, const char *fname, int code);

int wh_rma_init(void);      /* MPI_Init: active-message handlers, progress hook */
/* asynchronous progress thread (async.c): started by the first window
 * creation when WHARF_ASYNC_PROGRESS is on, stopped by wh_rma_finalize */
int wh_rma_async_start(void);
void wh_rma_async_stop(void);
void wh_rma_finalize(void); /* MPI_Finalize: free windows the program left */

/* ---- windows (win.c) ---- */
/* Collective over c.  kind MPI_WIN_FLAVOR_*: CREATE uses base; ALLOCATE and
 * SHARED allocate size bytes (*base_out); DYNAMIC has no memory. */
int wh_win_make(wh_comm_t *c, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                void **base_out, wh_win_t **out);
int wh_win_free(wh_win_t *w);
int wh_win_attach(wh_win_t *w, void *base, MPI_Aint size);
int wh_win_detach(wh_win_t *w, const void *base);
int wh_win_set_hints(wh_win_t *w, MPI_Info info); /* keep the recognized hints of info */
/* MPI_Alloc_mem / MPI_Free_mem: memory from the node heap (this rank's
 * blocks together up to wh_rma_alloc_mem_cap()), so MPI_Win_create over it is a node-region
 * window; NULL / 0 when not served here (the caller uses malloc / free). */
void *wh_rma_alloc_mem(size_t size);
/* the most node-heap memory this rank's MPI_Alloc_mem blocks may hold together */
size_t wh_rma_alloc_mem_cap(void);
int wh_rma_free_mem(void *base);
/* comm rank of world rank wr in the window, or -1 */
int wh_win_rank_of(const wh_win_t *w, int wr);

/* ---- operations (ops.c) ---- */
enum wh_rma_kind { WH_RMA_PUT = 1, WH_RMA_GET, WH_RMA_ACC, WH_RMA_GACC, WH_RMA_CAS };
typedef struct wh_rma_args {
    int kind;
    const void *obuf;      /* origin data (PUT, ACC, GACC, CAS: new value) */
    MPI_Count ocount;
    wh_dtype_t *odt;
    void *rbuf;            /* result (GET: the origin buffer; GACC, CAS) */
    MPI_Count rcount;
    wh_dtype_t *rdt;
    const void *cbuf;      /* CAS compare value */
    int target;            /* comm rank, may be MPI_PROC_NULL */
    MPI_Aint disp;
    MPI_Count tcount;
    wh_dtype_t *tdt;
    wh_op_t *op;           /* ACC, GACC */
} wh_rma_args_t;
/* Check and start one operation; *req (if not NULL) gets a request completed
 * when the operation is locally complete. */
int wh_rma_op(wh_win_t *w, const wh_rma_args_t *a, wh_req_t **req);

/* ---- synchronization (sync.c) ---- */
int wh_win_fence(wh_win_t *w, int assert);
int wh_win_lock(wh_win_t *w, int type, int rank, int assert);
int wh_win_unlock(wh_win_t *w, int rank);
int wh_win_lock_all(wh_win_t *w, int assert);
int wh_win_unlock_all(wh_win_t *w);
int wh_win_flush(wh_win_t *w, int rank, int local); /* rank -1: all */
/* Before an operation that bypasses the active messages (load/store, CMA,
 * libfabric RMA or atomics): this origin's messages to target t still in
 * flight land first, so one origin's operations on one target keep program
 * order (docs/RMA.md, "Order"). */
static inline int wh_rma_drain(wh_win_t *w, int t)
{
    return w->dirty[t] || w->npend[t] ? wh_win_flush(w, t, 0) : MPI_SUCCESS;
}
int wh_win_post(wh_win_t *w, wh_group_t *g, int assert);
int wh_win_start(wh_win_t *w, wh_group_t *g, int assert);
int wh_win_complete(wh_win_t *w);
int wh_win_wait(wh_win_t *w, int test, int *flag);
int wh_win_epoch_active(const wh_win_t *w); /* any access or exposure epoch (not a fence) */

/* ---- messages (msg.c) ---- */
typedef struct wh_rma_am {
    uint8_t op, reply, ctl;
} wh_rma_am_t;
extern wh_rma_am_t wh_rma_am;
/* control messages (wh_hdr_t.flags of rma.ctl; on an rma.op message wh_hdr_t.cid,
 * nonzero when the request rides on the operation, with wh_hdr_t.tag its tag) */
enum { WH_RC_LOCK = 1, WH_RC_GRANT, WH_RC_UNLOCK, WH_RC_FLUSH, WH_RC_ACK, WH_RC_POST, WH_RC_COMPLETE };
/* Send to world rank wpeer: header + len bytes at data, after the earlier
 * rma messages to that peer.  Never blocks: a busy channel queues a copy. */
int wh_rma_send(int wpeer, const wh_hdr_t *h, const void *data, size_t len);
/* Same, but an origin-side send that may progress and retry instead of copying. */
int wh_rma_send_wait(int wpeer, const wh_hdr_t *h, const void *data, size_t len);
/* An operation message that needs no answer (put, accumulate) of at most
 * WHARF_RMA_HOLD_MAX payload bytes: kept back (a copy) until the next rma
 * message or progress, so that a FLUSH, UNLOCK or COMPLETE of its window to
 * that target rides on it (wh_rma_ctl sets h.cid to the request and h.tag to
 * its tag; the target handles the operation, then the request).  Larger ones
 * go as wh_rma_send_wait. */
int wh_rma_hold(int wpeer, const wh_hdr_t *h, const void *data, size_t len);
/* Largest payload of one rma message to wpeer. */
size_t wh_rma_max_payload(int wpeer);
int wh_rma_ctl(wh_win_t *w, int target, int sub, int32_t tag);
/* a target's answer (GRANT, ACK) to the control message req from world rank wpeer */
int wh_rma_answer(wh_win_t *w, int wpeer, const wh_hdr_t *req, int sub, int32_t tag);
/* Progress until *flag (a counter) reaches val. */
void wh_rma_wait_u64(const uint64_t *ctr, uint64_t val);
void wh_rma_wait_i64_zero(const int64_t *ctr);

/* target side of operations (target.c) */
void wh_rma_target_op(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_rma_origin_reply(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);
void wh_rma_target_ctl(int chan, int wpeer, const wh_hdr_t *h, const void *payload, size_t plen);

/* prefix of every rma.op / rma.reply payload */
typedef struct wh_rma_pfx {
    uint64_t opid;   /* origin's operation (replies name it), 0 if none */
    uint64_t soff;   /* packed-stream offset of this message's first data byte */
    uint64_t tbase;  /* target byte offset (disp * disp_unit; dynamic: the address) */
    int32_t dtype;   /* accumulates: the basic element type handle */
    uint16_t op;     /* accumulates: op index (WH_OPI_*) */
    uint16_t nruns;  /* runs that follow */
} wh_rma_pfx_t;
/* a run: n elements starting off bytes after tbase, one element extent apart */
typedef struct wh_rma_run {
    int64_t off;
    uint64_t n;
} wh_rma_run_t;
/* Apply runs of packed origin data (NULL: MPI_NO_OP) to memory at base with
 * op on elements et; old (if not NULL) receives the previous contents packed.
 * The caller holds the lock word where there is one. */
void wh_rma_apply_runs(char *base, const wh_rma_run_t *runs, size_t nruns, const char *data, char *old, wh_op_t *op,
                       MPI_Datatype eh, const wh_dtype_t *et);

/* ---- CPU atomics (atomic.c) ---- */
/* Bytes (1, 2, 4, 8) of element type et when accumulates on w apply it with
 * CPU atomics (integers, atomics on), else 0; *sgn = signed. */
int wh_rma_atomic_class(const wh_win_t *w, const wh_dtype_t *et, int *sgn);
void wh_rma_atomic_apply(char *a, size_t n, int bytes, int sgn, const char *data, char *old, int opi);
/* compare-and-swap of one aligned element: old receives the value found */
void wh_rma_atomic_cas(char *a, int bytes, const void *nv, const void *cmp, void *old);
/* Apply runs to node-region memory: aligned elements of an atomic class
 * (abytes, from wh_rma_atomic_class) with atomics, the rest with plain loads
 * and stores holding lock word lk exclusively (lk NULL: none) — and all of
 * them with plain loads and stores when the runs hold at least
 * WHARF_RMA_ACC_BULK bytes (wh_rma_acc_bulk).  Atomics hold lk shared, or on
 * acc_fast windows pass the bulk gate (lk[1]) that bulk passes raise
 * (atomic.c).  data NULL: MPI_NO_OP.  old: previous values, packed. */
int wh_rma_acc_bulk(const uint32_t *lk, size_t bytes);
void wh_rma_acc_runs(const wh_win_t *w, uint32_t *lk, int abytes, int sgn, char *base, const wh_rma_run_t *runs,
                     size_t nruns, const char *data, char *old, wh_op_t *op, MPI_Datatype eh, const wh_dtype_t *et);
/* compare-and-swap of one aligned element of an atomic class on lock word lk's memory */
void wh_rma_atomic_cas_lk(const wh_win_t *w, uint32_t *lk, char *a, int bytes, const void *nv, const void *cmp,
                          void *old);
/* hold lk exclusively for a plain update of elements no atomic touches (not a bulk pass); lk NULL: nothing */
void wh_rma_plain_lock(const wh_win_t *w, uint32_t *lk);
void wh_rma_plain_unlock(const wh_win_t *w, uint32_t *lk);
/* Node-heap offset of this process's atomic-update slot when the bulk gate is
 * available here (membarrier registered, WHARF_RMA_ACC_GATE), else UINT64_MAX. */
uint64_t wh_rma_gate_local(void);

/* ---- libfabric paths beyond contiguous put/get (fabric.c) ---- */
/* Class (0..11) of element type et for channel atomics, with its kind
 * (WH_AEK_*) and bytes; -1 if none. */
int wh_rma_fab_class(const wh_dtype_t *et, int *ekind, int *ebytes);
/* Bit per class whose every valid op the network channel offers atomically
 * (0 with WHARF_NET_ATOMICS=0): what this rank brings to a window. */
uint32_t wh_rma_fab_classes_local(void);
/* An accumulate, get-accumulate, fetch-and-op or compare-and-swap on the
 * target runs (bytes offsets from tbase, element counts) by libfabric
 * atomics, waited for; WH_FALLBACK when the window does not take this path
 * for the element (then nothing was done). */
int wh_rma_fab_acc(wh_win_t *w, const wh_rma_args_t *a, uint64_t tbase, const wh_dtype_t *et,
                   const wh_rma_run_t *runs, size_t nruns);
/* A put or get whose layouts are not both contiguous: one fi_write/fi_read
 * per target run (byte runs) from/into a packed copy, waited for;
 * WH_FALLBACK if the channel refused before moving a byte. */
int wh_rma_fab_rma(wh_win_t *w, const wh_rma_args_t *a, uint64_t tbase, const wh_rma_run_t *runs, size_t nruns);

/* CAS payload after the prefix: new value then compare value (basic size each) */
#endif
