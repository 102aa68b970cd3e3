/* MPI collective entry points (part 2): all-to-all (plain, v, w) and the
 * reductions (reduce, allreduce, reduce-scatter, scan, exscan) with their
 * large-count (_c) variants.  Argument checks come from coll.c. */
#include <stdlib.h>

#include "coll/coll.h"
#include "mpi/coll_nbc.h"

#define WH_ALIAS_MSG "sendbuf and recvbuf are the same buffer; use MPI_IN_PLACE instead"

/* ---------- all-to-all ---------- */

int wh_mc_alltoall(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_alltoall(fname, nb, ic, sbuf, scount, stype, rbuf, rcount, rtype);
    wh_comm_t *c;
    wh_dtype_t *sdt = NULL, *rdt;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    if (sbuf != MPI_IN_PLACE && (rc = wh_collchk_buf(fname, c, sbuf, scount, stype, &sdt, "sendcount", "sendbuf")))
        return rc;
    if ((rc = wh_collchk_buf(fname, c, rbuf, rcount, rtype, &rdt, "recvcount", "recvbuf")))
        return rc;
    if (sbuf && sbuf == rbuf && rcount > 0 && rdt->size)
        return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, scount * c->size, sdt, WH_CDEV_IN),
                                 wh_cdev_buf(&rbuf, rcount * c->size, rdt,
                                             sbuf == MPI_IN_PLACE ? WH_CDEV_INOUT : WH_CDEV_OUT)));
    wh_sched_a2a_t ss = {.count = scount, .type = sdt}, rs = {.count = rcount, .type = rdt};
    WH_COLL_RUN(fname, c, nb, wh_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, c),
                wh_sched_alltoall(s, sbuf, &ss, rbuf, &rs));
}

static int body_Alltoall(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return wh_mc_alltoall(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static MPI_Count max_count(const MPI_Count *counts, int n)
{
    MPI_Count m = 0;
    for (int i = 0; i < n; i++)
        m = counts[i] > m ? counts[i] : m;
    return m;
}

static int alltoallv_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, const MPI_Count *scounts,
                          const MPI_Aint *sdispls, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                          const MPI_Aint *rdispls, MPI_Datatype rtype)
{
    wh_dtype_t *sdt = NULL, *rdt;
    int rc, n = c->size;
    if (sbuf != MPI_IN_PLACE) {
        if ((rc = wh_collchk_counts(fname, c, scounts, n, "sendcounts")) ||
            (rc = wh_collchk_ptr(fname, c, sdispls, "sdispls")) ||
            (rc = wh_collchk_buf(fname, c, sbuf, sbuf ? max_count(scounts, n) : 0, stype, &sdt, "sendcounts", "sendbuf")))
            return rc;
    }
    if ((rc = wh_collchk_counts(fname, c, rcounts, n, "recvcounts")) ||
        (rc = wh_collchk_ptr(fname, c, rdispls, "rdispls")))
        return rc;
    MPI_Count rmax = max_count(rcounts, n);
    if ((rc = wh_collchk_buf(fname, c, rbuf, rbuf ? rmax : 0, rtype, &rdt, "recvcounts", "recvbuf")))
        return rc;
    if (sbuf && sbuf == rbuf && rmax > 0 && rdt->size)
        return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    WH_CDEV_STAGE(fname, c, nb, (sbuf != MPI_IN_PLACE ? wh_cdev_bufv(&sbuf, n, scounts, sdispls, sdt, NULL, WH_CDEV_IN)
                                                      : (void)0,
                                 wh_cdev_bufv(&rbuf, n, rcounts, rdispls, rdt, NULL, WH_CDEV_INOUT)));
    wh_sched_a2a_t ss = {.counts = scounts, .displs = sdispls, .type = sdt};
    wh_sched_a2a_t rs = {.counts = rcounts, .displs = rdispls, .type = rdt};
    WH_COLL_RUN(fname, c, nb, wh_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, c),
                wh_sched_alltoall(s, sbuf, &ss, rbuf, &rs));
}

