/* MPI-IO: files opened collectively on a communicator, file views built from
 * datatypes, and data access through POSIX pread/pwrite (docs/IO.md).
 *
 * A file is a table object (handle type WH_H_FILE); MPI_File is a pointer type
 * in MPICH's ABI, so the handle int travels in the pointer's bits
 * (wh_file_from/wh_file_handle).  The individual file pointer is per process;
 * the shared file pointer lives in a small side file next to the data file,
 * updated under an fcntl lock, so it works for ranks in different containers
 * that share the directory.  Collective data access is independent access
 * plus the collective's synchronization (no two-phase aggregation yet). */
#ifndef WH_IO_IO_H
#define WH_IO_IO_H
#include <mpi.h>
#include <stdint.h>
#include "core/core.h"
#include "dtype/dtype.h"

/* a data representation registered with MPI_Register_datarep(_c) (datarep.c) */
typedef struct wh_datarep {
    struct wh_datarep *next;
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;       /* MPI_Register_datarep */
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c; /* MPI_Register_datarep_c */
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
} wh_datarep_t;

typedef struct wh_file {
    wh_obj_t obj;
    int fd;
    int amode;
    int atomic;
    wh_comm_t *comm;          /* private duplicate of the communicator of MPI_File_open */
    char *path;               /* as opened (prefix stripped) */
    char *shfp_path;          /* side file of the shared file pointer (created by rank 0) */
    int shfp_fd;
    MPI_Offset shfp_init;     /* its value while the side file does not exist (agreed) */
    MPI_Errhandler errh;
    MPI_Info info;            /* hints as given (MPI_INFO_NULL if none) */
    /* the view */
    MPI_Offset disp;
    MPI_Datatype etype_h, ftype_h;
    wh_dtype_t *etype, *ftype;
    char datarep[MPI_MAX_DATAREP_STRING];
    const wh_datarep_t *drep; /* a registered representation, or NULL (native, internal) */
    int ext32;                /* "external32": big-endian, with the same sizes as native (file.c) */
    MPI_Offset fp;            /* individual file pointer, in etypes of the view */
    /* split collective in progress (MPI_File_*_begin/_end) */
    int split_active;
    const void *split_buf;
    MPI_Status split_status;
    int split_rc;
} wh_file_t;

extern wh_tab_t wh_file_tab;
static inline wh_file_t *wh_file_get(MPI_File fh)
{
    return wh_file_tab.objsize ? wh_tab_get(&wh_file_tab, (int)(intptr_t)fh) : NULL;
}
static inline MPI_File wh_file_handle(const wh_file_t *f) { return (MPI_File)(intptr_t)f->obj.handle; }

/* Raise code on the file's error handler (MPI_FILE_NULL's when f is NULL);
 * the default for files is MPI_ERRORS_RETURN. */
int wh_raise_file(wh_file_t *f, const char *fname, int code);
MPI_Errhandler *wh_file_default_errh(void);

int wh_file_open(wh_comm_t *c, const char *name, int amode, MPI_Info info, wh_file_t **out);
int wh_file_close(wh_file_t *f);
int wh_file_delete(const char *name);
/* datarep.c: register (name and functions from fns; MPI_ERR_DUP_DATAREP if taken), find by name
 * (NULL if not registered), check a view's etype against it, convert count elements of dt at
 * element position between userbuf and the file bytes filebuf (nothing without a function) */
int wh_datarep_register(const char *name, const wh_datarep_t *fns);
const wh_datarep_t *wh_datarep_find(const char *name);
int wh_datarep_check_view(const wh_datarep_t *r, MPI_Datatype etype, const wh_dtype_t *et);
int wh_datarep_convert(const wh_datarep_t *r, int write, void *userbuf, MPI_Datatype dt, MPI_Count count,
                       void *filebuf, MPI_Offset position);
void wh_datarep_finalize(void);
int wh_file_set_view(wh_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ftype, const char *datarep);
int wh_file_set_size(wh_file_t *f, MPI_Offset size, int grow_only);
int wh_file_size(wh_file_t *f, MPI_Offset *size);
int wh_file_sync(wh_file_t *f);

/* Data access.  pos is in etypes of the view; *bytes returns the bytes moved
 * (a read stops at the end of the file). */
int wh_file_rw(wh_file_t *f, int write, MPI_Offset pos, void *buf, MPI_Count count, wh_dtype_t *dt, size_t *bytes);
/* Atomically fetch the shared file pointer and advance it by n etypes. */
int wh_file_shfp_add(wh_file_t *f, MPI_Offset n, MPI_Offset *old);
/* Collective: every rank sets the shared file pointer to v. */
int wh_file_shfp_set_all(wh_file_t *f, MPI_Offset v);
/* Absolute byte offset in the file of view position pos (etypes). */
int wh_file_byte_offset(wh_file_t *f, MPI_Offset pos, MPI_Offset *off);
/* View position (etypes) of the end of the file (MPI_SEEK_END). */
int wh_file_eof_pos(wh_file_t *f, MPI_Offset *pos);
/* Collective: the worst error class of the ranks of f's communicator (my own
 * code when I failed), so that every rank returns an error together. */
int wh_file_agree(wh_comm_t *c, int rc);
/* Error class for an errno from a file system call. */
int wh_file_errno(int e, const char *what, const char *path);
#endif
