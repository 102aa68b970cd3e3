/* One-sided basics: every window flavor's attributes, put and get under
 * fence with predefined and derived datatypes on both sides, payloads larger
 * than an active message, request-based operations, names, groups, info. */
#include "p2p_check.h"

#define BIG (300 * 1000 + 7)
enum { K = 5000 };

/* flavor 0: MPI_Win_allocate; 1: MPI_Win_create on malloc'ed memory */
static void make_win(int flavor, MPI_Aint size, int du, void *baseptr, MPI_Win *win)
{
    if (!flavor) {
        MPI_OK(MPI_Win_allocate(size, du, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win));
        return;
    }
    void *m = calloc(1, (size_t)size);
    CHECK(m != NULL, "out of memory");
    *(void **)baseptr = m;
    MPI_OK(MPI_Win_create(m, size, du, MPI_INFO_NULL, MPI_COMM_WORLD, win));
}

static void free_win(int flavor, MPI_Win *win, void *base)
{
    MPI_OK(MPI_Win_free(win));
    if (flavor)
        free(base);
}

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int du, int flavor)
{
    void *v;
    int flag;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    CHECK(flag && v == base, "MPI_WIN_BASE %p, expected %p", v, base);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    CHECK(flag && *(MPI_Aint *)v == size, "MPI_WIN_SIZE %ld, expected %ld", (long)*(MPI_Aint *)v, (long)size);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    CHECK(flag && *(int *)v == du, "MPI_WIN_DISP_UNIT %d, expected %d", *(int *)v, du);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    CHECK(flag && *(int *)v == flavor, "flavor %d, expected %d", *(int *)v, flavor);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    CHECK(flag && *(int *)v == MPI_WIN_UNIFIED, "model %d", *(int *)v);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;

    /* ---- Win_create: everyone puts its rank into slot me of everyone ---- */
    p2p_setstep("create+put");
    int *mem = calloc((size_t)n * 2, sizeof(int));
    MPI_Win win;
    MPI_OK(MPI_Win_create(mem, (MPI_Aint)(n * 2 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, mem, (MPI_Aint)(n * 2 * sizeof(int)), sizeof(int), MPI_WIN_FLAVOR_CREATE);
    MPI_OK(MPI_Win_fence(0, win));
    int val = 1000 + me;
    for (int t = 0; t < n; t++)
        MPI_OK(MPI_Put(&val, 1, MPI_INT, t, me, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < n; i++)
        CHECK(mem[i] == 1000 + i, "slot %d holds %d", i, mem[i]);
    /* get everyone's slot n+0 .. after a put into the second half */
    p2p_setstep("get");
    mem[n + me] = 5000 + me; /* local store, then fence exposes it */
    MPI_OK(MPI_Win_fence(0, win));
    int *got = calloc((size_t)n, sizeof(int));
    for (int t = 0; t < n; t++)
        MPI_OK(MPI_Get(&got[t], 1, MPI_INT, t, n + t, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < n; t++)
        CHECK(got[t] == 5000 + t, "got %d from rank %d", got[t], t);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_OK(MPI_Win_set_name(win, "basic window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(!strcmp(name, "basic window") && len == 12, "name '%s'", name);
    MPI_Group g, wg;
    int cmp;
    MPI_OK(MPI_Win_get_group(win, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "window group compares %d", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info info;
    char v[64];
    int flag;
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_OK(MPI_Info_get(info, "no_locks", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "false"), "no_locks %s", flag ? v : "(unset)");
    MPI_Info_free(&info);
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "no_locks", "true"));
    MPI_OK(MPI_Info_set(info, "accumulate_ordering", "none"));
    MPI_OK(MPI_Win_set_info(win, info));
    MPI_Info_free(&info);
    MPI_OK(MPI_Win_get_info(win, &info));
    MPI_OK(MPI_Info_get(info, "no_locks", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "true"), "no_locks after set_info: %s", flag ? v : "(unset)");
    MPI_OK(MPI_Info_get(info, "accumulate_ordering", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "none"), "accumulate_ordering after set_info: %s", flag ? v : "(unset)");
    MPI_OK(MPI_Info_get(info, "same_size", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "false"), "same_size default: %s", flag ? v : "(unset)");
    MPI_Info_free(&info);
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "win not reset");
    free(got);

    /* the rest on both kinds of memory: Win_allocate (node region among
     * co-residents: direct load/store) and Win_create on private memory
     * (zero-copy or active messages) */
    unsigned char *src = malloc(BIG), *dst = malloc(BIG);
    double *dsrc = malloc(2 * K * sizeof(double));
    for (int flavor = 0; flavor < 2; flavor++) {
    /* ---- big put to the right, big get from the left ---- */
    p2p_setstep("flavor %d big", flavor);
    unsigned char *base;
    make_win(flavor, BIG, 1, &base, &win);
    check_attrs(win, base, BIG, 1, flavor ? MPI_WIN_FLAVOR_CREATE : MPI_WIN_FLAVOR_ALLOCATE);
    p2p_fill(src, BIG, (unsigned)me);
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    MPI_OK(MPI_Put(src, BIG, MPI_BYTE, right, 0, BIG, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (size_t i = 0; i < BIG; i++)
        CHECK(base[i] == p2p_pat((unsigned)left, i), "byte %zu from rank %d", i, left);
    memset(dst, 0, BIG);
    MPI_OK(MPI_Get(dst, BIG, MPI_BYTE, left, 0, BIG, MPI_BYTE, win));
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (size_t i = 0; i < BIG; i++)
        CHECK(dst[i] == p2p_pat((unsigned)((left + n - 1) % n), i), "got byte %zu", i);
    free_win(flavor, &win, base);

    /* ---- derived types: a strided target, a strided origin ---- */
    p2p_setstep("flavor %d derived", flavor);
    double *dmem;
    make_win(flavor, 2 * K * sizeof(double), sizeof(double), &dmem, &win);
    for (int i = 0; i < 2 * K; i++)
        dmem[i] = -1;
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(K, 1, 2, MPI_DOUBLE, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * K; i++)
        dsrc[i] = me * 100000.0 + i;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(dsrc, K, MPI_DOUBLE, right, 1, 1, vec, win)); /* odd slots get dsrc[0..K) */
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < K; i++) {
        CHECK(dmem[2 * i] == -1, "even slot %d touched: %g", 2 * i, dmem[2 * i]);
        CHECK(dmem[2 * i + 1] == left * 100000.0 + i, "odd slot %d = %g", 2 * i + 1, dmem[2 * i + 1]);
    }
    /* get the odd slots of the right neighbour into the even slots of dsrc */
    for (int i = 0; i < 2 * K; i++)
        dsrc[i] = -2;
    MPI_OK(MPI_Get(dsrc, 1, vec, right, 1, 1, vec, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < K; i++) {
        CHECK(dsrc[2 * i] == me * 100000.0 + i, "got even %d = %g", 2 * i, dsrc[2 * i]);
        CHECK(dsrc[2 * i + 1] == -2, "odd %d touched", 2 * i + 1);
    }
    MPI_OK(MPI_Type_free(&vec));

    /* ---- request-based operations under lock_all ---- */
    p2p_setstep("rput/rget");
    MPI_OK(MPI_Win_lock_all(0, win));
    double x = 7.5 + me, y = 0;
    MPI_Request rq[2];
    MPI_OK(MPI_Rput(&x, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win, &rq[0]));
    MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Rget(&y, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, win, &rq[1]));
    MPI_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(y == x, "rget after rput+flush: %g, expected %g", y, x);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(dmem[0] == 7.5 + left, "slot 0 = %g", dmem[0]);
    free_win(flavor, &win, dmem);
    }

    /* ---- large count (_c) variants and MPI_PROC_NULL ---- */
    p2p_setstep("_c");
    long long *lm;
    MPI_OK(MPI_Win_allocate_c(8 * (MPI_Aint)n, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &lm, &win));
    MPI_OK(MPI_Win_fence(0, win));
    long long lv = 1LL << 40 | me;
    MPI_OK(MPI_Put_c(&lv, 1, MPI_LONG_LONG, left, me, 1, MPI_LONG_LONG, win));
    MPI_OK(MPI_Put(&lv, 1, MPI_LONG_LONG, MPI_PROC_NULL, 0, 1, MPI_LONG_LONG, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(lm[right] == (1LL << 40 | right), "_c put: %llx", lm[right]);
    long long lg = 0;
    MPI_OK(MPI_Get_c(&lg, 1, MPI_LONG_LONG, me, right, 1, MPI_LONG_LONG, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(lg == (1LL << 40 | right), "_c get: %llx", lg);
    MPI_OK(MPI_Win_free(&win));

    free(src);
    free(dst);
    free(dsrc);
    free(mem);
    MPI_Finalize();
    if (me == 0)
        printf("rma_basic: OK on %d ranks\n", n);
    return 0;
}
