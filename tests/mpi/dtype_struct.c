/* Structs over the wire (2 ranks): an array of C structs sent with a struct
 * datatype and received densely packed (and vice versa), MPI_Pack/MPI_Unpack
 * with MPI_PACKED messages, external32, partial receives with
 * MPI_Get_elements, envelope/contents decoding, names, and the error classes
 * of bad datatype arguments. */
#include <stddef.h>

#include "p2p_check.h"

typedef struct particle {
    int id;
    double pos[3];
    char tag[5];
} particle_t;

#define NP 50

static void fill(particle_t *p, int n, int seed)
{
    memset(p, 0, (size_t)n * sizeof *p);
    for (int i = 0; i < n; i++) {
        p[i].id = seed * 1000 + i;
        for (int k = 0; k < 3; k++)
            p[i].pos[k] = seed + i * 0.25 + k;
        for (int k = 0; k < 5; k++)
            p[i].tag[k] = (char)('a' + (i + k + seed) % 26);
    }
}

static int same(const particle_t *a, const particle_t *b)
{
    return a->id == b->id && !memcmp(a->pos, b->pos, sizeof a->pos) && !memcmp(a->tag, b->tag, sizeof a->tag);
}

/* the natural struct type (resized to sizeof) and a dense one (33 bytes) */
static void make_types(MPI_Datatype *nat, MPI_Datatype *dense)
{
    particle_t p = {0};
    int bl[3] = {1, 3, 5};
    MPI_Aint base, d[3];
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, raw;
    MPI_OK(MPI_Get_address(&p, &base));
    MPI_OK(MPI_Get_address(&p.id, &d[0]));
    MPI_OK(MPI_Get_address(&p.pos, &d[1]));
    MPI_OK(MPI_Get_address(&p.tag, &d[2]));
    for (int i = 0; i < 3; i++)
        d[i] = MPI_Aint_diff(d[i], base);
    MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &raw));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(raw, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(particle_t), "struct extent %ld (sizeof %zu): padding rule", (long)ext,
          sizeof(particle_t));
    MPI_OK(MPI_Type_create_resized(raw, 0, sizeof(particle_t), nat));
    MPI_OK(MPI_Type_free(&raw));
    MPI_OK(MPI_Type_commit(nat));
    MPI_Aint dd[3] = {0, 4, 28};
    MPI_OK(MPI_Type_create_struct(3, bl, dd, ty, &raw));
    MPI_OK(MPI_Type_create_resized(raw, 0, 33, dense));
    MPI_OK(MPI_Type_free(&raw));
    MPI_OK(MPI_Type_commit(dense));
    int sz;
    MPI_OK(MPI_Type_size(*nat, &sz));
    CHECK(sz == 33, "size %d", sz);
    MPI_Aint tlb, text;
    MPI_OK(MPI_Type_get_true_extent(*nat, &tlb, &text));
    CHECK(tlb == 0 && text == (MPI_Aint)offsetof(particle_t, tag) + 5, "true extent %ld", (long)text);
}

