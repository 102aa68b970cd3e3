/* MPI one-sided entry points: the operations (Put, Get, Accumulate,
 * Get_accumulate, Fetch_and_op, Compare_and_swap, the request-based R*
 * variants; int and _c) and synchronization (fence, lock/unlock, lock_all,
 * flush*, post/start/complete/wait/test, sync).  Errors go to the window's
 * error handler. */
#include "mpi/api.h"
#include "mpi/reqapi.h"
#include "mpi/rma_dev.h"
#include "rma/rma.h"

static int chk_dt(wh_win_t *w, const char *fname, MPI_Count count, MPI_Datatype h, const char *what,
                  wh_dtype_t **dt)
{
    if (count < 0)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_COUNT, "negative %s count %lld", what, (long long)count));
    int rc = wh_dtype_check_comm(h, dt);
    return rc ? wh_raise_win(w, fname, rc) : MPI_SUCCESS;
}

static int chk_target(wh_win_t *w, const char *fname, int rank)
{
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size_c))
        return wh_raise_win(w, fname, wh_error(MPI_ERR_RANK, "target rank %d is not in the window's group of %d",
                                               rank, w->size_c));
    return MPI_SUCCESS;
}

static int chk_op(wh_win_t *w, const char *fname, MPI_Op oph, wh_op_t **op)
{
    *op = wh_op_get(oph);
    if (!*op)
        return wh_raise_win(w, fname, wh_error(MPI_ERR_OP, "op 0x%x is not a valid operation", (unsigned)oph));
    return MPI_SUCCESS;
}

/* no origin or result description (e.g. the origin of MPI_NO_OP) */
#define NO_DT ((MPI_Datatype)0x7fffffff)

/* one operation: a (kind, target, disp) filled by the caller, the rest here */
/* MPI_Compare_and_swap: a predefined C or Fortran integer, logical,
 * multi-language (MPI_AINT, MPI_OFFSET, MPI_COUNT), byte or (as MPICH)
 * character type; not floating point, complex, pairs or derived types */
static int cas_type_ok(const wh_dtype_t *t)
{
    if (!t->predefined)
        return 0;
    switch (t->basic) {
    case WH_BT_NONE: case WH_BT_FLOAT: case WH_BT_DOUBLE: case WH_BT_LDOUBLE: case WH_BT_CFLOAT:
    case WH_BT_CDOUBLE: case WH_BT_CLDOUBLE: case WH_BT_PACKED: case WH_BT_FLOAT16:
        return 0;
    default:
        return t->basic < WH_BT_FLOAT_INT;
    }
}

static int issue(const char *fname, MPI_Win win, wh_rma_args_t *a, MPI_Datatype oh, MPI_Datatype rh, MPI_Datatype th,
                 MPI_Op oph, MPI_Request *request)
{
    wh_win_t *w;
    int rc = wh_win_arg(fname, win, &w);
    if (rc)
        return rc;
    if ((rc = chk_target(w, fname, a->target)))
        return rc;
    if (oh != NO_DT && (rc = chk_dt(w, fname, a->ocount, oh, "origin", &a->odt)))
        return rc;
    if (rh != NO_DT && (rc = chk_dt(w, fname, a->rcount, rh, "result", &a->rdt)))
        return rc;
    if ((rc = chk_dt(w, fname, a->tcount, th, "target", &a->tdt)))
        return rc;
    if ((a->kind == WH_RMA_ACC || a->kind == WH_RMA_GACC) && (rc = chk_op(w, fname, oph, &a->op)))
        return rc;
    if (a->kind == WH_RMA_CAS && !cas_type_ok(a->odt))
        return wh_raise_win(w, fname, wh_error(MPI_ERR_TYPE, "datatype %s of MPI_Compare_and_swap is not a predefined "
                                               "integer, logical, byte or multi-language type",
                                               a->odt->name[0] ? a->odt->name : "(derived)"));
    wh_req_t *r = NULL;
    rc = __builtin_expect(wh_mem_nonhost, 0) ? wh_rma_op_dev(w, a, request ? &r : NULL) /* device buffers */
                                              : wh_rma_op(w, a, request ? &r : NULL);
    if (rc)
        return wh_raise_win(w, fname, rc);
    if (request)
        *request = r->obj.handle;
    return MPI_SUCCESS;
}

#define CHK_REQ(fname, win, request)                                                              \
    do {                                                                                          \
        if (!(request))                                                                           \
            return wh_raise_comm(NULL, (fname), wh_error(MPI_ERR_ARG, "request is NULL"));        \
    } while (0)

