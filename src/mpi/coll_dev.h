/* Device buffers in collectives, reductions and MPI_Reduce_local: staged
 * through host temporaries at the entry layer, once for every algorithm.
 *
 * After its argument checks a collective entry (coll.c, coll2.c) declares
 * its significant buffers with wh_cdev_buf/_bufv/_bufw (host memory,
 * MPI_IN_PLACE and MPI_BOTTOM are ignored), then calls wh_cdev_stage.
 * When any declared buffer is device memory:
 *  - blocking: each is replaced (the caller's pointer variable is rewritten)
 *    by a host temporary covering the bytes its layout touches, filled from
 *    the device for input buffers; wh_coll_done copies outputs back and
 *    frees the temporaries (wh_cdev_finish) after the host algorithm ran;
 *  - nonblocking and persistent: wh_nbc_begin allocates the temporaries in
 *    the schedule and adds a first group copying inputs in; wh_nbc_post adds
 *    a last group copying outputs out (so every MPI_Start copies again).
 * Intercommunicator collectives (coll_inter.c) always run a schedule, so
 * they only declare (WH_CDEV_DECL) and the schedule stages; neighbourhood
 * collectives (topo_nbr.c) declare the span of their blocks and move the
 * blocks onto the temporaries.
 * The state lives per thread between wh_cdev_stage and the end of that one
 * call.  With no non-host memory registered, the hooks cost one load. */
#ifndef WH_MPI_COLL_DEV_H
#define WH_MPI_COLL_DEV_H
#include "coll/sched.h"
#include "mem/mem.h"

enum { WH_CDEV_IN = 1, WH_CDEV_OUT = 2, WH_CDEV_INOUT = 3 };

typedef struct wh_cdev_b {
    void *var;       /* address of the caller's pointer variable */
    char *user;      /* the device buffer (as passed) */
    char *host;      /* the temporary (its byte 0 is user + lo) */
    MPI_Aint lo, hi; /* bytes touched, relative to user */
    int kind, dir;
} wh_cdev_b_t;

typedef struct wh_cdev {
    int n;      /* declared device buffers */
    int staged; /* blocking: temporaries in place, wh_coll_done finishes */
    wh_cdev_b_t b[3];
} wh_cdev_t;

extern _Thread_local wh_cdev_t wh_cdev_cur;

#define WH_CDEV_ON() __builtin_expect(wh_mem_nonhost, 0)

/* declare *var (a `void *` or `const void *` variable) holding count
 * elements of dt; out-only buffers with holes are copied in too */
void wh_cdev_buf(void *var, MPI_Count count, const wh_dtype_t *dt, int dir);
/* n blocks of counts[i] elements at displs[i] (elements of dt, or bytes with
 * per-block types dts when dts is not NULL) */
void wh_cdev_bufv(void *var, int n, const MPI_Count *counts, const MPI_Aint *displs, const wh_dtype_t *dt,
                  wh_dtype_t *const *dts, int dir);
/* the bytes [*lo, *hi) that count elements of dt at byte offset `at` touch */
void wh_cdev_bounds(const wh_dtype_t *dt, MPI_Count count, MPI_Aint at, MPI_Aint *lo, MPI_Aint *hi);
/* declare *var with the bytes [lo, hi) relative to it (for layouts the
 * helpers above do not describe: neighbourhood blocks) */
void wh_cdev_range(void *var, MPI_Aint lo, MPI_Aint hi, int dir);
/* Stage the declared buffers for a call completing as nb (NULL: blocking; c
 * may be NULL outside communicators).  Raises and returns errors. */
int wh_cdev_stage(const char *fname, wh_comm_t *c, const void *nb);
/* blocking: copy outputs back, free, clear; returns rc or the copy's error */
int wh_cdev_finish(int rc);
/* schedules (coll_nbc.c): after creation / before commit; drop: forget */
void wh_cdev_sched_begin(wh_sched_t *s);
void wh_cdev_sched_end(wh_sched_t *s);
void wh_cdev_drop(void);

/* the hook of an entry: declare buffers (decls), stage, return on error */
#define WH_CDEV_STAGE(fname, c, nb, decls)                                                        \
    do {                                                                                          \
        if (WH_CDEV_ON()) {                                                                       \
            decls;                                                                                \
            int wh_crc_ = wh_cdev_stage((fname), (c), (nb));                                      \
            if (wh_crc_)                                                                          \
                return wh_crc_;                                                                   \
        }                                                                                         \
    } while (0)
/* declare only: the call runs a schedule, whose creation stages (wh_nbc_begin) */
#define WH_CDEV_DECL(decls)                                                                       \
    do {                                                                                          \
        if (WH_CDEV_ON()) {                                                                       \
            decls;                                                                                \
        }                                                                                         \
    } while (0)
#endif
