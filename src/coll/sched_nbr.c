/* Schedule builder of the nonblocking and persistent neighbourhood
 * collectives: the exchange of wh_neighbor_exchange (coll/neighbor.h) as
 * one schedule group. */
#include "coll/neighbor.h"
#include "coll/sched.h"

int wh_sched_neighbor(wh_sched_t *s, int nsend, const struct wh_nbr_blk *send, int nrecv,
                      const struct wh_nbr_blk *recv)
{
    for (int i = 0; i < nrecv; i++)
        wh_sched_recv_tag(s, recv[i].buf, recv[i].count, recv[i].dt, recv[i].peer, recv[i].tag % WH_TAG_NBC_OFFS);
    for (int i = 0; i < nsend; i++)
        wh_sched_send_tag(s, send[i].buf, send[i].count, send[i].dt, send[i].peer, send[i].tag % WH_TAG_NBC_OFFS);
    wh_sched_fence(s);
    return s->build_err;
}
