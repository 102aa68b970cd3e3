/* MPI-IO data access entry points: read/write with explicit offsets, the
 * individual and the shared file pointer, collective (_all), ordered, split
 * collective (_begin/_end) and nonblocking (i*) forms, int and _c.  One
 * function does the work (rw); nonblocking forms complete at once and return
 * a finished generalized request carrying the status, as ROMIO does for file
 * systems without asynchronous I/O. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "io/io.h"
#include "mpi/api.h"
#include "mpi/file.h"

enum where { AT, IND, SHARED, ORDERED };

static void status_bytes(MPI_Status *st, size_t bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    MPI_Count b = (MPI_Count)bytes;
    st->count_lo = (int)(unsigned)(b & 0xffffffff);
    st->count_hi_and_cancelled = (int)((b >> 32) << 1);
}

/* positions for MPI_File_*_ordered: rank order over the shared pointer */
static int ordered_pos(wh_file_t *f, MPI_Offset mine, MPI_Offset *pos)
{
    int n = f->comm->size;
    MPI_Offset *all = malloc(sizeof(MPI_Offset) * (size_t)n);
    if (!all)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    wh_dtype_t *ll = wh_dtype_get(MPI_LONG_LONG);
    int rc = wh_allgather(&mine, 1, ll, all, 1, ll, f->comm);
    MPI_Offset before = 0, total = 0, base = 0;
    for (int r = 0; r < n; r++) {
        before += r < f->comm->rank ? all[r] : 0;
        total += all[r];
    }
    free(all);
    if (rc == MPI_SUCCESS && f->comm->rank == 0)
        rc = wh_file_shfp_add(f, total, &base);
    rc = wh_file_agree(f->comm, rc);
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(&base, 1, ll, 0, f->comm);
    *pos = base + before;
    return rc;
}

static int rw(const char *fname, wh_file_t *f, int write, int where, int coll, MPI_Offset offset, void *buf,
              MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    wh_dtype_t *dt = wh_dtype_get(datatype);
    size_t n = 0;
    int rc = MPI_SUCCESS;
    if (write && (f->amode & MPI_MODE_RDONLY))
        rc = wh_error(MPI_ERR_READ_ONLY, "the file is open MPI_MODE_RDONLY");
    else if (!write && (f->amode & MPI_MODE_WRONLY))
        rc = wh_error(MPI_ERR_ACCESS, "the file is open MPI_MODE_WRONLY");
    else if ((f->amode & MPI_MODE_SEQUENTIAL) && (where == AT || where == IND))
        rc = wh_error(MPI_ERR_UNSUPPORTED_OPERATION, "%s on a MPI_MODE_SEQUENTIAL file (only shared file pointers)",
                      where == AT ? "explicit offsets" : "the individual file pointer");
    else if (count < 0)
        rc = wh_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    else if (!dt)
        rc = wh_error(MPI_ERR_TYPE, "datatype 0x%x is not a valid datatype", (unsigned)datatype);
    else if (!dt->committed)
        rc = wh_error(MPI_ERR_TYPE, "datatype 0x%x is not committed", (unsigned)datatype);
    else if (where == AT && offset < 0)
        rc = wh_error(MPI_ERR_ARG, "negative offset %lld", (long long)offset);
    else if ((rc = wh_dtype_bytes_checked(dt, count, &n)) != MPI_SUCCESS)
        ;
    else if (n % f->etype->size)
        rc = wh_error(MPI_ERR_IO, "only whole etypes can be accessed: %zu bytes with an etype of %zu bytes", n,
                      f->etype->size);
    else if (!buf && n)
        rc = wh_error(MPI_ERR_BUFFER, "buf is NULL");
    if (where == ORDERED) /* its positions are agreed collectively: fail together */
        rc = wh_file_agree(f->comm, rc);
    if (rc != MPI_SUCCESS)
        return wh_raise_file(f, fname, rc);
    MPI_Offset netypes = (MPI_Offset)(n / f->etype->size), pos = offset;
    if (where == IND)
        pos = f->fp;
    else if (where == SHARED)
        rc = wh_file_shfp_add(f, netypes, &pos);
    else if (where == ORDERED)
        rc = ordered_pos(f, netypes, &pos);
    size_t bytes = 0;
    if (rc == MPI_SUCCESS)
        rc = wh_file_rw(f, write, pos, buf, count, dt, &bytes);
    if (where == IND)
        f->fp += (MPI_Offset)(bytes / f->etype->size);
    (void)coll; /* collective access is independent access here (io.h) */
    if (rc == MPI_SUCCESS)
        status_bytes(status, bytes);
    return wh_raise_file(f, fname, rc);
}