int wh_mc_alltoallv_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const int *sendcounts,
                      const int *sdispls, MPI_Datatype sendtype, void *recvbuf, const int *recvcounts,
                      const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t sw, rw;
        int orc;
        if ((orc = wh_collchk_ptr(fname, ic, sendcounts, "sendcounts")) ||
            (orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")) ||
            (orc = wh_collchk_widen(fname, ic, ic->size, sendcounts, sdispls, &sw)))
            return orc;
        if (!(orc = wh_collchk_widen(fname, ic, ic->size, recvcounts, rdispls, &rw))) {
            orc = wh_mci_alltoallvw(fname, nb, ic, sendbuf, sw.c, sw.d, sendtype, NULL, recvbuf, rw.c, rw.d,
                                    recvtype, NULL);
            wh_widen_free(&rw);
        }
        wh_widen_free(&sw);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t sw, rw;
    int rc;
    wh_widen_none(&sw);
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    if (sendbuf != MPI_IN_PLACE && (rc = wh_collchk_widen(fname, c, c->size, sendcounts, sdispls, &sw)))
        return rc;
    if (!(rc = wh_collchk_widen(fname, c, c->size, recvcounts, rdispls, &rw))) {
        rc = alltoallv_impl(fname, nb, c, sendbuf, sw.c, sw.d, sendtype, recvbuf, rw.c, rw.d, recvtype);
        wh_widen_free(&rw);
    }
    wh_widen_free(&sw);
    return rc;
}

int wh_mc_alltoallv_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const MPI_Count *sendcounts,
                      const MPI_Aint *sdispls, MPI_Datatype sendtype, void *recvbuf, const MPI_Count *recvcounts,
                      const MPI_Aint *rdispls, MPI_Datatype recvtype, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_alltoallvw(fname, nb, ic, sendbuf, sendcounts, sdispls, sendtype, NULL, recvbuf, recvcounts,
                                 rdispls, recvtype, NULL);
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    return alltoallv_impl(fname, nb, c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype);
}

static int body_Alltoallv(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                          const MPI_Count sendcounts_c[], const int sdispls[], const MPI_Aint sdispls_c[],
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const MPI_Count recvcounts_c[],
                          const int rdispls[], const MPI_Aint rdispls_c[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return large ? wh_mc_alltoallv_c(fname, NULL, sendbuf, sendcounts_c, sdispls_c, sendtype, recvbuf, recvcounts_c,
                                     rdispls_c, recvtype, comm)
           : wh_mc_alltoallv_i(fname, NULL, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                               recvtype, comm);
}

/* Resolve the n types of one side of alltoallw; a type is only required to
 * be valid where its count is nonzero. */
static int w_types(const char *fname, wh_comm_t *c, const MPI_Count *counts, const MPI_Datatype *types,
                   wh_dtype_t **out, const char *name)
{
    int rc = wh_collchk_ptr(fname, c, types, name);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_dtype_t *byte = wh_dtype_get(MPI_BYTE);
    for (int i = 0; i < c->size; i++) {
        rc = wh_dtype_check_comm(types[i], &out[i]);
        if (rc != MPI_SUCCESS) {
            if (counts[i] > 0)
                return wh_raise_comm(c, fname, rc);
            out[i] = byte;
        }
    }
    return MPI_SUCCESS;
}

/* A NULL buffer is MPI_BOTTOM: legal when every block it addresses lies at
 * an absolute address (displacement plus the type's true lower bound). */
static int w_bottom(const char *fname, wh_comm_t *c, const MPI_Count *counts, const MPI_Aint *displs,
                    wh_dtype_t **dts, int n, const char *side)
{
    for (int i = 0; i < n; i++)
        if (counts[i] > 0 && dts[i]->size && displs[i] + dts[i]->true_lb == 0)
            return wh_raise_comm(c, fname, wh_error(MPI_ERR_BUFFER, "%sbuf is NULL (MPI_BOTTOM) but block %d "
                                                    "(%lld elements) has address 0", side, i, (long long)counts[i]));
    return MPI_SUCCESS;
}

static int alltoallw_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, const MPI_Count *scounts,
                          const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts,
                          const MPI_Aint *rdispls, const MPI_Datatype *rtypes)
{
    int rc, n = c->size;
    wh_dtype_t **dts = malloc(2 * (size_t)n * sizeof *dts);
    if (!dts)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory for %d datatypes", 2 * n));
    wh_dtype_t **sdts = NULL, **rdts = dts + n;
    if (sbuf != MPI_IN_PLACE) {
        sdts = dts;
        if ((rc = wh_collchk_counts(fname, c, scounts, n, "sendcounts")) ||
            (rc = wh_collchk_ptr(fname, c, sdispls, "sdispls")) ||
            (rc = w_types(fname, c, scounts, stypes, sdts, "sendtypes")))
            goto out;
        if (!sbuf && (rc = w_bottom(fname, c, scounts, sdispls, sdts, n, "send")))
            goto out;
    }
    if ((rc = wh_collchk_counts(fname, c, rcounts, n, "recvcounts")) ||
        (rc = wh_collchk_ptr(fname, c, rdispls, "rdispls")) ||
        (rc = w_types(fname, c, rcounts, rtypes, rdts, "recvtypes")))
        goto out;
    if (rbuf == MPI_IN_PLACE) {
        rc = wh_collchk_buffer_error(fname, c, "recvbuf cannot be MPI_IN_PLACE");
        goto out;
    }
    if (!rbuf && (rc = w_bottom(fname, c, rcounts, rdispls, rdts, n, "recv")))
        goto out;
    if (sbuf && sbuf == rbuf && max_count(rcounts, n) > 0) {
        rc = wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
        goto out;
    }
    if (WH_CDEV_ON()) {
        if (sbuf != MPI_IN_PLACE)
            wh_cdev_bufv(&sbuf, n, scounts, sdispls, NULL, sdts, WH_CDEV_IN);
        wh_cdev_bufv(&rbuf, n, rcounts, rdispls, NULL, rdts, WH_CDEV_INOUT);
        if ((rc = wh_cdev_stage(fname, c, nb)))
            goto out;
    }
    if (!nb) {
        rc = wh_coll_done(fname, c, wh_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, c));
    } else {
        wh_sched_a2a_t ss = {.counts = scounts, .displs = sdispls, .types = sdts};
        wh_sched_a2a_t rs = {.counts = rcounts, .displs = rdispls, .types = rdts};
        wh_sched_t *s;
        if ((rc = wh_nbc_begin(fname, c, nb, &s)) == MPI_SUCCESS)
            rc = wh_nbc_post(fname, s, nb, wh_sched_alltoall(s, sbuf, &ss, rbuf, &rs));
    }
