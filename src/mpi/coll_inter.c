/* Collectives on intercommunicators (MPI-4.1 6.2.2 and the per-call rules):
 * argument checks and dispatch to the schedule builders of src/coll/inter.c.
 * The blocking, nonblocking and persistent forms run the same schedule; the
 * blocking one waits for it.  The shared entry functions of coll.c and
 * coll2.c hand an intercommunicator here first (wh_mci_comm).
 *
 * On an intercommunicator, counts and buffers that describe "every rank"
 * describe the remote group (c->size), MPI_IN_PLACE is never allowed (the
 * buffer checks reject it: MPI_ERR_BUFFER), rooted calls take MPI_ROOT /
 * MPI_PROC_NULL / a remote rank, and MPI_Scan/MPI_Exscan are not defined
 * (MPI_ERR_COMM).
 *
 * Device buffers: every call runs a schedule, so each declares its
 * significant buffers (WH_CDEV_DECL) and the schedule's creation stages them
 * through host temporaries (coll_dev.h). */
#include <stdlib.h>

#include "coll/inter.h"
#include "mpi/coll_nbc.h"
#include "mpi/reqapi.h"

wh_comm_t *wh_mci_comm(MPI_Comm comm)
{
    wh_comm_t *c = wh_comm_get(comm);
    return c && c->is_inter ? c : NULL;
}

/* blocking: build into a request of our own and wait for it */
static int run(const char *fname, wh_comm_t *c, const wh_nbc_t *nb, wh_sched_t *s, int build_rc)
{
    MPI_Request h = MPI_REQUEST_NULL;
    wh_nbc_t own = {&h, 0};
    int rc = wh_nbc_post(fname, s, nb ? nb : &own, build_rc);
    if (rc || nb)
        return rc;
    wh_req_t *r = wh_req_get(h);
    wh_req_wait_done(r);
    c->obj.refs++; /* the handler may run on c after the request let go of it */
    rc = wh_req_finish(r, &h, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        rc = wh_raise_comm(c, fname, rc);
    wh_comm_release(c);
    return rc;
}

/* a schedule for c (blocking calls: with a request made here) */
static int begin(const char *fname, wh_comm_t *c, const wh_nbc_t *nb, wh_sched_t **sp)
{
    MPI_Request dummy;
    wh_nbc_t own = {&dummy, 0};
    return wh_nbc_begin(fname, c, nb ? nb : &own, sp);
}

#define WH_INTER_RUN(fname, c, nb, build)                                                         \
    do {                                                                                          \
        wh_sched_t *s;                                                                            \
        int wh_rc_ = begin((fname), (c), (nb), &s);                                               \
        return wh_rc_ ? wh_rc_ : run((fname), (c), (nb), s, (build));                             \
    } while (0)

static int check_root(const char *fname, wh_comm_t *c, int root)
{
    if (root == MPI_ROOT || root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((unsigned)root >= (unsigned)c->size)
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_ROOT,
                                      "root %d is invalid on an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank "
                                      "of the remote group (0..%d)",
                                      root, c->size - 1));
    return MPI_SUCCESS;
}

/* n blocks (counts NULL: count each; else counts[] with displs[]) */
static int check_blocks(const char *fname, wh_comm_t *c, const void *buf, int n, const MPI_Count *counts,
                        MPI_Count count, const MPI_Aint *displs, MPI_Datatype dth, wh_dtype_t **dtp, const char *cname,
                        const char *dname, const char *bname)
{
    int rc;
    if (!counts)
        return wh_collchk_buf(fname, c, buf, count * n, dth, dtp, cname, bname);
    if ((rc = wh_collchk_counts(fname, c, counts, n, cname)) || (rc = wh_collchk_ptr(fname, c, displs, dname)))
        return rc;
    MPI_Count maxc = 0;
    for (int i = 0; i < n; i++)
        maxc = counts[i] > maxc ? counts[i] : maxc;
    return wh_collchk_buf(fname, c, buf, buf ? maxc : 0, dth, dtp, cname, bname);
}

