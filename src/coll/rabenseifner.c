/* Rabenseifner's allreduce for large vectors and commutative ops:
 * reduce-scatter by recursive halving (each round halves the range of
 * blocks a rank is responsible for and exchanges the other half with its
 * partner), then an allgather by recursive doubling of the reduced blocks.
 * Moves 2 (p-1)/p of the vector per rank instead of log2 p times it.
 *
 * The vector is cut into pof2 blocks (element granularity, so derived types
 * work unchanged); after the halving, participant i owns block i.  A size
 * that is not a power of two is folded first as in recdbl.c.  Each block is
 * reduced by exactly one rank and then copied, so all ranks get
 * bit-identical results. */
#include <stdlib.h>

#include "coll/algo.h"
#include "util/scratch.h"

static inline int unfold(int nr, int rem)
{
    return nr < rem ? nr * 2 + 1 : nr + rem;
}

/* block boundary i (no table, after an allocation failure: every block empty) */
static inline MPI_Aint bnd(const MPI_Aint *disp, int i)
{
    return disp ? disp[i] : 0;
}

int wh_allreduce_rabenseifner(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt,
                              wh_op_t *op, wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    int pof2 = wh_coll_pof2(n), rem = n - pof2, nr;
    if (sbuf != MPI_IN_PLACE)
        wh_coll_note(wh_coll_copy(sbuf, count, dt, rbuf, count, dt), &err);
    void *raw;
    char *a = rbuf, *tmp = wh_coll_tmp(count, dt, &raw);
    MPI_Aint *disp = malloc((size_t)(pof2 + 1) * sizeof *disp);
    if (!tmp || !disp)
        wh_coll_note(wh_coll_nomem("allreduce buffers", (size_t)count * (size_t)dt->extent), &err);
    /* after an error every step still runs, with empty messages (algo.h);
     * without tmp a rank receives nothing (the messages are dropped) */
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            wh_coll_esend(a, count, dt, r + 1, WH_TAG_ALLREDUCE, c, &err);
            nr = -1;
        } else {
            wh_coll_erecv(tmp, tmp ? count : 0, dt, r - 1, WH_TAG_ALLREDUCE, c, &err);
            if (err == MPI_SUCCESS)
                wh_coll_note(wh_op_apply(op, tmp, a, (size_t)count, dth, dt), &err);
            nr = r / 2;
        }
    } else {
        nr = r - rem;
    }
    if (nr >= 0) {
        if (disp)
            wh_coll_split(count, pof2, disp);
        /* reduce-scatter: keep the half of [lo, hi) selected by my bit m */
        int lo = 0, hi = pof2;
        for (int m = pof2 >> 1; m > 0; m >>= 1) {
            int peer = unfold(nr ^ m, rem), mid = lo + m;
            int klo = (nr & m) ? mid : lo, khi = (nr & m) ? hi : mid; /* keep */
            int slo = (nr & m) ? lo : mid, shi = (nr & m) ? mid : hi; /* send */
            MPI_Count kn = bnd(disp, khi) - bnd(disp, klo), sn = bnd(disp, shi) - bnd(disp, slo);
            char *into = tmp ? wh_coll_elt(tmp, bnd(disp, klo), dt) : NULL;
            wh_coll_esendrecv(wh_coll_elt(a, bnd(disp, slo), dt), sn, dt, peer, into, tmp ? kn : 0, dt, peer,
                              WH_TAG_ALLREDUCE, c, &err);
            if (err == MPI_SUCCESS)
                wh_coll_note(wh_op_apply(op, into, wh_coll_elt(a, bnd(disp, klo), dt), (size_t)kn, dth, dt), &err);
            lo = klo;
            hi = khi;
        }
        /* allgather: my blocks [nr & ~(m-1), +m) for growing m */
        for (int m = 1; m < pof2; m <<= 1) {
            int pn = nr ^ m, peer = unfold(pn, rem);
            int mine = nr & ~(m - 1), theirs = pn & ~(m - 1);
            wh_coll_esendrecv(wh_coll_elt(a, bnd(disp, mine), dt), bnd(disp, mine + m) - bnd(disp, mine), dt, peer,
                              wh_coll_elt(a, bnd(disp, theirs), dt), bnd(disp, theirs + m) - bnd(disp, theirs), dt,
                              peer, WH_TAG_ALLREDUCE_AG, c, &err);
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            wh_coll_esend(a, count, dt, r - 1, WH_TAG_ALLREDUCE, c, &err);
        else
            wh_coll_erecv(a, count, dt, r + 1, WH_TAG_ALLREDUCE, c, &err);
    }
    wh_scratch_put(raw);
    free(disp);
    return err;
}
