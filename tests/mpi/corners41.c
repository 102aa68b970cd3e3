/* MPI-4.1 corners of issue 14 item 4: MPI_BOTTOM with absolute-address
 * datatypes in MPI_Alltoallw (both sides), MPI_Alltoall, MPI_Bcast and
 * point-to-point; names of the null communicator and datatype;
 * MPI_Get_hw_resource_info against the MPI_COMM_TYPE_RESOURCE_GUIDED split;
 * MPI_Type_create_f90_real/complex/integer (sizes, envelopes, contents,
 * one handle per argument set, rejected arguments, data moved with them). */
#include "p2p_check.h"

static int rank, size;

static MPI_Datatype abs_int(int *p)
{
    MPI_Aint addr;
    int one = 1;
    MPI_Datatype t;
    MPI_Get_address(p, &addr);
    MPI_OK(MPI_Type_create_hindexed(1, &one, &addr, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

static void bottom(void)
{
    p2p_setstep("MPI_BOTTOM alltoallw");
    int *sb = calloc(size, sizeof(int)), *rb = calloc(size, sizeof(int));
    MPI_Datatype *st = malloc(size * sizeof *st), *rt = malloc(size * sizeof *rt);
    int *cnt = malloc(size * sizeof(int)), *dis = calloc(size, sizeof(int));
    for (int i = 0; i < size; i++) {
        sb[i] = rank * 100 + i, rb[i] = -1, cnt[i] = 1;
        st[i] = abs_int(&sb[i]);
        rt[i] = abs_int(&rb[i]);
    }
    MPI_OK(MPI_Alltoallw(MPI_BOTTOM, cnt, dis, st, MPI_BOTTOM, cnt, dis, rt, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rb[i] == i * 100 + rank, "alltoallw from %d: %d", i, rb[i]);
    /* nonblocking too */
    MPI_Request req;
    for (int i = 0; i < size; i++)
        rb[i] = -1;
    MPI_OK(MPI_Ialltoallw(MPI_BOTTOM, cnt, dis, st, MPI_BOTTOM, cnt, dis, rt, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < size; i++)
        CHECK(rb[i] == i * 100 + rank, "ialltoallw from %d: %d", i, rb[i]);
    /* a block at address 0 is still refused */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype *it = malloc(size * sizeof *it);
    for (int i = 0; i < size; i++)
        it[i] = MPI_INT;
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Alltoallw(MPI_BOTTOM, cnt, dis, it, rb, cnt, dis, it, MPI_COMM_WORLD));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    for (int i = 0; i < size; i++) {
        MPI_Type_free(&st[i]);
        MPI_Type_free(&rt[i]);
    }

    p2p_setstep("MPI_BOTTOM alltoall / bcast / p2p");
    /* one type whose element i lies at &buf[i]: absolute lower bound, extent of an int */
    MPI_Datatype sa, ra, tmp;
    tmp = abs_int(&sb[0]);
    MPI_Aint a0;
    MPI_Get_address(&sb[0], &a0);
    MPI_OK(MPI_Type_create_resized(tmp, a0, sizeof(int), &sa));
    MPI_Type_free(&tmp);
    tmp = abs_int(&rb[0]);
    MPI_Get_address(&rb[0], &a0);
    MPI_OK(MPI_Type_create_resized(tmp, a0, sizeof(int), &ra));
    MPI_Type_free(&tmp);
    MPI_Type_commit(&sa);
    MPI_Type_commit(&ra);
    for (int i = 0; i < size; i++)
        sb[i] = rank * 1000 + i, rb[i] = -1;
    MPI_OK(MPI_Alltoall(MPI_BOTTOM, 1, sa, MPI_BOTTOM, 1, ra, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(rb[i] == i * 1000 + rank, "alltoall from %d: %d", i, rb[i]);
    rb[0] = rank == 0 ? 4242 : -1;
    MPI_OK(MPI_Bcast(MPI_BOTTOM, 1, ra, 0, MPI_COMM_WORLD));
    CHECK(rb[0] == 4242, "bcast: %d", rb[0]);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    sb[0] = rank + 7, rb[0] = -1;
    MPI_OK(MPI_Sendrecv(MPI_BOTTOM, 1, sa, to, 3, MPI_BOTTOM, 1, ra, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(rb[0] == from + 7, "sendrecv: %d", rb[0]);
    MPI_Type_free(&sa);
    MPI_Type_free(&ra);
    free(sb), free(rb), free(st), free(rt), free(cnt), free(dis), free(it);
}

static void names(void)
{
    p2p_setstep("null names");
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_NULL") && len == 13, "MPI_COMM_NULL is named '%s' (%d)", name, len);
    MPI_OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(!strcmp(name, "MPI_DATATYPE_NULL") && len == 17, "MPI_DATATYPE_NULL is named '%s' (%d)", name, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(!strcmp(name, "MPI_COMM_WORLD"), "world is named '%s'", name);
}

static void hwinfo(void)
{
    p2p_setstep("hw resource info");
    MPI_Info hw, info;
    char val[MPI_MAX_INFO_VAL];
    int flag, len = sizeof val;
    MPI_OK(MPI_Get_hw_resource_info(&hw));
    MPI_OK(MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, val, &flag));
    CHECK(flag && !strcmp(val, "mpi_shared_memory"), "mpi_hw_resource_type: %s", flag ? val : "(missing)");
    len = sizeof val;
    MPI_OK(MPI_Info_get_string(hw, "wharf_node_ranks", &len, val, &flag));
    CHECK(flag, "wharf_node_ranks missing");
    int node_ranks = atoi(val);
    MPI_OK(MPI_Info_free(&hw));
    /* the resource type it names splits into the node group */
    MPI_Comm node;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &node));
    /* MPICH's device-support queries agree with each other; HIP and Level
     * Zero never; an unknown type is an argument error (the CUDA answer
     * itself is checked with the emulated driver: gpu.p2p) */
    int sup = -1;
    MPI_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &sup));
    CHECK(sup == MPIX_Query_cuda_support(), "CUDA support %d / %d", sup, MPIX_Query_cuda_support());
    const char *wc = getenv("WHARF_CUDA");
    if (wc && !strcmp(wc, "0"))
        CHECK(sup == 0, "WHARF_CUDA=0 but CUDA support %d", sup);
    MPI_OK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_ZE, &sup));
    CHECK(sup == 0 && !MPIX_Query_ze_support() && !MPIX_Query_hip_support(), "ZE/HIP support claimed");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_FAILS(MPI_ERR_ARG, MPIX_GPU_query_support(7, &sup));
    MPI_FAILS(MPI_ERR_ARG, MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_OK(MPI_Info_free(&info));
    CHECK(node != MPI_COMM_NULL, "RESOURCE_GUIDED gave MPI_COMM_NULL");
    int ns;
    MPI_OK(MPI_Comm_size(node, &ns));
    CHECK(ns == node_ranks, "node comm size %d, hw info says %d", ns, node_ranks);
    MPI_OK(MPI_Comm_free(&node));
}

static void f90(void)
{
    p2p_setstep("f90 types");
    struct {
        int kind, p, r, size, comb;
    } ok[] = {
        {0, 6, MPI_UNDEFINED, 4, MPI_COMBINER_F90_REAL},  {0, 15, 300, 8, MPI_COMBINER_F90_REAL},
        {0, MPI_UNDEFINED, 400, 16, MPI_COMBINER_F90_REAL}, {1, 5, 30, 8, MPI_COMBINER_F90_COMPLEX},
        {1, 15, MPI_UNDEFINED, 16, MPI_COMBINER_F90_COMPLEX}, {2, 0, 2, 1, MPI_COMBINER_F90_INTEGER},
        {2, 0, 9, 4, MPI_COMBINER_F90_INTEGER},           {2, 0, 10, 8, MPI_COMBINER_F90_INTEGER},
    };
    for (unsigned i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        MPI_Datatype t, t2;
        if (ok[i].kind == 0) {
            MPI_OK(MPI_Type_create_f90_real(ok[i].p, ok[i].r, &t));
            MPI_OK(MPI_Type_create_f90_real(ok[i].p, ok[i].r, &t2));
        } else if (ok[i].kind == 1) {
            MPI_OK(MPI_Type_create_f90_complex(ok[i].p, ok[i].r, &t));
            MPI_OK(MPI_Type_create_f90_complex(ok[i].p, ok[i].r, &t2));
        } else {
            MPI_OK(MPI_Type_create_f90_integer(ok[i].r, &t));
            MPI_OK(MPI_Type_create_f90_integer(ok[i].r, &t2));
        }
        CHECK(t == t2, "case %u: two handles 0x%x 0x%x for one argument set", i, (unsigned)t, (unsigned)t2);
        int sz, ni, na, nd, comb, ints[2] = {-7, -7};
        MPI_OK(MPI_Type_size(t, &sz));
        CHECK(sz == ok[i].size, "case %u: size %d, want %d", i, sz, ok[i].size);
        MPI_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
        int want_ni = ok[i].kind == 2 ? 1 : 2;
        CHECK(comb == ok[i].comb && ni == want_ni && na == 0 && nd == 0, "case %u: envelope %d %d %d %d", i, comb, ni,
              na, nd);
        MPI_Aint aa[1];
        MPI_Datatype dd[1];
        MPI_OK(MPI_Type_get_contents(t, 2, 0, 0, ints, aa, dd));
        if (ok[i].kind == 2)
            CHECK(ints[0] == ok[i].r, "case %u: contents %d", i, ints[0]);
        else
            CHECK(ints[0] == ok[i].p && ints[1] == ok[i].r, "case %u: contents %d %d", i, ints[0], ints[1]);
        /* the type moves data */
        unsigned char out[32], in[32];
        for (int k = 0; k < 32; k++)
            out[k] = (unsigned char)(k * 7 + i), in[k] = 0;
        int n = 32 / sz;
        MPI_OK(MPI_Sendrecv(out, n, t, 0, 1, in, n, t, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK(!memcmp(in, out, (size_t)(n * sz)), "case %u: data", i);
    }
    MPI_Datatype t;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_f90_complex(34, 10, &t));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_f90_integer(19, &t));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    rank = p2p_rank, size = p2p_size;
    bottom();
    names();
    hwinfo();
    f90();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("corners41: %d ranks: ok\n", size);
    MPI_Finalize();
    return 0;
}
