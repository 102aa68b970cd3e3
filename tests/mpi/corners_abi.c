/* Corners that binaries built against MPICH hit (found by running mpi4py's
 * MPICH-ABI binary wheel on libmpi.so.12): MPIX_C_FLOAT16 in point-to-point
 * and reductions; MPI_COMM_TYPE_RESOURCE_GUIDED's value; MPI_Win_get_name on
 * MPI_WIN_NULL; removing a user error class that still has a string;
 * MPI_BOTTOM with absolute displacements in MPI_Neighbor_alltoallw and
 * MPI_Alltoallv; per-session buffered-send buffers; MPI_Register_datarep with
 * conversion functions that really run on file writes and reads. */
#include "p2p_check.h"
#include <unistd.h>

static int rank, size;

static void float16(void)
{
    p2p_setstep("MPIX_C_FLOAT16");
    int sz = 0;
    MPI_OK(MPI_Type_size(MPIX_C_FLOAT16, &sz));
    CHECK(sz == 2, "MPIX_C_FLOAT16 size %d", sz);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_get_name(MPIX_C_FLOAT16, name, &len));
    CHECK(!strcmp(name, "MPIX_C_FLOAT16"), "name %s", name);
    _Float16 in[4], out[4];
    for (int i = 0; i < 4; i++)
        in[i] = (_Float16)(rank + i * 0.5f);
    MPI_OK(MPI_Allreduce(in, out, 4, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) {
        float want = (float)size * (float)(size - 1) / 2.0f + (float)size * i * 0.5f;
        CHECK((float)out[i] == want, "float16 sum[%d] = %g, want %g", i, (double)out[i], (double)want);
    }
    MPI_OK(MPI_Allreduce(in, out, 4, MPIX_C_FLOAT16, MPI_MAX, MPI_COMM_WORLD));
    CHECK((float)out[1] == (float)(size - 1) + 0.5f, "float16 max %g", (double)out[1]);
}

