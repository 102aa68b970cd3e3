/* One-sided driver of the benchmark suite (put/get/accumulate latency and
 * bandwidth with fence or lock/flush); included at the end of common.h. */
#ifndef WB_RMA_H
#define WB_RMA_H
/* ------------------------------------------------------------------------ */
/* One-sided driver                                                         */
/* ------------------------------------------------------------------------ */

enum wb_rma_op { WB_PUT, WB_GET, WB_ACC, WB_FOP };
enum wb_rma_kind { WB_LAT, WB_BW };

struct wb_rma {
    MPI_Comm comm; /* ranks 0 and 1 (MPI_COMM_NULL elsewhere) */
    MPI_Win win;
    char *base;          /* window memory */
    struct wb_mem wmem;  /* window memory for MPI_Win_create */
    struct wb_mem local; /* origin buffer */
    size_t bytes;
};

/* One operation of count elements from/to local to disp in the peer's window. */
static inline int wb_rma_issue(enum wb_rma_op op, struct wb_rma *r, void *local, int count, MPI_Aint disp)
{
    int peer = 1 - wb.rank;
    switch (op) {
    case WB_PUT:
        return MPI_Put(local, count, MPI_BYTE, peer, disp, count, MPI_BYTE, r->win);
    case WB_GET:
        return MPI_Get(local, count, MPI_BYTE, peer, disp, count, MPI_BYTE, r->win);
    case WB_FOP: /* one int64 (count is 1); the result lands after the operand */
        return MPI_Fetch_and_op(local, (char *)local + sizeof(int64_t), MPI_INT64_T, peer, disp, MPI_SUM, r->win);
    default:
        return MPI_Accumulate(local, count, MPI_INT, peer, disp, count, MPI_INT, MPI_SUM, r->win);
    }
}

static inline const char *wb_rma_name(enum wb_rma_op op)
{
    return op == WB_PUT ? "MPI_Put" : op == WB_GET ? "MPI_Get" : op == WB_ACC ? "MPI_Accumulate" : "MPI_Fetch_and_op";
}

struct wb_rma_status {
    int bad;
    char msg[MPI_MAX_ERROR_STRING + 96];
};

static inline void wb_rma_note(struct wb_rma_status *st, const char *call, int rc)
{
    if (rc == MPI_SUCCESS || st->bad)
        return;
    char s[MPI_MAX_ERROR_STRING + 1];
    wb_errstr(rc, s, sizeof s);
    st->bad = 1;
    if (strstr(s, call)) /* wharf's message already names the function */
        snprintf(st->msg, sizeof st->msg, "%s", s);
    else
        snprintf(st->msg, sizeof st->msg, "%s: %s", call, s);
}

/* Collective over MPI_COMM_WORLD.  Creates the window of ranks 0 and 1 and
 * probes one epoch of the chosen synchronization with one operation, all
 * under MPI_ERRORS_RETURN.  Returns 1 if one-sided works; otherwise rank 0
 * prints "# SKIPPED: ..." and it returns 0.  Ranks 2.. get comm = MPI_COMM_NULL. */
