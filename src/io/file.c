/* MPI-IO files: collective open/close, views, size, the shared file pointer
 * (io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "io/io.h"
#include "op/op.h"

wh_tab_t wh_file_tab;
static MPI_Errhandler file_null_errh = MPI_ERRORS_RETURN;

MPI_Errhandler *wh_file_default_errh(void) { return &file_null_errh; }

int wh_raise_file(wh_file_t *f, const char *fname, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    MPI_Errhandler eh = f ? f->errh : file_null_errh;
    wh_errh_t *e = wh_errh_get(eh);
    int kind = e ? e->kind : WH_ERRH_RETURN;
    if (kind == WH_ERRH_RETURN)
        return code;
    if (kind != WH_ERRH_USER)
        wh_fatal(fname, code);
    MPI_File h = f ? wh_file_handle(f) : MPI_FILE_NULL;
    int rc = code;
    e->obj.refs++; /* the handler may free itself */
    ((MPI_File_errhandler_function *)(void (*)(void))e->comm_fn)(&h, &rc);
    wh_errh_release(e);
    return rc;
}

int wh_file_errno(int e, const char *what, const char *path)
{
    int cls = e == ENOENT || e == ENOTDIR ? MPI_ERR_NO_SUCH_FILE
              : e == EACCES || e == EPERM ? MPI_ERR_ACCESS
              : e == EEXIST               ? MPI_ERR_FILE_EXISTS
              : e == EROFS                ? MPI_ERR_READ_ONLY
              : e == ENOSPC || e == EFBIG ? MPI_ERR_NO_SPACE
              : e == EDQUOT               ? MPI_ERR_QUOTA
              : e == ENAMETOOLONG || e == EISDIR || e == EINVAL ? MPI_ERR_BAD_FILE
              : e == ETXTBSY              ? MPI_ERR_FILE_IN_USE
                                          : MPI_ERR_IO;
    return wh_error(cls, "%s '%.200s': %s", what, path, strerror(e));
}

/* ROMIO accepts "ufs:/path" and friends: the prefix names a file system driver */
static const char *strip_prefix(const char *name)
{
    static const char *fs[] = {"ufs", "nfs", "lustre", "gpfs", "pvfs2", "panfs", "xfs", "testfs", "daos", "file"};
    const char *colon = strchr(name, ':');
    if (!colon)
        return name;
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        if ((size_t)(colon - name) == strlen(fs[i]) && !strncmp(name, fs[i], strlen(fs[i])))
            return colon + 1;
    return name;
}

static int check_amode(int amode)
{
    int acc = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0);
    if (acc != 1)
        return wh_error(MPI_ERR_AMODE, "amode 0x%x needs exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR",
                        (unsigned)amode);
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return wh_error(MPI_ERR_AMODE, "amode 0x%x: MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL",
                        (unsigned)amode);
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return wh_error(MPI_ERR_AMODE, "amode 0x%x: MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL", (unsigned)amode);
    int known = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL |
                MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    if (amode & ~known)
        return wh_error(MPI_ERR_AMODE, "amode 0x%x has unknown bits 0x%x", (unsigned)amode, (unsigned)(amode & ~known));
    return MPI_SUCCESS;
}

/* every rank's error class -> the worst one, agreed; my code if it is mine */
int wh_file_agree(wh_comm_t *c, int rc)
{
    int mine = rc == MPI_SUCCESS ? 0 : wh_error_class(rc), worst = 0;
    int arc = wh_allreduce(&mine, &worst, 1, MPI_INT, wh_dtype_get(MPI_INT), wh_op_get(MPI_MAX), c);
    if (arc != MPI_SUCCESS)
        return arc;
    if (!worst)
        return MPI_SUCCESS;
    return rc != MPI_SUCCESS ? rc : wh_error(worst, "another rank of the communicator failed (%s)",
                                             wh_err_class_name(worst) ? wh_err_class_name(worst) : "error");
}