/* device buffers: n blocks (counts NULL: count each, contiguous) */
static void blocks_decl(void *var, int n, const MPI_Count *counts, MPI_Count count, const MPI_Aint *displs,
                        const wh_dtype_t *dt, int dir)
{
    if (counts)
        wh_cdev_bufv(var, n, counts, displs, dt, NULL, dir);
    else
        wh_cdev_buf(var, count * n, dt, dir);
}

int wh_mci_barrier(const char *fname, const wh_nbc_t *nb, wh_comm_t *c)
{
    WH_INTER_RUN(fname, c, nb, wh_isched_barrier(s));
}

int wh_mci_bcast(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dth,
                 int root)
{
    wh_dtype_t *dt = NULL;
    int rc;
    if ((rc = check_root(fname, c, root)) ||
        (root != MPI_PROC_NULL && (rc = wh_collchk_buf(fname, c, buf, count, dth, &dt, "count", "buffer"))))
        return rc;
    WH_CDEV_DECL(root != MPI_PROC_NULL ? wh_cdev_buf(&buf, count, dt, root == MPI_ROOT ? WH_CDEV_IN : WH_CDEV_OUT)
                                       : (void)0);
    WH_INTER_RUN(fname, c, nb, wh_isched_bcast(s, buf, count, dt, root));
}

int wh_mci_gatherv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                   MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs,
                   MPI_Datatype rtype, int root)
{
    wh_dtype_t *sdt = NULL, *rdt = NULL;
    int rc;
    if ((rc = check_root(fname, c, root)))
        return rc;
    if (root == MPI_ROOT)
        rc = check_blocks(fname, c, rbuf, c->size, rcounts, rcount, displs, rtype, &rdt,
                          rcounts ? "recvcounts" : "recvcount", "displs", "recvbuf");
    else if (root != MPI_PROC_NULL)
        rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf");
    if (rc)
        return rc;
    WH_CDEV_DECL(root == MPI_ROOT ? blocks_decl(&rbuf, c->size, rcounts, rcount, displs, rdt, WH_CDEV_OUT)
                 : root != MPI_PROC_NULL ? wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN)
                                         : (void)0);
    WH_INTER_RUN(fname, c, nb, wh_isched_gatherv(s, sbuf, scount, sdt, rbuf, rcounts, rcount, displs, rdt, root));
}

int wh_mci_scatterv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, const MPI_Count *scounts,
                    MPI_Count scount, const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, int root)
{
    wh_dtype_t *sdt = NULL, *rdt = NULL;
    int rc;
    if ((rc = check_root(fname, c, root)))
        return rc;
    if (root == MPI_ROOT)
        rc = check_blocks(fname, c, sbuf, c->size, scounts, scount, displs, stype, &sdt,
                          scounts ? "sendcounts" : "sendcount", "displs", "sendbuf");
    else if (root != MPI_PROC_NULL)
        rc = wh_collchk_buf(fname, c, rbuf, rcount, rtype, &rdt, "recvcount", "recvbuf");
    if (rc)
        return rc;
    WH_CDEV_DECL(root == MPI_ROOT ? blocks_decl(&sbuf, c->size, scounts, scount, displs, sdt, WH_CDEV_IN)
                 : root != MPI_PROC_NULL ? wh_cdev_buf(&rbuf, rcount, rdt, WH_CDEV_OUT)
                                         : (void)0);
    WH_INTER_RUN(fname, c, nb, wh_isched_scatterv(s, sbuf, scounts, scount, displs, sdt, rbuf, rcount, rdt, root));
}

int wh_mci_allgatherv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                      MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, MPI_Count rcount,
                      const MPI_Aint *displs, MPI_Datatype rtype)
{
    wh_dtype_t *sdt, *rdt;
    int rc;
    if ((rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf")) ||
        (rc = check_blocks(fname, c, rbuf, c->size, rcounts, rcount, displs, rtype, &rdt,
                           rcounts ? "recvcounts" : "recvcount", "displs", "recvbuf")))
        return rc;
    WH_CDEV_DECL((wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN),
                  blocks_decl(&rbuf, c->size, rcounts, rcount, displs, rdt, WH_CDEV_OUT)));
    WH_INTER_RUN(fname, c, nb, wh_isched_allgatherv(s, sbuf, scount, sdt, rbuf, rcounts, rcount, displs, rdt));
}

/* one side of an all-to-all: counts NULL (count each), v (counts, displs in
 * elements, type) or w (counts, displs in bytes, types[]) */