static inline int wb_rma_open(struct wb_rma *r, size_t bytes, enum wb_rma_op op)
{
    memset(r, 0, sizeof *r);
    r->comm = MPI_COMM_NULL;
    r->win = MPI_WIN_NULL;
    r->bytes = bytes < wb_pagesize() ? wb_pagesize() : bytes;
    /* wharf's unimplemented functions raise their error on MPI_COMM_WORLD's
     * handler, other libraries on the window communicator's: set both. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Comm_split(MPI_COMM_WORLD, wb.rank < 2 ? 0 : MPI_UNDEFINED, wb.rank, &r->comm);
    if (rc != MPI_SUCCESS)
        wb_mpi_fail("MPI_Comm_split", rc);
    int ok = 1;
    if (r->comm != MPI_COMM_NULL) {
        struct wb_rma_status st = {0, ""}, peer_st;
        MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_RETURN);
        r->local = wb_alloc(r->bytes);
        if (wb.o.win_alloc) {
            rc = MPI_Win_allocate((MPI_Aint)r->bytes, 1, MPI_INFO_NULL, r->comm, &r->base, &r->win);
            wb_rma_note(&st, "MPI_Win_allocate", rc);
            if (rc == MPI_SUCCESS && r->base)
                memset(r->base, 0, r->bytes);
        } else {
            r->wmem = wb_alloc(r->bytes);
            r->base = r->wmem.p;
            rc = MPI_Win_create(r->base, (MPI_Aint)r->bytes, 1, MPI_INFO_NULL, r->comm, &r->win);
            wb_rma_note(&st, "MPI_Win_create", rc);
        }
        int created = rc == MPI_SUCCESS;
        if (created)
            wb_rma_note(&st, "MPI_Win_set_errhandler", MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN));
        /* agree on creation before anything that could block on the peer */
        wb_pair_exchange(&st, &peer_st, (int)sizeof st);
        int both_created = !st.bad && !peer_st.bad;
        if (both_created) {
            /* one probe epoch: a 1-element operation from rank 0 */
            int count = 1;
            if (wb.o.sync == WB_SYNC_FENCE) {
                wb_rma_note(&st, "MPI_Win_fence", MPI_Win_fence(0, r->win));
                if (wb.rank == 0)
                    wb_rma_note(&st, wb_rma_name(op), wb_rma_issue(op, r, r->local.p, count, 0));
                wb_rma_note(&st, "MPI_Win_fence", MPI_Win_fence(0, r->win));
            } else if (wb.rank == 0) {
                wb_rma_note(&st, "MPI_Win_lock", MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r->win));
                wb_rma_note(&st, wb_rma_name(op), wb_rma_issue(op, r, r->local.p, count, 0));
                wb_rma_note(&st, "MPI_Win_flush", MPI_Win_flush(1, r->win));
                wb_rma_note(&st, "MPI_Win_unlock", MPI_Win_unlock(1, r->win));
            }
            wb_pair_exchange(&st, &peer_st, (int)sizeof st);
        }
        if (st.bad || peer_st.bad) {
            ok = 0;
            if (wb.rank == 0) {
                const char *m = st.bad ? st.msg : peer_st.msg;
                printf("# SKIPPED: one-sided communication not available: %s%s\n", m,
                       st.bad ? "" : " (on rank 1)");
                fflush(stdout);
            }
            if (both_created)
                MPI_Win_free(&r->win); /* errors ignored */
            wb_free(&r->wmem);
            wb_free(&r->local);
            MPI_Comm_free(&r->comm);
        } else {
            MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_ARE_FATAL);
        }
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* ranks 2.. learn nothing; they only wait in the final barrier */
    if (!ok)
        wb.skipped = 1;
    return ok;
}

static inline void wb_rma_close(struct wb_rma *r)
{
    if (r->comm == MPI_COMM_NULL)
        return;
    WB_CHECK(MPI_Win_free(&r->win));
    wb_free(&r->wmem);
    wb_free(&r->local);
    MPI_Comm_free(&r->comm);
}

/* Accumulate validation: origin element k in iteration it is (7k + it) mod 61 + 1. */
static inline int wb_aval(size_t k, long it)
{
    return (int)((k * 7 + (size_t)it) % 61) + 1;
}

/* The one-sided benchmarks: rank 0 is the origin, rank 1 the target.
 *   fence: MPI_Win_fence opens the epoch; each iteration issues the
 *          operation(s) and closes with MPI_Win_fence (both ranks).
 *   lock:  rank 0 locks rank 1 (MPI_LOCK_SHARED) once per size; each
 *          iteration issues the operation(s) and MPI_Win_flush.
 * WB_LAT: one operation per iteration, reports microseconds per iteration.
 * WB_BW:  WINDOW operations per iteration to distinct slots, reports MB/s. */
