/* Blocking neighbourhood collectives over cartesian, graph and distributed
 * graph communicators: MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w), with their large-count (_c) variants, and
 * the shared functions (wh_mn_nbr_*, coll_nbc.h) behind them and behind the
 * nonblocking and persistent forms (coll_nbr.c).
 * Every variant describes its per-neighbour blocks (one side) with an
 * nbr_side_t; one function checks them and hands the blocks to
 * wh_neighbor_exchange or, for a request, to the schedule builder
 * wh_sched_neighbor (src/coll/neighbor.c).  MPI_IN_PLACE is not allowed
 * (the standard has no in-place neighbourhood collectives). */
#include <stdlib.h>

#include "coll/coll.h"
#include "coll/neighbor.h"
#include "comm/topo.h"
#include "mpi/api.h"
#include "mpi/coll_nbc.h"

typedef struct {
    const void *buf;
    MPI_Count count;           /* !vec: the count of every block */
    int stride;                /* !vec: block i at i * count elements (0: every block is the same) */
    int vec;                   /* counts[] and displs[] describe the blocks */
    const MPI_Count *counts;
    const MPI_Aint *displs;    /* in elements (in bytes when types is set) */
    MPI_Datatype type;
    const MPI_Datatype *types; /* per block (alltoallw) */
    const char *bname, *cname, *dname, *tname;
} nbr_side_t;

/* the blocks of one side, checked; n = number of neighbours */
static int side_blocks(const char *fname, wh_comm_t *c, const nbr_side_t *s, int n, const int *peer, const int *tag,
                       wh_nbr_blk_t *b)
{
    int rc;
    wh_dtype_t *dt = NULL;
    if (s->vec && n > 0) {
        if ((rc = wh_collchk_counts(fname, c, s->counts, n, s->cname)) ||
            (rc = wh_collchk_ptr(fname, c, s->displs, s->dname)))
            return rc;
        if (s->types && (rc = wh_collchk_ptr(fname, c, s->types, s->tname)))
            return rc;
    }
    if (!s->types && (rc = wh_collchk_buf(fname, c, s->buf, s->vec ? 0 : s->count, s->type, &dt, s->cname, s->bname)))
        return rc;
    for (int i = 0; i < n; i++) {
        MPI_Count cnt = s->vec ? s->counts[i] : s->count;
        if (s->vec && (rc = wh_collchk_buf(fname, c, s->buf, s->buf ? cnt : 0, s->types ? s->types[i] : s->type, &dt, s->cname,
                                           s->bname)))
            return rc;
        char *p = (char *)s->buf;
        if (s->types)
            p += s->displs[i];
        else if (s->vec)
            p += s->displs[i] * dt->extent;
        else
            p += (MPI_Aint)i * s->stride * (MPI_Aint)cnt * dt->extent;
        b[i] = (wh_nbr_blk_t){.buf = p, .count = cnt, .dt = dt, .peer = peer[i], .tag = tag[i]};
    }
    return MPI_SUCCESS;
}

/* declare the bytes n blocks starting in the buffer *var touch */
static void dev_decl(const void **var, int n, const wh_nbr_blk_t *b, int dir)
{
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (b[i].count <= 0 || !b[i].dt || !b[i].dt->size)
            continue;
        MPI_Aint l, h;
        wh_cdev_bounds(b[i].dt, b[i].count, (MPI_Aint)((const char *)b[i].buf - (const char *)*var), &l, &h);
        lo = !any || l < lo ? l : lo;
        hi = !any || h > hi ? h : hi;
        any = 1;
    }
    if (any)
        wh_cdev_range((void *)var, lo, hi, dir);
}

/* the blocks of a buffer staged from `from` to `to` (host temporaries) */
static void dev_move(wh_nbr_blk_t *b, int n, const void *from, const void *to)
{
    if (from == to)
        return;
    for (int i = 0; i < n; i++)
        b[i].buf = (char *)to + ((const char *)b[i].buf - (const char *)from);
}

