/* Shared by the MPI collective entry points (src/mpi/coll*.c): the blocking,
 * nonblocking (MPI_I*) and persistent (MPI_*_init) forms of a collective
 * check their arguments in one function (coll.c, coll2.c), which then runs
 * the blocking algorithm or builds a schedule (src/coll/sched.h) and hands
 * it to a request of kind WH_REQ_NBC (coll_nbc.c). */
#ifndef WH_MPI_COLL_NBC_H
#define WH_MPI_COLL_NBC_H
#include "coll/sched.h"
#include "mpi/api.h"
#include "mpi/coll_dev.h"

/* How a collective call completes: NULL = blocking; otherwise the request
 * to return (persistent: created inactive, for MPI_Start). */
typedef struct wh_nbc {
    MPI_Request *req;
    int persistent;
} wh_nbc_t;

/* A new schedule on c for a nonblocking/persistent call (checks the request
 * argument).  Raises and returns the error, or MPI_SUCCESS. */
int wh_nbc_begin(const char *fname, wh_comm_t *c, const wh_nbc_t *nb, wh_sched_t **sp);
/* Finish the schedule built with result build_rc, make its request, start
 * it unless persistent, and store the handle in *nb->req.  Raises errors. */
int wh_nbc_post(const char *fname, wh_sched_t *s, const wh_nbc_t *nb, int build_rc);

/* the info argument of the persistent collectives: MPI_INFO_NULL or a valid info (no hints are used) */
#define WH_NBC_INFO(fname, info)                                                                  \
    do {                                                                                          \
        if ((info) != MPI_INFO_NULL && !wh_info_valid(info))                                      \
            return wh_raise_comm(NULL, (fname),                                                   \
                                 wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object",   \
                                          (unsigned)(info)));                                     \
    } while (0)

static inline int wh_coll_done(const char *fname, wh_comm_t *c, int rc)
{
    if (WH_CDEV_ON() && wh_cdev_cur.n)
        rc = wh_cdev_finish(rc); /* device buffers staged at the entry go back */
    return __builtin_expect(rc == MPI_SUCCESS, 1) ? rc : wh_raise_comm(c, fname, rc);
}

/* The tail of every collective entry: run `blocking`, or build a schedule
 * `s` with `build` (an expression using s). */
#define WH_COLL_RUN(fname, c, nb, blocking, build)                                                \
    do {                                                                                          \
        if (!(nb))                                                                                \
            return wh_coll_done((fname), (c), (blocking));                                        \
        wh_sched_t *s;                                                                            \
        int wh_rc_ = wh_nbc_begin((fname), (c), (nb), &s);                                        \
        return wh_rc_ ? wh_rc_ : wh_nbc_post((fname), s, (nb), (build));                          \
    } while (0)

/* ---------- the shared entry functions (coll.c, coll2.c) ----------
 * fname is the MPI function's name; int-array forms (_i) widen the arrays
 * of the non-_c functions. */
int wh_mc_barrier(const char *fname, const wh_nbc_t *nb, MPI_Comm comm);
int wh_mc_bcast(const char *fname, const wh_nbc_t *nb, void *buf, MPI_Count count, MPI_Datatype dth, int root,
                MPI_Comm comm);
int wh_mc_gather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                 void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int wh_mc_gatherv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm);
int wh_mc_gatherv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype, int root,
                    MPI_Comm comm);
int wh_mc_scatter(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                  void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int wh_mc_scatterv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, const int *scounts, const int *displs,
                     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int wh_mc_scatterv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, const MPI_Count *scounts,
                     const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                     int root, MPI_Comm comm);
int wh_mc_allgather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_allgatherv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, int scount, MPI_Datatype stype,
                       void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_allgatherv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount,
                       MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs,
                       MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_alltoall(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_alltoallv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, const int *scounts,
                      const int *sdispls, MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
                      MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_alltoallv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, const MPI_Count *scounts,
                      const MPI_Aint *sdispls, MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, MPI_Datatype rtype, MPI_Comm comm);
int wh_mc_alltoallw_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, const int *scounts,
                      const int *sdispls, const MPI_Datatype *stypes, void *rbuf, const int *rcounts,
                      const int *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm);
int wh_mc_alltoallw_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, const MPI_Count *scounts,
                      const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts,
                      const MPI_Aint *rdispls, const MPI_Datatype *rtypes, MPI_Comm comm);
int wh_mc_reduce(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, MPI_Count count,
                 MPI_Datatype dth, MPI_Op oph, int root, MPI_Comm comm);