static void file_destroy(wh_file_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->shfp_fd >= 0)
        close(f->shfp_fd);
    if (f->comm)
        wh_comm_free(f->comm);
    if (f->etype)
        wh_dtype_release(f->etype);
    if (f->ftype)
        wh_dtype_release(f->ftype);
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    wh_errh_release(wh_errh_get(f->errh));
    free(f->path);
    free(f->shfp_path);
    wh_tab_free(&wh_file_tab, f);
}

int wh_file_open(wh_comm_t *c, const char *name, int amode, MPI_Info info, wh_file_t **out)
{
    if (!wh_file_tab.objsize)
        wh_tab_init(&wh_file_tab, WH_H_FILE, sizeof(wh_file_t));
    int rc = check_amode(amode);
    /* the same amode everywhere */
    int mm[2] = {amode, -amode}, got[2] = {0, 0};
    int arc = wh_allreduce(mm, got, 2, MPI_INT, wh_dtype_get(MPI_INT), wh_op_get(MPI_MAX), c);
    if (arc != MPI_SUCCESS)
        return arc;
    if (rc == MPI_SUCCESS && got[0] != -got[1])
        rc = wh_error(MPI_ERR_AMODE, "ranks passed different amodes to MPI_File_open (0x%x here)", (unsigned)amode);
    const char *path = strip_prefix(name);
    if (rc == MPI_SUCCESS && !*path)
        rc = wh_error(MPI_ERR_BAD_FILE, "empty file name");
    WH_CHECK(wh_file_agree(c, rc));

    wh_file_t *f = wh_tab_alloc(&wh_file_tab);
    if (!f)
        return wh_file_agree(c, wh_error(MPI_ERR_NO_MEM, "out of memory opening '%.200s'", path));
    f->fd = f->shfp_fd = -1;
    f->amode = amode;
    f->info = MPI_INFO_NULL;
    f->errh = file_null_errh;
    wh_errh_t *eh = wh_errh_get(f->errh);
    if (eh && eh->kind == WH_ERRH_USER)
        eh->obj.refs++;
    f->etype_h = f->ftype_h = MPI_BYTE;
    f->etype = wh_dtype_get(MPI_BYTE);
    f->ftype = wh_dtype_get(MPI_BYTE);
    wh_dtype_addref(f->etype);
    wh_dtype_addref(f->ftype);
    snprintf(f->datarep, sizeof f->datarep, "native");
    rc = wh_comm_dup(c, &f->comm);
    if (rc == MPI_SUCCESS && !(f->path = strdup(path)))
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory");
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL && PMPI_Info_dup(info, &f->info) != MPI_SUCCESS)
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory copying the info of MPI_File_open");
    if ((rc = wh_file_agree(c, rc)) != MPI_SUCCESS) {
        file_destroy(f);
        return rc;
    }
    int flags = (amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR) | O_CLOEXEC;
    /* rank 0 creates (exclusively if asked), then the others open what exists */
    if (f->comm->rank == 0) {
        int cf = flags | (amode & MPI_MODE_CREATE ? O_CREAT : 0) | (amode & MPI_MODE_EXCL ? O_EXCL : 0);
        f->fd = open(path, cf, 0666);
        if (f->fd < 0)
            rc = wh_file_errno(errno, "cannot open", path);
    }
    int r0 = rc == MPI_SUCCESS ? 0 : wh_error_class(rc);
    WH_CHECK(wh_bcast(&r0, 1, wh_dtype_get(MPI_INT), 0, f->comm));
    if (f->comm->rank != 0 && r0 == 0) {
        f->fd = open(path, flags, 0666);
        if (f->fd < 0)
            rc = wh_file_errno(errno, "cannot open", path);
    } else if (f->comm->rank != 0)
        rc = wh_error(r0, "rank 0 could not open '%.200s'", path);
    if (rc == MPI_SUCCESS) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            rc = wh_file_errno(errno, "cannot stat", path);
        else if (S_ISDIR(st.st_mode))
            rc = wh_error(MPI_ERR_BAD_FILE, "'%.200s' is a directory", path);
    }
    /* the shared file pointer's side file: named by rank 0, created on first use */
    char side[4096] = "";
    if (f->comm->rank == 0)
        snprintf(side, sizeof side, "%s.wharf-shfp.%d.%x", path, (int)getpid(), (unsigned)f->comm->ctx);
    int brc = wh_bcast(side, sizeof side, wh_dtype_get(MPI_CHAR), 0, f->comm);
    if (rc == MPI_SUCCESS)
        rc = brc;
    if (rc == MPI_SUCCESS && !(f->shfp_path = strdup(side)))
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory");
    if ((rc = wh_file_agree(c, rc)) != MPI_SUCCESS) {
        if (f->comm->rank == 0 && r0 == 0 && (amode & MPI_MODE_CREATE) && (amode & MPI_MODE_EXCL))
            unlink(path); /* we created it; the open failed elsewhere */
        file_destroy(f);
        return rc;
    }
    if (amode & MPI_MODE_APPEND) { /* both file pointers start at the end (rank 0's view of it) */
        MPI_Offset sz = 0;
        if (f->comm->rank == 0)
            wh_file_size(f, &sz);
        WH_CHECK(wh_bcast(&sz, 1, wh_dtype_get(MPI_LONG_LONG), 0, f->comm));
        f->fp = f->shfp_init = sz;
    }
    *out = f;
    return MPI_SUCCESS;
}