static int nbr_run(const char *fname, const wh_nbc_t *nbc, MPI_Comm comm, const nbr_side_t *snd,
                   const nbr_side_t *rcv)
{
    wh_comm_t *c;
    int rc = wh_collchk_comm(fname, comm, &c);
    if (rc)
        return rc;
    if (!c->topo)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_TOPOLOGY, "comm has no process topology (cartesian, graph or "
                                                                  "distributed graph)"));
    wh_nbrs_t nb;
    if ((rc = wh_topo_neighbors(c, &nb)) != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    wh_nbr_blk_t *blk = malloc(((size_t)nb.nin + (size_t)nb.nout + 1) * sizeof *blk);
    if (!blk) {
        free(nb.in);
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_NO_MEM, "out of memory for %d neighbours", nb.nin + nb.nout));
    }
    wh_nbr_blk_t *sb = blk, *rb = blk + nb.nout;
    if (!(rc = side_blocks(fname, c, snd, nb.nout, nb.out, nb.outtag, sb)) &&
        !(rc = side_blocks(fname, c, rcv, nb.nin, nb.in, nb.intag, rb))) {
        const void *sbase = snd->buf, *rbase = rcv->buf;
        if (WH_CDEV_ON()) { /* device buffers: the span of each side's blocks */
            dev_decl(&sbase, nb.nout, sb, WH_CDEV_IN);
            dev_decl(&rbase, nb.nin, rb, WH_CDEV_INOUT); /* the gaps between blocks go back as they were */
        }
        if (nbc) {
            wh_sched_t *s;
            if (!(rc = wh_nbc_begin(fname, c, nbc, &s))) {
                dev_move(sb, nb.nout, snd->buf, sbase);
                dev_move(rb, nb.nin, rcv->buf, rbase);
                rc = wh_nbc_post(fname, s, nbc, wh_sched_neighbor(s, nb.nout, sb, nb.nin, rb));
            }
        } else if (!WH_CDEV_ON() || !(rc = wh_cdev_stage(fname, c, NULL))) {
            dev_move(sb, nb.nout, snd->buf, sbase);
            dev_move(rb, nb.nin, rcv->buf, rbase);
            rc = wh_neighbor_exchange(nb.nout, sb, nb.nin, rb, c);
            rc = wh_coll_done(fname, c, rc); /* device buffers: copied back */
        }
    }
    free(blk);
    free(nb.in);
    return rc;
}

/* in-degree (out = 0) or out-degree of comm, to widen int arrays; 0 when
 * comm is not usable (nbr_run then reports the error) */
static int degree(MPI_Comm comm, int out)
{
    wh_comm_t *c = wh_comm_get(comm);
    wh_nbrs_t nb;
    if (!c || c->is_inter || !c->topo || wh_topo_neighbors(c, &nb) != MPI_SUCCESS)
        return 0;
    free(nb.in);
    return out ? nb.nout : nb.nin;
}

/* int counts/displacements of the non-_c variants as MPI_Count/MPI_Aint */
static int widen(const char *fname, MPI_Comm comm, int out, const int *ic, const int *id, wh_widen_t *w)
{
    return wh_collchk_widen(fname, wh_comm_get(comm), degree(comm, out), ic, id, w);
}

/* ---------- the shared functions (coll_nbc.h) ---------- */

#define SEND_ONE(b, n, t) {.buf = (b), .count = (n), .type = (t), .bname = "sendbuf", .cname = "sendcount"}

int wh_mn_nbr_allgather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    nbr_side_t s = SEND_ONE(sbuf, scount, stype);
    nbr_side_t r = {.buf = rbuf, .count = rcount, .stride = 1, .type = rtype, .bname = "recvbuf", .cname = "recvcount"};
    return nbr_run(fname, nb, comm, &s, &r);
}

int wh_mn_nbr_allgatherv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount,
                           MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs,
                           MPI_Datatype rtype, MPI_Comm comm)
{
    nbr_side_t s = SEND_ONE(sbuf, scount, stype);
    nbr_side_t r = {.buf = rbuf, .vec = 1, .counts = rcounts, .displs = displs, .type = rtype, .bname = "recvbuf",
                    .cname = "recvcounts", .dname = "displs"};
    return nbr_run(fname, nb, comm, &s, &r);
}

int wh_mn_nbr_allgatherv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, int scount, MPI_Datatype stype,
                           void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm)
{
    wh_widen_t w;
    int rc = widen(fname, comm, 0, rcounts, displs, &w);
    if (rc)
        return rc;
    rc = wh_mn_nbr_allgatherv_c(fname, nb, sbuf, scount, stype, rbuf, w.c, w.d, rtype, comm);
    wh_widen_free(&w);
    return rc;
}

