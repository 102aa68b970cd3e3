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
#include "util/scratch.h"

/* participant index (after the fold) -> rank */
static inline int unfold(int nr, int rem)
{
    return nr < rem ? nr * 2 + 1 : nr + rem;
}

int wh_allreduce_recdbl(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                        wh_op_t *op, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int pof2 = wh_coll_pof2(n), rem = n - pof2, nr;
    if (sbuf != MPI_IN_PLACE)
        wh_coll_note(wh_coll_copy(sbuf, count, dt, rbuf, count, dt), &err);
    void *raw;
    _Alignas(16) char stack[WH_COLL_STACK];
    char *a = rbuf, *b = wh_coll_tmp_in(count, dt, stack, sizeof stack, &raw);
    if (!b)
        wh_coll_note(wh_coll_nomem("allreduce buffer", (size_t)count * (size_t)dt->extent), &err);
    MPI_Count bn = b ? count : 0; /* what b receives */
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            wh_coll_esend(a, count, dt, r + 1, WH_TAG_ALLREDUCE, c, &err);
            nr = -1;
        } else {
            wh_coll_erecv(b, bn, dt, r - 1, WH_TAG_ALLREDUCE, c, &err);
            if (err == MPI_SUCCESS)
                wh_coll_note(wh_op_apply(op, b, a, (size_t)count, dth, dt), &err);
            nr = r / 2;
        }
    } else {
        nr = r - rem;
    }
    for (int m = 1; nr >= 0 && m < pof2; m <<= 1) {
        int peer = unfold(nr ^ m, rem);
        wh_coll_esendrecv(a, count, dt, peer, b, bn, dt, peer, WH_TAG_ALLREDUCE, c, &err);
        if (err != MPI_SUCCESS)
            continue; /* the remaining exchanges still run */
        if (peer < r) {
            wh_coll_note(wh_op_apply(op, b, a, (size_t)count, dth, dt), &err);
        } else {
            wh_coll_note(wh_op_apply(op, a, b, (size_t)count, dth, dt), &err);
            char *t = a;
            a = b;
            b = t;
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            wh_coll_esend(a, count, dt, r - 1, WH_TAG_ALLREDUCE, c, &err);
        else
            wh_coll_erecv(rbuf, count, dt, r + 1, WH_TAG_ALLREDUCE, c, &err);
    }
    if (err == MPI_SUCCESS && a != (char *)rbuf)
        wh_coll_note(wh_coll_copy(a, count, dt, rbuf, count, dt), &err);
    wh_scratch_put(raw);
    return err;
}

int wh_allgather_recdbl(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                        wh_dtype_t *rdt, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    if (sbuf != MPI_IN_PLACE)
        wh_coll_ecopy(sbuf, scount, sdt, wh_coll_elt(rbuf, (MPI_Aint)r * rcount, rdt), rcount, rdt, &err);
    for (int m = 1; m < n; m <<= 1) {
        int peer = r ^ m, mine = r & ~(m - 1), theirs = peer & ~(m - 1);
        wh_coll_esendrecv(wh_coll_elt(rbuf, (MPI_Aint)mine * rcount, rdt), (MPI_Count)m * rcount, rdt, peer,
                          wh_coll_elt(rbuf, (MPI_Aint)theirs * rcount, rdt), (MPI_Count)m * rcount, rdt, peer,
                          WH_TAG_ALLGATHER, c, &err);
    }
    return err;
}

/* Is rank r's group reduction (`part`) still sent after the step of
 * distance m?  At a later step r sends it to a higher peer always, and to a
 * lower peer only when that peer in turn still needs it.  Unrolled: the part
 * travels down through any of r's set bits above m (each clears one) and must
 * end in a send upwards, at a step mk where r's bit is clear; clearing every
 * set bit between m and mk gives the lowest sender, so the test is
 * (r without those bits) + mk < n.  Both ends of a step evaluate it for the
 * lower rank, so they agree on whether the upper-to-lower message travels;
 * the upper rank skips updating a part nobody reads.  At 2 ranks a scan is
 * one message and one reduction. */
static int part_needed(int r, int m, int n)
{
    for (long mk = (long)m << 1; mk < n; mk <<= 1) {
        long between = (mk - 1) & ~(((long)m << 1) - 1);
        if (!(r & mk) && ((long)r & ~between) + mk < n)
            return 1;
    }
    return 0;
}

static int scan_buf(char **buf, MPI_Count count, wh_dtype_t *dt, char *stack, size_t room, void **raw)
{
    if (*buf)
        return MPI_SUCCESS;
    if (!(*buf = wh_coll_tmp_in(count, dt, stack, room, raw)))
        return wh_coll_nomem("scan buffers", (size_t)count * (size_t)dt->extent);
    return MPI_SUCCESS;
}

