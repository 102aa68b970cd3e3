/* MPI-IO entry points: open/close/delete, views, size, pointers, info,
 * atomicity, handle conversion.  Data access is in file_rw.c, the work in
 * src/io.  Errors go to the file's error handler (MPI_ERRORS_RETURN unless
 * changed); errors of MPI_File_open/delete to MPI_FILE_NULL's. */
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "io/io.h"
#include "mpi/api.h"
#include "mpi/file.h"

#define CHK_PTR_F(f, fname, p, name)                                                              \
    do {                                                                                          \
        if (!(p))                                                                                 \
            return wh_raise_file((f), (fname), wh_error(MPI_ERR_ARG, "%s is NULL", (name)));      \
    } while (0)

static int body_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fname[] = "MPI_File_open";
    wh_comm_t *c = wh_comm_get(comm);
    if (!c)
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_COMM, "comm 0x%x is not a valid communicator", (unsigned)comm));
    if (c->is_inter)
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_COMM, "MPI_File_open needs an intracommunicator"));
    CHK_PTR_F(NULL, fname, filename, "filename");
    CHK_PTR_F(NULL, fname, fh, "fh");
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    wh_file_t *f;
    int rc = wh_file_open(c, filename, amode, info, &f);
    if (rc != MPI_SUCCESS) {
        *fh = MPI_FILE_NULL;
        return wh_raise_file(NULL, fname, rc);
    }
    *fh = wh_file_handle(f);
    return MPI_SUCCESS;
}

static int body_File_close(MPI_File *fh)
{
    static const char fname[] = "MPI_File_close";
    CHK_PTR_F(NULL, fname, fh, "fh");
    FILE_ARG(fname, *fh, f);
    if (f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "a split collective is still active on the file"));
    int rc = wh_file_close(f);
    *fh = MPI_FILE_NULL;
    return wh_raise_file(NULL, fname, rc);
}

static int body_File_delete(const char *filename, MPI_Info info)
{
    static const char fname[] = "MPI_File_delete";
    CHK_PTR_F(NULL, fname, filename, "filename");
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    return wh_raise_file(NULL, fname, wh_file_delete(filename));
}

/* MPI_File_set_size and MPI_File_preallocate: same checks, agreed, then rank 0 acts */
static int resize(const char *fname, MPI_File fh, MPI_Offset size, int grow_only)
{
    FILE_ARG(fname, fh, f);
    int rc = size < 0 ? wh_error(MPI_ERR_ARG, "negative size %lld", (long long)size)
             : (f->amode & MPI_MODE_RDONLY) ? wh_error(MPI_ERR_READ_ONLY, "the file is open MPI_MODE_RDONLY")
             : (f->amode & MPI_MODE_SEQUENTIAL)
                 ? wh_error(MPI_ERR_UNSUPPORTED_OPERATION, "%s on a MPI_MODE_SEQUENTIAL file", fname)
                 : MPI_SUCCESS;
    rc = wh_file_agree(f->comm, rc);
    if (rc == MPI_SUCCESS)
        rc = wh_file_set_size(f, size, grow_only);
    return wh_raise_file(f, fname, rc);
}

static int body_File_set_size(MPI_File fh, MPI_Offset size) { return resize("MPI_File_set_size", fh, size, 0); }
static int body_File_preallocate(MPI_File fh, MPI_Offset size) { return resize("MPI_File_preallocate", fh, size, 1); }

static int body_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fname[] = "MPI_File_get_size";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, size, "size");
    return wh_raise_file(f, fname, wh_file_size(f, size));
}

static int body_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fname[] = "MPI_File_get_group";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, group, "group");
    wh_group_t *g = wh_comm_group(f->comm);
    if (!g)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

static int body_File_get_amode(MPI_File fh, int *amode)
{
    static const char fname[] = "MPI_File_get_amode";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, amode, "amode");
    *amode = f->amode;
    return MPI_SUCCESS;
}

