/* MPI collective entry points (part 1): the argument checks shared by all
 * collective calls, then barrier, broadcast, gather(v), scatter(v) and
 * allgather(v) with their large-count (_c) variants.  Reductions and
 * all-to-all are in coll2.c.
 *
 * Every call checks its arguments as the standard requires (only those
 * significant on the calling rank), then calls the selector of src/coll;
 * errors go to the communicator's error handler.  An intercommunicator
 * goes to coll_inter.c first (wh_mci_comm). */
#include <stdlib.h>

#include <stdio.h>

#include "coll/coll.h"
#include "mpi/coll_nbc.h"

/* ---------- argument checks ---------- */

int wh_collchk_comm(const char *fname, MPI_Comm comm, wh_comm_t **cp)
{
    wh_comm_t *c = wh_comm_get(comm);
    if (__builtin_expect(!c, 0)) {
        if (comm == MPI_COMM_NULL)
            return wh_raise_comm(NULL, fname, wh_error(MPI_ERR_COMM, "comm is MPI_COMM_NULL"));
        return wh_raise_comm(NULL, fname,
                             wh_error(MPI_ERR_COMM, "comm 0x%x is not a valid communicator (freed or never created)",
                                      (unsigned)comm));
    }
    if (__builtin_expect(c->is_inter, 0))
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_COMM, "%s is not defined on intercommunicators", fname));
    *cp = c;
    return MPI_SUCCESS;
}

int wh_collchk_root(const char *fname, wh_comm_t *c, int root)
{
    if (__builtin_expect((unsigned)root >= (unsigned)c->size, 0))
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_ROOT, "root %d is out of range: the communicator has %d ranks (0..%d)",
                                      root, c->size, c->size - 1));
    return MPI_SUCCESS;
}

int wh_collchk_buf(const char *fname, wh_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dth,
                   wh_dtype_t **dtp, const char *cname, const char *bname)
{
    if (__builtin_expect(count < 0, 0))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COUNT, "%s is negative (%lld)", cname, (long long)count));
    int rc = wh_dtype_check_comm(dth, dtp);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_raise_comm(c, fname, rc);
    const wh_dtype_t *dt = *dtp;
    size_t bytes;
    if (__builtin_expect((rc = wh_dtype_bytes_checked(dt, count, &bytes)) != MPI_SUCCESS, 0))
        return wh_raise_comm(c, fname, rc);
    if (__builtin_expect(buf == MPI_IN_PLACE, 0))
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed as %s of %s on this rank", bname, fname));
    /* MPI_BOTTOM (NULL) is legal with a derived type holding absolute addresses; the v/w
     * variants pass count 0 for a NULL buffer: their displacements may be absolute addresses */
    if (__builtin_expect(!buf && count > 0 && dt->size && (dt->predefined || dt->true_lb == 0), 0))
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_BUFFER, "%s is NULL but %s is %lld", bname, cname, (long long)count));
    return MPI_SUCCESS;
}

int wh_collchk_ptr(const char *fname, wh_comm_t *c, const void *p, const char *name)
{
    if (__builtin_expect(!p, 0))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_ARG, "%s is NULL", name));
    return MPI_SUCCESS;
}

int wh_collchk_counts(const char *fname, wh_comm_t *c, const MPI_Count *counts, int n, const char *name)
{
    int rc = wh_collchk_ptr(fname, c, counts, name);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        if (__builtin_expect(counts[i] < 0, 0))
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_COUNT, "%s[%d] is negative (%lld)", name, i,
                                                    (long long)counts[i]));
    return MPI_SUCCESS;
}

int wh_collchk_op(const char *fname, wh_comm_t *c, MPI_Op oph, const wh_dtype_t *dt, wh_op_t **opp)
{
    wh_op_t *op = wh_op_get(oph);
    if (__builtin_expect(!op, 0)) {
        if (oph == MPI_OP_NULL)
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_OP, "op is MPI_OP_NULL"));
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_OP, "op 0x%x is not a valid operation (freed or never created)",
                                      (unsigned)oph));
    }
    int rc = wh_op_check_reduce(op, dt);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
        return wh_raise_comm(c, fname, rc);
    *opp = op;
    return MPI_SUCCESS;
}

