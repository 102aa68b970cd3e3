/* Hierarchical collectives for communicators that span several node groups
 * (ranks that share a node region, src/locality: wh_job.host_of — never
 * hostnames): an intra-node phase on the node sub-communicator (node
 * shared memory where it can), the inter-node phase among one leader per
 * node (point-to-point, over the network), and an intra-node phase again.
 *
 * The sub-communicators are made by the first collective on c that can use
 * them (every rank computes the same groups from host_of, then one
 * context-id agreement over c for both: src/comm wh_comm_node_split) and
 * cached in c's state until c is freed.  Nodes are numbered by their lowest
 * rank in c, each node's leader is that rank, and ranks inside a node keep
 * c's order; so when each node's ranks form one range of c ("contiguous"),
 * node order is rank order and non-commutative reductions stay right.
 * Not used when c is on one node, or has one rank per node. */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "coll/hier.h"
#include "util/log.h"
#include "util/tunables.h"
#include "util/scratch.h"

static int setup(wh_comm_t *c, wh_coll_hier_t *h)
{
    int n = c->size;
    h->state = -1;
    if (!wh_tun.coll_hier || c->is_inter || n < 3 || !wh_comm_node_split)
        return MPI_SUCCESS;
    /* processes of another launcher group (MPI_Comm_spawn) have no common
     * numbering of hosts with this one: such communicators stay flat (every
     * member sees a member of another group, so all decide alike) */
    for (int r = 0; r < n; r++)
        if (wh_comm_wrank(c, r) >= wh_job.size)
            return MPI_SUCCESS;
    int *node_of = malloc(3 * (size_t)n * sizeof(int));
    if (!node_of)
        return MPI_SUCCESS; /* the flat algorithms then */
    int *leader = node_of + n, *nrank = node_of + 2 * n, nn = 0, contiguous = 1;
    for (int r = 0; r < n; r++) {
        int host = wh_job.host_of[wh_comm_wrank(c, r)], j = 0;
        while (j < nn && wh_job.host_of[wh_comm_wrank(c, leader[j])] != host)
            j++;
        if (j == nn)
            leader[nn++] = r, nrank[r] = 0; /* nrank of a leader: its node's members so far */
        else
            nrank[r] = ++nrank[leader[j]];
        node_of[r] = j;
        contiguous &= r == 0 || j >= node_of[r - 1]; /* numbered by first rank: never back */
    }
    for (int j = 0; j < nn; j++)
        nrank[leader[j]] = 0;
    if (nn == 1 || nn == n) {
        free(node_of);
        return MPI_SUCCESS;
    }
    wh_comm_t *node = NULL, *leaders = NULL;
    int rc = wh_comm_node_split(c, node_of, nn, &node, &leaders);
    if (rc != MPI_SUCCESS) {
        free(node_of);
        return rc;
    }
    h->node_of = node_of;
    h->leader = leader;
    h->node_rank = nrank;
    h->nnodes = nn;
    h->my_node = node_of[c->rank];
    h->contiguous = contiguous;
    h->node = node;
    h->leaders = leaders;
    h->state = 1;
    for (wh_comm_t *s = node; s; s = s == node ? leaders : NULL) {
        wh_coll_state_t *ss = wh_coll_state(s);
        if (ss)
            ss->internal = 1;
    }
    WH_DEBUG("coll", "communicator %#x: hierarchical collectives over %d node groups (%s), my node %d of %d ranks%s",
             (unsigned)c->obj.handle, nn, contiguous ? "contiguous" : "interleaved", h->my_node, node->size,
             leaders ? ", leader" : "");
    return MPI_SUCCESS;
}

wh_coll_hier_t *wh_hier_get(wh_comm_t *c, int *rc)
{
    *rc = MPI_SUCCESS;
    wh_coll_state_t *st = c->coll_data;
    if (__builtin_expect(st != NULL && st->hier.state != 0, 1))
        return st->hier.state == 1 ? &st->hier : NULL;
    if (!wh_tun.coll_hier || c->is_inter || c->size < 3 || !(st = wh_coll_state(c)))
        return NULL;
    *rc = setup(c, &st->hier);
    return st->hier.state == 1 ? &st->hier : NULL;
}

/* The phases below all run even after one failed (ranks that passed
 * different counts: algo.h), so no rank waits for a phase its peers left
 * out; the first error is returned. */
int wh_hier_barrier(wh_coll_hier_t *h)
{
    int err = wh_barrier(h->node);
    if (h->leaders)
        wh_coll_note(wh_barrier(h->leaders), &err);
    wh_coll_note(wh_barrier(h->node), &err);
    return err;
}