out:
    free(dts);
    return rc;
}

int wh_mc_alltoallw_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const int *sendcounts,
                      const int *sdispls, const MPI_Datatype *sendtypes, void *recvbuf, const int *recvcounts,
                      const int *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t sw, rw;
        int orc;
        if ((orc = wh_collchk_ptr(fname, ic, sendcounts, "sendcounts")) ||
            (orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")) ||
            (orc = wh_collchk_widen(fname, ic, ic->size, sendcounts, sdispls, &sw)))
            return orc;
        if (!(orc = wh_collchk_widen(fname, ic, ic->size, recvcounts, rdispls, &rw))) {
            orc = wh_mci_alltoallvw(fname, nb, ic, sendbuf, sw.c, sw.d, MPI_DATATYPE_NULL, sendtypes, recvbuf, rw.c,
                                    rw.d, MPI_DATATYPE_NULL, recvtypes);
            wh_widen_free(&rw);
        }
        wh_widen_free(&sw);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t sw, rw;
    int rc;
    wh_widen_none(&sw);
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    if (sendbuf != MPI_IN_PLACE && (rc = wh_collchk_widen(fname, c, c->size, sendcounts, sdispls, &sw)))
        return rc;
    if (!(rc = wh_collchk_widen(fname, c, c->size, recvcounts, rdispls, &rw))) {
        rc = alltoallw_impl(fname, nb, c, sendbuf, sw.c, sw.d, sendtypes, recvbuf, rw.c, rw.d, recvtypes);
        wh_widen_free(&rw);
    }
    wh_widen_free(&sw);
    return rc;
}

int wh_mc_alltoallw_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, const MPI_Count *sendcounts,
                      const MPI_Aint *sdispls, const MPI_Datatype *sendtypes, void *recvbuf, const MPI_Count *recvcounts,
                      const MPI_Aint *rdispls, const MPI_Datatype *recvtypes, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_alltoallvw(fname, nb, ic, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL, sendtypes, recvbuf,
                                 recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes);
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    return alltoallw_impl(fname, nb, c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                          recvtypes);
}

