/* Shared by the MPI-IO entry files (file.c, file_rw.c). */
#ifndef WH_MPI_FILE_H
#define WH_MPI_FILE_H
#include "io/io.h"

/* fh as an open file, or raise MPI_ERR_FILE on MPI_FILE_NULL's handler */
static inline int wh_file_arg(const char *fname, MPI_File fh, wh_file_t **f)
{
    if ((*f = wh_file_get(fh)))
        return MPI_SUCCESS;
    if (fh == MPI_FILE_NULL)
        return wh_raise_file(NULL, fname, wh_error(MPI_ERR_FILE, "fh is MPI_FILE_NULL"));
    return wh_raise_file(NULL, fname, wh_error(MPI_ERR_FILE, "fh %p is not an open file (closed or never opened)",
                                               (void *)fh));
}

/* declares f and returns the raised error when fh is not an open file */
#define FILE_ARG(fname, fh, f)                                                                    \
    wh_file_t *f;                                                                                 \
    do {                                                                                          \
        int rc_ = wh_file_arg((fname), (fh), &f);                                                 \
        if (rc_)                                                                                  \
            return rc_;                                                                           \
    } while (0)
#endif
