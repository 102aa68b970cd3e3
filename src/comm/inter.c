/* Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge (dup is
 * in create.c).  An intercommunicator addresses the remote group
 * (size/wranks) and keeps its local group as an intracommunicator with its
 * own context (core/core.h); both contexts are agreed over both groups in
 * one agreement (the local one only needs to be free in the local group, so
 * both groups' local communicators may share it). */
#include <stdlib.h>
#include <string.h>

#include "core/peers.h"
#include "coll/coll.h"
#include "chan/chan.h"
#include "comm/comm.h"
#include "coord/coord.h"

/* world ranks of c's ranks (a new array; NULL if out of memory) */
static int *wranks_of(const wh_comm_t *c)
{
    int *w = malloc((size_t)c->size * sizeof(int) + 1);
    if (w)
        for (int i = 0; i < c->size; i++)
            w[i] = wh_comm_wrank(c, i);
    return w;
}

static int build(wh_comm_t *parent, int nl, const int *lw, int me, int nr, const int *rw, const uint32_t *ctx,
                 wh_comm_t **out)
{
    wh_comm_t *l, *ic;
    int rc = wh_comm_make(parent, nl, lw, me, ctx[1], &l);
    if (rc != MPI_SUCCESS) {
        wh_ctx_release(ctx[0]);
        return rc;
    }
    if ((rc = wh_comm_make(parent, nr, rw, me, ctx[0], &ic)) != MPI_SUCCESS) {
        wh_comm_release(l);
        return rc;
    }
    ic->is_inter = 1;
    ic->local = l;
    *out = ic;
    return MPI_SUCCESS;
}

int wh_intercomm_create(wh_comm_t *lc, int local_leader, wh_comm_t *peer, int remote_leader, int itag,
                        wh_comm_t **out)
{
    *out = NULL;
    int leader = lc->rank == local_leader, nl = lc->size, nr = 0, rc = MPI_SUCCESS;
    wh_dtype_t *idt = wh_dtype_get(MPI_INT);
    int *lw = wranks_of(lc), *rw = NULL;
    if (!lw)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    /* the leaders swap their groups (world ranks) over the peer communicator */
    int nf[2] = {0, 0}; /* the remote group's size; whether it is of another launcher group (MPI_Comm_spawn) */
    if (leader) {
        rc = wh_sendrecv(&nl, 1, idt, remote_leader, itag, &nf[0], 1, idt, remote_leader, itag, peer, WH_CTX_COLL, NULL);
        nf[1] = wh_comm_wrank(peer, remote_leader) >= wh_job.size;
    }
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(nf, 2, idt, local_leader, lc);
    nr = nf[0];
    /* processes of another group reach every member through the network
     * channel: all open it and publish their endpoints before the leaders
     * swap the groups (the barrier orders it before any lookup) */
    if (rc == MPI_SUCCESS && nf[1] && (rc = wh_chan_net_dyn_open()) == MPI_SUCCESS)
        rc = wh_barrier(lc);
    if (rc == MPI_SUCCESS && !(rw = malloc((size_t)nr * sizeof(int) + 1)))
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    /* the groups travel as global ids (core/peers.h): the groups may belong
     * to different launcher groups (MPI_Comm_spawn), whose peer indexes differ */
    int *lg = rc == MPI_SUCCESS && leader ? malloc((size_t)nl * sizeof(int) + 1) : NULL;
    if (rc == MPI_SUCCESS && leader && !lg)
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    for (int i = 0; rc == MPI_SUCCESS && leader && i < nl; i++)
        lg[i] = (int)wh_peer_gid(lw[i]);
    if (rc == MPI_SUCCESS && leader)
        rc = wh_sendrecv(lg, nl, idt, remote_leader, itag, rw, nr, idt, remote_leader, itag, peer, WH_CTX_COLL, NULL);
    free(lg);
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(rw, nr, idt, local_leader, lc);
    for (int i = 0; rc == MPI_SUCCESS && i < nr; i++) {
        uint32_t gid = (uint32_t)rw[i];
        if ((rw[i] = wh_coord_peer_of_gid(gid)) < 0)
            rc = wh_error(MPI_ERR_OTHER, "process %u of the remote group (launcher group %u, rank %u) cannot be "
                          "reached", (unsigned)gid, (unsigned)(gid >> WH_GID_RANK_BITS),
                          (unsigned)(gid & ((1u << WH_GID_RANK_BITS) - 1)));
    }
    /* the groups must be disjoint (every rank finds the same answer) */
    unsigned char *in = rc == MPI_SUCCESS ? calloc((size_t)wh_peers_cap, 1) : NULL;
    if (rc == MPI_SUCCESS && !in)
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    for (int i = 0; rc == MPI_SUCCESS && i < nl; i++)
        in[lw[i]] = 1;
    for (int i = 0; rc == MPI_SUCCESS && i < nr; i++)
        if (in[rw[i]])
            rc = wh_error(MPI_ERR_COMM, "the local and remote groups overlap (MPI_COMM_WORLD rank %d is in both)", rw[i]);
    free(in);
    int *pr = rc == MPI_SUCCESS ? malloc((size_t)nl * sizeof(int)) : NULL;
    if (rc == MPI_SUCCESS && !pr)
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    if (rc == MPI_SUCCESS) {
        /* a tree rooted at the leader, whose root talks to the other leader */
        for (int i = 0; i < nl; i++)
            pr[i] = (local_leader + i) % nl;
        wh_cid_spec_t s = {.comm = lc, .n = nl, .me = (lc->rank - local_leader + nl) % nl, .prank = pr,
                           .tag = wh_cid_tag(lc), .xcomm = leader ? peer : NULL, .xpeer = remote_leader, .xtag = itag,
                           .member = 1, .nids = 2};
        uint32_t ctx[2];
        if ((rc = wh_cid_agree(&s, ctx)) == MPI_SUCCESS)
            rc = build(lc, nl, lw, lc->rank, nr, rw, ctx, out);
    }
    free(pr);
    free(lw);
    free(rw);
    return rc;
}

