/* Internal point-to-point API used by the MPI layer, collectives and
 * communicator management.  Ranks are communicator ranks; ctxoff selects the
 * context: WH_CTX_P2P for user traffic, WH_CTX_COLL for collectives (so
 * internal traffic never matches user receives). */
#ifndef WH_PROTO_P2P_H
#define WH_PROTO_P2P_H
#include <mpi.h>
#include "coord/coord.h" /* WH_TRACE_* */
#include "core/core.h"
#include "dtype/dtype.h"

#define WH_CTX_P2P 0
#define WH_CTX_COLL 1

enum wh_send_mode { WH_MODE_STD = 0, WH_MODE_SYNC, WH_MODE_READY, WH_MODE_BUFFERED };

typedef struct wh_req wh_req_t;

/* Start operations.  count is in elements of dt.  dest/src may be
 * MPI_PROC_NULL; src may be MPI_ANY_SOURCE, tag MPI_ANY_TAG (receives).
 * Arguments are assumed valid (the MPI layer checks them). */
int wh_isend(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c,
             int ctxoff, int mode, wh_req_t **req);
int wh_irecv(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff,
             wh_req_t **req);

/* The same, saying how the device-buffer workload tracer counts the message
 * (trace: WH_TRACE_BLK for blocking MPI calls; wh_isend/wh_irecv count it as
 * nonblocking). */
int wh_isend_x(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int ctxoff,
               int mode, int trace, wh_req_t **req);
int wh_irecv_x(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff, int trace,
               wh_req_t **req);
/* or'ed into wh_irecv_x's trace: a rendezvous that matches this receive asks
 * its sender to write the data (zero-copy put) where the pair allows it,
 * instead of reading it with this rank's cpu — for a receiver with other
 * copies to make meanwhile (a gather's root) */
#define WH_IRECV_PUT 0x40

/* Complete and release an internal request (status may be NULL). */
int wh_wait(wh_req_t *r, MPI_Status *status);
int wh_waitall(int n, wh_req_t **r, MPI_Status *statuses);
/* Nonzero if complete (does not release). */
int wh_test(wh_req_t *r);
void wh_req_release(wh_req_t *r);

/* Blocking conveniences (collectives use these with WH_CTX_COLL). */
int wh_send(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c, int ctxoff);
int wh_recv(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int ctxoff,
            MPI_Status *status);
int wh_sendrecv(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, int dest, int stag, void *rbuf,
                MPI_Count rcount, wh_dtype_t *rdt, int src, int rtag, wh_comm_t *c, int ctxoff,
                MPI_Status *status);

/* Probe: look for a matching message without receiving it.  With msg != NULL
 * (MPI_Mprobe/Improbe) a found message is removed from matching and returned
 * as a request to hand to wh_imrecv. */
int wh_iprobe(int src, int tag, wh_comm_t *c, int ctxoff, int *flag, MPI_Status *status, wh_req_t **msg);
int wh_imrecv(void *buf, MPI_Count count, wh_dtype_t *dt, wh_req_t *msg, wh_req_t **req);
/* Cancel a posted receive: returns 1 if it was cancelled (not yet matched). */
int wh_cancel_recv(wh_req_t *r);
/* Cancel a send: the receiver withdraws the message if no receive has matched
 * it yet.  The request completes once the answer is in (cancelled, and its
 * status says so, or not, and it completes as a normal send).  Also for a send
 * request that already completed locally (an eager message), until it is freed. */
int wh_cancel_send(wh_req_t *r);

/* Persistent requests: create inactive, then start/restart. */
int wh_send_init(const void *buf, MPI_Count count, wh_dtype_t *dt, int dest, int tag, wh_comm_t *c,
                 int mode, wh_req_t **req);
int wh_recv_init(void *buf, MPI_Count count, wh_dtype_t *dt, int src, int tag, wh_comm_t *c,
                 wh_req_t **req);
int wh_req_start(wh_req_t *r);

/* Upper layers register a function that wh_progress() calls (returns events
 * handled), for work that must advance from any MPI call: schedules, context-id
 * agreements, queued one-sided replies.  `work` points at the layer's own
 * count (or flag) of pending work: the hook runs only while it is non-zero,
 * so an idle layer costs the hot loop one load and a branch. */
typedef int (*wh_progress_hook_t)(void);
int wh_progress_hook_add(wh_progress_hook_t fn, const int *work);

/* Drive all channels once; returns number of events handled. */
int wh_progress(void);
/* Call in every wait loop after a wh_progress() that returned 0: applies the
 * waiting policy (spin, yield when oversubscribed, block on channel fds when
 * idle for long).  *idle counts consecutive idle polls; reset it to 0 after
 * progress was made. */
void wh_progress_idle(unsigned *idle);
/* The same without the doorbell sleep: for waits on memory a peer writes
 * outside the channel's messages (no doorbell rings for it), e.g. a
 * shared-memory collective's flag where the flag's own futex is off. */
void wh_progress_idle_nosleep(unsigned *idle);

/* A test-type call (MPI_Test*, MPI_Iprobe, ...) found nothing complete
 * after driving the engine: give the core away where WHARF_TEST_YIELD says
 * (a node running more ranks than cpus), so the co-resident rank the caller
 * waits for runs while the caller computes between tests. */
void wh_test_idle(void);

/* Status helpers (MPICH layout: count_lo / count_hi_and_cancelled). */
void wh_status_set(MPI_Status *st, int source, int tag, int error, MPI_Count bytes, int cancelled);
MPI_Count wh_status_bytes(const MPI_Status *st);
#endif