int wh_hier_bcast(void *buf, MPI_Count count, wh_dtype_t *dt, int root, wh_coll_hier_t *h)
{
    int rn = h->node_of[root], err = MPI_SUCCESS;
    if (h->my_node == rn)
        err = wh_bcast(buf, count, dt, h->node_rank[root], h->node);
    if (h->leaders)
        wh_coll_note(wh_bcast(buf, count, dt, rn, h->leaders), &err);
    if (h->my_node != rn)
        wh_coll_note(wh_bcast(buf, count, dt, 0, h->node), &err);
    return err;
}

int wh_hier_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   int root, wh_comm_t *c, wh_coll_hier_t *h)
{
    int rn = h->node_of[root], lead = h->node->rank == 0, err;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* MPI_IN_PLACE only at the root */
    void *acc = NULL, *raw = NULL;
    if (lead) {
        acc = c->rank == root ? rbuf : wh_coll_tmp(count, dt, &raw);
        if (!acc)
            return wh_coll_nomem("hierarchical reduce", (size_t)count * dt->size);
        err = wh_reduce(mine == acc ? MPI_IN_PLACE : mine, acc, count, dth, dt, op, 0, h->node);
        wh_coll_note(wh_reduce(h->my_node == rn ? MPI_IN_PLACE : acc, h->my_node == rn ? acc : NULL, count, dth, dt,
                               op, rn, h->leaders),
                     &err);
    } else {
        err = wh_reduce(mine, NULL, count, dth, dt, op, 0, h->node);
    }
    /* a root that does not lead its node gets the result from its leader */
    int rl = h->leader[rn];
    if (root != rl) {
        if (c->rank == rl)
            wh_coll_esend(acc, count, dt, root, WH_TAG_REDUCE, c, &err);
        else if (c->rank == root)
            wh_coll_erecv(rbuf, count, dt, rl, WH_TAG_REDUCE, c, &err);
    }
    wh_scratch_put(raw);
    return err;
}

int wh_hier_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                      wh_coll_hier_t *h)
{
    int err;
    if (h->leaders) {
        err = wh_reduce(sbuf, rbuf, count, dth, dt, op, 0, h->node);
        wh_coll_note(wh_allreduce(MPI_IN_PLACE, rbuf, count, dth, dt, op, h->leaders), &err);
    } else {
        err = wh_reduce(sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, count, dth, dt, op, 0, h->node);
    }
    wh_coll_note(wh_bcast(rbuf, count, dt, 0, h->node), &err);
    return err;
}

/* Every rank's block packed (blk bytes each) in node order: gathered to the
 * leaders, exchanged among them, broadcast in the node, unpacked in c's order. */
int wh_hier_allgather(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount,
                      wh_dtype_t *rdt, wh_comm_t *c, wh_coll_hier_t *h)
{
    int n = c->size, nn = h->nnodes, err;
    size_t blk = (size_t)rcount * rdt->size;
    wh_dtype_t *byte = wh_coll_byte();
    if (sbuf == MPI_IN_PLACE) {
        sbuf = wh_coll_elt(rbuf, (MPI_Aint)c->rank * rcount, rdt);
        scount = rcount;
        sdt = rdt;
    }
    MPI_Count *cnt = calloc((size_t)nn, sizeof *cnt);
    MPI_Aint *dsp = malloc(((size_t)nn + 1) * sizeof *dsp);
    char *all = wh_scratch_get(blk * (size_t)n);
    if (!cnt || !dsp || !all) {
        free(cnt);
        free(dsp);
        wh_scratch_put(all);
        return wh_coll_nomem("hierarchical allgather", blk * (size_t)n);
    }
    for (int r = 0; r < n; r++)
        cnt[h->node_of[r]] += (MPI_Count)blk;
    dsp[0] = 0;
    for (int j = 0; j < nn; j++)
        dsp[j + 1] = dsp[j] + (MPI_Aint)cnt[j];
    char *mine = all + dsp[h->my_node];
    err = wh_gather(sbuf, scount, sdt, mine, (MPI_Count)blk, byte, 0, h->node);
    if (h->leaders)
        wh_coll_note(wh_allgatherv(MPI_IN_PLACE, 0, byte, all, cnt, dsp, byte, h->leaders), &err);
    wh_coll_note(wh_bcast(all, (MPI_Count)(blk * (size_t)n), byte, 0, h->node), &err);
    for (int r = 0; r < n && err == MPI_SUCCESS; r++)
        err = wh_coll_copy(all + dsp[h->node_of[r]] + (size_t)h->node_rank[r] * blk, (MPI_Count)blk, byte,
                           wh_coll_elt(rbuf, (MPI_Aint)r * rcount, rdt), rcount, rdt);
    free(cnt);
    free(dsp);
    wh_scratch_put(all);
    return err;
}