/* ---------- put / get ---------- */

static int put(const char *fname, const void *oa, MPI_Count oc, MPI_Datatype odt, int tr, MPI_Aint td, MPI_Count tc,
               MPI_Datatype tdt, MPI_Win win, MPI_Request *req)
{
    wh_rma_args_t a = {.kind = WH_RMA_PUT, .obuf = oa, .ocount = oc, .target = tr, .disp = td, .tcount = tc};
    return issue(fname, win, &a, odt, NO_DT, tdt, MPI_OP_NULL, req);
}

static int get(const char *fname, void *oa, MPI_Count oc, MPI_Datatype odt, int tr, MPI_Aint td, MPI_Count tc,
               MPI_Datatype tdt, MPI_Win win, MPI_Request *req)
{
    wh_rma_args_t a = {.kind = WH_RMA_GET, .rbuf = oa, .rcount = oc, .target = tr, .disp = td, .tcount = tc};
    return issue(fname, win, &a, NO_DT, odt, tdt, MPI_OP_NULL, req);
}

static int body_Put(const char *fname, const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                    MPI_Win win)
{
    return put(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, NULL);
}

static int body_Rput(const char *fname, const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                     MPI_Win win, MPI_Request *request)
{
    CHK_REQ(fname, win, request);
    return put(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, request);
}

static int body_Get(const char *fname, void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                    MPI_Win win)
{
    return get(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, NULL);
}

static int body_Rget(const char *fname, void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                     MPI_Win win, MPI_Request *request)
{
    CHK_REQ(fname, win, request);
    return get(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, win, request);
}

/* ---------- accumulates ---------- */

static int acc(const char *fname, const void *oa, MPI_Count oc, MPI_Datatype odt, int tr, MPI_Aint td, MPI_Count tc,
               MPI_Datatype tdt, MPI_Op op, MPI_Win win, MPI_Request *req)
{
    wh_rma_args_t a = {.kind = WH_RMA_ACC, .obuf = oa, .ocount = oc, .target = tr, .disp = td, .tcount = tc};
    if (op == MPI_NO_OP) /* changes nothing and returns nothing */
        a.kind = WH_RMA_GACC;
    return issue(fname, win, &a, op == MPI_NO_OP ? NO_DT : odt, NO_DT, tdt, op, req);
}

static int gacc(const char *fname, const void *oa, MPI_Count oc, MPI_Datatype odt, void *ra, MPI_Count rc,
                MPI_Datatype rdt, int tr, MPI_Aint td, MPI_Count tc, MPI_Datatype tdt, MPI_Op op, MPI_Win win,
                MPI_Request *req)
{
    wh_rma_args_t a = {.kind = WH_RMA_GACC, .obuf = oa, .ocount = oc, .rbuf = ra, .rcount = rc, .target = tr,
                       .disp = td, .tcount = tc};
    return issue(fname, win, &a, op == MPI_NO_OP ? NO_DT : odt, rdt, tdt, op, req);
}

static int body_Accumulate(const char *fname, const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, NULL);
}

static int body_Raccumulate(const char *fname, const void *origin_addr, MPI_Count origin_count,
                            MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                            MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                            MPI_Request *request)
{
    CHK_REQ(fname, win, request);
    return acc(fname, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, request);
}

static int body_Get_accumulate(const char *fname, const void *origin_addr, MPI_Count origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                               MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                               MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return gacc(fname, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, NULL);
}

static int body_Rget_accumulate(const char *fname, const void *origin_addr, MPI_Count origin_count,
                                MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                                MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                                MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                MPI_Request *request)
{
    CHK_REQ(fname, win, request);
    return gacc(fname, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, request);
}

static int body_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                             MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    return gacc("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
                datatype, op, win, NULL);
}

static int body_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                 MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    wh_rma_args_t a = {.kind = WH_RMA_CAS, .obuf = origin_addr, .ocount = 1, .cbuf = compare_addr,
                       .rbuf = result_addr, .rcount = 1, .target = target_rank, .disp = target_disp, .tcount = 1};
    return issue("MPI_Compare_and_swap", win, &a, datatype, NO_DT, datatype, MPI_OP_NULL, NULL);
}

/* ---------- synchronization ---------- */

#define WIN_ENTRY(fname, win, w)                                                                  \
    wh_win_t *w;                                                                                  \
    do {                                                                                          \
        int rc_ = wh_win_arg((fname), (win), &w);                                                 \
        if (rc_)                                                                                  \
            return rc_;                                                                           \
    } while (0)

