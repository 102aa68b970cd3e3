/* Recursive doubling: in round k each rank exchanges with rank ^ 2^k, so
 * after log2 n rounds everyone has everything.  Allreduce, allgather (power
 * of two sizes), scan and exscan.
 *
 * Allreduce on a size that is not a power of two first folds the first
 * 2*rem ranks pairwise (the odd rank of each pair keeps the pair's sum and
 * takes part; the even one waits for the result), which keeps the ranks a
 * participant stands for contiguous and in order.  Both partners of an
 * exchange combine the same two operands in the same order (lower ranks on
 * the left), so every rank ends with bit-identical results, and
 * non-commutative ops are correct. */
#include <stdlib.h>

#include "coll/algo.h"

/* participant index (after the fold) -> rank */
static inline int unfold(int nr, int rem)
{
    return nr < rem ? nr * 2 + 1 : nr + rem;
}

int wh_allreduce_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                        wh_op_t *op, wh_comm_t *c)
{
    int n = c->size, r = c->rank, rc;
    int pof2 = wh_coll_pof2(n), rem = n - pof2, nr;
    if (sbuf != MPI_IN_PLACE && (rc = wh_coll_copy(sbuf, count, dt, rbuf, count, dt)) != MPI_SUCCESS)
        return rc;
    void *raw;
    _Alignas(16) char stack[WH_COLL_STACK];
    char *a = rbuf, *b = wh_coll_tmp_in(count, dt, stack, sizeof stack, &raw);
    if (!b)
        return wh_coll_nomem("allreduce buffer", (size_t)count * (size_t)dt->extent);
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = WH_COLL_SEND(a, count, dt, r + 1, WH_TAG_ALLREDUCE, c);
            nr = -1;
        } else {
            rc = WH_COLL_RECV(b, count, dt, r - 1, WH_TAG_ALLREDUCE, c);
            if (rc == MPI_SUCCESS)
                rc = wh_op_apply(op, b, a, (size_t)count, dth, dt);
            nr = r / 2;
        }
    } else {
        rc = MPI_SUCCESS;
        nr = r - rem;
    }
    for (int m = 1; nr >= 0 && m < pof2 && rc == MPI_SUCCESS; m <<= 1) {
        int peer = unfold(nr ^ m, rem);
        rc = WH_COLL_SENDRECV(a, count, dt, peer, b, count, dt, peer, WH_TAG_ALLREDUCE, c);
        if (rc != MPI_SUCCESS)
            break;
        if (peer < r) {
            rc = wh_op_apply(op, b, a, (size_t)count, dth, dt);
        } else {
            rc = wh_op_apply(op, a, b, (size_t)count, dth, dt);
            char *t = a;
            a = b;
            b = t;
        }
    }
    if (rc == MPI_SUCCESS && r < 2 * rem) {
        if (r % 2)
            rc = WH_COLL_SEND(a, count, dt, r - 1, WH_TAG_ALLREDUCE, c);
        else
            rc = WH_COLL_RECV(rbuf, count, dt, r + 1, WH_TAG_ALLREDUCE, c);
    }
    if (rc == MPI_SUCCESS && a != (char *)rbuf)
        rc = wh_coll_copy(a, count, dt, rbuf, count, dt);
    free(raw);
    return rc;
}

int wh_allgather_recdbl(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                        wh_dtype_t *rdt, wh_comm_t *c)
{
    int n = c->size, r = c->rank, rc;
    if (sbuf != MPI_IN_PLACE &&
        (rc = wh_coll_copy(sbuf, scount, sdt, wh_coll_elt(rbuf, (MPI_Aint)r * rcount, rdt), rcount, rdt)))
        return rc;
    for (int m = 1; m < n; m <<= 1) {
        int peer = r ^ m, mine = r & ~(m - 1), theirs = peer & ~(m - 1);
        rc = WH_COLL_SENDRECV(wh_coll_elt(rbuf, (MPI_Aint)mine * rcount, rdt), (MPI_Count)m * rcount, rdt, peer,
                              wh_coll_elt(rbuf, (MPI_Aint)theirs * rcount, rdt), (MPI_Count)m * rcount, rdt, peer,
                              WH_TAG_ALLGATHER, c);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Scan and exscan: `part` is the reduction over my current group (ranks
 * r & ~(2m-1) .. its end), the result accumulates the lower part only. */
static int scan_common(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                       wh_comm_t *c, int exclusive)
{
    int n = c->size, r = c->rank, rc = MPI_SUCCESS, have = !exclusive;
    int tag = exclusive ? WH_TAG_EXSCAN : WH_TAG_SCAN;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *raw_p = NULL, *raw_t = NULL;
    _Alignas(16) char st_p[WH_COLL_STACK / 2], st_t[WH_COLL_STACK / 2];
    char *part = wh_coll_tmp_in(count, dt, st_p, sizeof st_p, &raw_p);
    char *tmp = wh_coll_tmp_in(count, dt, st_t, sizeof st_t, &raw_t);
    if (!part || !tmp) {
        rc = wh_coll_nomem("scan buffers", 2 * (size_t)count * (size_t)dt->extent);
        goto out;
    }
    if ((rc = wh_coll_copy(in, count, dt, part, count, dt)) != MPI_SUCCESS)
        goto out;
    if (!exclusive && sbuf != MPI_IN_PLACE && (rc = wh_coll_copy(sbuf, count, dt, rbuf, count, dt)) != MPI_SUCCESS)
        goto out;
    for (int m = 1; m < n; m <<= 1) {
        int peer = r ^ m;
        if (peer >= n)
            continue;
        if ((rc = WH_COLL_SENDRECV(part, count, dt, peer, tmp, count, dt, peer, tag, c)) != MPI_SUCCESS)
            goto out;
        if (peer < r) { /* tmp: the lower group's reduction */
            if ((rc = wh_op_apply(op, tmp, part, (size_t)count, dth, dt)) != MPI_SUCCESS)
                goto out;
            if (have)
                rc = wh_op_apply(op, tmp, rbuf, (size_t)count, dth, dt);
            else
                rc = wh_coll_copy(tmp, count, dt, rbuf, count, dt);
            have = 1;
        } else if (op->commute) {
            rc = wh_op_apply(op, tmp, part, (size_t)count, dth, dt);
        } else { /* part = part op tmp */
            rc = wh_op_apply(op, part, tmp, (size_t)count, dth, dt);
            char *t = part;
            part = tmp;
            tmp = t;
        }
        if (rc != MPI_SUCCESS)
            goto out;
    }
out:
    free(raw_p);
    free(raw_t);
    return rc;
}

int wh_scan_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   wh_comm_t *c)
{
    return scan_common(sbuf, rbuf, count, dth, dt, op, c, 0);
}

int wh_exscan_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                     wh_op_t *op, wh_comm_t *c)
{
    return scan_common(sbuf, rbuf, count, dth, dt, op, c, 1);
}