static void constants(void)
{
    p2p_setstep("constants and names");
    CHECK(MPI_COMM_TYPE_RESOURCE_GUIDED == 4, "MPI_COMM_TYPE_RESOURCE_GUIDED is %d, MPICH uses 4",
          MPI_COMM_TYPE_RESOURCE_GUIDED);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Win_get_name(MPI_WIN_NULL, name, &len));
    CHECK(!strcmp(name, "MPI_WIN_NULL") && len == 12, "MPI_WIN_NULL's name '%s' (%d)", name, len);
    /* a class with a string cannot go; its string first, then the class */
    int cls, code;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_string(cls, "a class"));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_class(cls)); /* a code and a string */
    MPI_OK(MPI_Remove_error_code(code));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_class(cls)); /* still its string */
    MPI_OK(MPI_Remove_error_string(cls));
    MPI_OK(MPI_Remove_error_class(cls));
    MPI_FAILS(MPI_ERR_ARG, MPI_Remove_error_class(cls));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void bottom(void)
{
    p2p_setstep("MPI_BOTTOM with absolute displacements");
    /* a ring: neighbours left and right */
    int src[2] = {(rank + size - 1) % size, (rank + 1) % size};
    MPI_Comm g;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, src, MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &g));
    int sb[2] = {rank * 10 + 1, rank * 10 + 2}, rb[2] = {-1, -1};
    MPI_Aint sd[2], rd[2];
    MPI_Get_address(&sb[0], &sd[0]);
    MPI_Get_address(&sb[1], &sd[1]);
    MPI_Get_address(&rb[0], &rd[0]);
    MPI_Get_address(&rb[1], &rd[1]);
    int cnt[2] = {1, 1};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, cnt, sd, ty, MPI_BOTTOM, cnt, rd, ty, g));
    /* left neighbour sent me its block 1 (to its right), right neighbour its block 0; with one
     * or two ranks both neighbours are one process, whose two blocks match in order */
    if (size >= 3)
        CHECK(rb[0] == src[0] * 10 + 2 && rb[1] == src[1] * 10 + 1, "neighbor_alltoallw got %d %d", rb[0], rb[1]);
    else
        CHECK(rb[0] == src[0] * 10 + 1 && rb[1] == src[0] * 10 + 2, "neighbor_alltoallw got %d %d", rb[0], rb[1]);
    MPI_OK(MPI_Comm_free(&g));
    /* alltoallv: element displacements from MPI_BOTTOM */
    int *s = malloc(sizeof(int) * size), *r = malloc(sizeof(int) * size), *c = malloc(sizeof(int) * size);
    int *sdis = malloc(sizeof(int) * size), *rdis = malloc(sizeof(int) * size);
    for (int i = 0; i < size; i++) {
        MPI_Aint a;
        s[i] = rank * 100 + i, r[i] = -1, c[i] = 1;
        MPI_Get_address(&s[i], &a);
        sdis[i] = (int)(a / (MPI_Aint)sizeof(int));
        MPI_Get_address(&r[i], &a);
        rdis[i] = (int)(a / (MPI_Aint)sizeof(int));
    }
    /* only where the addresses fit an int displacement (low heap addresses): else skip */
    MPI_Aint a0;
    MPI_Get_address(s, &a0);
    int fits = a0 / (MPI_Aint)sizeof(int) < 0x7fffffff && (a0 % (MPI_Aint)sizeof(int)) == 0;
    int all = 0;
    MPI_OK(MPI_Allreduce(&fits, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    if (all) {
        MPI_OK(MPI_Alltoallv(MPI_BOTTOM, c, sdis, MPI_INT, MPI_BOTTOM, c, rdis, MPI_INT, MPI_COMM_WORLD));
        for (int i = 0; i < size; i++)
            CHECK(r[i] == i * 100 + rank, "alltoallv from %d: %d", i, r[i]);
    }
    free(s), free(r), free(c), free(sdis), free(rdis);
}

static void session_buffer(void)
{
    p2p_setstep("session buffers");
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group g;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(g, "wharf.corners_abi", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int bsz = 4 * (64 + MPI_BSEND_OVERHEAD);
    char *buf = malloc(bsz);
    MPI_OK(MPI_Session_attach_buffer(s, buf, bsz));
    /* a second attach is an error */
    CHECK(MPI_Session_attach_buffer(s, buf, bsz) != MPI_SUCCESS, "second session attach accepted");
    /* a buffered send on a communicator of the session uses it (no process buffer is attached) */
    int v = rank + 7, got = -1, to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_OK(MPI_Bsend(&v, 1, MPI_INT, to, 3, c));
    MPI_OK(MPI_Recv(&got, 1, MPI_INT, from, 3, c, MPI_STATUS_IGNORE));
    CHECK(got == from + 7, "bsend over the session's buffer got %d", got);
    MPI_OK(MPI_Session_flush_buffer(s));
    MPI_Request r;
    MPI_OK(MPI_Session_iflush_buffer(s, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    void *addr = NULL;
    int sz = 0;
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &sz));
    CHECK(addr == buf && sz == bsz, "detached %p %d, attached %p %d", addr, sz, (void *)buf, bsz);
    /* MPI_BUFFER_AUTOMATIC round trip, and the buffer goes with the session */
    MPI_OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    MPI_Count szc = -1;
    MPI_OK(MPI_Session_detach_buffer_c(s, &addr, &szc));
    CHECK(addr == MPI_BUFFER_AUTOMATIC, "automatic buffer not returned");
    MPI_OK(MPI_Session_attach_buffer(s, buf, bsz));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Session_finalize(&s));
    free(buf);
}

/* conversion functions: the file holds every int plus 1000 */
static int conv_calls;
static int wr(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    conv_calls++;
    for (int i = 0; i < count; i++)
        ((int *)filebuf)[i] = ((int *)userbuf)[position + i] + 1000;
    return MPI_SUCCESS;
}
static int rd(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra)
{
    (void)extra;
    if (dt != MPI_INT)
        return MPI_ERR_TYPE;
    conv_calls++;
    for (int i = 0; i < count; i++)
        ((int *)userbuf)[position + i] = ((int *)filebuf)[i] - 1000;
    return MPI_SUCCESS;
}
static int ext(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    (void)extra;
    return MPI_Type_get_extent(dt, &lb, extent);
}
static int ext_wide(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    (void)dt, (void)extra;
    *extent = 16;
    return MPI_SUCCESS;
}

/* An MPI_Comm_iflush_buffer request started while a buffered send (to self,
 * rendezvous-sized) is pending, then the buffer detached (which drains it and
 * frees wharf's record of it) before the request is waited for: the request
 * completes and the message arrives intact.  (wharf's progress completes the
 * flush inside the detach today; the request holds a ticket the detach clears
 * so that a later change of that order cannot read freed memory.) */
static void iflush_then_detach(void)
{
    p2p_setstep("iflush then detach");
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int n = 1 << 18; /* 1 MiB of ints: past any eager limit, so it waits for its receive */
    int bsz = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *buf = malloc(bsz);
    int *src = malloc(n * sizeof(int)), *dst = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        src[i] = i ^ rank;
    MPI_OK(MPI_Comm_attach_buffer(d, buf, bsz));
    MPI_OK(MPI_Bsend(src, n, MPI_INT, rank, 5, d));
    memset(src, 0xff, n * sizeof(int)); /* the message was copied into the buffer */
    MPI_Request fr, rr;
    MPI_OK(MPI_Comm_iflush_buffer(d, &fr));
    MPI_OK(MPI_Irecv(dst, n, MPI_INT, rank, 5, d, &rr));
    void *addr = NULL;
    int sz = 0;
    MPI_OK(MPI_Comm_detach_buffer(d, &addr, &sz));
    CHECK(addr == buf && sz == bsz, "detached %p %d, attached %p %d", addr, sz, (void *)buf, bsz);
    MPI_OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        if (dst[i] != (i ^ rank)) {
            CHECK(0, "bsend to self through the comm buffer: [%d] = %d", i, dst[i]);
            break;
        }
    MPI_OK(MPI_Comm_free(&d));
    free(buf), free(src), free(dst);
}

static void datarep(void)
{
    p2p_setstep("MPI_Register_datarep");
    MPI_OK(MPI_Register_datarep("wharf-plus1000", rd, wr, ext, NULL));
    MPI_OK(MPI_Register_datarep("wharf-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, ext_wide, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_FAILS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("wharf-plus1000", rd, wr, ext, NULL));
    MPI_FAILS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("external32", rd, wr, ext, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    char path[256];
    snprintf(path, sizeof path, "/tmp/wharf-corners-abi-%d.dat", (int)getpid());
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
    /* a representation with other extents is refused (files return errors by default) */
    int cls = -1, rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wharf-wide", MPI_INFO_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "wide datarep: class %d", cls);
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wharf-plus1000", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "wharf-plus1000"), "view datarep %s", rep);
    int w[8], back[8];
    for (int i = 0; i < 8; i++)
        w[i] = rank * 8 + i, back[i] = -1;
    MPI_OK(MPI_File_write_at(fh, 0, w, 8, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(conv_calls >= 1, "write conversion not called");
    /* the bytes in the file are converted: read them natively */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh, 0, back, 8, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == w[i] + 1000, "file int %d is %d, want %d", i, back[i], w[i] + 1000);
    /* and through the representation they come back as written */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wharf-plus1000", MPI_INFO_NULL));
    int calls = conv_calls;
    MPI_Status st;
    MPI_OK(MPI_File_read_at(fh, 0, back, 8, MPI_INT, &st));
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 8 && conv_calls > calls, "read %d ints, %d conversions", n, conv_calls - calls);
    for (int i = 0; i < 8; i++)
        CHECK(back[i] == w[i], "converted int %d is %d, want %d", i, back[i], w[i]);
    MPI_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    rank = p2p_rank, size = p2p_size;
    float16();
    constants();
    bottom();
    session_buffer();
    iflush_then_detach();
    datarep();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("corners_abi: %d ranks: ok\n", size);
    MPI_Finalize();
    return 0;
}
