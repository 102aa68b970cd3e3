/* MPI-IO view rules (MPI-4.1 14.3): an etype or filetype with negative or
 * decreasing displacements is refused with MPI_ERR_IO; overlapping blocks are
 * refused on a file opened for writing and accepted on a read-only one, where
 * the overlapping filetype then reads the same file bytes twice.  Found by
 * MPICH's io/tst_fileview.  One rank; the file lives in a private directory. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int errors;
#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("line %d: ", __LINE__);                                                        \
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

static MPI_Datatype indexed(int d0, int b0, int d1, int b1)
{
    int bl[2] = {b0, b1}, d[2] = {d0, d1};
    MPI_Datatype t;
    MPI_Type_indexed(2, bl, d, MPI_INT, &t);
    MPI_Type_commit(&t);
    return t;
}

/* set a view with t as etype (as_etype) or as filetype over MPI_INT; return the class */
static int try_view(MPI_File fh, MPI_Datatype t, int as_etype)
{
    int rc = MPI_File_set_view(fh, 0, as_etype ? t : MPI_INT, t, "native", MPI_INFO_NULL);
    return eclass(rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    char dir[] = "/tmp/wharf-ioview-XXXXXX", path[64];
    if (!mkdtemp(dir))
        MPI_Abort(MPI_COMM_WORLD, 2);
    snprintf(path, sizeof path, "%s/data", dir);
    MPI_Datatype neg = indexed(-2, 1, 2, 1), dec = indexed(3, 1, 0, 1), ovl = indexed(0, 3, 1, 1);
    MPI_Datatype fine = indexed(0, 1, 2, 1);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open rdwr: class %d", eclass(rc));
    for (int as_etype = 0; as_etype < 2; as_etype++) {
        const char *w = as_etype ? "etype" : "filetype";
        CHECK(try_view(fh, neg, as_etype) == MPI_ERR_IO, "rdwr, negative %s: class %d", w, try_view(fh, neg, as_etype));
        CHECK(try_view(fh, dec, as_etype) == MPI_ERR_IO, "rdwr, decreasing %s: class %d", w, try_view(fh, dec, as_etype));
        CHECK(try_view(fh, ovl, as_etype) == MPI_ERR_IO, "rdwr, overlapping %s: class %d", w, try_view(fh, ovl, as_etype));
        CHECK(try_view(fh, fine, as_etype) == MPI_SUCCESS, "rdwr, valid %s: class %d", w, try_view(fh, fine, as_etype));
    }
    /* file ints 0..7 */
    int data[8];
    for (int i = 0; i < 8; i++)
        data[i] = 100 + i;
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    rc = MPI_File_write_at(fh, 0, data, 8, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "write: class %d", eclass(rc));
    MPI_File_close(&fh);

    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(rc == MPI_SUCCESS, "open rdonly: class %d", eclass(rc));
    for (int as_etype = 0; as_etype < 2; as_etype++) {
        const char *w = as_etype ? "etype" : "filetype";
        CHECK(try_view(fh, neg, as_etype) == MPI_ERR_IO, "rdonly, negative %s: class %d", w, try_view(fh, neg, as_etype));
        CHECK(try_view(fh, dec, as_etype) == MPI_ERR_IO, "rdonly, decreasing %s: class %d", w, try_view(fh, dec, as_etype));
        CHECK(try_view(fh, ovl, as_etype) == MPI_SUCCESS, "rdonly, overlapping %s: class %d", w,
              try_view(fh, ovl, as_etype));
    }
    /* overlapping filetype on a read-only file: ints 0,1,2 then 1 again */
    rc = MPI_File_set_view(fh, 0, MPI_INT, ovl, "native", MPI_INFO_NULL);
    int got[4] = {0};
    rc = MPI_File_read_at(fh, 0, got, 4, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "read overlapping view: class %d", eclass(rc));
    CHECK(got[0] == 100 && got[1] == 101 && got[2] == 102 && got[3] == 101, "overlapping view read %d %d %d %d",
          got[0], got[1], got[2], got[3]);
    MPI_File_close(&fh);
    MPI_Type_free(&neg);
    MPI_Type_free(&dec);
    MPI_Type_free(&ovl);
    MPI_Type_free(&fine);
    unlink(path);
    rmdir(dir);
    if (errors == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return errors != 0;
}
