/* Synchronization: fence, passive target (lock/unlock, lock_all, flush),
 * generalized active target (post/start/complete/wait/test), with the epoch
 * checks that give MPI_ERR_RMA_SYNC.
 *
 * Completion rests on the channels' order: a flush or unlock request reaches
 * the target after every operation the origin sent before it, and its ack
 * (and every get reply) comes back in order too, so once the ack is in and no
 * reply is outstanding, all earlier operations are complete at both ends. */
#include <stdlib.h>

#include "coll/coll.h"
#include "rma/rma.h"

#define LK_SHARED 1
#define LK_EXCL 2
#define LK_NOCHECK 4

static int sync_err(const char *what)
{
    return wh_error(MPI_ERR_RMA_SYNC, "%s", what);
}

int wh_win_epoch_active(const wh_win_t *w)
{
    return w->lock_all || w->nlocked || w->start_active || w->post_active;
}

static int take_remote_err(wh_win_t *w)
{
    int e = w->remote_err;
    if (!e)
        return MPI_SUCCESS;
    w->remote_err = 0;
    return wh_error(e, "a target reported an access outside its window (or its attached memory)");
}

/* send the requests of one flush round (unlock: UNLOCK instead of FLUSH) */
static int flush_send(wh_win_t *w, int t, int sub, int32_t tag)
{
    w->dirty[t] = 0;
    w->flush_sent[t]++;
    return wh_rma_ctl(w, t, sub, tag);
}

static void flush_wait(wh_win_t *w, int t)
{
    wh_rma_wait_u64(&w->flush_done[t], w->flush_sent[t]);
    wh_rma_wait_i64_zero(&w->npend[t]);
}

int wh_win_flush(wh_win_t *w, int rank, int local)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* direct stores into node-region memory */
    int lo = rank < 0 ? 0 : rank, hi = rank < 0 ? w->size_c : rank + 1;
    /* requests first: one may ride on the held operation message (msg.c),
     * which the progress engine would otherwise send alone */
    if (!local)
        for (int t = lo; t < hi; t++)
            if (w->dirty[t])
                WH_CHECK(flush_send(w, t, WH_RC_FLUSH, 0));
    wh_progress(); /* serve the others even when nothing here waits (see wh_win_lock) */
    for (int t = lo; t < hi; t++)
        flush_wait(w, t);
    return take_remote_err(w);
}

int wh_win_fence(wh_win_t *w, int assert)
{
    if (wh_win_epoch_active(w))
        return sync_err("MPI_Win_fence inside a lock, lock_all, start or post epoch");
    if (!(assert & MPI_MODE_NOPRECEDE))
        WH_CHECK(wh_win_flush(w, -1, 0));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    WH_CHECK(wh_barrier(w->comm));
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}

static int lock_one(wh_win_t *w, int type, int t, int assert)
{
    w->lock_mode[t] = (uint8_t)((type == MPI_LOCK_EXCLUSIVE ? LK_EXCL : LK_SHARED) | (assert & MPI_MODE_NOCHECK ? LK_NOCHECK : 0));
    if (assert & MPI_MODE_NOCHECK)
        return MPI_SUCCESS;
    return wh_rma_ctl(w, t, WH_RC_LOCK, type);
}

static int unlock_one(wh_win_t *w, int t)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int m = w->lock_mode[t];
    w->lock_mode[t] = 0;
    if (m & LK_NOCHECK)
        return w->dirty[t] ? flush_send(w, t, WH_RC_FLUSH, 0) : MPI_SUCCESS;
    return flush_send(w, t, WH_RC_UNLOCK, m & LK_EXCL ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED);
}

int wh_win_lock(wh_win_t *w, int type, int rank, int assert)
{
    if (w->lock_all)
        return sync_err("MPI_Win_lock while MPI_Win_lock_all holds the window");
    if (w->lock_mode[rank])
        return sync_err("MPI_Win_lock of a rank this process has already locked in this window");
    if (w->in_start[rank])
        return sync_err("MPI_Win_lock of a rank in the access group of MPI_Win_start");
    /* Poll once first: a process that locks, reads and unlocks its own memory in a loop is
     * served by the self channel at once and never waits, so without this it would never
     * queue (or grant) the lock requests other ranks sent it, nor apply their operations
     * (MPICH's rma/linked_list_bench_lock_excl: rank 0 chasing a tail only others can move). */
    wh_progress();
    uint64_t need = w->grants[rank] + 1;
    WH_CHECK(lock_one(w, type, rank, assert));
    w->nlocked++;
    w->fence_open = 0; /* a fence followed by another epoch opened none (MPI-4.1 12.5) */
    if (!(assert & MPI_MODE_NOCHECK))
        wh_rma_wait_u64(&w->grants[rank], need);
    return MPI_SUCCESS;
}

