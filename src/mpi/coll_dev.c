/* Device buffers in collectives (see coll_dev.h). */
#include <stdint.h>
#include <stdlib.h>

#include "core/err.h"
#include "mpi/coll_dev.h"
#include "util/log.h"
#include "util/scratch.h"

_Thread_local wh_cdev_t wh_cdev_cur;

void wh_cdev_bounds(const wh_dtype_t *dt, MPI_Count count, MPI_Aint at, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint reps = (MPI_Aint)count - 1;
    *lo = at + dt->true_lb + (dt->extent < 0 ? reps * dt->extent : 0);
    *hi = at + dt->true_lb + dt->true_extent + (dt->extent > 0 ? reps * dt->extent : 0);
}

void wh_cdev_range(void *var, MPI_Aint lo, MPI_Aint hi, int dir)
{
    const void *p;
    memcpy(&p, var, sizeof p);
    if (!p || p == MPI_IN_PLACE || hi <= lo)
        return;
    int kind = wh_mem_query((const char *)p + lo);
    if (kind == WH_MEM_HOST)
        return;
    wh_cdev_t *d = &wh_cdev_cur;
    if (d->n == (int)(sizeof d->b / sizeof d->b[0]))
        return;
    d->b[d->n++] = (wh_cdev_b_t){.var = var, .user = (char *)p, .lo = lo, .hi = hi, .kind = kind, .dir = dir};
}

void wh_cdev_buf(void *var, MPI_Count count, const wh_dtype_t *dt, int dir)
{
    if (count <= 0 || !dt || !dt->size)
        return;
    MPI_Aint lo, hi;
    wh_cdev_bounds(dt, count, 0, &lo, &hi);
    const char *start;
    if (dir == WH_CDEV_OUT && !wh_dtype_is_contig(dt, (size_t)count, NULL, &start))
        dir = WH_CDEV_INOUT; /* the holes go back as they were */
    wh_cdev_range(var, lo, hi, dir);
}

void wh_cdev_bufv(void *var, int n, const MPI_Count *counts, const MPI_Aint *displs, const wh_dtype_t *dt,
                  wh_dtype_t *const *dts, int dir)
{
    MPI_Aint lo = 0, hi = 0;
    int any = 0;
    for (int i = 0; i < n; i++) {
        const wh_dtype_t *t = dts ? dts[i] : dt;
        if (counts[i] <= 0 || !t || !t->size)
            continue;
        MPI_Aint l, h;
        wh_cdev_bounds(t, counts[i], dts ? displs[i] : displs[i] * dt->extent, &l, &h);
        if (!any || l < lo)
            lo = l;
        if (!any || h > hi)
            hi = h;
        any = 1;
    }
    if (any)
        wh_cdev_range(var, lo, hi, dir == WH_CDEV_OUT ? WH_CDEV_INOUT : dir);
}

static void set_var(wh_cdev_b_t *b, char *base)
{
    void *p = (void *)((uintptr_t)base - (uintptr_t)b->lo);
    memcpy(b->var, &p, sizeof p);
}

void wh_cdev_drop(void)
{
    wh_cdev_t *d = &wh_cdev_cur;
    if (d->staged)
        for (int i = 0; i < d->n; i++)
            wh_scratch_put(d->b[i].host);
    d->n = d->staged = 0;
}

int wh_cdev_stage(const char *fname, wh_comm_t *c, const void *nb)
{
    wh_cdev_t *d = &wh_cdev_cur;
    if (!d->n || nb) /* nonblocking: the schedule stages (wh_cdev_sched_begin) */
        return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    d->staged = 1;
    for (int i = 0; i < d->n && rc == MPI_SUCCESS; i++) {
        wh_cdev_b_t *b = &d->b[i];
        size_t n = (size_t)(b->hi - b->lo);
        if (!(b->host = wh_scratch_get(n))) /* kept between calls: no page faults per call */
            rc = wh_error(MPI_ERR_NO_MEM, "out of memory staging %zu bytes of device memory for %s", n, fname);
        else if (b->dir & WH_CDEV_IN)
            rc = wh_mem_copy(b->host, WH_MEM_HOST, b->user + b->lo, b->kind, n);
    }
    if (rc != MPI_SUCCESS) {
        wh_cdev_drop();
        return wh_raise_comm(c, fname, rc);
    }
    for (int i = 0; i < d->n; i++)
        set_var(&d->b[i], d->b[i].host);
    WH_DEBUG("cuda", "%s: %d device buffer(s) staged through host memory", fname, d->n);
    return MPI_SUCCESS;
}

int wh_cdev_finish(int rc)
{
    wh_cdev_t *d = &wh_cdev_cur;
    if (d->staged)
        for (int i = 0; i < d->n; i++) {
            wh_cdev_b_t *b = &d->b[i];
            if (rc == MPI_SUCCESS && (b->dir & WH_CDEV_OUT))
                rc = wh_mem_copy(b->user + b->lo, b->kind, b->host, WH_MEM_HOST, (size_t)(b->hi - b->lo));
        }
    wh_cdev_drop();
    return rc;
}

void wh_cdev_sched_begin(wh_sched_t *s)
{
    wh_cdev_t *d = &wh_cdev_cur;
    if (!d->n || d->staged)
        return;
    wh_dtype_t *byte = wh_dtype_get(MPI_BYTE);
    for (int i = 0; i < d->n; i++) {
        wh_cdev_b_t *b = &d->b[i];
        MPI_Count n = (MPI_Count)(b->hi - b->lo);
        if (!(b->host = wh_sched_bytes(s, (size_t)n)))
            return; /* build_err is set */
        if (b->dir & WH_CDEV_IN)
            wh_sched_copy(s, b->user + b->lo, n, byte, b->host, n, byte);
        set_var(b, b->host);
    }
    wh_sched_fence(s);
}

void wh_cdev_sched_end(wh_sched_t *s)
{
    wh_cdev_t *d = &wh_cdev_cur;
    if (!d->n || d->staged)
        return;
    wh_dtype_t *byte = wh_dtype_get(MPI_BYTE);
    wh_sched_fence(s);
    for (int i = 0; i < d->n; i++) {
        wh_cdev_b_t *b = &d->b[i];
        MPI_Count n = (MPI_Count)(b->hi - b->lo);
        if (b->host && (b->dir & WH_CDEV_OUT))
            wh_sched_copy(s, b->host, n, byte, b->user + b->lo, n, byte);
    }
    d->n = 0;
}