static int done(wh_win_t *w, const char *fname, int rc)
{
    return rc ? wh_raise_win(w, fname, rc) : MPI_SUCCESS;
}

static int body_Win_fence(int assert, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_fence", win, w);
    return done(w, "MPI_Win_fence", wh_win_fence(w, assert));
}

static int body_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_lock", win, w);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return done(w, "MPI_Win_lock", wh_error(MPI_ERR_LOCKTYPE, "lock_type %d is neither MPI_LOCK_SHARED nor "
                                                                  "MPI_LOCK_EXCLUSIVE", lock_type));
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = chk_target(w, "MPI_Win_lock", rank);
    return rc ? rc : done(w, "MPI_Win_lock", wh_win_lock(w, lock_type, rank, assert));
}

static int body_Win_unlock(int rank, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_unlock", win, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = chk_target(w, "MPI_Win_unlock", rank);
    return rc ? rc : done(w, "MPI_Win_unlock", wh_win_unlock(w, rank));
}

static int body_Win_lock_all(int assert, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_lock_all", win, w);
    return done(w, "MPI_Win_lock_all", wh_win_lock_all(w, assert));
}

static int body_Win_unlock_all(MPI_Win win)
{
    WIN_ENTRY("MPI_Win_unlock_all", win, w);
    return done(w, "MPI_Win_unlock_all", wh_win_unlock_all(w));
}

#define ALL_TARGETS (-1000) /* not MPI_PROC_NULL */

static int flush(const char *fname, MPI_Win win, int rank, int local)
{
    WIN_ENTRY(fname, win, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank >= 0) {
        int rc = chk_target(w, fname, rank);
        if (rc)
            return rc;
    }
    if (!w->lock_all && (rank < 0 ? !w->nlocked : !w->lock_mode[rank]))
        return done(w, fname, wh_error(MPI_ERR_RMA_SYNC, "%s outside a passive-target epoch (MPI_Win_lock or "
                                                         "MPI_Win_lock_all) %s", fname,
                                       rank < 0 ? "" : "to that rank"));
    return done(w, fname, wh_win_flush(w, rank < 0 ? -1 : rank, local));
}

static int body_Win_flush(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush", win, rank, 0);
}

static int body_Win_flush_all(MPI_Win win)
{
    return flush("MPI_Win_flush_all", win, ALL_TARGETS, 0);
}

static int body_Win_flush_local(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush_local", win, rank, 1);
}

static int body_Win_flush_local_all(MPI_Win win)
{
    return flush("MPI_Win_flush_local_all", win, ALL_TARGETS, 1);
}

static int group_arg(wh_win_t *w, const char *fname, MPI_Group h, wh_group_t **g)
{
    if ((*g = wh_group_get(h)))
        return MPI_SUCCESS;
    return wh_raise_win(w, fname, wh_error(MPI_ERR_GROUP, "group 0x%x is not a valid group", (unsigned)h));
}

static int body_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_post", win, w);
    wh_group_t *g;
    int rc = group_arg(w, "MPI_Win_post", group, &g);
    return rc ? rc : done(w, "MPI_Win_post", wh_win_post(w, g, assert));
}

static int body_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    WIN_ENTRY("MPI_Win_start", win, w);
    wh_group_t *g;
    int rc = group_arg(w, "MPI_Win_start", group, &g);
    return rc ? rc : done(w, "MPI_Win_start", wh_win_start(w, g, assert));
}

static int body_Win_complete(MPI_Win win)
{
    WIN_ENTRY("MPI_Win_complete", win, w);
    return done(w, "MPI_Win_complete", wh_win_complete(w));
}

static int body_Win_wait(MPI_Win win)
{
    WIN_ENTRY("MPI_Win_wait", win, w);
    return done(w, "MPI_Win_wait", wh_win_wait(w, 0, NULL));
}

static int body_Win_test(MPI_Win win, int *flag)
{
    WIN_ENTRY("MPI_Win_test", win, w);
    if (!flag)
        return done(w, "MPI_Win_test", wh_error(MPI_ERR_ARG, "flag is NULL"));
    int rc = wh_win_wait(w, 1, flag);
    if (rc == MPI_SUCCESS && !*flag)
        wh_test_idle();
    return done(w, "MPI_Win_test", rc);
}

static int body_Win_sync(MPI_Win win)
{
    WIN_ENTRY("MPI_Win_sync", win, w);
    (void)w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    wh_progress();
    return MPI_SUCCESS;
}

#include "entry/rma.h"