int wh_intercomm_merge(wh_comm_t *ic, int high, wh_comm_t **out)
{
    *out = NULL;
    wh_comm_t *l = ic->local;
    wh_dtype_t *idt = wh_dtype_get(MPI_INT);
    int xtag = wh_cid_tag(ic), rc = MPI_SUCCESS;
    /* leaders swap (high, world rank of the leader); ties go to the lower leader */
    int mine[2] = {high != 0, (int)wh_peer_gid(wh_comm_wrank(l, 0))}, theirs[2];
    if (l->rank == 0)
        rc = wh_sendrecv(mine, 2, idt, 0, xtag, theirs, 2, idt, 0, xtag, ic, WH_CTX_COLL, NULL);
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(mine, 1, idt, 0, l); /* every member uses its leader's high */
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(theirs, 2, idt, 0, l);
    if (rc != MPI_SUCCESS)
        return rc;
    int first = mine[0] < theirs[0] || (mine[0] == theirs[0] && mine[1] < theirs[1]);
    wh_cid_spec_t s = {.comm = l, .n = l->size, .me = l->rank, .tag = wh_cid_tag(l), .xcomm = ic, .xpeer = 0,
                       .xtag = wh_cid_tag(ic), .member = 1, .nids = 1};
    uint32_t ctx;
    if ((rc = wh_cid_agree(&s, &ctx)) != MPI_SUCCESS)
        return rc;
    int n = l->size + ic->size, *w = malloc((size_t)n * sizeof(int));
    if (!w) {
        wh_ctx_release(ctx);
        return wh_error(MPI_ERR_NO_MEM, "out of memory merging an intercommunicator");
    }
    int lo = first ? 0 : ic->size, ro = first ? l->size : 0;
    for (int i = 0; i < l->size; i++)
        w[lo + i] = wh_comm_wrank(l, i);
    for (int i = 0; i < ic->size; i++)
        w[ro + i] = wh_comm_wrank(ic, i);
    rc = wh_comm_make(ic, n, w, lo + l->rank, ctx, out);
    free(w);
    return rc;
}

typedef struct {
    int key, rank;
} ent_t;

static int ent_cmp(const void *a, const void *b)
{
    const ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* world ranks of the members of one group (pairs (color, key) per rank,
 * ranks mapped by c) with this color, ordered by key then rank */
static int pick(const int *ck, const wh_comm_t *c, int color, int *w, int *me_out, int me)
{
    int n = 0;
    ent_t *e = malloc((size_t)c->size * sizeof *e + 1);
    if (!e)
        return -1;
    for (int i = 0; i < c->size; i++)
        if (ck[2 * i] == color)
            e[n++] = (ent_t){ck[2 * i + 1], i};
    qsort(e, (size_t)n, sizeof *e, ent_cmp);
    for (int i = 0; i < n; i++) {
        w[i] = wh_comm_wrank(c, e[i].rank);
        if (me_out && e[i].rank == me)
            *me_out = i;
    }
    free(e);
    return n;
}

/* MPI_Comm_split of an intercommunicator: the local members of my color
 * with the remote members of my color (MPI_COMM_NULL if either is empty) */
int wh_intercomm_split(wh_comm_t *ic, int color, int key, wh_comm_t **out)
{
    *out = NULL;
    wh_comm_t *l = ic->local;
    wh_dtype_t *idt = wh_dtype_get(MPI_INT);
    int nl = l->size, nr = ic->size, mine[2] = {color, key}, xtag = wh_cid_tag(ic);
    int *lck = malloc((size_t)(2 * (nl + nr)) * sizeof(int)), *rck = lck + 2 * nl;
    int *lw = malloc((size_t)(nl + nr) * sizeof(int)), *rw = lw + nl;
    if (!lck || !lw) {
        free(lck);
        free(lw);
        return wh_error(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    }
    int rc = wh_allgather(mine, 2, idt, lck, 2, idt, l);
    if (rc == MPI_SUCCESS && l->rank == 0)
        rc = wh_sendrecv(lck, 2 * nl, idt, 0, xtag, rck, 2 * nr, idt, 0, xtag, ic, WH_CTX_COLL, NULL);
    if (rc == MPI_SUCCESS)
        rc = wh_bcast(rck, 2 * nr, idt, 0, l);
    int ml = 0, mr = 0, me = -1;
    if (rc == MPI_SUCCESS && color != MPI_UNDEFINED) {
        ml = pick(lck, l, color, lw, &me, l->rank);
        mr = pick(rck, ic, color, rw, NULL, -1);
        if (ml < 0 || mr < 0)
            rc = wh_error(MPI_ERR_NO_MEM, "out of memory splitting an intercommunicator");
    }
    if (rc == MPI_SUCCESS) {
        int member = color != MPI_UNDEFINED && mr > 0;
        wh_cid_spec_t s = {.comm = l, .n = nl, .me = l->rank, .tag = wh_cid_tag(l), .xcomm = ic, .xpeer = 0,
                           .xtag = wh_cid_tag(ic), .member = member, .nids = 2};
        uint32_t ctx[2];
        if ((rc = wh_cid_agree(&s, ctx)) == MPI_SUCCESS && member)
            rc = build(ic, ml, lw, me, mr, rw, ctx, out);
    }
    free(lck);
    free(lw);
    return rc;
}
