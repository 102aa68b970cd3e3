/* MPI communicator entry points: queries, names, info, and the collective
 * constructors (dup, idup, split, split_type, create, create_group) and
 * free.  The constructors themselves are in src/comm; intercommunicators
 * are made by comm_inter.c and can be queried, duplicated, split, merged
 * and freed here. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/peers.h"
#include "comm/comm.h"
#include "mpi/reqapi.h"

static int bad(wh_comm_t *c, const char *fname, int cls, const char *msg)
{
    return wh_raise_comm(c, fname, wh_error(cls, "%s", msg));
}

static int chk_info(wh_comm_t *c, const char *fname, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    return MPI_SUCCESS;
}

/* group handle -> object, raising MPI_ERR_GROUP on c */
static int chk_group(wh_comm_t *c, const char *fname, MPI_Group h, wh_group_t **g)
{
    if ((*g = wh_group_get(h)))
        return MPI_SUCCESS;
    if (h == MPI_GROUP_NULL)
        return bad(c, fname, MPI_ERR_GROUP, "group is MPI_GROUP_NULL");
    return wh_raise_comm(c, fname,
                         wh_error(MPI_ERR_GROUP, "group 0x%x is not a valid group (freed or never created)", (unsigned)h));
}

/* every member of g must be in c */
static int chk_subgroup(wh_comm_t *c, const char *fname, const wh_group_t *g)
{
    unsigned char *in = NULL;
    if (c->wranks) {
        if (!(in = calloc((size_t)wh_peers_cap, 1)))
            return bad(c, fname, MPI_ERR_NO_MEM, "out of memory");
        for (int i = 0; i < c->size; i++)
            in[c->wranks[i]] = 1;
    }
    int bad_at = -1;
    for (int i = 0; i < g->size && bad_at < 0; i++) {
        int w = g->wranks[i];
        if (in ? !in[w] : w >= c->size)
            bad_at = i;
    }
    free(in);
    if (bad_at >= 0)
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_GROUP, "group is not a subgroup of the communicator's group: its rank %d "
                                                     "(MPI_COMM_WORLD rank %d) is not in the communicator",
                                      bad_at, g->wranks[bad_at]));
    return MPI_SUCCESS;
}

/* ---------- queries ---------- */

static int body_Comm_size(MPI_Comm comm, int *size)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_size", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_size", c, size, "size");
    *size = wh_comm_local_size(c);
    return MPI_SUCCESS;
}

static int body_Comm_rank(MPI_Comm comm, int *rank)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_rank", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_rank", c, rank, "rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}

static int body_Comm_test_inter(MPI_Comm comm, int *flag)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_test_inter", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_test_inter", c, flag, "flag");
    *flag = c->is_inter != 0;
    return MPI_SUCCESS;
}

static int body_Comm_remote_size(MPI_Comm comm, int *size)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_remote_size", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_remote_size", c, size, "size");
    if (!c->is_inter)
        return bad(c, "MPI_Comm_remote_size", MPI_ERR_COMM, "comm is an intracommunicator, not an intercommunicator");
    *size = c->size;
    return MPI_SUCCESS;
}

static int body_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_remote_group", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_remote_group", c, group, "group");
    if (!c->is_inter)
        return bad(c, "MPI_Comm_remote_group", MPI_ERR_COMM, "comm is an intracommunicator, not an intercommunicator");
    wh_group_t *g = wh_comm_remote_group(c);
    if (!g)
        return bad(c, "MPI_Comm_remote_group", MPI_ERR_NO_MEM, "out of memory creating the group");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

/* compare two rank lists: MPI_IDENT (same order), MPI_SIMILAR (same set) or
 * MPI_UNEQUAL; -1 if out of memory */
static int cmp_ranks(const wh_comm_t *a, const wh_comm_t *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = wh_comm_wrank(a, i) == wh_comm_wrank(b, i);
    if (same_order)
        return MPI_IDENT;
    unsigned char *in = calloc((size_t)wh_peers_cap, 1);
    if (!in)
        return -1;
    for (int i = 0; i < a->size; i++)
        in[wh_comm_wrank(a, i)] = 1;
    int same_set = 1;
    for (int i = 0; i < b->size && same_set; i++)
        same_set = in[wh_comm_wrank(b, i)];
    free(in);
    return same_set ? MPI_SIMILAR : MPI_UNEQUAL;
}

