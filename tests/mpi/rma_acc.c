/* Accumulates: concurrent MPI_SUM from every rank to one location (element
 * atomicity), fetch-and-op counters (every ticket handed out once), compare-
 * and-swap (exactly one winner), every predefined op, MINLOC on pair types,
 * derived target layouts, get_accumulate and the request-based variants, a
 * large accumulate split over many messages.  Both window kinds. */
#include "p2p_check.h"

#define ITERS 200
#define BIGN 100003

static void make_win(int flavor, MPI_Aint size, int du, void *baseptr, MPI_Win *win)
{
    if (!flavor) {
        MPI_OK(MPI_Win_allocate(size, du, MPI_INFO_NULL, MPI_COMM_WORLD, baseptr, win));
        memset(*(void **)baseptr, 0, (size_t)size);
        return;
    }
    void *m = calloc(1, (size_t)size);
    CHECK(m != NULL, "out of memory");
    *(void **)baseptr = m;
    MPI_OK(MPI_Win_create(m, size, du, MPI_INFO_NULL, MPI_COMM_WORLD, win));
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size;
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        int *m;
        const int SLOTS = 64;
        make_win(flavor, (MPI_Aint)(SLOTS + BIGN) * (MPI_Aint)sizeof(int), sizeof(int), &m, &win);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

        /* ---- concurrent sums to one location under shared locks ---- */
        p2p_setstep("flavor %d concurrent sum", flavor);
        int one = 1;
        for (int i = 0; i < ITERS; i++) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
            MPI_OK(MPI_Win_unlock(0, win));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            CHECK(m[0] == n * ITERS, "sum %d, expected %d", m[0], n * ITERS);
            MPI_OK(MPI_Win_unlock(0, win));
        }

        /* ---- fetch-and-op tickets: every value handed out exactly once ---- */
        p2p_setstep("flavor %d fetch_and_op", flavor);
        int *mine = malloc(sizeof(int) * 50), *all = malloc(sizeof(int) * 50 * (size_t)n);
        MPI_OK(MPI_Win_lock_all(0, win));
        for (int i = 0; i < 50; i++) {
            MPI_OK(MPI_Fetch_and_op(&one, &mine[i], MPI_INT, n - 1, 1, MPI_SUM, win));
            MPI_OK(MPI_Win_flush(n - 1, win));
        }
        MPI_OK(MPI_Win_unlock_all(win));
        MPI_OK(MPI_Allgather(mine, 50, MPI_INT, all, 50, MPI_INT, MPI_COMM_WORLD));
        char *seen = calloc((size_t)(50 * n), 1);
        for (int i = 0; i < 50 * n; i++) {
            CHECK(all[i] >= 0 && all[i] < 50 * n && !seen[all[i]], "ticket %d handed out twice or out of range",
                  all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
        free(mine);
        free(all);

        /* ---- compare-and-swap: one winner ---- */
        p2p_setstep("flavor %d cas", flavor);
        MPI_OK(MPI_Win_fence(0, win));
        int newv = me + 1, cmpv = 0, old = -1;
        MPI_OK(MPI_Compare_and_swap(&newv, &cmpv, &old, MPI_INT, 0, 2, win));
        MPI_OK(MPI_Win_fence(0, win));
        int won = old == 0, winners = 0;
        MPI_OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
        if (me == 0)
            CHECK(m[2] >= 1 && m[2] <= n, "cas location %d", m[2]);
        CHECK(old == 0 || (old >= 1 && old <= n), "cas returned %d", old);

        /* ---- every predefined op on ints, all ranks to rank 0 ---- */
        p2p_setstep("flavor %d ops", flavor);
        MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                        MPI_REPLACE, MPI_NO_OP};
        const int NOPS = 12, B = 8;
        if (me == 0)
            for (int i = 0; i < NOPS; i++)
                m[B + i] = 3;
        MPI_OK(MPI_Win_fence(0, win));
        int v = me + 2;
        for (int i = 0; i < NOPS; i++)
            if (ops[i] != MPI_REPLACE || me == n - 1) /* one writer for REPLACE */
                MPI_OK(MPI_Accumulate(&v, 1, MPI_INT, 0, B + i, 1, MPI_INT, ops[i], win));
        MPI_OK(MPI_Win_fence(0, win));
        if (me == 0) {
            int e[12] = {3, 3, 3, 3, 1, 3, 1, 3, 1, 3, n + 1, 3};
            for (int r = 0; r < n; r++) {
                int x = r + 2;
                e[0] = e[0] > x ? e[0] : x;
                e[1] = e[1] < x ? e[1] : x;
                e[2] += x;
                e[3] *= x;
                e[5] &= x;
                e[7] |= x;
                e[8] = !e[8] != !x;
                e[9] ^= x;
            }
            for (int i = 0; i < NOPS; i++)
                CHECK(m[B + i] == e[i], "op %d: %d, expected %d", i, m[B + i], e[i]);
        }

        /* ---- get_accumulate with a strided target, result contiguous ---- */
        p2p_setstep("flavor %d get_accumulate", flavor);
        MPI_Datatype vec;
        MPI_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec));
        MPI_OK(MPI_Type_commit(&vec));
        const int G = 24;
        for (int i = 0; i < 12; i++)
            m[G + i] = 100 * me + i;
        MPI_OK(MPI_Win_fence(0, win));
        int add[4] = {1, 2, 3, 4}, res[4] = {0};
        int tgt = (me + 1) % n;
        MPI_OK(MPI_Get_accumulate(add, 4, MPI_INT, res, 4, MPI_INT, tgt, G, 1, vec, MPI_SUM, win));
        MPI_OK(MPI_Win_fence(0, win));
        for (int k = 0; k < 4; k++)
            CHECK(res[k] == 100 * tgt + 3 * k, "fetched %d = %d", k, res[k]);
        int from = (me + n - 1) % n;
        for (int i = 0; i < 12; i++) {
            int e = 100 * me + i + (i % 3 == 0 ? add[i / 3] : 0);
            CHECK(m[G + i] == e, "after get_accumulate slot %d = %d, expected %d (origin %d)", i, m[G + i], e, from);
        }
        MPI_OK(MPI_Type_free(&vec));

        /* ---- MINLOC on MPI_DOUBLE_INT (a pair with padding) and MPI_2INT ---- */
        p2p_setstep("flavor %d minloc", flavor);
        MPI_Win pw;
        struct di {
            double d;
            int i;
        } *pm;
        struct ii {
            int v, i;
        };
        make_win(flavor, 8 * sizeof(struct di), sizeof(struct di), &pm, &pw);
        if (me == 0) {
            for (int i = 0; i < 4; i++) {
                pm[i].d = 1e9;
                pm[i].i = -1;
            }
            struct ii init = {-1, -1};
            memcpy(&pm[4], &init, sizeof init);
        }
        MPI_OK(MPI_Win_fence(0, pw));
        struct di mind[4];
        for (int i = 0; i < 4; i++) {
            mind[i].d = (double)((me * 7 + i * 3) % (n + 2));
            mind[i].i = me;
        }
        MPI_OK(MPI_Accumulate(mind, 4, MPI_DOUBLE_INT, 0, 0, 4, MPI_DOUBLE_INT, MPI_MINLOC, pw));
        struct ii mi = {me * 5 % 7, me};
        MPI_OK(MPI_Accumulate(&mi, 1, MPI_2INT, 0, 4 * (MPI_Aint)sizeof(struct di) / (MPI_Aint)sizeof(struct di),
                              1, MPI_2INT, MPI_MAXLOC, pw));
        MPI_OK(MPI_Win_fence(0, pw));
        if (me == 0)
            for (int i = 0; i < 4; i++) {
                double best = 1e9;
                int who = -1;
                for (int r = 0; r < n; r++) {
                    double d = (double)((r * 7 + i * 3) % (n + 2));
                    if (d < best) {
                        best = d;
                        who = r;
                    }
                }
                CHECK(pm[i].d == best && pm[i].i == who, "minloc %d: (%g,%d), expected (%g,%d)", i, pm[i].d,
                      pm[i].i, best, who);
            }
        if (me == 0) {
            struct ii *p2 = (struct ii *)&pm[4];
            int best = -1, who = -1;
            for (int r = 0; r < n; r++)
                if (r * 5 % 7 > best) {
                    best = r * 5 % 7;
                    who = r;
                }
            CHECK(p2->v == best && p2->i == who, "maxloc (%d,%d), expected (%d,%d)", p2->v, p2->i, best, who);
        }
        MPI_OK(MPI_Win_free(&pw));
        if (flavor)
            free(pm);

        /* ---- a large accumulate and the request-based variants ---- */
        p2p_setstep("flavor %d large", flavor);
        int *big = malloc(sizeof(int) * BIGN), *back = malloc(sizeof(int) * BIGN);
        for (int i = 0; i < BIGN; i++)
            big[i] = i % 1000 + me;
        if (me == 0)
            memset(m + SLOTS, 0, sizeof(int) * BIGN);
        MPI_OK(MPI_Win_fence(0, win));
        MPI_Request rq;
        MPI_OK(MPI_Raccumulate(big, BIGN, MPI_INT, 0, SLOTS, BIGN, MPI_INT, MPI_SUM, win, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_fence(0, win));
        if (me == 0)
            for (int i = 0; i < BIGN; i++)
                CHECK(m[SLOTS + i] == n * (i % 1000) + n * (n - 1) / 2, "large sum at %d: %d", i, m[SLOTS + i]);
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, back, BIGN, MPI_INT, 0, SLOTS, BIGN, MPI_INT, MPI_NO_OP, win,
                                   &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < BIGN; i++)
            CHECK(back[i] == n * (i % 1000) + n * (n - 1) / 2, "fetched large sum at %d: %d", i, back[i]);
        free(big);
        free(back);

        MPI_OK(MPI_Win_free(&win));
        if (flavor)
            free(m);
    }
    MPI_Finalize();
    if (me == 0)
        printf("rma_acc: OK on %d ranks\n", n);
    return 0;
}