int wh_collchk_widen(const char *fname, wh_comm_t *c, int n, const int *ic, const int *id, wh_widen_t *w)
{
    wh_widen_none(w);
    MPI_Count *oc = w->cf;
    MPI_Aint *od = w->df;
    if (n > WH_WIDEN_FEW && (ic || id)) {
        size_t bytes = ((ic ? sizeof(MPI_Count) : 0) + (id ? sizeof(MPI_Aint) : 0)) * (size_t)n;
        if (!(w->mem = malloc(bytes)))
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory converting %d counts", n));
        oc = w->mem;
        od = (MPI_Aint *)(void *)((char *)w->mem + (ic ? sizeof(MPI_Count) * (size_t)n : 0));
    }
    if (ic) {
        for (int i = 0; i < n; i++)
            oc[i] = ic[i];
        w->c = oc;
    }
    if (id) {
        for (int i = 0; i < n; i++)
            od[i] = id[i];
        w->d = od;
    }
    return MPI_SUCCESS;
}

int wh_collchk_buffer_error(const char *fname, wh_comm_t *c, const char *msg)
{
    return wh_raise_comm(c, fname, wh_error(MPI_ERR_BUFFER, "%s", msg));
}

static inline char *elt(const void *buf, MPI_Aint i, const wh_dtype_t *dt)
{
    return (char *)buf + i * dt->extent;
}

/* (not checked when both are MPI_BOTTOM: absolute-address datatypes place the data) */
#define WH_ALIAS_MSG "sendbuf and recvbuf overlap on this rank's block; use MPI_IN_PLACE instead"

/* ---------- barrier ---------- */

int wh_mc_barrier(const char *fname, const wh_nbc_t *nb, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_barrier(fname, nb, ic);
    wh_comm_t *c;
    int rc = wh_collchk_comm(fname, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    WH_COLL_RUN(fname, c, nb, wh_barrier(c), wh_sched_barrier(s));
}

static int body_Barrier(MPI_Comm comm)
{
    return wh_mc_barrier("MPI_Barrier", NULL, comm);
}

/* ---------- broadcast ---------- */

int wh_mc_bcast(const char *fname, const wh_nbc_t *nb, void *buf, MPI_Count count, MPI_Datatype dth, int root,
                MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_bcast(fname, nb, ic, buf, count, dth, root);
    wh_comm_t *c;
    wh_dtype_t *dt;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)) ||
        (rc = wh_collchk_buf(fname, c, buf, count, dth, &dt, "count", "buffer")))
        return rc;
    WH_CDEV_STAGE(fname, c, nb, wh_cdev_buf(&buf, count, dt, c->rank == root ? WH_CDEV_IN : WH_CDEV_OUT));
    WH_COLL_RUN(fname, c, nb, wh_bcast(buf, count, dt, root, c), wh_sched_bcast(s, buf, count, dt, root));
}

static int body_Bcast(const char *fname, void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return wh_mc_bcast(fname, NULL, buffer, count, datatype, root, comm);
}

/* ---------- gather ---------- */

/* Gather and scatter check the same things, mirrored: every rank's one-block
 * buffer (gather: send, scatter: receive; may be MPI_IN_PLACE at the root
 * only) and the root's buffer of size blocks, which must not hold the
 * root's own block at the one-block buffer's address. */
typedef struct rooted_args {
    const void *one;
    MPI_Count one_count;
    MPI_Datatype one_type;
    const void *all;
    MPI_Count all_count;
    MPI_Datatype all_type;
    const char *one_names[2], *all_names[2]; /* count and buffer argument names */
} rooted_args_t;

static int rooted_check(const char *fname, MPI_Comm comm, int root, const rooted_args_t *a, wh_comm_t **cp,
                        wh_dtype_t **one_dt, wh_dtype_t **all_dt)
{
    wh_comm_t *c = NULL;
    int rc;
    *one_dt = *all_dt = NULL;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    *cp = c;
    int am_root = c->rank == root;
    if (a->one == MPI_IN_PLACE) {
        if (!am_root) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s is MPI_IN_PLACE on a rank that is not the root", a->one_names[1]);
            return wh_collchk_buffer_error(fname, c, msg);
        }
    } else if ((rc = wh_collchk_buf(fname, c, a->one, a->one_count, a->one_type, one_dt, a->one_names[0],
                                    a->one_names[1]))) {
        return rc;
    }
    if (am_root) {
        if ((rc = wh_collchk_buf(fname, c, a->all, a->all_count, a->all_type, all_dt, a->all_names[0],
                                 a->all_names[1])))
            return rc;
        if (a->one != MPI_IN_PLACE && a->one && a->all_count > 0 && (*all_dt)->size &&
            a->one == elt(a->all, (MPI_Aint)root * a->all_count, *all_dt))
            return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    }
    return MPI_SUCCESS;
}