static int body_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    wh_comm_t *a, *b;
    int rc;
    if ((rc = wh_chk_comm("MPI_Comm_compare", comm1, &a)) || (rc = wh_chk_comm("MPI_Comm_compare", comm2, &b)))
        return rc;
    WH_CHK_PTR("MPI_Comm_compare", a, result, "result");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    /* intercommunicators: both the local and the remote groups */
    int r1 = cmp_ranks(a, b), r2 = a->is_inter ? cmp_ranks(a->local, b->local) : MPI_IDENT;
    if (r1 < 0 || r2 < 0)
        return bad(a, "MPI_Comm_compare", MPI_ERR_NO_MEM, "out of memory");
    *result = r1 == MPI_UNEQUAL || r2 == MPI_UNEQUAL ? MPI_UNEQUAL
              : r1 == MPI_IDENT && r2 == MPI_IDENT   ? MPI_CONGRUENT
                                                     : MPI_SIMILAR;
    return MPI_SUCCESS;
}

static int body_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_group", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_group", c, group, "group");
    wh_group_t *g = wh_comm_group(c);
    if (!g)
        return bad(c, "MPI_Comm_group", MPI_ERR_NO_MEM, "out of memory creating the group");
    *group = g->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- names and info ---------- */

static int body_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_set_name", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_set_name", c, comm_name, "comm_name");
    snprintf(c->name, sizeof c->name, "%s", comm_name); /* longer names are truncated */
    return MPI_SUCCESS;
}

static int body_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    if (comm == MPI_COMM_NULL) { /* the null handle has a name too, as in MPICH */
        WH_CHK_PTR("MPI_Comm_get_name", NULL, comm_name, "comm_name");
        WH_CHK_PTR("MPI_Comm_get_name", NULL, resultlen, "resultlen");
        *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        return MPI_SUCCESS;
    }
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_get_name", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_get_name", c, comm_name, "comm_name");
    WH_CHK_PTR("MPI_Comm_get_name", c, resultlen, "resultlen");
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

/* The assertions of MPI-4.1 7.4.4 a program may make about a communicator.
 * wharf accepts them (they only allow optimizations, and its matching is
 * right without them) and reports them in the info in use, as MPICH does;
 * values other than true/false are ignored.  They are promises about one
 * communicator's use: MPI_Comm_dup does not pass them on (a library that
 * dups a user's communicator made no such promise). */
static const char *const assert_keys[] = {"mpi_assert_no_any_tag", "mpi_assert_no_any_source",
                                          "mpi_assert_exact_length", "mpi_assert_allow_overtaking"};

static void hints_from_info(wh_comm_t *c, MPI_Info info)
{
    if (info == MPI_INFO_NULL || info == MPI_INFO_ENV || !wh_info_valid(info))
        return;
    for (unsigned i = 0; i < sizeof assert_keys / sizeof assert_keys[0]; i++) {
        const char *v = wh_info_lookup(info, assert_keys[i]);
        int t = v && !strcasecmp(v, "true"), f = v && !strcasecmp(v, "false");
        if (t || f) {
            c->hints_set |= (uint8_t)(1u << i);
            c->hints_val = (uint8_t)((c->hints_val & ~(1u << i)) | ((unsigned)t << i));
        }
    }
}

/* The info in use: the assertions given, and the mpi_hw_resource_type that
 * MPI_Comm_split_type reports for its result. */
static int body_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_get_info", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_get_info", c, info_used, "info_used");
    if ((rc = wh_info_new(info_used)) != MPI_SUCCESS)
        return wh_raise_comm(c, "MPI_Comm_get_info", rc);
    if (c->hw_resource && (rc = wh_info_put(*info_used, "mpi_hw_resource_type", c->hw_resource)) != MPI_SUCCESS)
        return wh_raise_comm(c, "MPI_Comm_get_info", rc);
    for (unsigned i = 0; i < sizeof assert_keys / sizeof assert_keys[0]; i++)
        if ((c->hints_set >> i & 1) &&
            (rc = wh_info_put(*info_used, assert_keys[i], c->hints_val >> i & 1 ? "true" : "false")) != MPI_SUCCESS)
            return wh_raise_comm(c, "MPI_Comm_get_info", rc);
    return MPI_SUCCESS;
}

/* hints info does not mention keep their values */
static int body_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_set_info", comm, &c);
    if (rc || (rc = chk_info(c, "MPI_Comm_set_info", info)))
        return rc;
    hints_from_info(c, info);
    return MPI_SUCCESS;
}

/* ---------- constructors ---------- */

/* poll_fn of MPI_Comm_idup requests: the agreement advances from the
 * progress hook of src/comm; this only identifies the request kind */