int wh_win_unlock(wh_win_t *w, int rank)
{
    if (!w->lock_mode[rank] || w->lock_all)
        return sync_err("MPI_Win_unlock of a rank this process has not locked (MPI_Win_lock) in this window");
    WH_CHECK(unlock_one(w, rank)); /* before progress: it may ride on the held operation (msg.c) */
    wh_progress();
    w->nlocked--;
    flush_wait(w, rank);
    return take_remote_err(w);
}

int wh_win_lock_all(wh_win_t *w, int assert)
{
    if (w->lock_all || w->nlocked)
        return sync_err("MPI_Win_lock_all while this process already holds locks on the window");
    wh_progress();
    if (w->start_active)
        return sync_err("MPI_Win_lock_all inside an MPI_Win_start epoch");
    for (int t = 0; t < w->size_c; t++) {
        uint64_t need = w->grants[t] + 1;
        WH_CHECK(lock_one(w, MPI_LOCK_SHARED, t, assert));
        if (!(assert & MPI_MODE_NOCHECK))
            wh_rma_wait_u64(&w->grants[t], need);
    }
    w->lock_all = 1;
    w->fence_open = 0; /* a fence followed by another epoch opened none (MPI-4.1 12.5) */
    return MPI_SUCCESS;
}

int wh_win_unlock_all(wh_win_t *w)
{
    if (!w->lock_all)
        return sync_err("MPI_Win_unlock_all without MPI_Win_lock_all");
    for (int t = 0; t < w->size_c; t++)
        WH_CHECK(unlock_one(w, t));
    wh_progress();
    for (int t = 0; t < w->size_c; t++)
        flush_wait(w, t);
    w->lock_all = 0;
    return take_remote_err(w);
}

/* comm ranks of the group's members in the window; -1 entries: not a member */
static int group_ranks(const wh_win_t *w, const wh_group_t *g, uint8_t *mark)
{
    for (int i = 0; i < g->size; i++) {
        int r = wh_win_rank_of(w, g->wranks[i]);
        if (r < 0)
            return wh_error(MPI_ERR_RANK, "group member %d (world rank %d) is not in the window", i, g->wranks[i]);
        mark[r] = 1;
    }
    return MPI_SUCCESS;
}

int wh_win_post(wh_win_t *w, wh_group_t *g, int assert)
{
    if (w->post_active)
        return sync_err("MPI_Win_post while an exposure epoch of MPI_Win_post is still open");
    WH_CHECK(group_ranks(w, g, w->in_post));
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->post_active = 1;
    if (!(assert & MPI_MODE_NOCHECK))
        for (int r = 0; r < w->size_c; r++)
            if (w->in_post[r])
                WH_CHECK(wh_rma_ctl(w, r, WH_RC_POST, 0));
    return MPI_SUCCESS;
}

int wh_win_start(wh_win_t *w, wh_group_t *g, int assert)
{
    if (w->start_active)
        return sync_err("MPI_Win_start while an access epoch of MPI_Win_start is still open");
    if (w->lock_all || w->nlocked)
        return sync_err("MPI_Win_start inside a passive-target epoch");
    WH_CHECK(group_ranks(w, g, w->in_start));
    w->start_active = 1;
    w->fence_open = 0; /* a fence followed by another epoch opened none (MPI-4.1 12.5) */
    if (assert & MPI_MODE_NOCHECK)
        return MPI_SUCCESS;
    for (int t = 0; t < w->size_c; t++)
        if (w->in_start[t]) {
            wh_rma_wait_u64(&w->posts[t], w->posts_used[t] + 1);
            w->posts_used[t]++;
        }
    return MPI_SUCCESS;
}

int wh_win_complete(wh_win_t *w)
{
    if (!w->start_active)
        return sync_err("MPI_Win_complete without MPI_Win_start");
    for (int t = 0; t < w->size_c; t++)
        if (w->in_start[t]) {
            w->dirty[t] = 0;
            WH_CHECK(wh_rma_ctl(w, t, WH_RC_COMPLETE, 0));
        }
    for (int t = 0; t < w->size_c; t++)
        if (w->in_start[t]) {
            wh_rma_wait_i64_zero(&w->npend[t]);
            w->in_start[t] = 0;
        }
    w->start_active = 0;
    return MPI_SUCCESS;
}

static int posted_done(const wh_win_t *w)
{
    for (int r = 0; r < w->size_c; r++)
        if (w->in_post[r] && __atomic_load_n(&w->completes[r], __ATOMIC_ACQUIRE) <= w->completes_used[r])
            return 0;
    return 1;
}

int wh_win_wait(wh_win_t *w, int test, int *flag)
{
    if (!w->post_active)
        return sync_err(test ? "MPI_Win_test without MPI_Win_post" : "MPI_Win_wait without MPI_Win_post");
    unsigned idle = 0;
    wh_progress();
    while (!posted_done(w)) {
        if (test) {
            *flag = 0;
            return MPI_SUCCESS;
        }
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
    for (int r = 0; r < w->size_c; r++)
        if (w->in_post[r]) {
            w->completes_used[r]++;
            w->in_post[r] = 0;
        }
    w->post_active = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (flag)
        *flag = 1;
    return take_remote_err(w);
}