enum { WH_RED_ALL, WH_RED_SCAN, WH_RED_EXSCAN };
/* allreduce, scan, exscan (which: WH_RED_*) */
int wh_mc_allred(const char *fname, const wh_nbc_t *nb, int which, const void *sbuf, void *rbuf, MPI_Count count,
                 MPI_Datatype dth, MPI_Op oph, MPI_Comm comm);
int wh_mc_redscat_block(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, MPI_Count rcount,
                        MPI_Datatype dth, MPI_Op oph, MPI_Comm comm);
int wh_mc_redscat_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, const int *rcounts,
                    MPI_Datatype dth, MPI_Op oph, MPI_Comm comm);
int wh_mc_redscat_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, void *rbuf, const MPI_Count *rcounts,
                    MPI_Datatype dth, MPI_Op oph, MPI_Comm comm);

/* intercommunicator collectives (coll_inter.c): wh_mci_comm is comm's
 * object when it is a valid intercommunicator, else NULL; the others take
 * it, with the arguments of the shared functions above (v/w: counts arrays,
 * else NULL and one count; arrays describe the remote group, reduce-scatter
 * counts the local group) */
wh_comm_t *wh_mci_comm(MPI_Comm comm);
int wh_mci_barrier(const char *fname, const wh_nbc_t *nb, wh_comm_t *c);
int wh_mci_bcast(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dth,
                 int root);
int wh_mci_gatherv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                   MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs,
                   MPI_Datatype rtype, int root);
int wh_mci_scatterv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, const MPI_Count *scounts,
                    MPI_Count scount, const MPI_Aint *displs, MPI_Datatype stype, void *rbuf, MPI_Count rcount,
                    MPI_Datatype rtype, int root);
int wh_mci_allgatherv(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                      MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, MPI_Count rcount,
                      const MPI_Aint *displs, MPI_Datatype rtype);
int wh_mci_alltoall(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, MPI_Count scount,
                    MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype);
int wh_mci_alltoallvw(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf,
                      const MPI_Count *scounts, const MPI_Aint *sdispls, MPI_Datatype stype,
                      const MPI_Datatype *stypes, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *rdispls,
                      MPI_Datatype rtype, const MPI_Datatype *rtypes);
int wh_mci_reduce(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, void *rbuf,
                  MPI_Count count, MPI_Datatype dth, MPI_Op oph, int root);
int wh_mci_allred(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, int which, const void *sbuf, void *rbuf,
                  MPI_Count count, MPI_Datatype dth, MPI_Op oph);
int wh_mci_redscat(const char *fname, const wh_nbc_t *nb, wh_comm_t *c, const void *sbuf, void *rbuf,
                   const MPI_Count *rcounts, MPI_Count rcount, MPI_Datatype dth, MPI_Op oph);

/* neighbourhood collectives (topo_nbr.c); alltoallv/w: types NULL for v
 * (displacements in elements), a type array for w (in bytes); the _i form
 * widens int counts and, for v, the int displacements idispls (w passes
 * idispls NULL and its MPI_Aint displacements) */
int wh_mn_nbr_allgather(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount,
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm);
int wh_mn_nbr_allgatherv_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount,
                           MPI_Datatype stype, void *rbuf, const MPI_Count *rcounts, const MPI_Aint *displs,
                           MPI_Datatype rtype, MPI_Comm comm);
int wh_mn_nbr_allgatherv_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, int scount, MPI_Datatype stype,
                           void *rbuf, const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm);
int wh_mn_nbr_alltoall(const char *fname, const wh_nbc_t *nb, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                       void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm);
int wh_mn_nbr_alltoallvw_c(const char *fname, const wh_nbc_t *nb, const void *sbuf, const MPI_Count *scounts,
                           const MPI_Aint *sdispls, MPI_Datatype stype, const MPI_Datatype *stypes, void *rbuf,
                           const MPI_Count *rcounts, const MPI_Aint *rdispls, MPI_Datatype rtype,
                           const MPI_Datatype *rtypes, MPI_Comm comm);
int wh_mn_nbr_alltoallvw_i(const char *fname, const wh_nbc_t *nb, const void *sbuf, const int *scounts,
                           const int *isdispls, const MPI_Aint *sdispls, MPI_Datatype stype,
                           const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *irdispls,
                           const MPI_Aint *rdispls, MPI_Datatype rtype, const MPI_Datatype *rtypes, MPI_Comm comm);
#endif
