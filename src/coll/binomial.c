/* Binomial trees: broadcast, reduce, gather and scatter in ceil(log2 n)
 * rounds.  Ranks are renumbered relative to the root (vr = rank - root mod
 * n); node vr's parent is vr with its lowest set bit cleared, its children
 * are vr + m for the powers of two m below that bit, and its subtree holds
 * the relative ranks [vr, vr + lowbit(vr)). */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "util/scratch.h"

#define WH_REAL(vr, root, n) (((vr) + (root)) % (n))

/* lowest set bit of vr, or the smallest power of two >= n for the root */
static int lowbit(int vr, int n)
{
    int m = 1;
    while (m < n && !(vr & m))
        m <<= 1;
    return m;
}

int wh_bcast_binomial(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, err = MPI_SUCCESS;
    int low = lowbit(vr, n);
    if (vr != 0)
        wh_coll_erecv(buf, count, dt, WH_REAL(vr - low, root, n), WH_TAG_BCAST, c, &err);
    /* children, largest subtree first; sends overlap */
    wh_req_t *reqs[32];
    int nr = 0;
    for (int m = low >> 1; m > 0; m >>= 1)
        if (vr + m < n)
            wh_coll_eisend(buf, count, dt, WH_REAL(vr + m, root, n), WH_TAG_BCAST, c, &reqs[nr++], &err);
    for (int i = 0; i < nr; i++)
        wh_coll_ewait(reqs[i], &err);
    return err;
}

/* Commutative ops: partial results flow up the tree rooted at root; each
 * node folds its children's partials into its own. */
int wh_reduce_binomial(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                       wh_op_t *op, int root, wh_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, err = MPI_SUCCESS;
    int low = lowbit(vr, n);
    int has_children = low > 1 && vr + 1 < n;
    void *raw_acc = NULL, *raw_tmp = NULL;
    _Alignas(16) char st_acc[WH_COLL_STACK / 2], st_tmp[WH_COLL_STACK / 2];
    const void *acc = sbuf;
    char *accw = NULL;
    if (vr == 0) {
        accw = rbuf;
        if (sbuf != MPI_IN_PLACE)
            wh_coll_note(wh_coll_copy(sbuf, count, dt, rbuf, count, dt), &err);
    } else if (has_children) {
        if (!(accw = wh_coll_tmp_in(count, dt, st_acc, sizeof st_acc, &raw_acc)))
            wh_coll_note(wh_coll_nomem("reduce partial result", (size_t)count * (size_t)dt->extent), &err);
        else
            wh_coll_note(wh_coll_copy(sbuf, count, dt, accw, count, dt), &err);
    }
    if (accw)
        acc = accw;
    if (has_children) {
        char *tmp = wh_coll_tmp_in(count, dt, st_tmp, sizeof st_tmp, &raw_tmp);
        if (!tmp)
            wh_coll_note(wh_coll_nomem("reduce receive buffer", (size_t)count * (size_t)dt->extent), &err);
        for (int m = 1; m < low && vr + m < n; m <<= 1) {
            wh_coll_erecv(tmp, tmp ? count : 0, dt, WH_REAL(vr + m, root, n), WH_TAG_REDUCE, c, &err);
            if (err == MPI_SUCCESS)
                wh_coll_note(wh_op_apply(op, tmp, accw, (size_t)count, dth, dt), &err);
        }
    }
    if (vr != 0)
        wh_coll_esend(acc, count, dt, WH_REAL(vr - low, root, n), WH_TAG_REDUCE, c, &err);
    wh_scratch_put(raw_acc);
    wh_scratch_put(raw_tmp);
    return err;
}

/* Any op: a tree rooted at rank 0 over the ranks themselves, so node r's
 * partial covers ranks [r, r + lowbit(r)) in order and a child's partial
 * (higher ranks) goes on the right: acc = acc op child.  Rank 0 then hands
 * the result to the root. */
int wh_reduce_ordered(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                      wh_op_t *op, int root, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int low = lowbit(r, n);
    int has_children = low > 1 && r + 1 < n;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* IN_PLACE only at the root */
    void *raw_a = NULL, *raw_b = NULL;
    _Alignas(16) char st_a[WH_COLL_STACK / 2], st_b[WH_COLL_STACK / 2];
    const void *acc = mine;
    if (has_children) {
        char *a = wh_coll_tmp_in(count, dt, st_a, sizeof st_a, &raw_a);
        char *b = wh_coll_tmp_in(count, dt, st_b, sizeof st_b, &raw_b);
        if (!a || !b)
            wh_coll_note(wh_coll_nomem("reduce buffers", 2 * (size_t)count * (size_t)dt->extent), &err);
        else
            wh_coll_note(wh_coll_copy(mine, count, dt, a, count, dt), &err);
        for (int m = 1; m < low && r + m < n; m <<= 1) {
            wh_coll_erecv(b, b ? count : 0, dt, r + m, WH_TAG_REDUCE, c, &err);
            if (err == MPI_SUCCESS) {
                wh_coll_note(wh_op_apply(op, a, b, (size_t)count, dth, dt), &err);
                char *t = a;
                a = b;
                b = t;
            }
        }
        if (a)
            acc = a;
    }
    if (r != 0) {
        wh_coll_esend(acc, count, dt, r - low, WH_TAG_REDUCE, c, &err);
        if (r == root)
            wh_coll_erecv(rbuf, count, dt, 0, WH_TAG_REDUCE, c, &err);
    } else if (root == 0) {
        if (err == MPI_SUCCESS)
            wh_coll_note(wh_coll_copy(acc, count, dt, rbuf, count, dt), &err);
    } else {
        wh_coll_esend(acc, count, dt, root, WH_TAG_REDUCE, c, &err);
    }
    wh_scratch_put(raw_a);
    wh_scratch_put(raw_b);
    return err;
}