typedef struct {
    const void *buf;
    const MPI_Count *counts;
    MPI_Count count;
    const MPI_Aint *displs;
    MPI_Datatype type;
    const MPI_Datatype *types;
    const char *bname, *cname, *dname, *tname;
} a2a_side_t;

/* check one side and describe it for the builder (w: *tv to free) */
static int a2a_side(const char *fname, wh_comm_t *c, const a2a_side_t *a, wh_sched_a2a_t *o, wh_dtype_t ***tv)
{
    int n = c->size, rc;
    *o = (wh_sched_a2a_t){.counts = a->counts, .count = a->count, .displs = a->displs};
    *tv = NULL;
    if (!a->types)
        return check_blocks(fname, c, a->buf, n, a->counts, a->count, a->displs, a->type, &o->type, a->cname,
                            a->dname, a->bname);
    if ((rc = wh_collchk_counts(fname, c, a->counts, n, a->cname)) ||
        (rc = wh_collchk_ptr(fname, c, a->displs, a->dname)) || (rc = wh_collchk_ptr(fname, c, a->types, a->tname)))
        return rc;
    wh_dtype_t **v = malloc(((size_t)n + 1) * sizeof *v);
    if (!v)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory for %d types", n));
    for (int j = 0; j < n; j++)
        if ((rc = wh_collchk_buf(fname, c, a->buf, a->counts[j], a->types[j], &v[j], a->cname, a->bname))) {
            free(v);
            return rc;
        }
    o->types = v;
    *tv = v;
    return MPI_SUCCESS;
}

static void a2a_decl(void *var, int n, const wh_sched_a2a_t *a, int dir)
{
    if (a->types)
        wh_cdev_bufv(var, n, a->counts, a->displs, NULL, a->types, dir);
    else
        blocks_decl(var, n, a->counts, a->count, a->displs, a->type, dir);
}

static int alltoall_any(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const a2a_side_t *sa,
                        const a2a_side_t *ra)
{
    wh_sched_a2a_t ss, rs;
    wh_dtype_t **sv, **rv;
    int rc = a2a_side(fname, c, sa, &ss, &sv);
    if (rc)
        return rc;
    if ((rc = a2a_side(fname, c, ra, &rs, &rv))) {
        free(sv);
        return rc;
    }
    const void *sb = sa->buf;
    void *rb = (void *)ra->buf;
    WH_CDEV_DECL((a2a_decl(&sb, c->size, &ss, WH_CDEV_IN), a2a_decl(&rb, c->size, &rs, WH_CDEV_OUT)));
    wh_sched_t *s;
    if (!(rc = begin(fname, c, nb, &s)))
        rc = run(fname, c, nb, s, wh_isched_alltoall(s, sb, &ss, rb, &rs));
    free(sv);
    free(rv);
    return rc;
}

int wh_mci_alltoall(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype)
{
    a2a_side_t sa = {.buf = sbuf, .count = scount, .type = stype, .bname = "sendbuf", .cname = "sendcount"};
    a2a_side_t ra = {.buf = rbuf, .count = rcount, .type = rtype, .bname = "recvbuf", .cname = "recvcount"};
    return alltoall_any(fname, nb, c, &sa, &ra);
}

int wh_mci_alltoallvw(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf,
                      const MPI_Count *scounts, const MPI_Aint *sdispls, MPI_Datatype stype,
                      const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                      MPI_Datatype rtype, const MPI_Datatype *rtypes)
{
    int rc;
    if ((rc = wh_collchk_ptr(fname, c, scounts, "sendcounts")) ||
        (rc = wh_collchk_ptr(fname, c, rcounts, "recvcounts")))
        return rc;
    a2a_side_t sa = {.buf = sbuf, .counts = scounts, .displs = sdispls, .type = stype,
                     .types = stypes, .bname = "sendbuf", .cname = "sendcounts", .dname = "sdispls",
                     .tname = "sendtypes"};
    a2a_side_t ra = {.buf = rbuf, .counts = rcounts, .displs = rdispls, .type = rtype,
                     .types = rtypes, .bname = "recvbuf", .cname = "recvcounts", .dname = "rdispls",
                     .tname = "recvtypes"};
    return alltoall_any(fname, nb, c, &sa, &ra);
}

