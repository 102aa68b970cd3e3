/* Schedule builders of the reductions.  Every one combines operands in rank
 * order (`inout = in op inout` with `in` from the lower ranks), so
 * non-commutative ops are correct, and partners of an exchange combine the
 * same operands in the same order (bit-identical results on all ranks).
 *
 *   reduce          binomial tree rooted at rank 0 over the ranks themselves
 *                   (node r's partial covers ranks [r, r + lowbit(r))); all
 *                   children's partials are received at once, then folded in
 *                   order; rank 0 hands the result to the root
 *   allreduce       recursive doubling; sizes that are not a power of two
 *                   first fold ranks pairwise (as in recdbl.c); large vectors
 *                   with a commutative op: Rabenseifner (rabenseifner.c)
 *   reduce_scatter  commutative ops: every block goes straight to its owner
 *                   (pairwise order), which folds them in; any op: reduce
 *                   to rank 0, then scatter the pieces
 *   scan, exscan    recursive doubling (as in recdbl.c)
 *
 * Builders track at build time which temporary holds which partial result
 * (the pointer swaps of the blocking algorithms happen here, once). */
#include "coll/algo.h"
#include "coll/sched.h"
#include "util/tunables.h"

static int lowbit(int vr, int n)
{
    int m = 1;
    while (m < n && !(vr & m))
        m <<= 1;
    return m;
}

int wh_sched_reduce_to(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int root)
{
    wh_comm_t *c = s->comm;
    wh_dtype_t *dt = s->dt;
    int n = c->size, r = c->rank, low = lowbit(r, n);
    if (count == 0 || dt->size == 0)
        return s->build_err;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* IN_PLACE only at the root */
    if (n == 1) {
        wh_sched_copy(s, mine, count, dt, rbuf, count, dt);
        return s->build_err;
    }
    void *part[32];
    int nc = 0;
    for (int m = 1; m < low && r + m < n; m <<= 1) {
        if (!(part[nc] = wh_sched_tmp(s, count, dt)))
            return s->build_err;
        wh_sched_recv(s, part[nc++], count, dt, r + m);
    }
    wh_sched_fence(s);
    const void *acc = mine;
    for (int k = 0; k < nc; k++) { /* acc = acc op child k (higher ranks) */
        wh_sched_reduce(s, acc, part[k], count);
        acc = part[k];
    }
    if (r != 0) {
        wh_sched_send(s, acc, count, dt, r - low);
        wh_sched_fence(s);
        if (r == root)
            wh_sched_recv(s, rbuf, count, dt, 0);
    } else if (root == 0) {
        wh_sched_copy(s, acc, count, dt, rbuf, count, dt);
    } else {
        wh_sched_send(s, acc, count, dt, root);
    }
    wh_sched_fence(s);
    return s->build_err;
}

/* participant index (after the fold) -> rank */
static inline int unfold(int nr, int rem)
{
    return nr < rem ? nr * 2 + 1 : nr + rem;
}

/* Rabenseifner: recursive halving reduce-scatter over pof2 blocks, then
 * recursive doubling allgather of the reduced blocks (commutative ops). */
static void allreduce_rsag(wh_sched_t *s, char *a, char *tmp, MPI_Count count, int nr, int pof2, int rem)
{
    wh_dtype_t *dt = s->dt;
    MPI_Aint *disp = wh_sched_bytes(s, (size_t)(pof2 + 1) * sizeof *disp);
    if (!disp)
        return;
    wh_coll_split(count, pof2, disp);
    int lo = 0, hi = pof2;
    for (int m = pof2 >> 1; m > 0; m >>= 1) {
        int peer = unfold(nr ^ m, rem), mid = lo + m;
        int klo = (nr & m) ? mid : lo, khi = (nr & m) ? hi : mid; /* keep */
        int slo = (nr & m) ? lo : mid, shi = (nr & m) ? mid : hi; /* send */
        MPI_Count kn = disp[khi] - disp[klo];
        wh_sched_recv(s, wh_coll_elt(tmp, disp[klo], dt), kn, dt, peer);
        wh_sched_send(s, wh_coll_elt(a, disp[slo], dt), disp[shi] - disp[slo], dt, peer);
        wh_sched_fence(s);
        wh_sched_reduce(s, wh_coll_elt(tmp, disp[klo], dt), wh_coll_elt(a, disp[klo], dt), kn);
        lo = klo;
        hi = khi;
    }
    for (int m = 1; m < pof2; m <<= 1) {
        int pn = nr ^ m, peer = unfold(pn, rem);
        int mine = nr & ~(m - 1), theirs = pn & ~(m - 1);
        wh_sched_recv(s, wh_coll_elt(a, disp[theirs], dt), disp[theirs + m] - disp[theirs], dt, peer);
        wh_sched_send(s, wh_coll_elt(a, disp[mine], dt), disp[mine + m] - disp[mine], dt, peer);
        wh_sched_fence(s);
    }
}

