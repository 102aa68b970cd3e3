/* Blocking neighbourhood exchange (see coll/neighbor.h).  Messages travel on
 * the collective context with tags WH_TAG_NEIGHBOR + offset, above the tags
 * of the other collective families (coll/algo.h), so a neighbourhood
 * collective cannot match another collective's messages. */
#include <stdlib.h>

#include "coll/neighbor.h"
#include "proto/p2p.h"

#define WH_TAG_NEIGHBOR 0x4e00

int wh_neighbor_exchange(int nsend, const wh_nbr_blk_t *send, int nrecv, const wh_nbr_blk_t *recv, wh_comm_t *c)
{
    wh_req_t **reqs = malloc(((size_t)nsend + (size_t)nrecv + 1) * sizeof *reqs);
    if (!reqs)
        return wh_error(MPI_ERR_NO_MEM, "out of memory for %d neighbourhood messages", nsend + nrecv);
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < nrecv && rc == MPI_SUCCESS; i++) {
        const wh_nbr_blk_t *b = &recv[i];
        if (b->peer != MPI_PROC_NULL)
            rc = wh_irecv(b->buf, b->count, b->dt, b->peer, WH_TAG_NEIGHBOR + b->tag, c, WH_CTX_COLL, &reqs[n++]);
    }
    for (int i = 0; i < nsend && rc == MPI_SUCCESS; i++) {
        const wh_nbr_blk_t *b = &send[i];
        if (b->peer != MPI_PROC_NULL)
            rc = wh_isend(b->buf, b->count, b->dt, b->peer, WH_TAG_NEIGHBOR + b->tag, c, WH_CTX_COLL, WH_MODE_STD,
                          &reqs[n++]);
    }
    if (rc != MPI_SUCCESS)
        n--; /* the failed start left no request */
    int wrc = wh_waitall(n, reqs, NULL);
    free(reqs);
    return rc != MPI_SUCCESS ? rc : wrc;
}