static void exchange(int rank, int peer, MPI_Datatype nat, MPI_Datatype dense)
{
    static particle_t a[NP], b[NP];
    static unsigned char raw[NP * 33];
    MPI_Status st;
    p2p_setstep("struct -> dense");
    if (rank == 0) {
        fill(a, NP, 1);
        MPI_OK(MPI_Send(a, NP, nat, peer, 1, MPI_COMM_WORLD));
    } else {
        MPI_OK(MPI_Recv(raw, NP, dense, peer, 1, MPI_COMM_WORLD, &st));
        fill(b, NP, 1);
        for (int i = 0; i < NP; i++) {
            particle_t x;
            memcpy(&x.id, raw + 33 * i, 4);
            memcpy(x.pos, raw + 33 * i + 4, 24);
            memcpy(x.tag, raw + 33 * i + 28, 5);
            CHECK(same(&x, &b[i]), "particle %d", i);
        }
        int n = 0, e = 0;
        MPI_OK(MPI_Get_count(&st, dense, &n));
        MPI_OK(MPI_Get_elements(&st, dense, &e));
        CHECK(n == NP && e == NP * 9, "count %d elements %d", n, e);
    }
    p2p_setstep("dense -> struct");
    if (rank == 1) {
        MPI_OK(MPI_Send(raw, NP, dense, peer, 2, MPI_COMM_WORLD));
    } else {
        memset(b, 0x5a, sizeof b);
        MPI_OK(MPI_Recv(b, NP, nat, peer, 2, MPI_COMM_WORLD, &st));
        for (int i = 0; i < NP; i++)
            CHECK(same(&a[i], &b[i]), "particle %d", i);
    }
    p2p_setstep("MPI_Pack + MPI_PACKED");
    if (rank == 0) {
        int psz, pos = 0;
        MPI_OK(MPI_Pack_size(NP, nat, MPI_COMM_WORLD, &psz));
        CHECK(psz >= NP * 33, "pack size %d", psz);
        unsigned char *buf = malloc((size_t)psz + 4);
        int v = 42;
        MPI_OK(MPI_Pack(&v, 1, MPI_INT, buf, psz + 4, &pos, MPI_COMM_WORLD));
        MPI_OK(MPI_Pack(a, NP, nat, buf, psz + 4, &pos, MPI_COMM_WORLD));
        CHECK(pos == 4 + NP * 33, "position %d", pos);
        MPI_OK(MPI_Send(buf, pos, MPI_PACKED, peer, 3, MPI_COMM_WORLD));
        free(buf);
    } else {
        unsigned char buf[4 + NP * 33];
        int pos = 0, v = 0, n = 0;
        MPI_OK(MPI_Recv(buf, sizeof buf, MPI_PACKED, peer, 3, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Get_count(&st, MPI_PACKED, &n));
        CHECK(n == (int)sizeof buf, "packed count %d", n);
        MPI_OK(MPI_Unpack(buf, n, &pos, &v, 1, MPI_INT, MPI_COMM_WORLD));
        memset(b, 0, sizeof b);
        MPI_OK(MPI_Unpack(buf, n, &pos, b, NP, nat, MPI_COMM_WORLD));
        CHECK(v == 42 && pos == n, "v %d pos %d", v, pos);
        fill(a, NP, 1);
        for (int i = 0; i < NP; i++)
            CHECK(same(&a[i], &b[i]), "unpacked particle %d", i);
    }
    p2p_setstep("partial struct message");
    if (rank == 0) {
        /* two particles and the id of a third */
        MPI_Datatype two_and_id;
        int bl[2] = {2, 1};
        MPI_Aint d[2] = {0, 2 * (MPI_Aint)sizeof(particle_t)};
        MPI_Datatype ty[2] = {nat, MPI_INT};
        MPI_OK(MPI_Type_create_struct(2, bl, d, ty, &two_and_id));
        MPI_OK(MPI_Type_commit(&two_and_id));
        MPI_OK(MPI_Send(a, 1, two_and_id, peer, 4, MPI_COMM_WORLD));
        MPI_OK(MPI_Type_free(&two_and_id));
    } else {
        memset(b, 0, sizeof b);
        MPI_OK(MPI_Recv(b, 3, nat, peer, 4, MPI_COMM_WORLD, &st));
        int n = 0, e = 0;
        MPI_Count ec = 0;
        MPI_OK(MPI_Get_count(&st, nat, &n));
        MPI_OK(MPI_Get_elements(&st, nat, &e));
        MPI_OK(MPI_Get_elements_x(&st, nat, &ec));
        CHECK(n == MPI_UNDEFINED && e == 19 && ec == 19, "count %d elements %d / %lld", n, e, (long long)ec);
        CHECK(same(&a[0], &b[0]) && same(&a[1], &b[1]) && b[2].id == a[2].id && b[2].pos[0] == 0, "partial data");
        MPI_OK(MPI_Get_elements(&st, MPI_BYTE, &e));
        CHECK(e == 2 * 33 + 4, "bytes %d", e);
    }
}

static void external32(MPI_Datatype nat)
{
    p2p_setstep("external32");
    particle_t a[3], b[3];
    fill(a, 3, 7);
    MPI_Aint sz = 0, pos = 0;
    MPI_OK(MPI_Pack_external_size("external32", 3, nat, &sz));
    CHECK(sz == 99, "external32 size %ld", (long)sz);
    unsigned char buf[99];
    MPI_OK(MPI_Pack_external("external32", a, 3, nat, buf, sz, &pos));
    CHECK(pos == 99, "position %ld", (long)pos);
    /* big-endian id of the first particle: 7000 = 0x00001b58 */
    CHECK(buf[0] == 0 && buf[1] == 0 && buf[2] == 0x1b && buf[3] == 0x58, "id bytes %02x %02x %02x %02x", buf[0],
          buf[1], buf[2], buf[3]);
    memset(b, 0, sizeof b);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", buf, sz, &pos, b, 3, nat));
    for (int i = 0; i < 3; i++)
        CHECK(same(&a[i], &b[i]), "external32 round trip %d", i);
}

static void decode(MPI_Datatype nat)
{
    p2p_setstep("envelope and contents");
    int ni, na, nd, comb;
    MPI_OK(MPI_Type_get_envelope(nat, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1, "resized envelope %d %d %d %d", ni, na, nd,
          comb);
    MPI_Aint aints[2];
    MPI_Datatype inner;
    MPI_OK(MPI_Type_get_contents(nat, 0, 2, 1, NULL, aints, &inner));
    CHECK(aints[0] == 0 && aints[1] == (MPI_Aint)sizeof(particle_t), "resized contents");
    /* the inner struct was freed by the user; decoding hands out a new handle */
    MPI_OK(MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 4 && na == 3 && nd == 3, "struct envelope %d %d %d %d", ni, na, nd,
          comb);
    int ints[4];
    MPI_Aint d[3];
    MPI_Datatype ty[3];
    MPI_OK(MPI_Type_get_contents(inner, 4, 3, 3, ints, d, ty));
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[2] == 3 && ints[3] == 5, "blocklengths");
    CHECK(d[1] == offsetof(particle_t, pos) && d[2] == offsetof(particle_t, tag), "displacements");
    CHECK(ty[0] == MPI_INT && ty[1] == MPI_DOUBLE && ty[2] == MPI_CHAR, "types");
    MPI_OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "named");
    MPI_OK(MPI_Type_free(&inner));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(!strcmp(name, "MPI_DOUBLE") && len == 10, "name %s", name);
    MPI_OK(MPI_Type_get_name(nat, name, &len));
    CHECK(len == 0, "derived types start unnamed");
    MPI_OK(MPI_Type_set_name(nat, "particle"));
    MPI_OK(MPI_Type_get_name(nat, name, &len));
    CHECK(!strcmp(name, "particle") && len == 8, "name %s", name);
    MPI_Datatype m;
    MPI_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    int sz;
    MPI_OK(MPI_Type_size(m, &sz));
    CHECK(sz == 8, "match_size");
}