static int body_Alltoallw(const char *fname, int large, const void *sendbuf, const int sendcounts[],
                          const MPI_Count sendcounts_c[], const int sdispls[], const MPI_Aint sdispls_c[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const MPI_Count recvcounts_c[], const int rdispls[], const MPI_Aint rdispls_c[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return large ? wh_mc_alltoallw_c(fname, NULL, sendbuf, sendcounts_c, sdispls_c, sendtypes, recvbuf, recvcounts_c,
                                     rdispls_c, recvtypes, comm)
           : wh_mc_alltoallw_i(fname, NULL, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                               recvtypes, comm);
}

/* ---------- reductions ---------- */

/* Shared checks: sendbuf holds scount elements (unless MPI_IN_PLACE, legal
 * only if inplace_ok), recvbuf rcount elements when significant (rsig; with
 * MPI_IN_PLACE it holds the input, scount elements); type committed; op
 * defined on it; the buffers must not be the same. */
static int red_check(const char *fname, wh_comm_t *c, const void *sbuf, MPI_Count scount, const void *rbuf,
                     MPI_Count rcount, int rsig, int inplace_ok, MPI_Datatype dth, MPI_Op oph, wh_dtype_t **dtp,
                     wh_op_t **opp)
{
    int rc;
    if (sbuf == MPI_IN_PLACE) {
        if (!inplace_ok)
            return wh_collchk_buffer_error(fname, c, "sendbuf is MPI_IN_PLACE on a rank that is not the root");
        if ((rc = wh_collchk_buf(fname, c, rbuf, scount > rcount ? scount : rcount, dth, dtp, "count", "recvbuf")))
            return rc;
    } else {
        if ((rc = wh_collchk_buf(fname, c, sbuf, scount, dth, dtp, "count", "sendbuf")))
            return rc;
        if (rsig && (rc = wh_collchk_buf(fname, c, rbuf, rcount, dth, dtp, "count", "recvbuf")))
            return rc;
        if (rsig && sbuf && sbuf == rbuf && rcount > 0 && (*dtp)->size)
            return wh_collchk_buffer_error(fname, c, WH_ALIAS_MSG);
    }
    return wh_collchk_op(fname, c, oph, *dtp, opp);
}

int wh_mc_reduce(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, MPI_Count count,
                 MPI_Datatype dth, MPI_Op oph, int root, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_reduce(fname, nb, ic, sbuf, rbuf, count, dth, oph, root);
    wh_comm_t *c;
    wh_dtype_t *dt;
    wh_op_t *op;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_root(fname, c, root)))
        return rc;
    int am_root = c->rank == root;
    if ((rc = red_check(fname, c, sbuf, count, rbuf, count, am_root, am_root, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, count, dt, WH_CDEV_IN),
                                 am_root ? wh_cdev_buf(&rbuf, count, dt, sbuf == MPI_IN_PLACE ? WH_CDEV_INOUT : WH_CDEV_OUT)
                                         : (void)0));
    WH_COLL_RUN(fname, c, nb, wh_reduce(sbuf, rbuf, count, dth, dt, op, root, c),
                (wh_sched_set_op(s, op, dth, dt), wh_sched_reduce_to(s, sbuf, rbuf, count, root)));
}

static int body_Reduce(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm)
{
    return wh_mc_reduce(fname, NULL, sendbuf, recvbuf, count, datatype, op, root, comm);
}

/* allreduce, scan and exscan share their arguments */
int wh_mc_allred(const char *fname, const wh_nbc_t *nb, int which, const void *sbuf, void *rbuf, MPI_Count count,
                 MPI_Datatype dth, MPI_Op oph, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_allred(fname, nb, ic, which, sbuf, rbuf, count, dth, oph);
    wh_comm_t *c;
    wh_dtype_t *dt;
    wh_op_t *op;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) ||
        (rc = red_check(fname, c, sbuf, count, rbuf, count, 1, 1, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, count, dt, WH_CDEV_IN),
                                 wh_cdev_buf(&rbuf, count, dt, sbuf == MPI_IN_PLACE ? WH_CDEV_INOUT : WH_CDEV_OUT)));
    if (nb) {
        wh_sched_t *s;
        if ((rc = wh_nbc_begin(fname, c, nb, &s)))
            return rc;
        wh_sched_set_op(s, op, dth, dt);
        rc = which == WH_RED_ALL ? wh_sched_allreduce(s, sbuf, rbuf, count)
                                 : wh_sched_scan(s, sbuf, rbuf, count, which == WH_RED_EXSCAN);
        return wh_nbc_post(fname, s, nb, rc);
    }
    switch (which) {
    case WH_RED_ALL: rc = wh_allreduce(sbuf, rbuf, count, dth, dt, op, c); break;
    case WH_RED_SCAN: rc = wh_scan(sbuf, rbuf, count, dth, dt, op, c); break;
    default: rc = wh_exscan(sbuf, rbuf, count, dth, dt, op, c); break;
    }
    return wh_coll_done(fname, c, rc);
}