int wh_mn_nbr_alltoall(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    nbr_side_t s = {.buf = sbuf, .count = scount, .stride = 1, .type = stype, .bname = "sendbuf", .cname = "sendcount"};
    nbr_side_t r = {.buf = rbuf, .count = rcount, .stride = 1, .type = rtype, .bname = "recvbuf", .cname = "recvcount"};
    return nbr_run(fname, nb, comm, &s, &r);
}

int wh_mn_nbr_alltoallvw_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, const MPI_Count *scounts,
                           const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                           const MPI_Count *rcounts, const MPI_Aint *rdispls, MPI_Datatype rtype,
                           const MPI_Datatype *rtypes, MPI_Comm comm)
{
    nbr_side_t s = {.buf = sbuf, .vec = 1, .counts = scounts, .displs = sdispls, .type = stype, .types = stypes,
                    .bname = "sendbuf", .cname = "sendcounts", .dname = "sdispls", .tname = "sendtypes"};
    nbr_side_t r = {.buf = rbuf, .vec = 1, .counts = rcounts, .displs = rdispls, .type = rtype, .types = rtypes,
                    .bname = "recvbuf", .cname = "recvcounts", .dname = "rdispls", .tname = "recvtypes"};
    return nbr_run(fname, nb, comm, &s, &r);
}

int wh_mn_nbr_alltoallvw_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, const int *scounts,
                           const int *isdispls, const MPI_Aint *sdispls, MPI_Datatype stype,
                           const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *irdispls,
                           const MPI_Aint *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes, MPI_Comm comm)
{
    wh_widen_t sw, rw;
    int rc = widen(fname, comm, 1, scounts, isdispls, &sw);
    if (rc)
        return rc;
    if (!(rc = widen(fname, comm, 0, rcounts, irdispls, &rw))) {
        rc = wh_mn_nbr_alltoallvw_c(fname, nb, sbuf, sw.c, isdispls ? sw.d : sdispls, stype, stypes, rbuf, rw.c,
                                    irdispls ? rw.d : rdispls, rtype, rtypes, comm);
        wh_widen_free(&rw);
    }
    wh_widen_free(&sw);
    return rc;
}

/* ---------- blocking entry points ---------- */

static int body_Neighbor_allgather(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return wh_mn_nbr_allgather(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm);
}

static int body_Neighbor_allgatherv(const char *fname, int large, const void *sendbuf, MPI_Count sendcount,
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                    const MPI_Count recvcounts_c[], const int displs[], const MPI_Aint displs_c[],
                                    MPI_Datatype recvtype, MPI_Comm comm)
{
    return large ? wh_mn_nbr_allgatherv_c(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts_c, displs_c,
                                          recvtype, comm)
           : wh_mn_nbr_allgatherv_i(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                    comm);
}

static int body_Neighbor_alltoall(const char *fname, const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return wh_mn_nbr_alltoall(fname, NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                              recvtype, comm);
}

static int body_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                                   MPI_Comm comm)
{
    return wh_mn_nbr_alltoallvw_i("MPI_Neighbor_alltoallv", NULL, sendbuf, sendcounts, sdispls, NULL, sendtype, NULL,
                                  recvbuf, recvcounts, rdispls, NULL, recvtype, NULL, comm);
}

static int body_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return wh_mn_nbr_alltoallvw_c("MPI_Neighbor_alltoallv_c", NULL, sendbuf, sendcounts, sdispls, sendtype, NULL,
                                  recvbuf, recvcounts, rdispls, recvtype, NULL, comm);
}

static int body_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return wh_mn_nbr_alltoallvw_i("MPI_Neighbor_alltoallw", NULL, sendbuf, sendcounts, NULL, sdispls,
                                  MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts, NULL, rdispls, MPI_DATATYPE_NULL,
                                  recvtypes, comm);
}

static int body_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return wh_mn_nbr_alltoallvw_c("MPI_Neighbor_alltoallw_c", NULL, sendbuf, sendcounts, sdispls, MPI_DATATYPE_NULL,
                                  sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL, recvtypes, comm);
}

#include "entry/topo_nbr.h"