/* Gather: each node collects the packed blocks of its subtree (relative rank
 * order) and passes them up; the root unpacks them into place.  blk is the
 * bytes one rank contributes (equal on all ranks by the type-signature rule;
 * where ranks disagree, the sizes of the messages show it). */
int wh_gather_binomial(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                       wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, err = MPI_SUCCESS;
    size_t blk = vr == 0 ? (size_t)rcount * rdt->size : (size_t)scount * sdt->size;
    int low = lowbit(vr, n);
    int sub = low < n - vr ? low : n - vr; /* ranks in my subtree */
    wh_dtype_t *byte = wh_coll_byte();
    if (sub == 1) { /* leaf: send my data as it is (or a root alone) */
        if (vr != 0)
            wh_coll_esend(sbuf, scount, sdt, WH_REAL(vr - low, root, n), WH_TAG_GATHER, c, &err);
        else if (sbuf != MPI_IN_PLACE)
            wh_coll_ecopy(sbuf, scount, sdt, rbuf, rcount, rdt, &err);
        return err;
    }
    char *tmp = wh_scratch_get(blk * (size_t)sub + 1);
    if (!tmp)
        wh_coll_note(wh_coll_nomem("gather staging", blk * (size_t)sub), &err);
    else if (vr != 0)
        wh_coll_note(wh_dtype_pack(sbuf, (size_t)scount, sdt, 0, tmp, blk), &err);
    for (int m = 1; m < low && vr + m < n; m <<= 1) {
        int got = m < n - vr - m ? m : n - vr - m;
        wh_coll_erecv(tmp ? tmp + (size_t)m * blk : NULL, tmp ? (MPI_Count)((size_t)got * blk) : 0, byte,
                      WH_REAL(vr + m, root, n), WH_TAG_GATHER, c, &err);
    }
    if (vr != 0) {
        wh_coll_esend(tmp, (MPI_Count)((size_t)sub * blk), byte, WH_REAL(vr - low, root, n), WH_TAG_GATHER, c, &err);
        wh_scratch_put(tmp);
        return err;
    }
    if (sbuf != MPI_IN_PLACE)
        wh_coll_ecopy(sbuf, scount, sdt, wh_coll_elt(rbuf, (MPI_Aint)root * rcount, rdt), rcount, rdt, &err);
    for (int i = 1; i < n && err == MPI_SUCCESS; i++) {
        char *dst = wh_coll_elt(rbuf, (MPI_Aint)WH_REAL(i, root, n) * rcount, rdt);
        wh_coll_note(wh_dtype_unpack(dst, (size_t)rcount, rdt, 0, tmp + (size_t)i * blk, blk), &err);
    }
    wh_scratch_put(tmp);
    return err;
}

/* Scatter: the root packs the blocks in relative rank order; each node
 * receives its subtree's blocks, keeps the first and passes the rest down. */
int wh_scatter_binomial(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                        wh_dtype_t *rdt, int root, wh_comm_t *c)
{
    int n = c->size, vr = (c->rank - root + n) % n, err = MPI_SUCCESS;
    size_t blk = vr == 0 ? (size_t)scount * sdt->size : (size_t)rcount * rdt->size;
    int low = lowbit(vr, n);
    int sub = low < n - vr ? low : n - vr;
    wh_dtype_t *byte = wh_coll_byte();
    if (sub == 1) { /* leaf: receive straight into place (or a root alone) */
        if (vr != 0)
            wh_coll_erecv(rbuf, rcount, rdt, WH_REAL(vr - low, root, n), WH_TAG_SCATTER, c, &err);
        else if (rbuf != MPI_IN_PLACE)
            wh_coll_ecopy(sbuf, scount, sdt, rbuf, rcount, rdt, &err);
        return err;
    }
    char *tmp = wh_scratch_get(blk * (size_t)sub + 1);
    if (!tmp)
        wh_coll_note(wh_coll_nomem("scatter staging", blk * (size_t)sub), &err);
    if (vr == 0) {
        /* my own block first: a size mismatch here empties every message */
        if (rbuf != MPI_IN_PLACE)
            wh_coll_ecopy(wh_coll_elt(sbuf, (MPI_Aint)root * scount, sdt), scount, sdt, rbuf, rcount, rdt, &err);
        for (int i = 1; i < n && err == MPI_SUCCESS; i++) {
            const char *src = wh_coll_elt(sbuf, (MPI_Aint)WH_REAL(i, root, n) * scount, sdt);
            wh_coll_note(wh_dtype_pack(src, (size_t)scount, sdt, 0, tmp + (size_t)i * blk, blk), &err);
        }
    } else {
        wh_coll_erecv(tmp, tmp ? (MPI_Count)((size_t)sub * blk) : 0, byte, WH_REAL(vr - low, root, n),
                      WH_TAG_SCATTER, c, &err);
        if (err == MPI_SUCCESS)
            wh_coll_note(wh_dtype_unpack(rbuf, (size_t)rcount, rdt, 0, tmp, blk), &err);
    }
    for (int m = low >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        int give = m < n - vr - m ? m : n - vr - m;
        wh_coll_esend(tmp ? tmp + (size_t)m * blk : NULL, (MPI_Count)((size_t)give * blk), byte,
                      WH_REAL(vr + m, root, n), WH_TAG_SCATTER, c, &err);
    }
    wh_scratch_put(tmp);
    return err;
}