int wh_sched_allreduce(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count)
{
    wh_comm_t *c = s->comm;
    wh_dtype_t *dt = s->dt;
    int n = c->size, r = c->rank, pof2 = wh_coll_pof2(n), rem = n - pof2, nr;
    if (count == 0 || dt->size == 0)
        return s->build_err;
    if (sbuf != MPI_IN_PLACE)
        wh_sched_copy(s, sbuf, count, dt, rbuf, count, dt);
    if (n == 1)
        return s->build_err;
    char *a = rbuf, *b = wh_sched_tmp(s, count, dt);
    if (!b)
        return s->build_err;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            wh_sched_send(s, a, count, dt, r + 1);
            nr = -1;
        } else {
            wh_sched_recv(s, b, count, dt, r - 1);
            wh_sched_fence(s);
            wh_sched_reduce(s, b, a, count);
            nr = r / 2;
        }
    } else {
        nr = r - rem;
    }
    size_t nbytes = (size_t)count * dt->size;
    int rsag = s->op->commute && nbytes >= wh_tun.coll_allreduce_long && count >= pof2;
    if (rsag && nr >= 0)
        allreduce_rsag(s, a, b, count, nr, pof2, rem);
    for (int m = 1; !rsag && nr >= 0 && m < pof2; m <<= 1) {
        int peer = unfold(nr ^ m, rem);
        wh_sched_recv(s, b, count, dt, peer);
        wh_sched_send(s, a, count, dt, peer);
        wh_sched_fence(s);
        if (peer < r) {
            wh_sched_reduce(s, b, a, count);
        } else {
            wh_sched_reduce(s, a, b, count);
            char *t = a;
            a = b;
            b = t;
        }
    }
    if (r < 2 * rem) {
        wh_sched_fence(s);
        if (r % 2)
            wh_sched_send(s, a, count, dt, r - 1);
        else
            wh_sched_recv(s, rbuf, count, dt, r + 1);
        wh_sched_fence(s);
    }
    if (a != (char *)rbuf)
        wh_sched_copy(s, a, count, dt, rbuf, count, dt);
    wh_sched_fence(s);
    return s->build_err;
}

/* Commutative ops: every rank sends each block straight to its owner (all at
 * once, in pairwise order) and folds the n-1 blocks it receives into its own. */
static int redscat_pairwise(wh_sched_t *s, const void *in, void *rbuf, const MPI_Count *rcounts,
                            const MPI_Aint *displs)
{
    wh_dtype_t *dt = s->dt;
    int n = s->comm->size, r = s->comm->rank;
    MPI_Count mine = rcounts[r];
    char *acc = wh_sched_tmp(s, mine, dt);
    char **part = wh_sched_bytes(s, (size_t)n * sizeof *part);
    if (!acc || !part)
        return s->build_err;
    wh_sched_copy(s, wh_coll_elt(in, displs[r], dt), mine, dt, acc, mine, dt);
    for (int i = 1; i < n; i++) {
        if (!(part[i] = wh_sched_tmp(s, mine, dt)))
            return s->build_err;
        wh_sched_recv(s, part[i], mine, dt, (r - i + n) % n);
    }
    for (int i = 1; i < n; i++) {
        int to = (r + i) % n;
        wh_sched_send(s, wh_coll_elt(in, displs[to], dt), rcounts[to], dt, to);
    }
    wh_sched_fence(s);
    for (int i = 1; i < n; i++)
        wh_sched_reduce(s, part[i], acc, mine);
    wh_sched_copy(s, acc, mine, dt, rbuf, mine, dt);
    wh_sched_fence(s);
    return s->build_err;
}

int wh_sched_reduce_scatter(wh_sched_t *s, const void *sbuf, void *rbuf, const MPI_Count *rcounts)
{
    wh_comm_t *c = s->comm;
    wh_dtype_t *dt = s->dt;
    int n = c->size;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (dt->size == 0)
        return s->build_err;
    MPI_Aint *displs = wh_sched_bytes(s, (size_t)n * sizeof *displs);
    if (!displs)
        return s->build_err;
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = (MPI_Aint)total;
        total += rcounts[i];
    }
    if (total == 0)
        return s->build_err;
    if (s->op->commute)
        return redscat_pairwise(s, in, rbuf, rcounts, displs);
    void *tmp = NULL;
    if (c->rank == 0 && !(tmp = wh_sched_tmp(s, total, dt)))
        return s->build_err;
    wh_sched_reduce_to(s, in, tmp, total, 0);
    wh_sched_fence(s);
    return wh_sched_scatterv(s, tmp, rcounts, 0, displs, dt, rbuf, rcounts[c->rank], dt, 0);
}

/* `part` is the reduction over my current group of ranks; the result
 * accumulates the lower groups' parts only. */
int wh_sched_scan(wh_sched_t *s, const void *sbuf, void *rbuf, MPI_Count count, int exclusive)
{
    wh_comm_t *c = s->comm;
    wh_dtype_t *dt = s->dt;
    int n = c->size, r = c->rank, have = !exclusive;
    if (count == 0 || dt->size == 0)
        return s->build_err;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (n == 1) {
        if (!exclusive)
            wh_sched_copy(s, in, count, dt, rbuf, count, dt);
        return s->build_err;
    }
    char *part = wh_sched_tmp(s, count, dt), *tmp = wh_sched_tmp(s, count, dt);
    if (!part || !tmp)
        return s->build_err;
    wh_sched_copy(s, in, count, dt, part, count, dt);
    if (!exclusive)
        wh_sched_copy(s, in, count, dt, rbuf, count, dt);
    for (int m = 1; m < n; m <<= 1) {
        int peer = r ^ m;
        if (peer >= n)
            continue;
        wh_sched_recv(s, tmp, count, dt, peer);
        wh_sched_send(s, part, count, dt, peer);
        wh_sched_fence(s);
        if (peer < r) { /* tmp: the lower group's reduction */
            wh_sched_reduce(s, tmp, part, count);
            if (have)
                wh_sched_reduce(s, tmp, rbuf, count);
            else
                wh_sched_copy(s, tmp, count, dt, rbuf, count, dt);
            have = 1;
        } else if (s->op->commute) {
            wh_sched_reduce(s, tmp, part, count);
        } else { /* part = part op tmp */
            wh_sched_reduce(s, part, tmp, count);
            char *t = part;
            part = tmp;
            tmp = t;
        }
    }
    wh_sched_fence(s);
    return s->build_err;
}