static inline int wb_rma_main(enum wb_rma_op op, enum wb_rma_kind kind)
{
    wb_require_pair();
    int W = kind == WB_BW ? wb.o.window : 1;
    struct wb_rma r;
    if (!wb_rma_open(&r, wb_slot_bytes(W), op))
        return wb_finish_pair();
    if (r.comm != MPI_COMM_NULL) {
        int me = wb.rank, fence = wb.o.sync == WB_SYNC_FENCE;
        size_t elem = op == WB_ACC ? sizeof(int) : op == WB_FOP ? sizeof(int64_t) : 1;
        char what[160];
        WB_FOR_SIZES(s) {
            if (s < elem || (op == WB_FOP && s != elem))
                continue;
            int it = wb_iters(s), wu = wb_warmup(s), total = it + wu;
            int ns = wb_slots(s, W), used = ns < W ? ns : W;
            size_t stride = wb_stride(s), count = s / elem;
            /* target side preparation (local access to its own window) */
            if (wb.o.validate && me == 1 && op != WB_PUT) {
                if (!fence)
                    WB_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, r.win));
                if (op == WB_GET)
                    for (int k = 0; k < used; k++)
                        wb_fill(r.base + (size_t)k * stride, s, wb_seed(1, 0, k, s));
                else
                    memset(r.base, 0, s);
                if (!fence)
                    WB_CHECK(MPI_Win_unlock(me, r.win));
            }
            wb_pair_sync();
            if (fence)
                WB_CHECK(MPI_Win_fence(0, r.win));
            else if (me == 0)
                WB_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, r.win));
            double t0 = MPI_Wtime();
            for (int i = 0; i < total; i++) {
                if (me == 0) {
                    if (i == wu)
                        t0 = MPI_Wtime();
                    if (wb.o.validate) {
                        if (op == WB_PUT)
                            for (int k = 0; k < used; k++)
                                wb_fill(r.local.p + (size_t)k * stride, s, wb_seed(0, i, k, s));
                        else if (op == WB_GET)
                            memset(r.local.p, 0, (size_t)used * stride);
                        else if (op == WB_FOP) {
                            int64_t one = 1;
                            memcpy(r.local.p, &one, sizeof one);
                        } else
                            for (size_t k = 0; k < count; k++) {
                                int v = wb_aval(k, i);
                                memcpy(r.local.p + k * sizeof v, &v, sizeof v);
                            }
                    }
                    for (int j = 0; j < W; j++) {
                        MPI_Aint off = (MPI_Aint)((size_t)(j % ns) * stride);
                        int rc = wb_rma_issue(op, &r, r.local.p + off, (int)count, off);
                        if (rc != MPI_SUCCESS)
                            wb_mpi_fail(wb_rma_name(op), rc);
                    }
                    if (!fence)
                        WB_CHECK(MPI_Win_flush(1, r.win));
                }
                if (fence)
                    WB_CHECK(MPI_Win_fence(0, r.win));
                if (me == 0 && wb.o.validate && op == WB_GET)
                    for (int k = 0; k < used; k++) {
                        snprintf(what, sizeof what, "MPI_Get size %zu iteration %d slot %d", s, i, k);
                        wb_check(r.local.p + (size_t)k * stride, s, wb_seed(1, 0, k, s), what);
                    }
            }
            double t = MPI_Wtime() - t0;
            if (!fence && me == 0)
                WB_CHECK(MPI_Win_unlock(1, r.win));
            wb_pair_sync();
            /* target side checks of what the origin wrote */
            if (wb.o.validate && me == 1 && op != WB_GET) {
                if (!fence)
                    WB_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, r.win));
                if (op == WB_FOP) {
                    int64_t v;
                    memcpy(&v, r.base, sizeof v);
                    wb.checks++;
                    if (v != (int64_t)total * W)
                        wb_report("MPI_Fetch_and_op after %d iterations: target holds %lld, expected %lld", total,
                                  (long long)v, (long long)total * W);
                } else if (op == WB_PUT) {
                    for (int k = 0; k < used; k++) {
                        snprintf(what, sizeof what, "MPI_Put size %zu slot %d (after %d iterations)", s, k, total);
                        wb_check(r.base + (size_t)k * stride, s, wb_seed(0, total - 1, k, s), what);
                    }
                } else {
                    long exp_table[61];
                    for (int b = 0; b < 61; b++) {
                        long sum = 0;
                        for (long x = 0; x < total; x++)
                            sum += (long)((b + x) % 61) + 1;
                        exp_table[b] = sum;
                    }
                    size_t bad = 0, first = 0;
                    int got = 0;
                    wb.checks++;
                    for (size_t k = 0; k < count; k++) {
                        int v;
                        memcpy(&v, r.base + k * sizeof v, sizeof v);
                        if ((long)v != exp_table[(k * 7) % 61] && !bad++) {
                            first = k;
                            got = v;
                        }
                    }
                    if (bad)
                        wb_report("MPI_Accumulate size %zu after %d iterations: %zu of %zu ints wrong, "
                                  "first [%zu] = %d, expected %ld",
                                  s, total, bad, count, first, got, exp_table[(first * 7) % 61]);
                }
                if (!fence)
                    WB_CHECK(MPI_Win_unlock(me, r.win));
            }
            if (me == 0) {
                if (kind == WB_LAT)
                    wb_row(s, t * 1e6 / it);
                else
                    wb_row(s, (double)s * W * it / 1e6 / t);
            }
        }
        wb_rma_close(&r);
    }
    return wb_finish_pair();
}

#endif /* WB_RMA_H */
