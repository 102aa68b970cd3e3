/* Helpers shared by the collective algorithms. */
#include <stdint.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "proto/request.h"
#include "util/scratch.h"

/* bytes spanned by count elements and the offset of element 0's lower bound */
static size_t span(MPI_Count count, const wh_dtype_t *dt, MPI_Aint *lo_out)
{
    MPI_Aint lo = dt->true_lb, hi = dt->true_lb + dt->true_extent;
    if (count <= 0) {
        hi = lo;
    } else if (count > 1) {
        MPI_Aint ext = (MPI_Aint)(count - 1) * dt->extent;
        if (ext < 0)
            lo += ext;
        else
            hi += ext;
    }
    *lo_out = lo;
    return (size_t)(hi - lo);
}

void *wh_coll_tmp_in(MPI_Count count, const wh_dtype_t *dt, void *stack, size_t room, void **raw)
{
    MPI_Aint lo;
    size_t bytes = span(count, dt, &lo);
    void *mem = stack;
    *raw = NULL;
    if (!stack || bytes > room) {
        if (!(mem = *raw = wh_scratch_get(bytes)))
            return NULL;
    }
    /* typed pointer: element 0's lower bound lands on the memory */
    return (void *)((uintptr_t)mem - (uintptr_t)lo);
}

void *wh_coll_tmp(MPI_Count count, const wh_dtype_t *dt, void **raw)
{
    return wh_coll_tmp_in(count, dt, NULL, 0, raw);
}

wh_dtype_t *wh_coll_byte(void)
{
    static wh_dtype_t *byte;
    if (!byte)
        byte = wh_dtype_get(MPI_BYTE);
    return byte;
}

int wh_coll_copy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt)
{
    if (sbuf == rbuf && sdt == rdt && scount == rcount)
        return MPI_SUCCESS;
    return wh_dtype_copy(sbuf, (size_t)scount, sdt, rbuf, (size_t)rcount, rdt);
}

void wh_coll_split(MPI_Count count, int n, MPI_Aint *disp)
{
    MPI_Count base = count / n, rem = count % n;
    disp[0] = 0;
    for (int i = 0; i < n; i++)
        disp[i + 1] = disp[i] + (MPI_Aint)(base + (i < rem ? 1 : 0));
}

int wh_coll_nomem(const char *what, size_t bytes)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory allocating %zu bytes for %s", bytes, what);
}

/* ---------- error propagation (see algo.h) ---------- */

int wh_coll_short_error(int src, size_t got, size_t want)
{
    if (got == 0)
        return wh_error(MPI_ERR_OTHER,
                        "collective failed on rank %d (an empty message where %zu bytes were expected: the "
                        "collective failed there, or the ranks passed different counts)",
                        src, want);
    return wh_error(MPI_ERR_OTHER,
                    "message sizes do not match across processes in the collective: received %zu bytes from "
                    "rank %d but expected %zu",
                    got, src, want);
}

/* a completed receive of `want` bytes from src (MPI_PROC_NULL: none) */
static void check_recv(int rc, const MPI_Status *st, int src, size_t want, int *err)
{
    if (rc != MPI_SUCCESS) {
        wh_coll_note(rc, err);
        return;
    }
    size_t got = (size_t)wh_status_bytes(st);
    if (__builtin_expect(got != want, 0) && src != MPI_PROC_NULL && *err == MPI_SUCCESS) /* (no code to drop) */
        wh_coll_note(wh_coll_short_error(src, got, want), err);
}

void wh_coll_esend(const void *buf, MPI_Count n, wh_dtype_t *dt, int dst, int tag, wh_comm_t *c, int *err)
{
    wh_coll_note(wh_send(buf, *err == MPI_SUCCESS ? n : 0, dt, dst, tag, c, WH_CTX_COLL), err);
}

void wh_coll_erecv(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, int *err)
{
    MPI_Status st;
    int rc = wh_recv(buf, n, dt, src, tag, c, WH_CTX_COLL, &st);
    check_recv(rc, &st, src, wh_dtype_bytes(dt, (size_t)n), err);
}

void wh_coll_esendrecv(const void *sb, MPI_Count sn, wh_dtype_t *sdt, int dst, void *rb, MPI_Count rn,
                       wh_dtype_t *rdt, int src, int tag, wh_comm_t *c, int *err)
{
    MPI_Status st;
    int rc = wh_sendrecv(sb, *err == MPI_SUCCESS ? sn : 0, sdt, dst, tag, rb, rn, rdt, src, tag, c, WH_CTX_COLL, &st);
    check_recv(rc, &st, src, wh_dtype_bytes(rdt, (size_t)rn), err);
}

void wh_coll_eisend(const void *buf, MPI_Count n, wh_dtype_t *dt, int dst, int tag, wh_comm_t *c, wh_req_t **req,
                    int *err)
{
    *req = NULL;
    wh_coll_note(wh_isend(buf, *err == MPI_SUCCESS ? n : 0, dt, dst, tag, c, WH_CTX_COLL, WH_MODE_STD, req), err);
}

void wh_coll_eirecv(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, wh_req_t **req,
                    int *err)
{
    *req = NULL;
    wh_coll_note(wh_irecv(buf, n, dt, src, tag, c, WH_CTX_COLL, req), err);
}

void wh_coll_eirecv_put(void *buf, MPI_Count n, wh_dtype_t *dt, int src, int tag, wh_comm_t *c, wh_req_t **req,
                        int *err)
{
    *req = NULL;
    wh_coll_note(wh_irecv_x(buf, n, dt, src, tag, c, WH_CTX_COLL, WH_TRACE_NB | WH_IRECV_PUT, req), err);
}

void wh_coll_ewait(wh_req_t *q, int *err)
{
    if (!q)
        return;
    int recv = q->kind == WH_REQ_RECV, src = q->rank;
    size_t want = q->bytes;
    MPI_Status st;
    int rc = wh_wait(q, &st);
    if (recv)
        check_recv(rc, &st, src, want, err);
    else
        wh_coll_note(rc, err);
}

void wh_coll_ecopy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                   wh_dtype_t *rdt, int *err)
{
    if (*err != MPI_SUCCESS)
        return;
    size_t sb = wh_dtype_bytes(sdt, (size_t)scount), rb = wh_dtype_bytes(rdt, (size_t)rcount);
    if (__builtin_expect(sb != rb, 0)) {
        *err = wh_error(sb > rb ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER,
                        "collective: this rank's send data (%zu bytes) and its own receive block (%zu bytes) "
                        "differ in size (the ranks passed different counts)",
                        sb, rb);
        return;
    }
    wh_coll_note(wh_coll_copy(sbuf, scount, sdt, rbuf, rcount, rdt), err);
}
