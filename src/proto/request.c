/* Request objects, completion and status helpers. */
#include <string.h>

#include "proto/proto.h"

wh_tab_t wh_req_tab;

wh_req_t *wh_req_alloc(int kind)
{
    if (!wh_req_tab.objsize)
        wh_tab_init(&wh_req_tab, WH_H_REQUEST, sizeof(wh_req_t));
    wh_req_t *r = wh_tab_alloc(&wh_req_tab);
    if (r)
        r->kind = (uint8_t)kind;
    return r;
}

/* Non-contiguous data in memory the CPU may not touch (device memory): each
 * contiguous block of the layout is one copy of its memory kind. */
static int req_copy_blocks(const wh_req_t *r, size_t off, char *host, size_t n, int out)
{
    struct iovec iov[64];
    while (n) {
        size_t covered = 0;
        int k = wh_dtype_iov(r->buf, (size_t)r->count, r->dt, off, n, iov, 64, &covered);
        if (k <= 0 || !covered)
            return wh_error(MPI_ERR_INTERN, "datatype layout of a %s buffer: no blocks at offset %zu",
                            wh_mem_name(r->mem), off);
        for (int i = 0; i < k; i++) {
            int rc = out ? wh_mem_copy(host, WH_MEM_HOST, iov[i].iov_base, r->mem, iov[i].iov_len)
                         : wh_mem_copy(iov[i].iov_base, r->mem, host, WH_MEM_HOST, iov[i].iov_len);
            if (rc != MPI_SUCCESS)
                return rc;
            host += iov[i].iov_len;
        }
        off += covered;
        n -= covered;
    }
    return MPI_SUCCESS;
}

static int req_pack(const wh_data_t *d, size_t off, void *dst, size_t n)
{
    const wh_req_t *r = d->ctx;
    if (r->mem != WH_MEM_HOST)
        return req_copy_blocks(r, d->skip + off, dst, n, 1);
    return wh_dtype_pack(r->buf, (size_t)r->count, r->dt, d->skip + off, dst, n);
}

static int req_unpack(const wh_data_t *d, size_t off, const void *src, size_t n)
{
    const wh_req_t *r = d->ctx;
    if (r->mem != WH_MEM_HOST)
        return req_copy_blocks(r, d->skip + off, (char *)src, n, 0);
    return wh_dtype_unpack(r->buf, (size_t)r->count, r->dt, d->skip + off, src, n);
}

static int req_iov(const wh_data_t *d, size_t off, size_t n, struct iovec *iov, int max, size_t *covered)
{
    const wh_req_t *r = d->ctx;
    return wh_dtype_iov(r->buf, (size_t)r->count, r->dt, d->skip + off, n, iov, max, covered);
}

void wh_req_data(wh_req_t *r, size_t skip, size_t len, wh_data_t *d)
{
    const char *start;
    d->len = len;
    d->skip = skip;
    d->mem = r->mem;
    d->ctx = r;
    if (wh_dtype_is_contig(r->dt, (size_t)r->count, r->buf, &start)) {
        d->base = (char *)start + skip;
        d->pack = NULL;
        d->unpack = NULL;
        d->iov = NULL;
    } else {
        d->base = NULL;
        d->pack = req_pack;
        d->unpack = req_unpack;
        d->iov = req_iov;
    }
}

wh_req_t *wh_req_from_id(uint64_t id)
{
    return wh_tab_get(&wh_req_tab, (int)(uint32_t)id);
}

wh_req_t *wh_req_get(MPI_Request h)
{
    return wh_tab_get(&wh_req_tab, h);
}

void wh_req_release(wh_req_t *r)
{
    if (r->dt)
        wh_dtype_release(r->dt);
    if (r->comm)
        wh_comm_release(r->comm);
    wh_tab_free(&wh_req_tab, r);
}

void wh_status_set(MPI_Status *st, int source, int tag, int error, MPI_Count bytes, int cancelled)
{
    st->MPI_SOURCE = source;
    st->MPI_TAG = tag;
    st->MPI_ERROR = error;
    st->count_lo = (int)(bytes & 0xffffffff);
    st->count_hi_and_cancelled = (int)(((uint64_t)bytes >> 32) << 1) | (cancelled ? 1 : 0);
}

MPI_Count wh_status_bytes(const MPI_Status *st)
{
    uint64_t hi = (uint32_t)st->count_hi_and_cancelled >> 1;
    return (MPI_Count)((hi << 32) | (uint32_t)st->count_lo);
}

static void finish(wh_req_t *r)
{
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
    if (r->user_freed && !r->persistent)
        wh_req_release(r);
}

void wh_req_send_done(wh_req_t *r)
{
    r->data_pending = 0;
    if (r->sync_pending || r->cancel_pending)
        return;
    finish(r);
}

void wh_req_recv_done(wh_req_t *r)
{
    size_t got = r->msg_len < r->bytes ? r->msg_len : r->bytes;
    int err = r->err;
    if (!err && r->msg_len > r->bytes)
        err = wh_error(MPI_ERR_TRUNCATE, "message of %zu bytes from rank %d (tag %d) truncated: receive buffer holds %zu bytes",
                       r->msg_len, r->status.MPI_SOURCE, r->status.MPI_TAG, r->bytes);
    else if (__builtin_expect(r->msg_len < r->bytes, 0) && !err && r->dt && wh_dtype_elements(r->dt, got) < 0)
        /* a shorter message must still end on a basic element of the
         * receive type (type signatures match); MPICH: truncated */
        err = wh_error(MPI_ERR_TRUNCATE,
                       "message of %zu bytes from rank %d (tag %d) ends inside a basic element of the receive "
                       "datatype: the type signatures do not match",
                       r->msg_len, r->status.MPI_SOURCE, r->status.MPI_TAG);
    r->err = err;
    wh_status_set(&r->status, r->status.MPI_SOURCE, r->status.MPI_TAG, err, (MPI_Count)got, 0);
    finish(r);
}

int wh_test(wh_req_t *r)
{
    if (__atomic_load_n(&r->complete, __ATOMIC_ACQUIRE))
        return 1;
    wh_progress();
    return __atomic_load_n(&r->complete, __ATOMIC_ACQUIRE);
}

/* The one wait loop: the request's own hook (compound and generalized
 * requests, schedules), then the engine, with the waiting policy. */
void wh_req_block(wh_req_t *r)
{
    for (unsigned idle = 0; !__atomic_load_n(&r->complete, __ATOMIC_ACQUIRE);) {
        int n = r->poll_fn ? r->poll_fn(r) : 0;
        if (__atomic_load_n(&r->complete, __ATOMIC_ACQUIRE))
            break;
        if (wh_progress() + n)
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

int wh_wait(wh_req_t *r, MPI_Status *status)
{
    wh_req_block(r);
    int err = r->err;
    if (status && status != MPI_STATUS_IGNORE)
        *status = r->status;
    wh_req_release(r);
    return err;
}

int wh_waitall(int n, wh_req_t **rs, MPI_Status *statuses)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        if (!rs[i])
            continue;
        int e = wh_wait(rs[i], statuses && statuses != MPI_STATUSES_IGNORE ? &statuses[i] : NULL);
        rs[i] = NULL;
        if (e && !err)
            err = e;
    }
    return err;
}