static int blocking(const char *fname, MPI_File fh, int write, int where, int coll, MPI_Offset offset, const void *buf,
                    MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    FILE_ARG(fname, fh, f);
    if (coll && f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "a split collective is active on the file"));
    return rw(fname, f, write, where, coll, offset, (void *)buf, count, datatype, status);
}

/* ---------- nonblocking: done now, a completed generalized request ---------- */

static int q_fn(void *extra, MPI_Status *st)
{
    int err = st->MPI_ERROR;
    *st = *(MPI_Status *)extra;
    st->MPI_ERROR = err;
    return MPI_SUCCESS;
}
static int free_fn(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static int nonblocking(const char *fname, MPI_File fh, int write, int where, int coll, MPI_Offset offset,
                       const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    FILE_ARG(fname, fh, f);
    if (!request)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "request is NULL"));
    MPI_Status *st = calloc(1, sizeof *st);
    if (!st)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    int rc = rw(fname, f, write, where, coll, offset, (void *)buf, count, datatype, st);
    if (rc != MPI_SUCCESS) {
        free(st);
        return rc;
    }
    if (PMPI_Grequest_start(q_fn, free_fn, cancel_fn, st, request) != MPI_SUCCESS) {
        free(st);
        return wh_raise_file(f, fname, wh_error(MPI_ERR_NO_MEM, "out of memory for a request"));
    }
    PMPI_Grequest_complete(*request);
    return MPI_SUCCESS;
}

/* ---------- split collectives: the work in _begin, the status at _end ---------- */

static int split_begin(const char *fname, MPI_File fh, int write, int where, MPI_Offset offset, const void *buf,
                       MPI_Count count, MPI_Datatype datatype)
{
    FILE_ARG(fname, fh, f);
    if (f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "a split collective is already active on the file"));
    memset(&f->split_status, 0, sizeof f->split_status);
    int rc = rw(fname, f, write, where, 1, offset, (void *)buf, count, datatype, &f->split_status);
    if (rc == MPI_SUCCESS) {
        f->split_active = 1;
        f->split_buf = buf;
    }
    return rc;
}

static int split_end(const char *fname, MPI_File fh, const void *buf, MPI_Status *status)
{
    FILE_ARG(fname, fh, f);
    if (!f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "no split collective is active on the file"));
    if (buf != f->split_buf)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "buf differs from the one given to the _begin call"));
    f->split_active = 0;
    if (status != MPI_STATUS_IGNORE)
        *status = f->split_status;
    return MPI_SUCCESS;
}

/* ---------- the entry bodies ---------- */

static int body_File_read(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return blocking(fname, fh, 0, IND, 0, 0, buf, count, datatype, status);
}

static int body_File_read_all(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return blocking(fname, fh, 0, IND, 1, 0, buf, count, datatype, status);
}

static int body_File_read_shared(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                 MPI_Status *status)
{
    return blocking(fname, fh, 0, SHARED, 0, 0, buf, count, datatype, status);
}

static int body_File_read_ordered(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Status *status)
{
    return blocking(fname, fh, 0, ORDERED, 1, 0, buf, count, datatype, status);
}

static int body_File_write(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return blocking(fname, fh, 1, IND, 0, 0, buf, count, datatype, status);
}

static int body_File_write_all(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Status *status)
{
    return blocking(fname, fh, 1, IND, 1, 0, buf, count, datatype, status);
}