int wh_file_close(wh_file_t *f)
{
    int rc = wh_barrier(f->comm); /* everybody is done with the file and its side file */
    if (f->comm->rank == 0) {
        if (f->shfp_path)
            unlink(f->shfp_path);
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(f->path) != 0 && rc == MPI_SUCCESS)
            rc = wh_file_errno(errno, "cannot delete (MPI_MODE_DELETE_ON_CLOSE)", f->path);
    }
    if (f->fd >= 0 && close(f->fd) != 0 && rc == MPI_SUCCESS)
        rc = wh_file_errno(errno, "cannot close", f->path);
    f->fd = -1;
    file_destroy(f);
    return rc;
}

int wh_file_delete(const char *name)
{
    const char *path = strip_prefix(name);
    if (unlink(path) != 0)
        return wh_file_errno(errno, "cannot delete", path);
    return MPI_SUCCESS;
}

int wh_file_size(wh_file_t *f, MPI_Offset *size)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return wh_file_errno(errno, "cannot stat", f->path);
    *size = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

int wh_file_set_size(wh_file_t *f, MPI_Offset size, int grow_only)
{
    int rc = MPI_SUCCESS;
    if (f->comm->rank == 0) {
        MPI_Offset cur = 0;
        rc = wh_file_size(f, &cur);
        if (rc == MPI_SUCCESS && (!grow_only || size > cur)) {
            int e = grow_only ? posix_fallocate(f->fd, 0, (off_t)size) : (ftruncate(f->fd, (off_t)size) ? errno : 0);
            if (e == EOPNOTSUPP || e == EINVAL) /* no fallocate here: extend instead */
                e = ftruncate(f->fd, (off_t)size) ? errno : 0;
            if (e)
                rc = wh_file_errno(e, grow_only ? "cannot preallocate" : "cannot resize", f->path);
        }
    }
    return wh_file_agree(f->comm, rc);
}

int wh_file_sync(wh_file_t *f)
{
    int rc = MPI_SUCCESS;
    if ((f->amode & MPI_MODE_RDONLY) == 0 && fsync(f->fd) != 0 && errno != EINVAL)
        rc = wh_file_errno(errno, "cannot sync", f->path);
    return wh_file_agree(f->comm, rc);
}

/* MPI-4.1 14.3: the typemap displacements of an etype or filetype must be nonnegative and
 * monotonically nondecreasing, and must not overlap when the file is opened for writing.
 * Walks the blocks of one element (stream order, adjacent ones merged) at a fake base; the
 * class is MPI_ERR_IO, as MPICH's ROMIO answers. */