static int idup_poll(wh_req_t *r)
{
    (void)r;
    return 0;
}

/* called from progress when the idup's context id is agreed: complete the
 * request unless MPI_Request_free released it already (the handle may have
 * been reused: check that it is still this idup's request) */
static void idup_complete(void *arg, int err)
{
    MPI_Request *cell = arg; /* holds the request's handle; identifies it while alive */
    wh_req_t *r = wh_req_get(*cell);
    free(cell);
    if (!r || r->poll_fn != idup_poll || r->extra != arg)
        return;
    r->extra = NULL;
    r->err = err;
    r->status.MPI_ERROR = err;
    __atomic_store_n(&r->complete, 1, __ATOMIC_RELEASE);
}

/* info: the _with_info forms' hints for newcomm (a new communicator starts
 * without hints, so plain MPI_Comm_dup passes MPI_INFO_NULL: MPI-4 does not
 * copy comm's assertions); nb: the nonblocking variants, which return a
 * request in *request */
static int dup_common(const char *fname, MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, int nb,
                      MPI_Request *request)
{
    wh_comm_t *c, *n;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc || (rc = chk_info(c, fname, info)))
        return rc;
    WH_CHK_PTR(fname, c, newcomm, "newcomm");
    if (!nb) {
        if ((rc = wh_comm_dup(c, &n)) != MPI_SUCCESS)
            return wh_raise_comm(c, fname, rc);
        hints_from_info(n, info);
        *newcomm = n->obj.handle;
        return MPI_SUCCESS;
    }
    WH_CHK_PTR(fname, c, request, "request");
    /* returns at once; the request completes from progress */
    wh_req_t *r = wh_req_alloc(WH_REQ_COMPOUND);
    MPI_Request *cell = malloc(sizeof *cell);
    if (!r || !cell) {
        free(cell);
        if (r)
            wh_req_release(r);
        return bad(c, fname, MPI_ERR_NO_MEM, "out of memory allocating the request");
    }
    wh_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    *cell = r->obj.handle;
    r->poll_fn = idup_poll;
    r->extra = cell;
    r->comm = c;
    c->obj.refs++;
    if ((rc = wh_comm_idup(c, &n, idup_complete, cell)) != MPI_SUCCESS) {
        free(cell);
        wh_req_release(r);
        return wh_raise_comm(c, fname, rc);
    }
    hints_from_info(n, info);
    *newcomm = n->obj.handle;
    *request = r->obj.handle;
    return MPI_SUCCESS;
}

static int body_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, newcomm, 0, NULL);
}

static int body_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return dup_common("MPI_Comm_dup_with_info", comm, info, newcomm, 0, NULL);
}

static int body_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return dup_common("MPI_Comm_idup", comm, MPI_INFO_NULL, newcomm, 1, request);
}

static int body_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return dup_common("MPI_Comm_idup_with_info", comm, info, newcomm, 1, request);
}