static int body_Allreduce(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return wh_mc_allred(fname, NULL, WH_RED_ALL, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Scan(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm)
{
    return wh_mc_allred(fname, NULL, WH_RED_SCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

static int body_Exscan(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm)
{
    return wh_mc_allred(fname, NULL, WH_RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm);
}

/* ---------- reduce-scatter ---------- */

static int sched_redscat_block(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count rcount)
{
    int n = s->comm->size;
    MPI_Count *counts = wh_sched_bytes(s, (size_t)n * sizeof *counts);
    if (!counts)
        return s->build_err;
    for (int i = 0; i < n; i++)
        counts[i] = rcount;
    return wh_sched_reduce_scatter(s, sbuf, rbuf, counts);
}

int wh_mc_redscat_block(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, MPI_Count rcount,
                        MPI_Datatype dth, MPI_Op oph, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic)
        return wh_mci_redscat(fname, nb, ic, sbuf, rbuf, NULL, rcount, dth, oph);
    wh_comm_t *c;
    wh_dtype_t *dt;
    wh_op_t *op;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    if (rcount < 0)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_COUNT, "recvcount is negative (%lld)", (long long)rcount));
    if ((rc = red_check(fname, c, sbuf, rcount * c->size, rbuf, rcount, 1, 1, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, rcount * c->size, dt, WH_CDEV_IN),
                                 sbuf == MPI_IN_PLACE ? wh_cdev_buf(&rbuf, rcount * c->size, dt, WH_CDEV_INOUT)
                                                      : wh_cdev_buf(&rbuf, rcount, dt, WH_CDEV_OUT)));
    WH_COLL_RUN(fname, c, nb, wh_reduce_scatter_block(sbuf, rbuf, rcount, dth, dt, op, c),
                (wh_sched_set_op(s, op, dth, dt), sched_redscat_block(s, sbuf, rbuf, rcount)));
}

static int body_Reduce_scatter_block(const char *fname, const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return wh_mc_redscat_block(fname, NULL, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

static int redscat_impl(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                        MPI_Datatype dth, MPI_Op oph)
{
    wh_dtype_t *dt;
    wh_op_t *op;
    int rc;
    if ((rc = wh_collchk_counts(fname, c, rcounts, c->size, "recvcounts")))
        return rc;
    MPI_Count total = 0;
    for (int i = 0; i < c->size; i++)
        total += rcounts[i];
    if ((rc = red_check(fname, c, sbuf, total, rbuf, rcounts[c->rank], 1, 1, dth, oph, &dt, &op)))
        return rc;
    WH_CDEV_STAGE(fname, c, nb, (wh_cdev_buf(&sbuf, total, dt, WH_CDEV_IN),
                                 sbuf == MPI_IN_PLACE ? wh_cdev_buf(&rbuf, total, dt, WH_CDEV_INOUT)
                                                      : wh_cdev_buf(&rbuf, rcounts[c->rank], dt, WH_CDEV_OUT)));
    WH_COLL_RUN(fname, c, nb, wh_reduce_scatter(sbuf, rbuf, rcounts, dth, dt, op, c),
                (wh_sched_set_op(s, op, dth, dt), wh_sched_reduce_scatter(s, sbuf, rbuf, rcounts)));
}

int wh_mc_redscat_i(const char *fname, const wh_nbc_t *nb, const void *sendbuf, void *recvbuf, const int *recvcounts,
                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        wh_widen_t w;
        int orc;
        if ((orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts")) ||
            (orc = wh_collchk_widen(fname, ic, wh_comm_local_size(ic), recvcounts, NULL, &w)))
            return orc;
        orc = wh_mci_redscat(fname, nb, ic, sendbuf, recvbuf, w.c, 0, datatype, op);
        wh_widen_free(&w);
        return orc;
    }
    wh_comm_t *c;
    wh_widen_t w;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)) || (rc = wh_collchk_widen(fname, c, c->size, recvcounts, NULL, &w)))
        return rc;
    rc = redscat_impl(fname, nb, c, sendbuf, recvbuf, w.c, datatype, op);
    wh_widen_free(&w);
    return rc;
}

int wh_mc_redscat_c(const char *fname, const wh_nbc_t *nb, const void *sendbuf, void *recvbuf,
                    const MPI_Count *recvcounts, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    wh_comm_t *ic = wh_mci_comm(comm);
    if (ic) {
        int orc = wh_collchk_ptr(fname, ic, recvcounts, "recvcounts");
        return orc ? orc : wh_mci_redscat(fname, nb, ic, sendbuf, recvbuf, recvcounts, 0, datatype, op);
    }
    wh_comm_t *c;
    int rc;
    if ((rc = wh_collchk_comm(fname, comm, &c)))
        return rc;
    return redscat_impl(fname, nb, c, sendbuf, recvbuf, recvcounts, datatype, op);
}

static int body_Reduce_scatter(const char *fname, int large, const void *sendbuf, void *recvbuf,
                               const int recvcounts[], const MPI_Count recvcounts_c[], MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm)
{
    return large ? wh_mc_redscat_c(fname, NULL, sendbuf, recvbuf, recvcounts_c, datatype, op, comm)
           : wh_mc_redscat_i(fname, NULL, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

#include "entry/coll2.h"