static int view_type_check(const wh_dtype_t *t, const char *what, int writable)
{
    if (t->true_lb < 0)
        return wh_error(MPI_ERR_IO, "the %s has negative displacements", what);
    char *const base = (char *)(uintptr_t)0x10000;
    struct iovec iov[64];
    size_t at = 0;
    MPI_Aint prev_start = 0, prev_end = 0;
    while (at < t->size) {
        size_t covered = 0;
        int n = wh_dtype_iov(base, 1, t, at, t->size - at, iov, 64, &covered);
        if (n <= 0 || covered == 0)
            return wh_error(MPI_ERR_INTERN, "%s: no data blocks at byte %zu", what, at);
        for (int i = 0; i < n; i++) {
            MPI_Aint s = (MPI_Aint)((char *)iov[i].iov_base - base), e = s + (MPI_Aint)iov[i].iov_len;
            if (at > 0 || i > 0) {
                if (s < prev_start)
                    return wh_error(MPI_ERR_IO, "the %s's displacements are not monotonically nondecreasing "
                                    "(block at byte %lld after one at %lld)", what, (long long)s, (long long)prev_start);
                if (writable && s < prev_end)
                    return wh_error(MPI_ERR_IO, "the %s has overlapping blocks (bytes %lld..%lld and %lld..), "
                                    "not allowed on a file opened for writing", what, (long long)prev_start,
                                    (long long)prev_end, (long long)s);
            }
            prev_start = s;
            prev_end = e > prev_end ? e : prev_end;
        }
        at += covered;
    }
    return MPI_SUCCESS;
}

int wh_file_set_view(wh_file_t *f, MPI_Offset disp, MPI_Datatype eh, MPI_Datatype fth, const char *datarep)
{
    wh_dtype_t *et = wh_dtype_get(eh), *ft = wh_dtype_get(fth);
    int rc = MPI_SUCCESS;
    if (!et)
        rc = wh_error(MPI_ERR_TYPE, "etype 0x%x is not a valid datatype", (unsigned)eh);
    else if (!ft)
        rc = wh_error(MPI_ERR_TYPE, "filetype 0x%x is not a valid datatype", (unsigned)fth);
    else if (!et->committed || !ft->committed)
        rc = wh_error(MPI_ERR_TYPE, "the %s is not committed", !et->committed ? "etype" : "filetype");
    else if (et->size == 0)
        rc = wh_error(MPI_ERR_ARG, "the etype has size 0");
    else if (ft->size == 0 || ft->size % et->size)
        rc = wh_error(MPI_ERR_ARG, "the filetype (%zu bytes) is not made of whole etypes (%zu bytes)", ft->size,
                      et->size);
    else if (disp == MPI_DISPLACEMENT_CURRENT && !(f->amode & MPI_MODE_SEQUENTIAL))
        rc = wh_error(MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT needs a file opened with MPI_MODE_SEQUENTIAL");
    else if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT)
        rc = wh_error(MPI_ERR_ARG, "negative displacement %lld", (long long)disp);
    else if (!datarep)
        rc = wh_error(MPI_ERR_ARG, "datarep is NULL");
    if (rc == MPI_SUCCESS)
        rc = view_type_check(et, "etype", !(f->amode & MPI_MODE_RDONLY));
    if (rc == MPI_SUCCESS)
        rc = view_type_check(ft, "filetype", !(f->amode & MPI_MODE_RDONLY));
    const wh_datarep_t *drep = NULL;
    int ext32 = rc == MPI_SUCCESS && !strcmp(datarep, "external32");
    if (ext32) { /* supported where each element's external32 size is its native size */
        size_t eb = 0, fb = 0;
        if (wh_dtype_ext32_bytes(et, 1, &eb) != MPI_SUCCESS || eb != et->size ||
            wh_dtype_ext32_bytes(ft, 1, &fb) != MPI_SUCCESS || fb != ft->size)
            rc = wh_error(MPI_ERR_UNSUPPORTED_DATAREP, "external32 views of types whose external32 size differs "
                          "from the native one (etype %zu/%zu, filetype %zu/%zu bytes) are not supported",
                          eb, et->size, fb, ft->size);
    } else if (rc == MPI_SUCCESS && strcmp(datarep, "native") && strcmp(datarep, "internal")) {
        if (!(drep = wh_datarep_find(datarep)))
            rc = wh_error(MPI_ERR_UNSUPPORTED_DATAREP, "data representation '%.64s' is not supported (native, internal "
                          "and those registered with MPI_Register_datarep)", datarep);
        else
            rc = wh_datarep_check_view(drep, eh, et);
    }
    WH_CHECK(wh_file_agree(f->comm, rc));
    if (disp == MPI_DISPLACEMENT_CURRENT) { /* sequential files: where the shared pointer is */
        MPI_Offset cur = 0;
        WH_CHECK(wh_file_shfp_add(f, 0, &cur));
        WH_CHECK(wh_file_byte_offset(f, cur, &disp));
    }
    wh_dtype_addref(et);
    wh_dtype_addref(ft);
    wh_dtype_release(f->etype);
    wh_dtype_release(f->ftype);
    f->etype = et;
    f->ftype = ft;
    f->etype_h = eh;
    f->ftype_h = fth;
    f->disp = disp;
    f->fp = 0;
    snprintf(f->datarep, sizeof f->datarep, "%s", datarep);
    f->drep = drep;
    f->ext32 = ext32;
    return wh_file_shfp_set_all(f, 0);
}