static int split_common(const char *fname, wh_comm_t *c, int color, int key, int strict, MPI_Comm *newcomm)
{
    wh_comm_t *n;
    int rc = wh_comm_split(c, color, key, strict, &n);
    if (rc != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    *newcomm = n ? n->obj.handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int body_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_split", comm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR("MPI_Comm_split", c, newcomm, "newcomm");
    if (color < 0 && color != MPI_UNDEFINED)
        return wh_raise_comm(c, "MPI_Comm_split",
                             wh_error(MPI_ERR_ARG, "color %d is negative (must be >= 0 or MPI_UNDEFINED)", color));
    return split_common("MPI_Comm_split", c, color, key, 0, newcomm);
}

static int body_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_split_type";
    wh_comm_t *c;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc || (rc = chk_info(c, fname, info)))
        return rc;
    WH_CHK_PTR(fname, c, newcomm, "newcomm");
    /* an intercommunicator splits as MPI_Comm_split does: the local members of
       a type with the remote members of the same type (as MPICH) */
    int color = MPI_UNDEFINED, strict = 0, hw = 0; /* hw: split by the shared-memory resource */
    const char *v;
    switch (split_type) {
    case MPI_UNDEFINED:
        break;
    case MPI_COMM_TYPE_SHARED:
        color = wh_job.my_host;
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
        /* the one resource type wharf knows: ranks sharing memory (the node
           groups of src/locality); any other value: MPI_COMM_NULL */
        v = wh_info_lookup(info, "mpi_hw_resource_type");
        if (v && !strcmp(v, "mpi_shared_memory"))
            color = wh_job.my_host, hw = 1;
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        color = wh_job.my_host;
        strict = hw = 1;
        break;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        v = wh_info_lookup(info, "mpi_pset_name");
        if (v && !strcmp(v, "mpi://WORLD"))
            color = 0;
        else if (v && !strcmp(v, "mpi://SELF"))
            color = c->is_inter ? MPI_UNDEFINED : c->rank; /* no remote member shares my self */
        else if (!v && (v = wh_info_lookup(info, "mpi_hw_resource_type")) && !strcmp(v, "mpi_shared_memory"))
            color = wh_job.my_host, hw = 1;
        break;
    default:
        return wh_raise_comm(c, fname,
                             wh_error(MPI_ERR_ARG,
                                      "split_type %d is not MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, "
                                      "MPI_COMM_TYPE_HW_UNGUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED or MPI_UNDEFINED",
                                      split_type));
    }
    if ((rc = split_common(fname, c, color, key, strict, newcomm)) != MPI_SUCCESS || *newcomm == MPI_COMM_NULL)
        return rc;
    hints_from_info(wh_comm_get(*newcomm), info);
    /* HW_UNGUIDED must say which resource it split by, in newcomm's info and
       (MPI-4.1 7.4.2: "the MPI implementation sets the info key" when a valid
       info is given; MPICH does, its cmsplit_type test reads it) in the info
       argument; the guided ones echo it */
    if (hw) {
        wh_comm_get(*newcomm)->hw_resource = "mpi_shared_memory";
        if (info != MPI_INFO_NULL && info != MPI_INFO_ENV && wh_info_valid(info))
            return wh_info_put(info, "mpi_hw_resource_type", "mpi_shared_memory");
    }
    return MPI_SUCCESS;
}

static int body_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    wh_comm_t *c, *n;
    wh_group_t *g;
    int rc = wh_chk_comm("MPI_Comm_create", comm, &c);
    if (rc || (rc = chk_group(c, "MPI_Comm_create", group, &g)))
        return rc;
    WH_CHK_PTR("MPI_Comm_create", c, newcomm, "newcomm");
    if (c->is_inter) {
        /* each side names a subgroup of its local group; the new intercommunicator
           joins them in the groups' order (MPI_COMM_NULL where either is empty) */
        if ((rc = chk_subgroup(c->local, "MPI_Comm_create", g)))
            return rc;
        return split_common("MPI_Comm_create", c, g->rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0, g->rank, 0, newcomm);
    }
    if ((rc = chk_subgroup(c, "MPI_Comm_create", g)))
        return rc;
    if ((rc = wh_comm_create(c, g, &n)) != MPI_SUCCESS)
        return wh_raise_comm(c, "MPI_Comm_create", rc);
    *newcomm = n ? n->obj.handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

static int body_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_create_group";
    wh_comm_t *c, *n;
    wh_group_t *g;
    int rc = wh_chk_comm(fname, comm, &c);
    if (rc || (rc = chk_group(c, fname, group, &g)))
        return rc;
    WH_CHK_PTR(fname, c, newcomm, "newcomm");
    if (tag < 0)
        return wh_raise_comm(c, fname, wh_error(MPI_ERR_TAG, "invalid tag %d: tags must be in 0..MPI_TAG_UB (%d)", tag, INT_MAX));
    if (c->is_inter)
        return bad(c, fname, MPI_ERR_COMM, "comm is an intercommunicator (MPI_Comm_create_group needs an intracommunicator)");
    if ((rc = chk_subgroup(c, fname, g)))
        return rc;
    if (g->rank == MPI_UNDEFINED) { /* not a member (e.g. MPI_GROUP_EMPTY): nothing to agree on */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if ((rc = wh_comm_create_group(c, g, tag, &n)) != MPI_SUCCESS)
        return wh_raise_comm(c, fname, rc);
    *newcomm = n->obj.handle;
    return MPI_SUCCESS;
}

static int body_Comm_free(MPI_Comm *comm)
{
    WH_CHK_PTR("MPI_Comm_free", NULL, comm, "comm");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return wh_raise_comm(wh_comm_get(*comm), "MPI_Comm_free",
                             wh_error(MPI_ERR_COMM, "%s is predefined and cannot be freed",
                                      *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF"));
    wh_comm_t *c;
    int rc = wh_chk_comm("MPI_Comm_free", *comm, &c);
    if (rc)
        return rc;
    if ((rc = wh_comm_free(c)) != MPI_SUCCESS)
        return wh_raise_comm(c, "MPI_Comm_free", rc);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#include "entry/comm.h"
