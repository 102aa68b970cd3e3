/* Device buffers in one-sided operations: origin, compare and result
 * buffers in device memory are staged through host temporaries around
 * wh_rma_op (the one call of the entry layer, rma.c's issue()).
 *
 * The RMA layer consumes origin data before wh_rma_op returns (it is copied
 * into the window, a channel's zero-copy transfer it waits for, or active
 * messages it sends), so an origin temporary is freed right after the call.
 * A result (MPI_Get, MPI_Get_accumulate, MPI_Fetch_and_op,
 * MPI_Compare_and_swap, and their R* forms) arrives later: with a device
 * result buffer the operation is completed locally at once (as
 * MPI_Win_flush_local would) and the result copied to the device, so such
 * calls return with the data in place — correct in every epoch, blocking
 * where a host buffer would not be.  Windows over device memory are refused
 * at creation (win.c). */
#include <stdint.h>
#include <stdlib.h>

#include "core/err.h"
#include "mem/mem.h"
#include "mpi/rma_dev.h"
#include "util/log.h"

typedef struct stg {
    char *user, *host;
    MPI_Aint lo, hi;
    int kind;
} stg_t;

/* stage (p, count, dt) if it is device memory: *pp becomes the host view */
static int stage(const void **pp, MPI_Count count, const wh_dtype_t *dt, int in, stg_t *s)
{
    s->host = NULL;
    const void *p = *pp;
    if (!p || !dt || count <= 0 || !dt->size)
        return MPI_SUCCESS;
    MPI_Aint reps = (MPI_Aint)count - 1;
    s->lo = dt->true_lb + (dt->extent < 0 ? reps * dt->extent : 0);
    s->hi = dt->true_lb + dt->true_extent + (dt->extent > 0 ? reps * dt->extent : 0);
    s->user = (char *)p;
    if ((s->kind = wh_mem_query(s->user + s->lo)) == WH_MEM_HOST)
        return MPI_SUCCESS;
    size_t n = (size_t)(s->hi - s->lo);
    if (!(s->host = malloc(n)))
        return wh_error(MPI_ERR_NO_MEM, "out of memory staging %zu bytes of device memory", n);
    int rc = in ? wh_mem_copy(s->host, WH_MEM_HOST, s->user + s->lo, s->kind, n) : MPI_SUCCESS;
    *pp = (const void *)((uintptr_t)s->host - (uintptr_t)s->lo);
    return rc;
}

int wh_rma_op_dev(wh_win_t *w, wh_rma_args_t *a, wh_req_t **req)
{
    wh_rma_args_t h = *a;
    stg_t so = {0}, sc = {0}, sr = {0};
    int k = a->kind, rc = MPI_SUCCESS;
    int has_origin = k == WH_RMA_PUT || k == WH_RMA_ACC || k == WH_RMA_GACC || k == WH_RMA_CAS;
    if (has_origin)
        rc = stage(&h.obuf, k == WH_RMA_CAS ? 1 : a->ocount, a->odt, 1, &so);
    if (rc == MPI_SUCCESS && k == WH_RMA_CAS)
        rc = stage(&h.cbuf, 1, a->odt, 1, &sc);
    if (rc == MPI_SUCCESS && (k == WH_RMA_GET || k == WH_RMA_GACC || k == WH_RMA_CAS)) {
        const void *r = h.rbuf;
        const wh_dtype_t *rdt = k == WH_RMA_CAS ? a->odt : a->rdt;
        MPI_Count rn = k == WH_RMA_CAS ? 1 : a->rcount;
        const char *start;
        /* holes in the result layout go back as they were */
        rc = stage(&r, rn, rdt, rdt && !wh_dtype_is_contig(rdt, (size_t)rn, NULL, &start), &sr);
        h.rbuf = (void *)r;
    }
    if (rc == MPI_SUCCESS)
        rc = wh_rma_op(w, &h, req);
    if (rc == MPI_SUCCESS && sr.host && a->target != MPI_PROC_NULL)
        rc = wh_win_flush(w, a->target, 1); /* the result is here now */
    if (rc == MPI_SUCCESS && sr.host)
        rc = wh_mem_copy(sr.user + sr.lo, sr.kind, sr.host, WH_MEM_HOST, (size_t)(sr.hi - sr.lo));
    if (so.host || sr.host || sc.host)
        WH_DEBUG("cuda", "one-sided operation with device buffers staged through host memory");
    free(so.host);
    free(sc.host);
    free(sr.host);
    return rc;
}