int wh_mc_gather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                 void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_gatherv(fname, nb, ic, sbuf, scount, stype, rbuf, NULL, rcount, NULL, rtype, root);
    wh_comm_t *c;
    wh_dtype_t *sdt, *rdt;
    rooted_args_t a = {sbuf, scount, stype, rbuf, rcount, rtype, {"sendcount", "sendbuf"}, {"recvcount", "recvbuf"}};
    int rc = rooted_check(fname, comm, root, &a, &c, &sdt, &rdt);
    if (rc)
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN),
                                 c->rank == root ? wh_cdev_buf(&rbuf, rcount * c->size, rdt,
                                                               sbuf == MPI_IN_PLACE ? WH_CDEV_INOUT : WH_CDEV_OUT)
                                                 : (void)0));
    WH_COLL_RUN(fname, c, nb, wh_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, c),
                wh_sched_gatherv(s, sbuf, scount, sdt, rbuf, NULL, rcount, NULL, rdt, root));
}

static int body_Gather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return wh_mc_gather(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static int gatherv_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                        void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype, int root)
{
    wh_dtype_t *sdt = NULL, *rdt = NULL;
    int rc;
    int am_root = c->rank == root;
    if (sbuf == MPI_IN_PLACE) {
        if (!am_root)
            return wh_collchk_buffer_error(fname, c, "sendbuf is MPI_IN_PLACE on a rank that is not the root");
    } else if ((rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf"))) {
        return rc;
    }
    if (am_root) {
        if ((rc = wh_collchk_counts(fname, c, rcounts, c->size, "recvcounts")) ||
            (rc = wh_collchk_ptr(fname, c, displs, "displs")))
            return rc;
        MPI_Count maxc = 0;
        for (int i = 0; i < c->size; i++)
            maxc = rcounts[i] > maxc ? rcounts[i] : maxc;
        if ((rc = wh_collchk_buf(fname, c, rbuf, rbuf ? maxc : 0, rtype, &rdt, "recvcounts", "recvbuf")))
            return rc;
        if (sbuf != MPI_IN_PLACE && sbuf && rcounts[root] > 0 && rdt->size && sbuf == elt(rbuf, displs[root], rdt))
            return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    }
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN),
                                 am_root ? wh_cdev_bufv(&rbuf, c->size, rcounts, displs, rdt, NULL, WH_CDEV_INOUT)
                                         : (void)0));
    WH_COLL_RUN(fname, c, nb, wh_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, c),
                wh_sched_gatherv(s, sbuf, scount, sdt, rbuf, rcounts, 0, displs, rdt, root));
}

int wh_mc_gatherv_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, int sendcount,
                    MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *displs,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t w;
        int orc;
        wh_widen_none(&w);
        if (root == MPI_ROOT &&
            ((orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")) ||
             (orc = wh_collchk_widen(fname, ic, ic->size, recvcounts, displs, &w))))
            return orc;
        orc = wh_mci_gatherv(fname, nb, ic, sendbuf, sendcount, sendtype, recvbuf, w.c, 0, w.d, recvtype, root);
        wh_widen_free(&w);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t w;
    int rc;
    wh_widen_none(&w);
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    if (c->rank == root && (rc = wh_collchk_widen(fname, c, c->size, recvcounts, displs, &w)))
        return rc;
    rc = gatherv_impl(fname, nb, c, sendbuf, sendcount, sendtype, recvbuf, w.c, w.d, recvtype, root);
    wh_widen_free(&w);
    return rc;
}

int wh_mc_gatherv_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        int orc;
        if (root == MPI_ROOT && (orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")))
            return orc;
        return wh_mci_gatherv(fname, nb, ic, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs, recvtype,
                              root);
    }
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    return gatherv_impl(fname, nb, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root);
}

