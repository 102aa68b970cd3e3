/* Intracommunicator constructors: dup, idup, split, create, create_group.
 * Each agrees on a context id (cid.c), then builds the object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "comm/comm.h"
#include "comm/topo.h"

int wh_comm_make(wh_comm_t *parent, int n, const int *wranks, int me, uint32_t ctx, wh_comm_t **out)
{
    wh_comm_t *c = wh_comm_new(n, wranks, me, ctx);
    if (!c) {
        wh_ctx_release(ctx);
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a communicator of %d ranks", n);
    }
    wh_comm_set_errh(c, parent->errh);
    c->errh_default = parent->errh_default;
    c->session = parent->session;
    *out = c;
    return MPI_SUCCESS;
}

int wh_topo_copy(const wh_comm_t *c, wh_comm_t *n)
{
    const wh_topo_t *t = wh_topo_of(c);
    if (!t)
        return MPI_SUCCESS;
    if (!(n->topo = malloc(t->bytes)))
        return wh_error(MPI_ERR_NO_MEM, "out of memory copying a process topology");
    memcpy(n->topo, t, t->bytes);
    return MPI_SUCCESS;
}

/* agreement over every rank of c */
static wh_cid_spec_t spec_all(wh_comm_t *c, int member)
{
    return (wh_cid_spec_t){.comm = c, .n = c->size, .me = c->rank, .tag = wh_cid_tag(c), .member = member};
}

/* agreement for a copy of c: one id for an intracommunicator; for an
 * intercommunicator two (it and its local group), over both groups */
static wh_cid_spec_t spec_copy(wh_comm_t *c)
{
    if (!c->is_inter)
        return spec_all(c, 1);
    wh_comm_t *l = c->local;
    return (wh_cid_spec_t){.comm = l, .n = l->size, .me = l->rank, .tag = wh_cid_tag(l), .xcomm = c, .xpeer = 0,
                           .xtag = wh_cid_tag(c), .member = 1, .nids = 2};
}

/* set the agreed context ids of a copy made by copy_object */
static void copy_set_ctx(wh_comm_t *n, const uint32_t *ctx)
{
    n->ctx = ctx[0];
    if (n->is_inter)
        n->local->ctx = ctx[1];
}

/* the new communicator of a dup, with attributes and topology; contexts
 * are set once agreed (0 until then: nothing to give back on release) */
