/* Parallel HDF5 on wharf: Debian's HDF5 built for MPICH (libhdf5-mpich-dev; its libhdf5 links
 * libmpich.so.12) drives wharf's MPI-IO through its MPI-IO file driver.  Compiled with wharf's
 * mpicc, run by tests/external/hdf5.py in every container scenario.
 *
 * Every rank writes its rows of a 2-D dataset with a collective transfer and of a second one
 * independently, a chunked and compressed dataset collectively (HDF5 filters in parallel need
 * collective writes), then an attribute; the file is closed, reopened read-only, and every rank
 * reads the rows of another rank and the attribute and checks every value.  Exit 0 and "hdf5 ok"
 * on rank 0 when every check passed on every rank. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 64   /* per rank */
#define COLS 1000

static int fails;

#define CHECK(x)                                                                           \
    do {                                                                                   \
        if ((x) < 0) {                                                                     \
            fprintf(stderr, "rank %d: %s failed at line %d\n", rank, #x, __LINE__);        \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                  \
        }                                                                                  \
    } while (0)

static double value(int set, long row, long col)
{
    return set * 1e7 + (double)row * COLS + (double)col;
}

static void fill(double *buf, int set, int owner)
{
    for (long r = 0; r < ROWS; r++)
        for (long c = 0; c < COLS; c++)
            buf[r * COLS + c] = value(set, (long)owner * ROWS + r, c);
}

static void verify(const double *buf, int set, int owner, int rank)
{
    for (long r = 0; r < ROWS; r++)
        for (long c = 0; c < COLS; c++)
            if (buf[r * COLS + c] != value(set, (long)owner * ROWS + r, c)) {
                if (fails++ < 5)
                    fprintf(stderr, "rank %d: dataset %d row %ld col %ld: %g, expected %g\n", rank, set,
                            (long)owner * ROWS + r, c, buf[r * COLS + c], value(set, (long)owner * ROWS + r, c));
            }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "wharf-hdf5.h5";
    double *buf = malloc(sizeof(double) * ROWS * COLS);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 3);

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file);
    hsize_t dims[2] = {(hsize_t)size * ROWS, COLS}, start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL), mem = H5Screate_simple(2, count, NULL);
    hid_t chunked = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[2] = {ROWS / 2, COLS / 4};
    CHECK(H5Pset_chunk(chunked, 2, chunk));
    CHECK(H5Pset_deflate(chunked, 1));
    hid_t dsets[3] = {
        H5Dcreate2(file, "collective", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Dcreate2(file, "independent", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Dcreate2(file, "chunked_deflate", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, chunked, H5P_DEFAULT),
    };
    hid_t coll = H5Pcreate(H5P_DATASET_XFER), indep = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(coll, H5FD_MPIO_COLLECTIVE));
    CHECK(H5Pset_dxpl_mpio(indep, H5FD_MPIO_INDEPENDENT));
    CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
    for (int d = 0; d < 3; d++) {
        CHECK(dsets[d]);
        fill(buf, d, rank);
        CHECK(H5Dwrite(dsets[d], H5T_NATIVE_DOUBLE, mem, space, d == 1 ? indep : coll, buf));
    }
    int nranks = size;
    hid_t ascalar = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dsets[0], "ranks", H5T_NATIVE_INT, ascalar, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(attr);
    CHECK(H5Awrite(attr, H5T_NATIVE_INT, &nranks));
    CHECK(H5Aclose(attr));
    for (int d = 0; d < 3; d++)
        CHECK(H5Dclose(dsets[d]));
    CHECK(H5Fclose(file));

    /* reopen read-only; read the rows of the next rank */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(file);
    int other = (rank + 1) % size;
    hsize_t ostart[2] = {(hsize_t)other * ROWS, 0};
    const char *names[3] = {"collective", "independent", "chunked_deflate"};
    for (int d = 0; d < 3; d++) {
        hid_t ds = H5Dopen2(file, names[d], H5P_DEFAULT);
        CHECK(ds);
        hid_t fs = H5Dget_space(ds);
        hsize_t got[2];
        H5Sget_simple_extent_dims(fs, got, NULL);
        if (got[0] != dims[0] || got[1] != dims[1]) {
            fprintf(stderr, "rank %d: %s has %llu x %llu elements\n", rank, names[d], (unsigned long long)got[0],
                    (unsigned long long)got[1]);
            fails++;
        }
        CHECK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, ostart, NULL, count, NULL));
        for (long i = 0; i < ROWS * COLS; i++)
            buf[i] = -1;
        CHECK(H5Dread(ds, H5T_NATIVE_DOUBLE, mem, fs, d == 1 ? indep : coll, buf));
        verify(buf, d, other, rank);
        if (d == 0) {
            int seen = -1;
            attr = H5Aopen(ds, "ranks", H5P_DEFAULT);
            CHECK(attr);
            CHECK(H5Aread(attr, H5T_NATIVE_INT, &seen));
            CHECK(H5Aclose(attr));
            if (seen != size) {
                fprintf(stderr, "rank %d: attribute ranks = %d, expected %d\n", rank, seen, size);
                fails++;
            }
        }
        H5Sclose(fs);
        H5Dclose(ds);
    }
    CHECK(H5Fclose(file));
    H5Pclose(fapl);
    H5Pclose(coll);
    H5Pclose(indep);
    H5Pclose(chunked);
    H5Sclose(space);
    H5Sclose(mem);
    H5Sclose(ascalar);
    free(buf);

    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0)
            printf("hdf5 ok: %d ranks, 3 datasets of %d x %d doubles written and read back\n", size, size * ROWS, COLS);
        else
            printf("hdf5 FAILED: %d wrong values or attributes\n", all);
    }
    MPI_Finalize();
    return all != 0;
}