static int body_Gatherv(const char *fname, int large, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const MPI_Count recvcounts_c[], const int displs[],
                        const MPI_Aint displs_c[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return large ? wh_mc_gatherv_c(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts_c, displs_c,
                                   recvtype, root, comm)
           : wh_mc_gatherv_i(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                             comm);
}

/* ---------- scatter ---------- */

int wh_mc_scatter(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                  void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_scatterv(fname, nb, ic, sbuf, NULL, scount, NULL, stype, rbuf, rcount, rtype, root);
    wh_comm_t *c;
    wh_dtype_t *sdt, *rdt;
    rooted_args_t a = {rbuf, rcount, rtype, sbuf, scount, stype, {"recvcount", "recvbuf"}, {"sendcount", "sendbuf"}};
    int rc = rooted_check(fname, comm, root, &a, &c, &rdt, &sdt);
    if (rc)
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&rbuf, rcount, rdt, WH_CDEV_OUT),
                                 c->rank == root ? wh_cdev_buf(&sbuf, scount * c->size, sdt, WH_CDEV_IN) : (void)0));
    WH_COLL_RUN(fname, c, nb, wh_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, c),
                wh_sched_scatterv(s, sbuf, NULL, scount, NULL, sdt, rbuf, rcount, rdt, root));
}

static int body_Scatter(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return wh_mc_scatter(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static int scatterv_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, const MPI_Count *scounts,
                         const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                         int root)
{
    wh_dtype_t *sdt = NULL, *rdt = NULL;
    int rc;
    int am_root = c->rank == root;
    if (rbuf == MPI_IN_PLACE) {
        if (!am_root)
            return wh_collchk_buffer_error(fname, c, "recvbuf is MPI_IN_PLACE on a rank that is not the root");
    } else if ((rc = wh_collchk_buf(fname, c, rbuf, rcount, rtype, &rdt, "recvcount", "recvbuf"))) {
        return rc;
    }
    if (am_root) {
        if ((rc = wh_collchk_counts(fname, c, scounts, c->size, "sendcounts")) ||
            (rc = wh_collchk_ptr(fname, c, displs, "displs")))
            return rc;
        MPI_Count maxc = 0;
        for (int i = 0; i < c->size; i++)
            maxc = scounts[i] > maxc ? scounts[i] : maxc;
        if ((rc = wh_collchk_buf(fname, c, sbuf, sbuf ? maxc : 0, stype, &sdt, "sendcounts", "sendbuf")))
            return rc;
        if (rbuf != MPI_IN_PLACE && rbuf && scounts[root] > 0 && sdt->size && rbuf == elt(sbuf, displs[root], sdt))
            return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    }
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&rbuf, rcount, rdt, WH_CDEV_OUT),
                                 am_root ? wh_cdev_bufv(&sbuf, c->size, scounts, displs, sdt, NULL, WH_CDEV_IN)
                                         : (void)0));
    WH_COLL_RUN(fname, c, nb, wh_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, c),
                wh_sched_scatterv(s, sbuf, scounts, 0, displs, sdt, rbuf, rcount, rdt, root));
}

int wh_mc_scatterv_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const int *sendcounts,
                     const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t w;
        int orc;
        wh_widen_none(&w);
        if (root == MPI_ROOT &&
            ((orc = wh_collchk_ptr(fname, ic, sendcounts, "sendcounts")) ||
             (orc = wh_collchk_widen(fname, ic, ic->size, sendcounts, displs, &w))))
            return orc;
        orc = wh_mci_scatterv(fname, nb, ic, sendbuf, w.c, 0, w.d, sendtype, recvbuf, recvcount, recvtype, root);
        wh_widen_free(&w);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t w;
    int rc;
    wh_widen_none(&w);
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    if (c->rank == root && (rc = wh_collchk_widen(fname, c, c->size, sendcounts, displs, &w)))
        return rc;
    rc = scatterv_impl(fname, nb, c, sendbuf, w.c, w.d, sendtype, recvbuf, recvcount, recvtype, root);
    wh_widen_free(&w);
    return rc;
}

int wh_mc_scatterv_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const MPI_Count *sendcounts,
                     const MPI_Aint *displs, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        int orc;
        if (root == MPI_ROOT && (orc = wh_collchk_ptr(fname, ic, sendcounts, "sendcounts")))
            return orc;
        return wh_mci_scatterv(fname, nb, ic, sendbuf, sendcounts, 0, displs, sendtype, recvbuf, recvcount, recvtype,
                               root);
    }
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    return scatterv_impl(fname, nb, c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root);
}