static int body_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fname[] = "MPI_File_set_info";
    FILE_ARG(fname, fh, f);
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_file(f, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    MPI_Info n;
    if (PMPI_Info_dup(info, &n) != MPI_SUCCESS)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    f->info = n;
    return MPI_SUCCESS;
}

static int body_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fname[] = "MPI_File_get_info";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, info_used, "info_used");
    int rc = f->info != MPI_INFO_NULL ? PMPI_Info_dup(f->info, info_used) : PMPI_Info_create(info_used);
    if (rc == MPI_SUCCESS) /* what this implementation does, as ROMIO reports its hints */
        rc = PMPI_Info_set(*info_used, "romio_cb_read", "disable") || PMPI_Info_set(*info_used, "romio_cb_write", "disable");
    return rc == MPI_SUCCESS ? MPI_SUCCESS : wh_raise_file(f, fname, wh_error(MPI_ERR_NO_MEM, "out of memory"));
}

static int body_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                              const char *datarep, MPI_Info info)
{
    static const char fname[] = "MPI_File_set_view";
    FILE_ARG(fname, fh, f);
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_file(f, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    if (f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "a split collective is active on the file"));
    return wh_raise_file(f, fname, wh_file_set_view(f, disp, etype, filetype, datarep));
}

static int body_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                              char *datarep)
{
    static const char fname[] = "MPI_File_get_view";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, disp, "disp");
    CHK_PTR_F(f, fname, etype, "etype");
    CHK_PTR_F(f, fname, filetype, "filetype");
    CHK_PTR_F(f, fname, datarep, "datarep");
    *disp = f->disp;
    /* derived types come back as new handles the caller frees (MPI-4.1 13.3) */
    if (f->etype->predefined)
        *etype = f->etype_h;
    else if (PMPI_Type_dup(f->etype_h, etype) != MPI_SUCCESS)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_INTERN, "cannot duplicate the etype"));
    if (f->ftype->predefined)
        *filetype = f->ftype_h;
    else if (PMPI_Type_dup(f->ftype_h, filetype) != MPI_SUCCESS)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_INTERN, "cannot duplicate the filetype"));
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->datarep);
    return MPI_SUCCESS;
}

static int body_File_get_type_extent(const char *fname, int large, MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent,
                                     MPI_Count *extent_c)
{
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, large ? (void *)extent_c : (void *)extent, "extent");
    wh_dtype_t *t = wh_dtype_get(datatype);
    if (!t)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_TYPE, "datatype 0x%x is not valid", (unsigned)datatype));
    MPI_Aint ext = t->extent; /* "native" and "internal": the memory extent */
    size_t xb = 0;
    if (f->ext32 && t->predefined && wh_dtype_ext32_bytes(t, 1, &xb) == MPI_SUCCESS)
        ext = (MPI_Aint)xb; /* a predefined type's external32 size */
    if (f->drep && t->predefined) {
        int rc = f->drep->extent_fn(datatype, &ext, f->drep->extra);
        if (rc != MPI_SUCCESS)
            return wh_raise_file(f, fname, wh_error(rc, "the extent function of data representation '%s' "
                                                        "returned %d", f->drep->name, rc));
    }
    if (large)
        *extent_c = ext;
    else
        *extent = ext;
    return MPI_SUCCESS;
}

static int register_datarep(const char *fname, const char *datarep, const wh_datarep_t *fns)
{
    int rc = wh_datarep_register(datarep, fns);
    return rc == MPI_SUCCESS ? rc : wh_raise_file(NULL, fname, rc);
}

static int body_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                                 MPI_Datarep_conversion_function *write_conversion_fn,
                                 MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    wh_datarep_t fns = {.read_fn = read_conversion_fn, .write_fn = write_conversion_fn,
                        .extent_fn = dtype_file_extent_fn, .extra = extra_state};
    return register_datarep("MPI_Register_datarep", datarep, &fns);
}

