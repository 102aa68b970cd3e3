/* MPI-IO: open/close/delete, explicit offsets, individual and shared file
 * pointers, ordered and collective access, file views with derived etypes and
 * filetypes, non-contiguous memory, nonblocking and split collective forms,
 * seek/position/byte offset, size, atomicity, info, error classes and file
 * error handlers.  Every rank checks real data; files live in a private
 * directory (argv[1] or /tmp) and nothing is left behind. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#define N 100
static int rank, size, errors;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            printf("rank %d: line %d: ", rank, __LINE__);                                         \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
            fflush(stdout);                                                                       \
            errors++;                                                                             \
        }                                                                                         \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static int handler_calls, handler_class;
static void file_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    handler_calls++;
    handler_class = eclass(*code);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char dir[512], path[600];
    if (rank == 0) {
        snprintf(dir, sizeof dir, "%s/wharf-io-XXXXXX", argc > 1 ? argv[1] : "/tmp");
        if (!mkdtemp(dir))
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/data", dir);
    MPI_File fh;
    int buf[N], rbuf[N * 4];

    /* ---- explicit offsets, contiguous ---- */
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (int i = 0; i < N; i++)
        buf[i] = rank * 1000 + i;
    MPI_Status st;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * sizeof(int), buf, N, MPI_INT, &st));
    int cnt = -1;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == N, "write_at count %d", cnt);
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    int peer = (rank + 1) % size;
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_File_read_at(fh, (MPI_Offset)peer * N * sizeof(int), rbuf, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == peer * 1000 + i, "read_at [%d] = %d", i, rbuf[i]);
    MPI_Offset fsize = 0;
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)size * N * (MPI_Offset)sizeof(int), "size %lld", (long long)fsize);
    /* reading past the end: short count */
    OK(MPI_File_read_at(fh, fsize - 2 * (MPI_Offset)sizeof(int), rbuf, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 2, "read across the end: count %d, expected 2", cnt);

    /* ---- individual file pointer, seek, position ---- */
    OK(MPI_File_seek(fh, (MPI_Offset)peer * N * sizeof(int) + 8, MPI_SEEK_SET));
    OK(MPI_File_read(fh, rbuf, 3, MPI_INT, &st));
    CHECK(rbuf[0] == peer * 1000 + 2 && rbuf[2] == peer * 1000 + 4, "read after seek %d %d", rbuf[0], rbuf[2]);
    MPI_Offset pos = 0;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)peer * N * (MPI_Offset)sizeof(int) + 20, "position %lld", (long long)pos);
    OK(MPI_File_seek(fh, -4, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == fsize - 4, "seek end position %lld", (long long)pos);
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");

    /* ---- views: etype int, each rank sees every size-th block of 4 ints ---- */
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype blk, ftype;
    MPI_Type_contiguous(4, MPI_INT, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)(4 * sizeof(int) * (size_t)size), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Offset disp = 64;
    OK(MPI_File_set_view(fh, disp + (MPI_Offset)rank * 4 * sizeof(int), MPI_INT, ftype, "native", MPI_INFO_NULL));
    for (int i = 0; i < 40; i++)
        buf[i] = rank * 100000 + i;
    OK(MPI_File_write_all(fh, buf, 40, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 40, "write_all count %d", cnt);
    MPI_Offset boff = 0;
    OK(MPI_File_get_byte_offset(fh, 5, &boff)); /* 6th int of my view: block 1, element 1 */
    CHECK(boff == disp + (MPI_Offset)rank * 16 + 16 * size + 4, "byte offset %lld", (long long)boff);
    MPI_Offset vd;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &vd, &et, &ft, rep));
    CHECK(vd == disp + (MPI_Offset)rank * 16 && et == MPI_INT && !strcmp(rep, "native"), "get_view");
    int ftsize = 0;
    MPI_Type_size(ft, &ftsize);
    CHECK(ftsize == 16, "view filetype size %d", ftsize);
    MPI_Type_free(&ft);
    MPI_Barrier(MPI_COMM_WORLD);
    /* the whole interleaved region through a plain view */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int *all = malloc(sizeof(int) * 40 * (size_t)size);
    OK(MPI_File_read_at_all(fh, disp, all, 40 * size, MPI_INT, &st));
    for (int b = 0; b < 10 * size; b++)
        for (int k = 0; k < 4; k++) {
            int owner = b % size, idx = (b / size) * 4 + k;
            CHECK(all[b * 4 + k] == owner * 100000 + idx, "interleaved block %d [%d] = %d", b, k, all[b * 4 + k]);
        }
    free(all);

    /* ---- non-contiguous memory: every other int of a vector ---- */
    MPI_Datatype mvec;
    MPI_Type_vector(10, 1, 2, MPI_INT, &mvec);
    MPI_Type_commit(&mvec);
    int src[20], dst[20];
    for (int i = 0; i < 20; i++)
        src[i] = i % 2 ? -1 : rank * 10 + i;
    MPI_Offset moff = 4096 + (MPI_Offset)rank * 40;
    OK(MPI_File_write_at(fh, moff, src, 1, mvec, &st));
    OK(MPI_File_read_at(fh, moff, dst, 10, MPI_INT, &st));
    for (int i = 0; i < 10; i++)
        CHECK(dst[i] == rank * 10 + 2 * i, "vector write [%d] = %d", i, dst[i]);
    for (int i = 0; i < 20; i++)
        dst[i] = -7;
    OK(MPI_File_read_at(fh, moff, dst, 1, mvec, &st));
    for (int i = 0; i < 20; i++)
        CHECK(dst[i] == (i % 2 ? -7 : rank * 10 + i), "vector read [%d] = %d", i, dst[i]);
    MPI_Type_free(&mvec);

    /* ---- nonblocking and split collective ---- */
    MPI_Request rq;
    OK(MPI_File_iread_at(fh, moff, rbuf, 10, MPI_INT, &rq));
    OK(MPI_Wait(&rq, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 10 && rbuf[3] == rank * 10 + 6, "iread_at count %d value %d", cnt, rbuf[3]);
    OK(MPI_File_read_at_all_begin(fh, moff, rbuf, 5, MPI_INT));
    OK(MPI_File_read_at_all_end(fh, rbuf, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 5 && rbuf[4] == rank * 10 + 8, "split read count %d value %d", cnt, rbuf[4]);
    int rc = MPI_File_read_all_end(fh, rbuf, &st);
    CHECK(eclass(rc) == MPI_ERR_IO, "end without begin: class %d", eclass(rc));
    OK(MPI_File_close(&fh));

    /* ---- shared file pointer and ordered access ---- */
    char spath[600];
    snprintf(spath, sizeof spath, "%s/shared", dir);
    OK(MPI_File_open(MPI_COMM_WORLD, spath, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int k = 0; k < 3; k++) {
        int v = rank;
        OK(MPI_File_write_shared(fh, &v, 1, MPI_INT, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 3 * size, "shared position %lld", (long long)pos);
    int *seen = calloc((size_t)size, sizeof(int)), *vals = malloc(sizeof(int) * 3 * (size_t)size);
    OK(MPI_File_read_at(fh, 0, vals, 3 * size, MPI_INT, &st));
    for (int i = 0; i < 3 * size; i++)
        if (vals[i] >= 0 && vals[i] < size)
            seen[vals[i]]++;
    for (int r = 0; r < size; r++)
        CHECK(seen[r] == 3, "rank %d wrote %d times through the shared pointer", r, seen[r]);
    MPI_Barrier(MPI_COMM_WORLD);
    int ord[2] = {rank * 2, rank * 2 + 1};
    OK(MPI_File_write_ordered(fh, ord, rank % 2 ? 2 : 1, MPI_INT, &st)); /* odd ranks write two */
    OK(MPI_File_seek_shared(fh, 3 * size, MPI_SEEK_SET));
    int tot = 0;
    for (int r = 0; r < size; r++)
        tot += r % 2 ? 2 : 1;
    int *ov = malloc(sizeof(int) * (size_t)tot);
    OK(MPI_File_read_ordered(fh, ov, rank == 0 ? tot : 0, MPI_INT, &st));
    if (rank == 0)
        for (int r = 0, i = 0; r < size; r++)
            for (int k = 0; k < (r % 2 ? 2 : 1); k++, i++)
                CHECK(ov[i] == r * 2 + k, "ordered [%d] = %d", i, ov[i]);
    free(ov);
    free(seen);
    free(vals);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0 deletes it after everybody closed */
    CHECK(access(spath, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left the file");

    /* ---- sizes, atomicity, info, group, amode ---- */
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_size(fh, 10));
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 10, "set_size: %lld", (long long)fsize);
    OK(MPI_File_preallocate(fh, 5000));
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == 5000, "preallocate: %lld", (long long)fsize);
    int flag = 0, amode = 0, cmp = 0;
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity %d", flag);
    int one = rank;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * 4, &one, 1, MPI_INT, &st));
    OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == MPI_MODE_RDWR, "amode %d", amode);
    MPI_Group g, wg;
    OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "group compare %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    OK(MPI_File_get_info(fh, &info));
    MPI_Info_free(&info);
    MPI_Fint fi = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(fi) == fh, "c2f/f2c round trip");

    /* ---- errors: classes, and the file's handler ---- */
    rc = MPI_File_seek(fh, 0, 12345);
    CHECK(eclass(rc) == MPI_ERR_ARG, "bad whence: class %d", eclass(rc));
    rc = MPI_File_read_at(fh, -1, rbuf, 1, MPI_INT, &st);
    CHECK(eclass(rc) == MPI_ERR_ARG, "negative offset: class %d", eclass(rc));
    MPI_Errhandler eh;
    MPI_File_create_errhandler(file_handler, &eh);
    OK(MPI_File_set_errhandler(fh, eh));
    rc = MPI_File_read_at(fh, 0, rbuf, -1, MPI_INT, &st);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_COUNT, "handler calls %d class %d", handler_calls,
          handler_class);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_OTHER, "call_errhandler: %d %d", handler_calls, handler_class);
    MPI_Errhandler got;
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "get_errhandler");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    OK(MPI_File_close(&fh));

    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st);
    CHECK(eclass(rc) == MPI_ERR_READ_ONLY, "write on read-only: class %d", eclass(rc));
    OK(MPI_File_close(&fh));
    char nopath[700];
    snprintf(nopath, sizeof nopath, "%s/missing", dir);
    rc = MPI_File_open(MPI_COMM_WORLD, nopath, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(eclass(rc) == MPI_ERR_NO_SUCH_FILE && fh == MPI_FILE_NULL, "open missing: class %d", eclass(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(eclass(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", eclass(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh);
    CHECK(eclass(rc) == MPI_ERR_FILE_EXISTS, "EXCL on existing: class %d", eclass(rc));
    rc = MPI_File_read(MPI_FILE_NULL, rbuf, 1, MPI_INT, &st);
    CHECK(eclass(rc) == MPI_ERR_FILE, "MPI_FILE_NULL: class %d", eclass(rc));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        OK(MPI_File_delete(path, MPI_INFO_NULL));
        rc = MPI_File_delete(path, MPI_INFO_NULL);
        CHECK(eclass(rc) == MPI_ERR_NO_SUCH_FILE, "delete missing: class %d", eclass(rc));
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            CHECK(e->d_name[0] == '.', "left behind: %s", e->d_name);
        if (d)
            closedir(d);
        rmdir(dir);
    }
    MPI_Type_free(&blk);
    MPI_Type_free(&ftype);
    int tot_err = 0;
    MPI_Allreduce(&errors, &tot_err, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(tot_err ? "io_basic: %d errors\n" : "io_basic: %d ranks ok\n", tot_err ? tot_err : size);
    MPI_Finalize();
    return tot_err != 0;
}