static int body_File_write_shared(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Status *status)
{
    return blocking(fname, fh, 1, SHARED, 0, 0, buf, count, datatype, status);
}

static int body_File_write_ordered(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Status *status)
{
    return blocking(fname, fh, 1, ORDERED, 1, 0, buf, count, datatype, status);
}

static int body_File_read_at(const char *fname, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return blocking(fname, fh, 0, AT, 0, offset, buf, count, datatype, status);
}

static int body_File_read_at_all(const char *fname, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Status *status)
{
    return blocking(fname, fh, 0, AT, 1, offset, buf, count, datatype, status);
}

static int body_File_write_at(const char *fname, MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    return blocking(fname, fh, 1, AT, 0, offset, buf, count, datatype, status);
}

static int body_File_write_at_all(const char *fname, MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Status *status)
{
    return blocking(fname, fh, 1, AT, 1, offset, buf, count, datatype, status);
}

static int body_File_iread(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return nonblocking(fname, fh, 0, IND, 0, 0, buf, count, datatype, request);
}

static int body_File_iread_all(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Request *request)
{
    return nonblocking(fname, fh, 0, IND, 1, 0, buf, count, datatype, request);
}

static int body_File_iread_shared(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                                  MPI_Request *request)
{
    return nonblocking(fname, fh, 0, SHARED, 0, 0, buf, count, datatype, request);
}

static int body_File_iwrite(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return nonblocking(fname, fh, 1, IND, 0, 0, buf, count, datatype, request);
}

static int body_File_iwrite_all(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                MPI_Request *request)
{
    return nonblocking(fname, fh, 1, IND, 1, 0, buf, count, datatype, request);
}

static int body_File_iwrite_shared(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Request *request)
{
    return nonblocking(fname, fh, 1, SHARED, 0, 0, buf, count, datatype, request);
}

static int body_File_iread_at(const char *fname, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Request *request)
{
    return nonblocking(fname, fh, 0, AT, 0, offset, buf, count, datatype, request);
}

static int body_File_iread_at_all(const char *fname, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Request *request)
{
    return nonblocking(fname, fh, 0, AT, 1, offset, buf, count, datatype, request);
}

static int body_File_iwrite_at(const char *fname, MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Request *request)
{
    return nonblocking(fname, fh, 1, AT, 0, offset, buf, count, datatype, request);
}

static int body_File_iwrite_at_all(const char *fname, MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype, MPI_Request *request)
{
    return nonblocking(fname, fh, 1, AT, 1, offset, buf, count, datatype, request);
}

static int body_File_read_all_begin(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fname, fh, 0, IND, 0, buf, count, datatype);
}
static int body_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end("MPI_File_read_all_end", fh, buf, status);
}

static int body_File_read_ordered_begin(const char *fname, MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fname, fh, 0, ORDERED, 0, buf, count, datatype);
}
static int body_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end("MPI_File_read_ordered_end", fh, buf, status);
}

static int body_File_write_all_begin(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fname, fh, 1, IND, 0, buf, count, datatype);
}
static int body_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end("MPI_File_write_all_end", fh, buf, status);
}

static int body_File_write_ordered_begin(const char *fname, MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fname, fh, 1, ORDERED, 0, buf, count, datatype);
}
static int body_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end("MPI_File_write_ordered_end", fh, buf, status);
}

/* explicit-offset split collectives */
static int body_File_read_at_all_begin(const char *fname, MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                       MPI_Datatype datatype)
{
    return split_begin(fname, fh, 0, AT, offset, buf, count, datatype);
}
static int body_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    return split_end("MPI_File_read_at_all_end", fh, buf, status);
}
static int body_File_write_at_all_begin(const char *fname, MPI_File fh, MPI_Offset offset, const void *buf,
                                        MPI_Count count, MPI_Datatype datatype)
{
    return split_begin(fname, fh, 1, AT, offset, buf, count, datatype);
}
static int body_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    return split_end("MPI_File_write_at_all_end", fh, buf, status);
}

#include "entry/file_rw.h"