/* Scan and exscan by recursive doubling: `part` is the reduction over my
 * current group (ranks r & ~(2m-1) .. its end), the result accumulates the
 * lower part only.  `part` starts as the input itself and is copied into a
 * scratch buffer (pbuf) only when a step has to change it or rbuf, which it
 * may alias (MPI_IN_PLACE), is about to change under it. */
static int scan_common(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                       wh_comm_t *c, int exclusive)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS, have = !exclusive;
    int tag = exclusive ? WH_TAG_EXSCAN : WH_TAG_SCAN;
    void *raw_p = NULL, *raw_t = NULL;
    _Alignas(16) char st_p[WH_COLL_STACK / 2], st_t[WH_COLL_STACK / 2];
    char *pbuf = NULL, *tmp = NULL; /* my part once changed; a received part */
    const char *part = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    /* own part (copy it into pbuf) before anything writes to it or to rbuf
     * under it; in place, rbuf is an exclusive scan's first result written */
#define OWN_PART()                                                                                                  \
    do {                                                                                                           \
        if (err == MPI_SUCCESS) {                                                                                  \
            wh_coll_note(scan_buf(&pbuf, count, dt, st_p, sizeof st_p, &raw_p), &err);                             \
            if (err == MPI_SUCCESS) {                                                                              \
                wh_coll_note(wh_coll_copy(part, count, dt, pbuf, count, dt), &err);                                \
                part = pbuf;                                                                                       \
            }                                                                                                      \
        }                                                                                                          \
    } while (0)
    /* an inclusive scan with a commutative op lets a rank above 0 skip copying
     * sbuf into rbuf: its first received contribution (it receives before
     * anything else writes rbuf) lands in rbuf and sbuf is combined into it */
    int defer = !exclusive && sbuf != MPI_IN_PLACE && r > 0 && op->commute;
    if (sbuf == MPI_IN_PLACE && exclusive)
        OWN_PART();
    else if (!exclusive && sbuf != MPI_IN_PLACE && !defer)
        wh_coll_note(wh_coll_copy(sbuf, count, dt, rbuf, count, dt), &err);
    /* After an error every message below still travels (empty); local work stops. */
    for (int m = 1; m < n; m <<= 1) {
        int peer = r ^ m;
        if (peer >= n)
            continue;
        int upper = peer < r, keep = part_needed(r, m, n);
        int down_msg = part_needed(upper ? peer : r, m, n); /* upper -> lower travels */
        if (!upper && !down_msg) {
            wh_coll_esend(part, count, dt, peer, tag, c, &err);
            continue;
        }
        if (keep && !pbuf) /* part changes below (upper: rbuf too) */
            OWN_PART();
        /* the first contribution to an exclusive scan lands in rbuf itself */
        char *into = rbuf; /* (may be MPI_BOTTOM, NULL) */
        MPI_Count in_n = count;
        if (upper && defer) {
            /* into stays rbuf */
        } else if (!upper || have) {
            wh_coll_note(scan_buf(&tmp, count, dt, st_t, sizeof st_t, &raw_t), &err);
            into = tmp;
            in_n = tmp ? count : 0; /* no buffer: the message is dropped */
        }
        if (upper && !down_msg)
            wh_coll_erecv(into, in_n, dt, peer, tag, c, &err);
        else
            wh_coll_esendrecv(part, count, dt, peer, into, in_n, dt, peer, tag, c, &err);
        if (err != MPI_SUCCESS)
            continue;
        int rc = MPI_SUCCESS;
        if (upper) { /* into: the lower group's reduction */
            if (keep)
                rc = wh_op_apply(op, into, pbuf, (size_t)count, dth, dt); /* part = lower op part */
            if (rc == MPI_SUCCESS && defer) /* rbuf = mine op lower (commutative) */
                rc = wh_op_apply(op, sbuf, rbuf, (size_t)count, dth, dt);
            else if (rc == MPI_SUCCESS && have)
                rc = wh_op_apply(op, into, rbuf, (size_t)count, dth, dt);
            defer = 0;
            have = 1;
        } else if (op->commute) { /* part = part op upper (a lower rank receives only a part it keeps) */
            rc = wh_op_apply(op, tmp, pbuf, (size_t)count, dth, dt);
        } else { /* part op upper, computed into tmp; then swap the buffers */
            rc = wh_op_apply(op, pbuf, tmp, (size_t)count, dth, dt);
            char *t = pbuf;
            void *tr = raw_p;
            part = pbuf = tmp;
            raw_p = raw_t;
            tmp = t;
            raw_t = tr;
        }
        wh_coll_note(rc, &err);
    }
#undef OWN_PART
    wh_scratch_put(raw_p);
    wh_scratch_put(raw_t);
    return err;
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
