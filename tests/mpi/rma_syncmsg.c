/* How many one-sided synchronization requests travel, counted with the MPI_T
 * performance variables wharf_<channel>_rma_sync_msgs (a flush, unlock or
 * complete request sent as a message of its own) and
 * wharf_<channel>_rma_sync_merged_msgs (the request rode on the origin's last
 * operation message, src/rma/msg.c), summed over the channels:
 *
 *   put + flush                    -> one merged request per iteration
 *   get + flush                    -> none (the reply completes the get)
 *   fetch-and-op + flush           -> none (libfabric atomic or answered active message)
 *   put + get + flush              -> one request of its own (the get sent the put first)
 *   MAXLOC accumulate + flush      -> one merged request (pair types stay active messages)
 *   put + unlock                   -> one merged request
 *   puts + PSCW complete           -> one merged request
 *
 * Every rank targets its right neighbour's MPI_Win_create window over
 * malloc'ed memory (never mapped by co-residents: 8-byte transfers are
 * active messages over shm and net), and every value is checked.
 * Argument "nohold" (run with WHARF_RMA_HOLD_MAX=0): no request merges, each
 * one counts as a message of its own. */
#include <string.h>

#include "p2p_check.h"

#define K 20
#define SLOTS 8

static int npv;
static int *sync_ix, *merged_ix, nsync, nmerged;
static MPI_T_pvar_session sess;
static MPI_T_pvar_handle *hs, *hm;

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static void pv_init(void)
{
    MPI_OK(MPI_T_pvar_get_num(&npv));
    sync_ix = calloc((size_t)npv, sizeof(int));
    merged_ix = calloc((size_t)npv, sizeof(int));
    hs = calloc((size_t)npv, sizeof *hs);
    hm = calloc((size_t)npv, sizeof *hm);
    CHECK(sync_ix && merged_ix && hs && hm, "out of memory");
    MPI_OK(MPI_T_pvar_session_create(&sess));
    for (int i = 0; i < npv; i++) {
        char name[128];
        int nlen = sizeof name, verb, cls, bind, ro, cont, atom;
        MPI_Datatype dt;
        MPI_T_enum en;
        MPI_OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont, &atom));
        int count;
        if (ends_with(name, "_rma_sync_merged_msgs")) {
            merged_ix[nmerged] = i;
            MPI_OK(MPI_T_pvar_handle_alloc(sess, i, NULL, &hm[nmerged++], &count));
        } else if (ends_with(name, "_rma_sync_msgs")) {
            sync_ix[nsync] = i;
            MPI_OK(MPI_T_pvar_handle_alloc(sess, i, NULL, &hs[nsync++], &count));
        }
    }
    CHECK(nsync >= 2 && nmerged >= 2, "pvars *_rma_sync_msgs (%d) and *_rma_sync_merged_msgs (%d) missing", nsync,
          nmerged);
}

/* counts since the last call */
static void pv_take(unsigned long long *sync, unsigned long long *merged)
{
    *sync = *merged = 0;
    for (int i = 0; i < nsync; i++) {
        unsigned long long v;
        MPI_OK(MPI_T_pvar_readreset(sess, hs[i], &v));
        *sync += v;
    }
    for (int i = 0; i < nmerged; i++) {
        unsigned long long v;
        MPI_OK(MPI_T_pvar_readreset(sess, hm[i], &v));
        *merged += v;
    }
}

static void expect(const char *what, unsigned long long want_sync, unsigned long long want_merged, int hold)
{
    unsigned long long s, m;
    pv_take(&s, &m);
    if (!hold) { /* nothing merges: every request is a message of its own */
        want_sync += want_merged;
        want_merged = 0;
    }
    CHECK(s == want_sync && m == want_merged, "%s: %llu requests of their own and %llu merged, expected %llu and %llu",
          what, s, m, want_sync, want_merged);
}

