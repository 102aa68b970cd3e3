/* One origin's operations on one target location stay in program order even
 * without a flush between them: an accumulate, then a get of the result; a
 * put over it; request-based and plain, to itself and to every other rank;
 * small (one message) and large (single copy or libfabric RMA where the get
 * takes it), real and complex elements; windows from MPI_Win_allocate,
 * MPI_Win_create over malloc'ed and over MPI_Alloc_mem memory.  MPI-4.1
 * orders only accumulates among themselves, but MPICH and Open MPI keep
 * this order, and programs count on it (BAGEL's distributed tensors: an
 * accumulate into a tile, then a get of the tile; on one rank wharf once
 * served the get before the accumulate had been applied). */
#include <complex.h>

#include "p2p_check.h"

enum { SMALL = 16, LARGE = 40000 };

static void make_win(int flavor, MPI_Aint bytes, void **base, MPI_Win *win)
{
    if (flavor == 0) {
        MPI_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, base, win));
        return;
    }
    if (flavor == 1)
        *base = malloc((size_t)bytes);
    else
        MPI_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, base));
    CHECK(*base != NULL, "out of memory");
    MPI_OK(MPI_Win_create(*base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win));
}

static void free_win(int flavor, void *base, MPI_Win *win)
{
    MPI_OK(MPI_Win_free(win));
    if (flavor == 1)
        free(base);
    else if (flavor == 2)
        MPI_OK(MPI_Free_mem(base));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    double *a = malloc(LARGE * sizeof(double)), *got = malloc(LARGE * sizeof(double));
    double complex *ca = malloc(LARGE * sizeof(double complex)), *cgot = malloc(LARGE * sizeof(double complex));
    CHECK(a && got && ca && cgot, "out of memory");
    for (int flavor = 0; flavor < 3; flavor++) {
        for (int big = 0; big < 2; big++) {
            int cnt = big ? LARGE : SMALL;
            /* every origin owns one slot of cnt complex numbers in every window */
            MPI_Aint slot = (MPI_Aint)cnt * (MPI_Aint)sizeof(double complex);
            void *base;
            MPI_Win win;
            make_win(flavor, slot * n, &base, &win);
            memset(base, 0, (size_t)(slot * n));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
            for (int k = 0; k < n; k++) {
                int t = (me + k) % n;
                MPI_Aint at = slot * me;
                p2p_setstep("flavor %d, %d elements, target %d: accumulate then get", flavor, cnt, t);
                /* request-based, as BAGEL: Raccumulate + wait, Rget + wait */
                for (int rep = 1; rep <= 3; rep++) {
                    for (int i = 0; i < cnt; i++)
                        a[i] = i + 0.25 * me + k;
                    MPI_Request r;
                    MPI_OK(MPI_Raccumulate(a, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, MPI_SUM, win, &r));
                    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                    MPI_OK(MPI_Rget(got, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, win, &r));
                    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                    for (int i = 0; i < cnt; i++)
                        if (got[i] != rep * (i + 0.25 * me + k)) {
                            CHECK(0, "rep %d: element %d is %g, want %g", rep, i, got[i], rep * (i + 0.25 * me + k));
                            break;
                        }
                }
                /* plain: put over the accumulated values, then get, one flush at the end */
                p2p_setstep("flavor %d, %d elements, target %d: accumulate, put, get", flavor, cnt, t);
                for (int i = 0; i < cnt; i++)
                    a[i] = -i;
                MPI_OK(MPI_Accumulate(a, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, MPI_SUM, win));
                for (int i = 0; i < cnt; i++)
                    a[i] = 7.5 + i;
                MPI_OK(MPI_Put(a, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, win));
                MPI_OK(MPI_Get(got, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, win));
                MPI_OK(MPI_Win_flush(t, win));
                for (int i = 0; i < cnt; i++)
                    if (got[i] != 7.5 + i) {
                        CHECK(0, "element %d is %g after the put, want %g", i, got[i], 7.5 + i);
                        break;
                    }
                /* complex sums over the whole slot, then a get */
                p2p_setstep("flavor %d, %d elements, target %d: complex accumulate then get", flavor, cnt, t);
                for (int i = 0; i < cnt; i++)
                    ca[i] = 0;
                MPI_OK(MPI_Put(ca, cnt, MPI_C_DOUBLE_COMPLEX, t, at, cnt, MPI_C_DOUBLE_COMPLEX, win));
                for (int i = 0; i < cnt; i++)
                    ca[i] = i + (me + 1) * I;
                for (int rep = 0; rep < 2; rep++)
                    MPI_OK(MPI_Accumulate(ca, cnt, MPI_C_DOUBLE_COMPLEX, t, at, cnt, MPI_C_DOUBLE_COMPLEX, MPI_SUM,
                                          win));
                MPI_Request r;
                MPI_OK(MPI_Rget(cgot, cnt, MPI_C_DOUBLE_COMPLEX, t, at, cnt, MPI_C_DOUBLE_COMPLEX, win, &r));
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                for (int i = 0; i < cnt; i++)
                    if (cgot[i] != 2 * (i + (me + 1) * I)) {
                        CHECK(0, "complex element %d is %g%+gi", i, creal(cgot[i]), cimag(cgot[i]));
                        break;
                    }
            }
            MPI_OK(MPI_Win_unlock_all(win));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            /* the same in a fence epoch and in a post/start epoch (active target) */
            MPI_Group world;
            MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
            for (int mode = 0; mode < 2; mode++) {
                int t = (me + 1) % n;
                MPI_Aint at = slot * me;
                p2p_setstep("flavor %d, %d elements, target %d: accumulate then get, %s", flavor, cnt, t,
                            mode ? "post/start" : "fence");
                if (mode) {
                    MPI_OK(MPI_Win_post(world, 0, win));
                    MPI_OK(MPI_Win_start(world, 0, win));
                } else
                    MPI_OK(MPI_Win_fence(0, win));
                for (int i = 0; i < cnt; i++)
                    a[i] = 1.0 + i + mode;
                MPI_OK(MPI_Put(a, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, win));
                MPI_OK(MPI_Accumulate(a, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, MPI_SUM, win));
                MPI_OK(MPI_Get(got, cnt, MPI_DOUBLE, t, at, cnt, MPI_DOUBLE, win));
                if (mode) {
                    MPI_OK(MPI_Win_complete(win));
                    MPI_OK(MPI_Win_wait(win));
                } else
                    MPI_OK(MPI_Win_fence(0, win));
                for (int i = 0; i < cnt; i++)
                    if (got[i] != 2 * (1.0 + i + mode)) {
                        CHECK(0, "element %d is %g, want %g", i, got[i], 2 * (1.0 + i + mode));
                        break;
                    }
            }
            MPI_OK(MPI_Group_free(&world));
            free_win(flavor, base, &win);
        }
    }
    free(a);
    free(got);
    free(ca);
    free(cgot);
    MPI_Finalize();
    if (me == 0)
        printf("rma_order: OK on %d ranks\n", n);
    return 0;
}
