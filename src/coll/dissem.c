/* Dissemination barrier: in round k every rank signals rank + 2^k and waits
 * for rank - 2^k; after ceil(log2 n) rounds every rank has heard, directly
 * or transitively, from all others.  Works for any communicator size. */
#include "coll/algo.h"

int wh_barrier_dissem(wh_comm_t *c)
{
    int n = c->size, r = c->rank, err = MPI_SUCCESS;
    wh_dtype_t *b = wh_coll_byte();
    for (int k = 1; k < n; k <<= 1) /* every round runs, even after an error (algo.h) */
        wh_coll_esendrecv(NULL, 0, b, (r + k) % n, NULL, 0, b, (r - k + n) % n, WH_TAG_BARRIER, c, &err);
    return err;
}
