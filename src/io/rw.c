/* MPI-IO data access through a file view (io.h).
 *
 * The view's data stream is the filetype's data, tiled every extent from the
 * displacement.  A transfer of n bytes at view byte v asks the datatype engine
 * for the iovecs of stream bytes [v, v+n) of (instances of the filetype laid
 * at a fake base address) and turns them into file offsets; the memory side is
 * used in place when contiguous, else packed/unpacked through a bounce buffer,
 * CHUNK bytes at a time. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "io/io.h"

enum { CHUNK = 4 << 20, NIOV = 64 };
/* file offset o is the address FAKE + o in the filetype's iovecs */
#define FAKE ((char *)(uintptr_t)0x10000)

static int xfer(wh_file_t *f, int write, char *p, size_t len, MPI_Offset off, size_t *done)
{
    *done = 0;
    while (*done < len) {
        ssize_t k = write ? pwrite(f->fd, p + *done, len - *done, (off_t)(off + (MPI_Offset)*done))
                          : pread(f->fd, p + *done, len - *done, (off_t)(off + (MPI_Offset)*done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return wh_file_errno(errno, write ? "write failed on" : "read failed on", f->path);
        if (k == 0) /* end of file (reads only) */
            break;
        *done += (size_t)k;
    }
    return MPI_SUCCESS;
}

/* Move len bytes of view stream from view byte v to/from the contiguous p.
 * *moved < len only when a read met the end of the file. */
static int view_xfer(wh_file_t *f, int write, char *p, size_t len, size_t v, size_t *moved)
{
    const wh_dtype_t *ft = f->ftype;
    size_t inst = (v + len + ft->size - 1) / ft->size + 1;
    struct iovec iov[NIOV];
    *moved = 0;
    while (*moved < len) {
        size_t covered = 0;
        int n = wh_dtype_iov(FAKE, inst, ft, v + *moved, len - *moved, iov, NIOV, &covered);
        if (n <= 0 || covered == 0)
            return wh_error(MPI_ERR_INTERN, "file view: no data blocks at view byte %zu", v + *moved);
        for (int i = 0; i < n; i++) {
            MPI_Offset off = f->disp + (MPI_Offset)((char *)iov[i].iov_base - FAKE);
            size_t got;
            WH_CHECK(xfer(f, write, p + *moved, iov[i].iov_len, off, &got));
            *moved += got;
            if (got < iov[i].iov_len)
                return MPI_SUCCESS; /* end of file */
        }
    }
    return MPI_SUCCESS;
}

static int lock_range(wh_file_t *f, int type)
{
    struct flock fl = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    while (fcntl(f->fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return wh_file_errno(errno, "cannot lock (atomic mode)", f->path);
    return MPI_SUCCESS;
}

/* Convert k elements of dt starting at element `at` of (buf, count) between memory and the file
 * representation in bounce: a user representation's conversion function, or external32
 * (memory <-> packed native in tmp <-> big-endian in bounce; same sizes, set_view checked). */
static int convert(wh_file_t *f, int write, void *buf, MPI_Count count, const wh_dtype_t *dt, MPI_Count at,
                   size_t k, char *bounce, char *tmp)
{
    if (!f->ext32)
        return wh_datarep_convert(f->drep, write, buf, dt->obj.handle, (MPI_Count)k, bounce, at);
    size_t off = (size_t)at * dt->size, len = k * dt->size;
    if (write) {
        WH_CHECK(wh_dtype_pack(buf, (size_t)count, dt, off, tmp, len));
        wh_dtype_to_ext32(dt, k, tmp, bounce);
        return MPI_SUCCESS;
    }
    wh_dtype_from_ext32(dt, k, bounce, tmp);
    return wh_dtype_unpack(buf, (size_t)count, dt, off, tmp, len);
}

/* Transfer through a data representation's conversion, whole elements of dt at a time:
 * memory <-> bounce (file representation, same extents: datarep.c) <-> file through the view. */
static int rw_convert(wh_file_t *f, int write, size_t v, void *buf, MPI_Count count, const wh_dtype_t *dt, size_t n,
                      size_t *bytes)
{
    size_t per = CHUNK / dt->size ? CHUNK / dt->size : 1;
    char *bounce = malloc(per * dt->size), *tmp = f->ext32 ? malloc(per * dt->size) : NULL;
    if (!bounce || (f->ext32 && !tmp)) {
        free(bounce);
        free(tmp);
        return wh_error(MPI_ERR_NO_MEM, "out of memory for a %zu-byte conversion buffer", per * dt->size);
    }
    int rc = f->atomic ? lock_range(f, write ? F_WRLCK : F_RDLCK) : MPI_SUCCESS;
    size_t done = 0;
    for (MPI_Count at = 0; rc == MPI_SUCCESS && at < count;) {
        size_t k = (size_t)(count - at) < per ? (size_t)(count - at) : per, len = k * dt->size, moved = 0;
        if (write)
            rc = convert(f, 1, buf, count, dt, at, k, bounce, tmp);
        if (rc == MPI_SUCCESS)
            rc = view_xfer(f, write, bounce, len, v + done, &moved);
        k = moved / dt->size; /* a read may stop inside an element at the end of the file */
        if (rc == MPI_SUCCESS && !write && k)
            rc = convert(f, 0, buf, count, dt, at, k, bounce, tmp);
        done += moved;
        at += (MPI_Count)k;
        if (moved < len)
            break;
    }
    if (f->atomic)
        lock_range(f, F_UNLCK);
    free(bounce);
    free(tmp);
    *bytes = done < n ? done : n;
    return rc;
}

int wh_file_rw(wh_file_t *f, int write, MPI_Offset pos, void *buf, MPI_Count count, wh_dtype_t *dt, size_t *bytes)
{
    *bytes = 0;
    size_t n;
    WH_CHECK(wh_dtype_bytes_checked(dt, count, &n));
    if (n % f->etype->size)
        return wh_error(MPI_ERR_IO, "only whole etypes can be accessed: %zu bytes with an etype of %zu", n,
                        f->etype->size);
    if (n == 0)
        return MPI_SUCCESS;
    size_t v = (size_t)pos * f->etype->size;
    const char *start = NULL;
    const wh_datarep_t *r = f->drep;
    if (r && (write ? r->write_fn || r->write_fn_c : r->read_fn || r->read_fn_c))
        return rw_convert(f, write, v, buf, count, dt, n, bytes);
    if (f->ext32) {
        size_t xb = 0;
        WH_CHECK(wh_dtype_ext32_bytes(dt, count, &xb));
        if (xb != n)
            return wh_error(MPI_ERR_UNSUPPORTED_DATAREP, "external32 access with a datatype whose external32 size "
                            "(%zu bytes) differs from its native size (%zu)", xb, n);
        return rw_convert(f, write, v, buf, count, dt, n, bytes);
    }
    int contig = wh_dtype_is_contig(dt, (size_t)count, buf, &start);
    char *bounce = NULL;
    if (!contig && !(bounce = malloc(n < CHUNK ? n : CHUNK)))
        return wh_error(MPI_ERR_NO_MEM, "out of memory for a %zu-byte I/O buffer", n < CHUNK ? n : CHUNK);
    int rc = f->atomic ? lock_range(f, write ? F_WRLCK : F_RDLCK) : MPI_SUCCESS;
    size_t done = 0;
    while (rc == MPI_SUCCESS && done < n) {
        size_t len = contig ? n - done : (n - done < CHUNK ? n - done : CHUNK), moved = 0;
        char *p = contig ? (char *)start + done : bounce;
        if (write && !contig)
            rc = wh_dtype_pack(buf, (size_t)count, dt, done, bounce, len);
        if (rc == MPI_SUCCESS)
            rc = view_xfer(f, write, p, len, v + done, &moved);
        if (rc == MPI_SUCCESS && !write && !contig && moved)
            rc = wh_dtype_unpack(buf, (size_t)count, dt, done, bounce, moved);
        done += moved;
        if (moved < len)
            break;
    }
    if (f->atomic)
        lock_range(f, F_UNLCK);
    free(bounce);
    *bytes = done;
    return rc;
}

int wh_file_byte_offset(wh_file_t *f, MPI_Offset pos, MPI_Offset *off)
{
    size_t v = (size_t)pos * f->etype->size;
    struct iovec iov;
    size_t covered = 0;
    int n = wh_dtype_iov(FAKE, v / f->ftype->size + 2, f->ftype, v, 1, &iov, 1, &covered);
    if (n != 1)
        return wh_error(MPI_ERR_INTERN, "file view: no data at view byte %zu", v);
    *off = f->disp + (MPI_Offset)((char *)iov.iov_base - FAKE);
    return MPI_SUCCESS;
}

int wh_file_eof_pos(wh_file_t *f, MPI_Offset *pos)
{
    MPI_Offset sz;
    WH_CHECK(wh_file_size(f, &sz));
    const wh_dtype_t *ft = f->ftype;
    if (sz <= f->disp || ft->extent <= 0) {
        *pos = 0;
        return MPI_SUCCESS;
    }
    MPI_Offset rel = sz - f->disp, inst = rel / ft->extent, rem = rel % ft->extent;
    size_t data = (size_t)inst * ft->size, at = 0;
    struct iovec iov[NIOV];
    while (at < ft->size) { /* the data of one instance that lies below rem */
        size_t covered = 0;
        int n = wh_dtype_iov(FAKE, 1, ft, at, ft->size - at, iov, NIOV, &covered);
        if (n <= 0 || !covered)
            break;
        for (int i = 0; i < n; i++) {
            MPI_Offset b = (MPI_Offset)((char *)iov[i].iov_base - FAKE);
            if (b < rem)
                data += (size_t)(rem - b < (MPI_Offset)iov[i].iov_len ? rem - b : (MPI_Offset)iov[i].iov_len);
        }
        at += covered;
    }
    *pos = (MPI_Offset)((data + f->etype->size - 1) / f->etype->size);
    return MPI_SUCCESS;
}
