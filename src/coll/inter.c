/* Intercommunicator collectives as schedules (see coll/inter.h). */
#include "coll/inter.h"

static char *at(const void *buf, MPI_Aint elems, const wh_dtype_t *dt)
{
    return (char *)buf + elems * dt->extent;
}

/* local barrier, leaders exchange a signal, local barrier: nobody leaves
 * before every process of both groups has entered */
int wh_isched_barrier(wh_sched_t *s)
{
    wh_comm_t *c = s->home;
    wh_sched_local(s, 1);
    wh_sched_barrier(s);
    wh_sched_fence(s);
    wh_sched_local(s, 0);
    if (c->rank == 0)
        wh_sched_signal(s, 0, 0);
    wh_sched_fence(s);
    wh_sched_local(s, 1);
    wh_sched_barrier(s);
    wh_sched_local(s, 0);
    return s->build_err;
}

int wh_isched_bcast(wh_sched_t *s, void *buf, MPI_Count count, wh_dtype_t *dt, int root)
{
    wh_comm_t *c = s->home;
    if (root == MPI_ROOT) {
        wh_sched_send(s, buf, count, dt, 0);
    } else if (root != MPI_PROC_NULL) {
        if (c->rank == 0)
            wh_sched_recv(s, buf, count, dt, root);
        wh_sched_fence(s);
        wh_sched_local(s, 1);
        wh_sched_bcast(s, buf, count, dt, 0);
        wh_sched_local(s, 0);
    }
    return s->build_err;
}

int wh_isched_gatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                      const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt, int root)
{
    wh_comm_t *c = s->home;
    if (root == MPI_ROOT) {
        for (int j = 0; j < c->size; j++)
            wh_sched_recv(s, at(rbuf, rcounts ? displs[j] : (MPI_Aint)j * rcount, rdt), rcounts ? rcounts[j] : rcount,
                          rdt, j);
    } else if (root != MPI_PROC_NULL) {
        wh_sched_send(s, sbuf, scount, sdt, root);
    }
    return s->build_err;
}

int wh_isched_scatterv(wh_sched_t *s, const void *sbuf, const MPI_Count *scounts, MPI_Count scount,
                       const MPI_Aint *displs, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt,
                       int root)
{
    wh_comm_t *c = s->home;
    if (root == MPI_ROOT) {
        for (int j = 0; j < c->size; j++)
            wh_sched_send(s, at(sbuf, scounts ? displs[j] : (MPI_Aint)j * scount, sdt), scounts ? scounts[j] : scount,
                          sdt, j);
    } else if (root != MPI_PROC_NULL) {
        wh_sched_recv(s, rbuf, rcount, rdt, root);
    }
    return s->build_err;
}

int wh_isched_allgatherv(wh_sched_t *s, const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf,
                         const MPI_Count *rcounts, MPI_Count rcount, const MPI_Aint *displs, wh_dtype_t *rdt)
{
    wh_comm_t *c = s->home;
    int n = c->size;
    for (int j = 0; j < n; j++)
        wh_sched_recv(s, at(rbuf, rcounts ? displs[j] : (MPI_Aint)j * rcount, rdt), rcounts ? rcounts[j] : rcount,
                      rdt, j);
    /* start with a different remote rank on each process */
    for (int k = 0; k < n; k++)
        wh_sched_send(s, sbuf, scount, sdt, (c->rank + k) % n);
    return s->build_err;
}

/* block j of one side of an all-to-all */
static void a2a_block(const void *buf, const wh_sched_a2a_t *a, int j, char **p, MPI_Count *cnt, wh_dtype_t **dt)
{
    *dt = a->types ? a->types[j] : a->type;
    *cnt = a->counts ? a->counts[j] : a->count;
    if (a->types)
        *p = (char *)buf + a->displs[j];
    else
        *p = at(buf, a->counts ? a->displs[j] : (MPI_Aint)j * a->count, *dt);
}

int wh_isched_alltoall(wh_sched_t *s, const void *sbuf, const wh_sched_a2a_t *ss, void *rbuf,
                       const wh_sched_a2a_t *rs)
{
    wh_comm_t *c = s->home;
    int n = c->size;
    char *p;
    MPI_Count cnt;
    wh_dtype_t *dt;
    for (int j = 0; j < n; j++) {
        a2a_block(rbuf, rs, j, &p, &cnt, &dt);
        wh_sched_recv(s, p, cnt, dt, j);
    }
    for (int k = 0; k < n; k++) {
        int j = (c->rank + k) % n;
        a2a_block(sbuf, ss, j, &p, &cnt, &dt);
        wh_sched_send(s, p, cnt, dt, j);
    }
    return s->build_err;
}

/* reduce the local group's sbuf to a temporary on local rank 0 (returned;
 * NULL elsewhere or on a build error) */
static void *reduce_local(wh_sched_t *s, const void *sbuf, MPI_Count count)
{
    wh_comm_t *c = s->home;
    void *tmp = wh_sched_tmp(s, count, s->dt);
    if (!tmp)
        return NULL;
    wh_sched_local(s, 1);
    wh_sched_reduce_to(s, sbuf, tmp, count, 0);
    wh_sched_local(s, 0);
    wh_sched_fence(s);
    return c->rank == 0 ? tmp : NULL;
}

int wh_isched_reduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int root)
{
    if (root == MPI_ROOT) {
        wh_sched_recv(s, rbuf, count, s->dt, 0);
    } else if (root != MPI_PROC_NULL) {
        void *tmp = reduce_local(s, sbuf, count);
        if (tmp)
            wh_sched_send(s, tmp, count, s->dt, root);
    }
    return s->build_err;
}

int wh_isched_allreduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count)
{
    void *tmp = reduce_local(s, sbuf, count);
    if (tmp) {
        wh_sched_recv(s, rbuf, count, s->dt, 0);
        wh_sched_send(s, tmp, count, s->dt, 0);
    }
    wh_sched_fence(s);
    wh_sched_local(s, 1);
    wh_sched_bcast(s, rbuf, count, s->dt, 0);
    wh_sched_local(s, 0);
    return s->build_err;
}

int wh_isched_reduce_scatter(wh_sched_t *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts)
{
    wh_comm_t *c = s->home;
    int nl = c->local->size;
    MPI_Aint *displs = wh_sched_bytes(s, (size_t)nl * sizeof *displs);
    if (!displs)
        return s->build_err;
    MPI_Count total = 0;
    for (int i = 0; i < nl; i++) {
        displs[i] = (MPI_Aint)total;
        total += rcounts[i];
    }
    void *mine = reduce_local(s, sbuf, total);
    void *theirs = c->rank == 0 ? wh_sched_tmp(s, total, s->dt) : NULL;
    if (mine && theirs) {
        wh_sched_recv(s, theirs, total, s->dt, 0);
        wh_sched_send(s, mine, total, s->dt, 0);
    }
    wh_sched_fence(s);
    wh_sched_local(s, 1);
    wh_sched_scatterv(s, theirs, rcounts, 0, displs, s->dt, rbuf, rcounts[c->rank], s->dt, 0);
    wh_sched_local(s, 0);
    return s->build_err;
}