static int body_Scatterv(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                         const MPI_Count sendcounts_c[], const int displs[], const MPI_Aint displs_c[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                         MPI_Comm comm)
{
    return large ? wh_mc_scatterv_c(fname, NULL, sendbuf, sendcounts_c, displs_c, sendtype, recvbuf, recvcount,
                                    recvtype, root, comm)
           : wh_mc_scatterv_i(fname, NULL, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                              comm);
}

/* ---------- allgather ---------- */

int wh_mc_allgather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_allgatherv(fname, nb, ic, sbuf, scount, stype, rbuf, NULL, rcount, NULL, rtype);
    wh_comm_t *c;
    wh_dtype_t *sdt = NULL, *rdt;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    if (sbuf != MPI_IN_PLACE && (rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf")))
        return rc;
    if ((rc = wh_collchk_buf(fname, c, rbuf, rcount, rtype, &rdt, "recvcount", "recvbuf")))
        return rc;
    if (sbuf != MPI_IN_PLACE && sbuf && rcount > 0 && rdt->size && sbuf == elt(rbuf, (MPI_Aint)c->rank * rcount, rdt))
        return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN),
                                 wh_cdev_buf(&rbuf, rcount * c->size, rdt,
                                             sbuf == MPI_IN_PLACE ? WH_CDEV_INOUT : WH_CDEV_OUT)));
    WH_COLL_RUN(fname, c, nb, wh_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, c),
                wh_sched_allgatherv(s, sbuf, scount, sdt, rbuf, NULL, rcount, NULL, rdt));
}

static int body_Allgather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return wh_mc_allgather(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static int allgatherv_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                           void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype)
{
    wh_dtype_t *sdt = NULL, *rdt;
    int rc;
    if (sbuf != MPI_IN_PLACE && (rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf")))
        return rc;
    if ((rc = wh_collchk_counts(fname, c, rcounts, c->size, "recvcounts")) ||
        (rc = wh_collchk_ptr(fname, c, displs, "displs")))
        return rc;
    MPI_Count maxc = 0;
    for (int i = 0; i < c->size; i++)
        maxc = rcounts[i] > maxc ? rcounts[i] : maxc;
    if ((rc = wh_collchk_buf(fname, c, rbuf, rbuf ? maxc : 0, rtype, &rdt, "recvcounts", "recvbuf")))
        return rc;
    if (sbuf != MPI_IN_PLACE && sbuf && rcounts[c->rank] > 0 && rdt->size && sbuf == elt(rbuf, displs[c->rank], rdt))
        return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, scount, sdt, WH_CDEV_IN),
                                 wh_cdev_bufv(&rbuf, c->size, rcounts, displs, rdt, NULL, WH_CDEV_INOUT)));
    WH_COLL_RUN(fname, c, nb, wh_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, c),
                wh_sched_allgatherv(s, sbuf, scount, sdt, rbuf, rcounts, 0, displs, rdt));
}

int wh_mc_allgatherv_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, int sendcount,
                       MPI_Datatype sendtype, void *recvbuf, const int *recvcounts, const int *displs,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t w;
        int orc;
        if ((orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")) ||
            (orc = wh_collchk_widen(fname, ic, ic->size, recvcounts, displs, &w)))
            return orc;
        orc = wh_mci_allgatherv(fname, nb, ic, sendbuf, sendcount, sendtype, recvbuf, w.c, 0, w.d, recvtype);
        wh_widen_free(&w);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t w;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_widen(fname, c, c->size, recvcounts, displs, &w)))
        return rc;
    rc = allgatherv_impl(fname, nb, c, sendbuf, sendcount, sendtype, recvbuf, w.c, w.d, recvtype);
    wh_widen_free(&w);
    return rc;
}

int wh_mc_allgatherv_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts, const MPI_Aint *displs,
                       MPI_Datatype recvtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        int orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts");
        return orc ? orc
                   : wh_mci_allgatherv(fname, nb, ic, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs,
                                       recvtype);
    }
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    return allgatherv_impl(fname, nb, c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
}

static int body_Allgatherv(const char *fname, int large, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const MPI_Count recvcounts_c[], const int displs[], const MPI_Aint displs_c[],
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    return large ? wh_mc_allgatherv_c(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts_c, displs_c,
                                      recvtype, comm)
           : wh_mc_allgatherv_i(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                comm);
}

#include "entry/coll.h"