/* reductions: type and op; sbuf checked when it is significant */
static int red_args(const char *fname, wh_comm_t *c, const void *sbuf, MPI_Count scount, int sig_s, void *rbuf,
                    MPI_Count rcount, int sig_r, MPI_Datatype dth, MPI_Op oph, wh_dtype_t **dtp, wh_op_t **opp)
{
    int rc;
    if (sig_s && (rc = wh_collchk_buf(fname, c, sbuf, scount, dth, dtp, "count", "sendbuf")))
        return rc;
    if (sig_r && (rc = wh_collchk_buf(fname, c, rbuf, rcount, dth, dtp, "count", "recvbuf")))
        return rc;
    return wh_collchk_op(fname, c, oph, *dtp, opp);
}

int wh_mci_reduce(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, void *rbuf,
                  MPI_Count count, MPI_Datatype dth, MPI_Op oph, int root)
{
    wh_dtype_t *dt = NULL;
    wh_op_t *op;
    int rc;
    if ((rc = check_root(fname, c, root)))
        return rc;
    if (root == MPI_PROC_NULL) /* no part in it */
        WH_INTER_RUN(fname, c, nb, wh_isched_reduce(s, sbuf, rbuf, count, root));
    if ((rc = red_args(fname, c, sbuf, count, root != MPI_ROOT, rbuf, count, root == MPI_ROOT, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_DECL(root == MPI_ROOT ? wh_cdev_buf(&rbuf, count, dt, WH_CDEV_OUT)
                                  : wh_cdev_buf(&sbuf, count, dt, WH_CDEV_IN));
    WH_INTER_RUN(fname, c, nb, (wh_sched_set_op(s, op, dth, dt), wh_isched_reduce(s, sbuf, rbuf, count, root)));
}

int wh_mci_allred(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, int which, const void *sbuf, void *rbuf,
                  MPI_Count count, MPI_Datatype dth, MPI_Op oph)
{
    wh_dtype_t *dt = NULL;
    wh_op_t *op;
    int rc;
    if (which != WH_RED_ALL)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COMM, "%s is not defined on intercommunicators", fname));
    if ((rc = red_args(fname, c, sbuf, count, 1, rbuf, count, 1, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_DECL((wh_cdev_buf(&sbuf, count, dt, WH_CDEV_IN), wh_cdev_buf(&rbuf, count, dt, WH_CDEV_OUT)));
    WH_INTER_RUN(fname, c, nb, (wh_sched_set_op(s, op, dth, dt), wh_isched_allreduce(s, sbuf, rbuf, count)));
}

/* rcounts: one per local rank; block: rcounts NULL, rcount each */
int wh_mci_redscat(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, void *rbuf,
                   const MPI_Count *rcounts, MPI_Count rcount, MPI_Datatype dth, MPI_Op oph)
{
    wh_dtype_t *dt = NULL;
    wh_op_t *op;
    int rc, nl = wh_comm_local_size(c);
    if (!rcounts && rcount < 0)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COUNT, "recvcount is negative (%lld)", (long long)rcount));
    if (rcounts && (rc = wh_collchk_counts(fname, c, rcounts, nl, "recvcounts")))
        return rc;
    MPI_Count *counts = malloc(((size_t)nl + 1) * sizeof *counts);
    if (!counts)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory for %d counts", nl));
    MPI_Count total = 0;
    for (int i = 0; i < nl; i++)
        total += counts[i] = rcounts ? rcounts[i] : rcount;
    if (!(rc = red_args(fname, c, sbuf, total, 1, rbuf, counts[c->rank], 1, dth, oph, &dt, &op))) {
        WH_CDEV_DECL((wh_cdev_buf(&sbuf, total, dt, WH_CDEV_IN),
                      wh_cdev_buf(&rbuf, counts[c->rank], dt, WH_CDEV_OUT)));
        wh_sched_t *s;
        if (!(rc = begin(fname, c, nb, &s))) {
            wh_sched_set_op(s, op, dth, dt);
            rc = run(fname, c, nb, s, wh_isched_reduce_scatter(s, sbuf, rbuf, counts));
        }
    }
    free(counts);
    return rc;
}
