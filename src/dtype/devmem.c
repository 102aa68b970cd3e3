/* Pack and unpack when the user buffer or the packed stream lies in device
 * memory (mem/mem.h kinds other than host): MPI_Pack/Unpack, MPI_Bsend,
 * MPI_Sendrecv_replace, the local copies of collective schedules and the
 * one-sided paths all reach device buffers through wh_dtype_pack/unpack, and
 * those come here only when wh_mem_query says so (host memory never does).
 *
 * A contiguous layout is one driver copy.  A scattered layout is either
 * staged (its whole span [lo, hi) copied to a host temporary with one copy,
 * packed or unpacked there by the host engine, and for unpack copied back)
 * when the span is not much larger than the data and the whole stream is
 * moved at once, or else moved block by block (one copy per contiguous
 * block, from wh_dtype_iov).  The stream side is staged through a host
 * temporary when it is device memory. */
#include <stdint.h>
#include <stdlib.h>

#include "core/err.h"
#include "dtype/dtype_impl.h"
#include "mem/mem.h"

/* bytes [lo, hi) relative to buf that count elements of t touch */
static void span(const wh_dtype_t *t, size_t count, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint reps = (MPI_Aint)count - 1;
    *lo = t->true_lb + (t->extent < 0 ? reps * t->extent : 0);
    *hi = t->true_lb + t->true_extent + (t->extent > 0 ? reps * t->extent : 0);
}

/* stage the whole span when it is at most this much larger than the data */
static int stage_span(size_t sp, size_t len)
{
    return sp <= 4 * len + 65536;
}

static int nomem(size_t n)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory staging %zu bytes of device memory", n);
}

/* block by block: dir 0 = device buf -> host stream, 1 = host stream -> device buf */
static int blocks(void *buf, size_t count, const wh_dtype_t *t, size_t offset, char *hs, size_t len, int kb, int dir)
{
    struct iovec iov[64];
    size_t done = 0;
    while (done < len) {
        size_t covered = 0;
        int n = wh_dtype_iov(buf, count, t, offset + done, len - done, iov, 64, &covered);
        if (n <= 0 || !covered)
            return wh_error(MPI_ERR_INTERN, "datatype stream range [%zu, %zu) could not be described",
                            offset + done, offset + len);
        for (int i = 0; i < n; i++) {
            int rc = dir ? wh_mem_copy(iov[i].iov_base, kb, hs + done, WH_MEM_HOST, iov[i].iov_len)
                         : wh_mem_copy(hs + done, WH_MEM_HOST, iov[i].iov_base, kb, iov[i].iov_len);
            if (rc != MPI_SUCCESS)
                return rc;
            done += iov[i].iov_len;
        }
    }
    return MPI_SUCCESS;
}

int wh_dtype_pack_dev(const void *buf, size_t count, const wh_dtype_t *t, size_t offset, void *out, size_t len, int kb,
                      int ko)
{
    size_t total = t->size * count;
    if (offset > total || len > total - offset)
        return wh_error(MPI_ERR_INTERN, "datatype stream range [%zu, %zu) lies outside the %zu-byte message", offset,
                        offset + len, total);
    if (!len)
        return MPI_SUCCESS;
    const char *start;
    if (wh_dtype_is_contig(t, count, buf, &start))
        return wh_mem_copy(out, ko, start + offset, kb, len);
    char *hout = out, *tmpo = NULL, *tmp = NULL;
    int rc;
    if (ko != WH_MEM_HOST && !(hout = tmpo = malloc(len)))
        return nomem(len);
    if (kb == WH_MEM_HOST) {
        rc = wh_dtype_pack_host(buf, count, t, offset, hout, len);
    } else {
        MPI_Aint lo, hi;
        span(t, count, &lo, &hi);
        size_t sp = (size_t)(hi - lo);
        if (stage_span(sp, len) && (tmp = malloc(sp))) {
            rc = wh_mem_copy(tmp, WH_MEM_HOST, (const char *)((uintptr_t)buf + (uintptr_t)lo), kb, sp);
            if (rc == MPI_SUCCESS)
                rc = wh_dtype_pack_host((const void *)((uintptr_t)tmp - (uintptr_t)lo), count, t, offset, hout, len);
        } else {
            rc = blocks((void *)buf, count, t, offset, hout, len, kb, 0);
        }
    }
    if (rc == MPI_SUCCESS && tmpo)
        rc = wh_mem_copy(out, ko, tmpo, WH_MEM_HOST, len);
    free(tmp);
    free(tmpo);
    return rc;
}

int wh_dtype_unpack_dev(void *buf, size_t count, const wh_dtype_t *t, size_t offset, const void *in, size_t len, int kb,
                        int ki)
{
    size_t total = t->size * count;
    if (offset > total || len > total - offset)
        return wh_error(MPI_ERR_INTERN, "datatype stream range [%zu, %zu) lies outside the %zu-byte message", offset,
                        offset + len, total);
    if (!len)
        return MPI_SUCCESS;
    const char *start;
    if (wh_dtype_is_contig(t, count, buf, &start))
        return wh_mem_copy((char *)start + offset, kb, in, ki, len);
    const char *hin = in;
    char *tmpi = NULL, *tmp = NULL;
    int rc = MPI_SUCCESS;
    if (ki != WH_MEM_HOST) {
        if (!(tmpi = malloc(len)))
            return nomem(len);
        rc = wh_mem_copy(tmpi, WH_MEM_HOST, in, ki, len);
        hin = tmpi;
    }
    if (rc == MPI_SUCCESS && kb == WH_MEM_HOST) {
        rc = wh_dtype_unpack_host(buf, count, t, offset, hin, len);
    } else if (rc == MPI_SUCCESS) {
        MPI_Aint lo, hi;
        span(t, count, &lo, &hi);
        size_t sp = (size_t)(hi - lo);
        /* the span goes back whole, gaps included: only when the whole stream
         * lands now (a partial unpack would rewrite the span every time) */
        char *dev = (char *)((uintptr_t)buf + (uintptr_t)lo);
        if (offset == 0 && len == total && stage_span(sp, len) && (tmp = malloc(sp))) {
            rc = wh_mem_copy(tmp, WH_MEM_HOST, dev, kb, sp);
            if (rc == MPI_SUCCESS)
                rc = wh_dtype_unpack_host((void *)((uintptr_t)tmp - (uintptr_t)lo), count, t, 0, hin, len);
            if (rc == MPI_SUCCESS)
                rc = wh_mem_copy(dev, kb, tmp, WH_MEM_HOST, sp);
        } else {
            rc = blocks(buf, count, t, offset, (char *)hin, len, kb, 1);
        }
    }
    free(tmp);
    free(tmpi);
    return rc;
}