static int body_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                                   MPI_Datarep_conversion_function_c *write_conversion_fn,
                                   MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    wh_datarep_t fns = {.read_fn_c = read_conversion_fn, .write_fn_c = write_conversion_fn,
                        .extent_fn = dtype_file_extent_fn, .extra = extra_state};
    return register_datarep("MPI_Register_datarep_c", datarep, &fns);
}

static int body_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fname[] = "MPI_File_set_atomicity";
    FILE_ARG(fname, fh, f);
    int v[2] = {!!flag, -!!flag}, got[2];
    int rc = wh_allreduce(v, got, 2, MPI_INT, wh_dtype_get(MPI_INT), wh_op_get(MPI_MAX), f->comm);
    if (rc == MPI_SUCCESS && got[0] != -got[1])
        rc = wh_error(MPI_ERR_ARG, "ranks passed different flags to MPI_File_set_atomicity");
    if (rc == MPI_SUCCESS)
        f->atomic = !!flag;
    return wh_raise_file(f, fname, rc);
}

static int body_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fname[] = "MPI_File_get_atomicity";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, flag, "flag");
    *flag = f->atomic;
    return MPI_SUCCESS;
}

static int body_File_sync(MPI_File fh)
{
    static const char fname[] = "MPI_File_sync";
    FILE_ARG(fname, fh, f);
    if (f->split_active)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_IO, "a split collective is active on the file"));
    return wh_raise_file(f, fname, wh_file_sync(f));
}

/* ---------- file pointers ---------- */

static int seek_target(wh_file_t *f, MPI_Offset cur, MPI_Offset offset, int whence, MPI_Offset *out)
{
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END)
        WH_CHECK(wh_file_eof_pos(f, &base));
    else
        return wh_error(MPI_ERR_ARG, "whence %d is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END", whence);
    if (base + offset < 0)
        return wh_error(MPI_ERR_ARG, "seeking to a negative position (%lld etypes)", (long long)(base + offset));
    *out = base + offset;
    return MPI_SUCCESS;
}

static int body_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fname[] = "MPI_File_seek";
    FILE_ARG(fname, fh, f);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_seek on a MPI_MODE_SEQUENTIAL file"));
    return wh_raise_file(f, fname, seek_target(f, f->fp, offset, whence, &f->fp));
}

static int body_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fname[] = "MPI_File_seek_shared";
    FILE_ARG(fname, fh, f);
    MPI_Offset cur = 0, to = 0;
    int rc = (f->amode & MPI_MODE_SEQUENTIAL)
                 ? wh_error(MPI_ERR_UNSUPPORTED_OPERATION, "MPI_File_seek_shared on a MPI_MODE_SEQUENTIAL file")
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && f->comm->rank == 0 && (rc = wh_file_shfp_add(f, 0, &cur)) == MPI_SUCCESS)
        rc = seek_target(f, cur, offset, whence, &to);
    /* the same offset and whence everywhere: rank 0's result is the new pointer */
    rc = wh_file_agree(f->comm, rc);
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(&to, 1, wh_dtype_get(MPI_LONG_LONG), 0, f->comm);
    if (rc == MPI_SUCCESS)
        rc = wh_file_shfp_set_all(f, to);
    return wh_raise_file(f, fname, rc);
}

static int body_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fname[] = "MPI_File_get_position";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, offset, "offset");
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_UNSUPPORTED_OPERATION, "individual file pointers are not "
                                                "available on a MPI_MODE_SEQUENTIAL file"));
    *offset = f->fp;
    return MPI_SUCCESS;
}

static int body_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fname[] = "MPI_File_get_position_shared";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, offset, "offset");
    return wh_raise_file(f, fname, wh_file_shfp_add(f, 0, offset));
}

static int body_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fname[] = "MPI_File_get_byte_offset";
    FILE_ARG(fname, fh, f);
    CHK_PTR_F(f, fname, disp, "disp");
    if (offset < 0)
        return wh_raise_file(f, fname, wh_error(MPI_ERR_ARG, "negative offset %lld", (long long)offset));
    return wh_raise_file(f, fname, wh_file_byte_offset(f, offset, disp));
}

#include "entry/file.h"