static void errors(void)
{
    p2p_setstep("error classes");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_INT, nt;
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_free(&t));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Type_vector(-1, 1, 1, MPI_INT, &nt));
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_vector(2, -1, 1, MPI_INT, &nt));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &nt));
    int bl[2] = {1, -2};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_struct(2, bl, d, ty, &nt));
    int sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {3, 0};
    MPI_FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &nt));
    MPI_FAILS(MPI_ERR_DIMS, MPI_Type_create_subarray(0, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &nt));
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &nt));
    int buf[4] = {0};
    MPI_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, nt, MPI_PROC_NULL, 0, MPI_COMM_WORLD)); /* not committed */
    MPI_OK(MPI_Type_commit(&nt));
    char small[4];
    int pos = 0;
    MPI_FAILS(MPI_ERR_ARG, MPI_Pack(buf, 1, nt, small, 4, &pos, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Unpack(small, 4, &pos, buf, 1, nt, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_ARG, MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &pos));
    MPI_Datatype freed = nt;
    MPI_OK(MPI_Type_free(&nt));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Type_commit(&freed));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    if (p2p_size != 2) {
        if (p2p_rank == 0)
            printf("dtype_struct needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Datatype nat, dense;
    make_types(&nat, &dense);
    exchange(p2p_rank, 1 - p2p_rank, nat, dense);
    external32(nat);
    decode(nat);
    errors();
    MPI_OK(MPI_Type_free(&nat));
    MPI_OK(MPI_Type_free(&dense));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