int main(int argc, char **argv)
{
    p2p_init(&argc, &argv);
    int me = p2p_rank, n = p2p_size, right = (me + 1) % n, left = (me + n - 1) % n;
    int hold = !(argc > 1 && !strcmp(argv[1], "nohold"));
    int provided;
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    pv_init();
    if (n < 2) {
        MPI_T_finalize();
        MPI_Finalize();
        if (me == 0)
            printf("rma_syncmsg: needs 2 ranks or more; OK\n");
        return 0;
    }
    int64_t *m = calloc(SLOTS, sizeof(int64_t));
    CHECK(m != NULL, "out of memory");
    MPI_Win win;
    MPI_OK(MPI_Win_create(m, SLOTS * (MPI_Aint)sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    unsigned long long s0, m0;
    pv_take(&s0, &m0); /* window creation */

    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    expect("lock", 0, 0, hold);

    p2p_setstep("put + flush");
    for (int i = 0; i < K; i++) {
        int64_t v = 1000 * (i + 1) + me;
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(right, win));
    }
    expect("put + flush", 0, K, hold);

    p2p_setstep("get + flush");
    for (int i = 0; i < K; i++) {
        int64_t g = -1;
        MPI_OK(MPI_Get(&g, 1, MPI_INT64_T, right, 0, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(right, win));
        CHECK(g == 1000 * K + me, "iteration %d: got %lld, expected %lld", i, (long long)g, (long long)(1000 * K + me));
    }
    expect("get + flush", 0, 0, hold);

    p2p_setstep("fetch-and-op + flush");
    for (int i = 0; i < K; i++) {
        int64_t one = 1, old = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, right, 1, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(right, win));
        CHECK(old == i, "iteration %d: fetch-and-op found %lld", i, (long long)old);
    }
    expect("fetch-and-op + flush", 0, 0, hold);

    p2p_setstep("put + get + flush");
    for (int i = 0; i < K; i++) {
        int64_t v = 5000 + i, g = -1;
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, 2, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Get(&g, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(right, win));
        CHECK(g == (i ? 5000 + i - 1 : 0), "iteration %d: got %lld from slot 3", i, (long long)g);
        MPI_OK(MPI_Put(&v, 1, MPI_INT64_T, right, 3, 1, MPI_INT64_T, win));
        MPI_OK(MPI_Win_flush(right, win));
    }
    expect("put + get + flush, put + flush", K, K, hold);

    p2p_setstep("maxloc + flush");
    for (int i = 0; i < K; i++) {
        int pair[2] = {100 * i + me, me};
        MPI_OK(MPI_Accumulate(pair, 1, MPI_2INT, right, 4, 1, MPI_2INT, MPI_MAXLOC, win));
        MPI_OK(MPI_Win_flush(right, win));
    }
    expect("maxloc accumulate + flush", 0, K, hold);

    p2p_setstep("put + unlock");
    int64_t v6 = 600 + me;
    MPI_OK(MPI_Put(&v6, 1, MPI_INT64_T, right, 6, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_unlock(right, win));
    expect("put + unlock", 0, 1, hold);

    /* what arrived here, from the left neighbour */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
    CHECK(m[0] == 1000 * K + left, "slot 0 = %lld", (long long)m[0]);
    CHECK(m[1] == K, "slot 1 (fetch-and-op) = %lld", (long long)m[1]);
    CHECK(m[2] == 5000 + K - 1 && m[3] == 5000 + K - 1, "slots 2, 3 = %lld, %lld", (long long)m[2], (long long)m[3]);
    int pair[2];
    memcpy(pair, &m[4], sizeof pair);
    CHECK(pair[0] == 100 * (K - 1) + left && pair[1] == left, "maxloc slot = (%d, %d)", pair[0], pair[1]);
    CHECK(m[6] == 600 + left, "slot 6 = %lld", (long long)m[6]);
    MPI_OK(MPI_Win_unlock(me, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    pv_take(&s0, &m0); /* my own lock: the self channel */

    p2p_setstep("pscw");
    MPI_Group world, lg, rg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_OK(MPI_Group_incl(world, 1, &left, &lg));
    MPI_OK(MPI_Group_incl(world, 1, &right, &rg));
    MPI_OK(MPI_Win_post(lg, 0, win));
    MPI_OK(MPI_Win_start(rg, 0, win));
    int64_t v7 = 700 + me;
    MPI_OK(MPI_Put(&v7, 1, MPI_INT64_T, right, 7, 1, MPI_INT64_T, win));
    MPI_OK(MPI_Win_complete(win));
    MPI_OK(MPI_Win_wait(win));
    CHECK(m[7] == 700 + left, "slot 7 = %lld", (long long)m[7]);
    expect("put + complete", 0, 1, hold);
    MPI_OK(MPI_Group_free(&lg));
    MPI_OK(MPI_Group_free(&rg));
    MPI_OK(MPI_Group_free(&world));

    MPI_OK(MPI_Win_free(&win));
    free(m);
    MPI_OK(MPI_T_pvar_session_free(&sess));
    MPI_T_finalize();
    MPI_Finalize();
    if (me == 0)
        printf("rma_syncmsg: OK on %d ranks (%s)\n", n, hold ? "requests ride on operations" : "nohold");
    return 0;
}