/* ---------- the shared file pointer: 8 bytes in a side file, under a lock ----------
 * The side file is created by the first access that moves the pointer; until
 * then its value is shfp_init, which every rank knows. */

static int shfp_open(wh_file_t *f, int create)
{
    if (f->shfp_fd >= 0)
        return MPI_SUCCESS;
    f->shfp_fd = open(f->shfp_path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (f->shfp_fd < 0 && (create || errno != ENOENT))
        return wh_file_errno(errno, "cannot open the shared file pointer's file", f->shfp_path);
    return MPI_SUCCESS;
}

static int shfp_lock(wh_file_t *f, int type)
{
    struct flock fl = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(f->shfp_fd, F_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return wh_file_errno(errno, "cannot lock the shared file pointer's file", f->shfp_path);
    return MPI_SUCCESS;
}

int wh_file_shfp_add(wh_file_t *f, MPI_Offset n, MPI_Offset *old)
{
    WH_CHECK(shfp_open(f, n != 0));
    if (f->shfp_fd < 0) { /* never moved */
        *old = f->shfp_init;
        return MPI_SUCCESS;
    }
    WH_CHECK(shfp_lock(f, F_WRLCK));
    int64_t v = 0;
    int rc = MPI_SUCCESS;
    ssize_t got = pread(f->shfp_fd, &v, sizeof v, 0);
    if (got < 0)
        rc = wh_file_errno(errno, "cannot read the shared file pointer", f->shfp_path);
    else if (got != (ssize_t)sizeof v)
        v = f->shfp_init; /* created just now */
    if (rc == MPI_SUCCESS && n) {
        int64_t nv = v + n;
        if (pwrite(f->shfp_fd, &nv, sizeof nv, 0) != (ssize_t)sizeof nv)
            rc = wh_file_errno(errno, "cannot update the shared file pointer", f->shfp_path);
    }
    shfp_lock(f, F_UNLCK);
    *old = v;
    return rc;
}

int wh_file_shfp_set_all(wh_file_t *f, MPI_Offset v)
{
    int rc = wh_barrier(f->comm); /* nobody still moves the old pointer */
    f->shfp_init = v;
    if (rc == MPI_SUCCESS && f->comm->rank == 0 && (rc = shfp_open(f, 0)) == MPI_SUCCESS && f->shfp_fd >= 0 &&
        (rc = shfp_lock(f, F_WRLCK)) == MPI_SUCCESS) {
        int64_t nv = v;
        if (pwrite(f->shfp_fd, &nv, sizeof nv, 0) != (ssize_t)sizeof nv)
            rc = wh_file_errno(errno, "cannot set the shared file pointer", f->shfp_path);
        shfp_lock(f, F_UNLCK);
    }
    WH_CHECK(wh_file_agree(f->comm, rc));
    return wh_barrier(f->comm);
}