static int copy_object(wh_comm_t *c, wh_comm_t **out)
{
    wh_comm_t *n = NULL;
    int rc = wh_comm_make(c, c->size, c->wranks, c->rank, 0, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    n->hw_resource = c->hw_resource; /* not the mpi_assert_* hints: promises about comm's use (MPI-4.1 7.4.4) */
    if (c->is_inter) {
        n->is_inter = 1;
        if ((rc = wh_comm_make(c, c->local->size, c->local->wranks, c->local->rank, 0, &n->local)) != MPI_SUCCESS) {
            wh_comm_release(n);
            return rc;
        }
    }
    if ((rc = wh_topo_copy(c, n)) == MPI_SUCCESS && (rc = wh_attr_copy_all(c->attrs, c->obj.handle, &n->attrs)))
        wh_attr_delete_all(&n->attrs, n->obj.handle);
    if (rc != MPI_SUCCESS) {
        wh_comm_release(n);
        return rc;
    }
    *out = n;
    return MPI_SUCCESS;
}

int wh_comm_dup(wh_comm_t *c, wh_comm_t **out)
{
    *out = NULL;
    wh_cid_spec_t s = spec_copy(c);
    uint32_t ctx[2];
    int rc = wh_cid_agree(&s, ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    wh_comm_t *n;
    if ((rc = copy_object(c, &n)) != MPI_SUCCESS) {
        for (int i = 0; i < s.nids; i++)
            wh_ctx_release(ctx[i]);
        return rc;
    }
    copy_set_ctx(n, ctx);
    *out = n;
    return MPI_SUCCESS;
}

typedef struct {
    wh_comm_t *n;
    wh_comm_idup_done_fn fn;
    void *arg;
} idup_t;

static void idup_done(wh_cid_op_t *op, void *arg)
{
    idup_t *x = arg;
    uint32_t ctx[2] = {0, 0};
    int err = wh_cid_result(op, ctx);
    copy_set_ctx(x->n, ctx);
    x->fn(x->arg, err);
    wh_comm_release(x->n);
    free(x);
}

int wh_comm_idup(wh_comm_t *c, wh_comm_t **out, wh_comm_idup_done_fn fn, void *arg)
{
    *out = NULL;
    idup_t *x = malloc(sizeof *x);
    if (!x)
        return wh_error(MPI_ERR_NO_MEM, "out of memory starting MPI_Comm_idup");
    wh_comm_t *n;
    int rc = copy_object(c, &n);
    if (rc != MPI_SUCCESS) {
        free(x);
        return rc;
    }
    *x = (idup_t){n, fn, arg};
    n->obj.refs++; /* the agreement's reference until it sets the context */
    wh_cid_spec_t s = spec_copy(c);
    if ((rc = wh_cid_start(&s, idup_done, x, NULL)) != MPI_SUCCESS) {
        n->obj.refs--;
        wh_attr_delete_all(&n->attrs, n->obj.handle);
        wh_comm_release(n);
        free(x);
        return rc;
    }
    *out = n;
    return MPI_SUCCESS;
}

typedef struct {
    int key, rank;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
    const split_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int wh_comm_split(wh_comm_t *c, int color, int key, int strict, wh_comm_t **out)
{
    *out = NULL;
    if (c->is_inter)
        return wh_intercomm_split(c, color, key, out);
    int n = c->size, mine[2] = {color, key};
    int *all = malloc((size_t)n * 2 * sizeof(int));
    split_ent_t *ent = malloc((size_t)n * sizeof *ent);
    int *wr = malloc((size_t)n * sizeof(int));
    if (!all || !ent || !wr) {
        free(all);
        free(ent);
        free(wr);
        return wh_error(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d ranks", n);
    }
    wh_dtype_t *idt = wh_dtype_get(MPI_INT);
    int rc = wh_allgather(mine, 2, idt, all, 2, idt, c);
    if (rc == MPI_SUCCESS && strict) {
        /* HW_UNGUIDED: only subsets strictly smaller than c */
        int same = 1;
        for (int i = 1; i < n && same; i++)
            same = all[2 * i] == all[0];
        if (same)
            color = MPI_UNDEFINED;
    }
    uint32_t ctx = 0;
    if (rc == MPI_SUCCESS) {
        wh_cid_spec_t s = spec_all(c, color != MPI_UNDEFINED);
        rc = wh_cid_agree(&s, &ctx);
    }
    if (rc == MPI_SUCCESS && color != MPI_UNDEFINED) {
        int m = 0, me = -1;
        for (int i = 0; i < n; i++)
            if (all[2 * i] == color)
                ent[m++] = (split_ent_t){all[2 * i + 1], i};
        qsort(ent, (size_t)m, sizeof *ent, split_cmp);
        for (int i = 0; i < m; i++) {
            wr[i] = wh_comm_wrank(c, ent[i].rank);
            if (ent[i].rank == c->rank)
                me = i;
        }
        rc = wh_comm_make(c, m, wr, me, ctx, out);
    }
    free(all);
    free(ent);
    free(wr);
    return rc;
}

int wh_comm_create(wh_comm_t *c, wh_group_t *g, wh_comm_t **out)
{
    *out = NULL;
    if (c->is_inter)
        return wh_error(MPI_ERR_COMM, "MPI_Comm_create on an intercommunicator is not supported yet by wharf");
    if (g->size == 0) /* the same group everywhere: nobody gets a communicator */
        return MPI_SUCCESS;
    int member = g->rank != MPI_UNDEFINED;
    wh_cid_spec_t s = spec_all(c, member);
    uint32_t ctx;
    int rc = wh_cid_agree(&s, &ctx);
    if (rc != MPI_SUCCESS || !member)
        return rc;
    return wh_comm_make(c, g->size, g->wranks, g->rank, ctx, out);
}

int wh_comm_create_prefix(wh_comm_t *c, int n, wh_comm_t **out)
{
    *out = NULL;
    int member = c->rank < n;
    wh_cid_spec_t s = spec_all(c, member);
    uint32_t ctx;
    int rc = wh_cid_agree(&s, &ctx);
    if (rc != MPI_SUCCESS || !member)
        return rc;
    int *wr = malloc((size_t)n * sizeof(int));
    if (!wr) {
        wh_ctx_release(ctx);
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a communicator of %d ranks", n);
    }
    for (int i = 0; i < n; i++)
        wr[i] = wh_comm_wrank(c, i);
    rc = wh_comm_make(c, n, wr, c->rank, ctx, out);
    free(wr);
    return rc;
}

/* comm rank in c of world rank w, or -1 (O(size); only used when building) */
static int comm_rank_of(const wh_comm_t *c, int w)
{
    if (!c->wranks)
        return w < c->size ? w : -1;
    for (int i = 0; i < c->size; i++)
        if (c->wranks[i] == w)
            return i;
    return -1;
}

int wh_comm_create_group(wh_comm_t *c, wh_group_t *g, int tag, wh_comm_t **out)
{
    return wh_comm_create_group_itag(c, g, WH_TAG_CGROUP(tag), out);
}

int wh_comm_create_group_itag(wh_comm_t *c, wh_group_t *g, int itag, wh_comm_t **out)
{
    *out = NULL;
    if (c->is_inter)
        return wh_error(MPI_ERR_COMM, "MPI_Comm_create_group on an intercommunicator is not supported yet by wharf");
    int n = g->size;
    int *pr = malloc((size_t)n * sizeof(int));
    if (!pr)
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a communicator of %d ranks", n);
    for (int i = 0; i < n; i++)
        pr[i] = comm_rank_of(c, g->wranks[i]);
    wh_cid_spec_t s = {.comm = c, .n = n, .me = g->rank, .prank = pr, .tag = itag, .member = 1};
    uint32_t ctx;
    int rc = wh_cid_agree(&s, &ctx);
    free(pr);
    if (rc != MPI_SUCCESS)
        return rc;
    return wh_comm_make(c, n, g->wranks, g->rank, ctx, out);
}

/* The node and leader sub-communicators of src/coll's hierarchical
 * collectives (coll/cstate.h): both context ids in one agreement over c;
 * a rank that does not lead its node gives the leaders' id back. */
int wh_comm_node_split(wh_comm_t *c, const int *node_of, int nnodes, wh_comm_t **node, wh_comm_t **leaders)
{
    *node = *leaders = NULL;
    int n = c->size, mine = node_of[c->rank];
    int *wr = malloc((size_t)(n + nnodes) * sizeof(int));
    if (!wr)
        return wh_error(MPI_ERR_NO_MEM, "out of memory splitting a communicator of %d ranks by node", n);
    int *lw = wr + n, nn = 0, me = -1, nl = 0, lme = -1;
    for (int r = 0; r < n; r++) {
        if (node_of[r] == mine) {
            if (r == c->rank)
                me = nn;
            wr[nn++] = wh_comm_wrank(c, r);
        }
        if (node_of[r] == nl) { /* the first rank of the next node: its leader */
            if (r == c->rank)
                lme = nl;
            lw[nl++] = wh_comm_wrank(c, r);
        }
    }
    wh_cid_spec_t s = spec_all(c, 1);
    s.nids = 2;
    uint32_t ctx[2] = {0, 0};
    int rc = wh_cid_agree(&s, ctx);
    if (rc == MPI_SUCCESS)
        rc = wh_comm_make(c, nn, wr, me, ctx[0], node);
    else
        ctx[0] = ctx[1] = 0;
    if (rc == MPI_SUCCESS && lme >= 0)
        rc = wh_comm_make(c, nl, lw, lme, ctx[1], leaders);
    else if (ctx[1])
        wh_ctx_release(ctx[1]);
    if (rc == MPI_SUCCESS) {
        char of[64];
        if (c->name[0])
            snprintf(of, sizeof of, "%.48s", c->name);
        else
            snprintf(of, sizeof of, "comm %#x", (unsigned)c->obj.handle);
        snprintf((*node)->name, sizeof (*node)->name, "node of %s", of);
        if (*leaders)
            snprintf((*leaders)->name, sizeof (*leaders)->name, "leaders of %s", of);
    } else {
        wh_comm_release(*node);
        *node = NULL;
    }
    free(wr);
    return rc;
}
