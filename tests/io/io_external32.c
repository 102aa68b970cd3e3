/* MPI-IO "external32" views (MPI-4.1 14.5.2): data written through such a view
 * is big-endian in the file, reads convert back, derived and non-contiguous
 * types work, MPI_File_get_type_extent gives external32 sizes, and types whose
 * external32 size differs from the native one (MPI_LONG: 4 vs 8 bytes) are
 * refused with MPI_ERR_UNSUPPORTED_DATAREP.  Found by MPICH's
 * io/external32_derived_dtype.  Each rank writes its own ints. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, errors;
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("rank %d: line %d: ", rank, __LINE__);                                         \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
            errors++;                                                                             \
        }                                                                                         \
    } while (0)

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char dir[64] = "/tmp/wharf-ioext32-XXXXXX", path[96];
    if (rank == 0 && !mkdtemp(dir))
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/data", dir);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open: class %d", eclass(rc));

    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
    CHECK(rc == MPI_SUCCESS, "external32 view of MPI_INT: class %d", eclass(rc));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(strcmp(rep, "external32") == 0, "get_view datarep '%s'", rep);
    MPI_Aint ext = 0;
    MPI_File_get_type_extent(fh, MPI_LONG, &ext);
    CHECK(ext == 4, "external32 extent of MPI_LONG %ld, want 4", (long)ext);

    /* ints at index 4*rank .. 4*rank+3, written through a strided memory type
       (every other int of src) */
    int src[8], got[4] = {0};
    for (int i = 0; i < 8; i++)
        src[i] = (i % 2) ? -1 : 0x01020304 + rank * 0x100000 + i;
    MPI_Datatype strided;
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    rc = MPI_File_write_at_all(fh, 4 * rank, src, 1, strided, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "write_at_all: class %d", eclass(rc));
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);

    /* the file bytes are big-endian */
    unsigned char raw[16];
    rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    rc = MPI_File_read_at(fh, 16 * rank, raw, 16, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "raw read: class %d", eclass(rc));
    for (int i = 0; i < 4; i++) {
        unsigned v = (unsigned)src[2 * i];
        unsigned be = (unsigned)raw[4 * i] << 24 | (unsigned)raw[4 * i + 1] << 16 | (unsigned)raw[4 * i + 2] << 8 |
                      raw[4 * i + 3];
        CHECK(be == v, "file int %d is 0x%08x, want big-endian 0x%08x", i, be, v);
    }
    /* and read back through the external32 view with a derived filetype (every int of mine) */
    MPI_Datatype mine;
    MPI_Type_contiguous(4, MPI_INT, &mine);
    MPI_Type_commit(&mine);
    rc = MPI_File_set_view(fh, (MPI_Offset)16 * rank, MPI_INT, mine, "external32", MPI_INFO_NULL);
    CHECK(rc == MPI_SUCCESS, "external32 view, derived filetype: class %d", eclass(rc));
    rc = MPI_File_read_at(fh, 0, got, 4, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "external32 read: class %d", eclass(rc));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == src[2 * i], "read back [%d] = 0x%x, want 0x%x", i, got[i], src[2 * i]);

    /* MPI_LONG is 4 bytes in external32, 8 here: refused, not silently mis-sized */
    rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL);
    CHECK(eclass(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 view of MPI_LONG: class %d", eclass(rc));
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL);
    long l = 1;
    rc = MPI_File_write_at(fh, 0, &l, 1, MPI_LONG, MPI_STATUS_IGNORE);
    CHECK(eclass(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 write of MPI_LONG: class %d", eclass(rc));

    MPI_Type_free(&strided);
    MPI_Type_free(&mine);
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unlink(path);
        rmdir(dir);
    }
    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errors != 0;
}
