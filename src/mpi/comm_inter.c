/* MPI entry points that build communicators from groups or intercommunicators:
 * MPI_Comm_create_from_group, MPI_Intercomm_create, MPI_Intercomm_create_from_groups,
 * MPI_Intercomm_merge.  (Queries, dup, split and free of intercommunicators
 * are in comm.c.)  The *_from_group(s) calls have no parent communicator:
 * every wharf process is in MPI_COMM_WORLD, so they run over its collective
 * context with an internal tag derived from the string tag. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "mpi/reqapi.h"

static int fail(wh_comm_t *c, const char *fname, int code)
{
    return wh_raise_comm(c, fname, code);
}

static int body_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                                 MPI_Comm *newintercomm)
{
    static const char fname[] = "MPI_Intercomm_create";
    wh_comm_t *lc, *pc = NULL, *n;
    int rc = wh_chk_comm(fname, local_comm, &lc);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, lc, newintercomm, "newintercomm");
    if (lc->is_inter)
        return fail(lc, fname, wh_error(MPI_ERR_COMM, "local_comm is an intercommunicator"));
    if (local_leader < 0 || local_leader >= lc->size)
        return fail(lc, fname, wh_error(MPI_ERR_RANK, "local_leader %d is not a rank of local_comm (size %d)", local_leader,
                                        lc->size));
    if (lc->rank == local_leader) { /* peer_comm, remote_leader and tag matter at the leader only */
        if (!(pc = wh_comm_get(peer_comm)))
            return fail(lc, fname, wh_error(MPI_ERR_COMM, "peer_comm 0x%x is not a valid communicator", (unsigned)peer_comm));
        if (remote_leader < 0 || remote_leader >= pc->size)
            return fail(lc, fname, wh_error(MPI_ERR_RANK, "remote_leader %d is not a rank of peer_comm (size %d)",
                                            remote_leader, pc->size));
        /* an intercommunicator as peer_comm (MPICH allows it: e.g. the one
         * MPI_Comm_spawn returned): remote_leader is a rank of its remote group */
        if (!pc->is_inter && wh_comm_wrank(pc, remote_leader) == wh_job.rank)
            return fail(lc, fname, wh_error(MPI_ERR_RANK, "remote_leader %d of peer_comm is not in the remote group",
                                            remote_leader));
    }
    if (tag < 0)
        return fail(lc, fname, wh_error(MPI_ERR_TAG, "invalid tag %d: tags must be in 0..MPI_TAG_UB (%d)", tag, INT_MAX));
    if ((rc = wh_intercomm_create(lc, local_leader, pc, remote_leader, WH_TAG_ICREATE(tag), &n)) != MPI_SUCCESS)
        return fail(lc, fname, rc);
    *newintercomm = n->obj.handle;
    return MPI_SUCCESS;
}

static int body_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fname[] = "MPI_Intercomm_merge";
    wh_comm_t *c, *n;
    int rc = wh_chk_comm(fname, intercomm, &c);
    if (rc)
        return rc;
    WH_CHK_PTR(fname, c, newintracomm, "newintracomm");
    if (!c->is_inter)
        return fail(c, fname, wh_error(MPI_ERR_COMM, "intercomm is an intracommunicator"));
    if ((rc = wh_intercomm_merge(c, high, &n)) != MPI_SUCCESS)
        return fail(c, fname, rc);
    *newintracomm = n->obj.handle;
    return MPI_SUCCESS;
}

/* ---------- from groups (MPI-4) ---------- */

static unsigned tag_hash(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int chk_from(const char *fname, MPI_Group group, const char *gname, const char *stringtag, MPI_Info info,
                    MPI_Errhandler errhandler, const void *out, wh_group_t **g)
{
    if (!(*g = wh_group_get(group)))
        return fail(NULL, fname, wh_error(MPI_ERR_GROUP, "%s 0x%x is not a valid group", gname, (unsigned)group));
    WH_CHK_PTR(fname, NULL, stringtag, "stringtag");
    WH_CHK_PTR(fname, NULL, out, "newcomm");
    if (info != MPI_INFO_NULL && !wh_info_valid(info))
        return fail(NULL, fname, wh_error(MPI_ERR_INFO, "info 0x%x is not a valid info object", (unsigned)info));
    if (errhandler != MPI_ERRHANDLER_NULL && !wh_errh_get(errhandler))
        return fail(NULL, fname, wh_error(MPI_ERR_ERRHANDLER, "errhandler 0x%x is not valid", (unsigned)errhandler));
    return MPI_SUCCESS;
}

static void give_errh(wh_comm_t *n, MPI_Errhandler errhandler)
{
    wh_comm_set_errh(n, errhandler == MPI_ERRHANDLER_NULL ? MPI_ERRORS_ARE_FATAL : errhandler);
    if (n->is_inter)
        wh_comm_set_errh(n->local, n->errh);
}

static int body_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                       MPI_Comm *newcomm)
{
    static const char fname[] = "MPI_Comm_create_from_group";
    WH_CHECK_INIT(fname);
    wh_group_t *g;
    wh_comm_t *n;
    int rc = chk_from(fname, group, "group", stringtag, info, errhandler, newcomm, &g);
    if (rc)
        return rc;
    if (g->rank == MPI_UNDEFINED)
        return fail(NULL, fname, wh_error(MPI_ERR_GROUP, "the calling process is not in group"));
    if ((rc = wh_comm_create_group_itag(wh_comm_get(MPI_COMM_WORLD), g, WH_TAG_FROMGROUPS(tag_hash(stringtag)), &n)))
        return fail(NULL, fname, rc);
    give_errh(n, errhandler);
    n->session = g->session;
    *newcomm = n->obj.handle;
    return MPI_SUCCESS;
}

static int body_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                             int remote_leader, const char *stringtag, MPI_Info info,
                                             MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fname[] = "MPI_Intercomm_create_from_groups";
    WH_CHECK_INIT(fname);
    wh_group_t *lg, *rg;
    wh_comm_t *lc, *n;
    int rc = chk_from(fname, local_group, "local_group", stringtag, info, errhandler, newintercomm, &lg);
    if (rc || (rc = chk_from(fname, remote_group, "remote_group", stringtag, info, errhandler, newintercomm, &rg)))
        return rc;
    if (lg->rank == MPI_UNDEFINED)
        return fail(NULL, fname, wh_error(MPI_ERR_GROUP, "the calling process is not in local_group"));
    if (local_leader < 0 || local_leader >= lg->size || remote_leader < 0 || remote_leader >= rg->size)
        return fail(NULL, fname, wh_error(MPI_ERR_RANK, "local_leader %d or remote_leader %d is not in its group (sizes %d, %d)",
                                          local_leader, remote_leader, lg->size, rg->size));
    wh_comm_t *world = wh_comm_get(MPI_COMM_WORLD);
    int itag = WH_TAG_FROMGROUPS(tag_hash(stringtag));
    if ((rc = wh_comm_create_group_itag(world, lg, itag, &lc)))
        return fail(NULL, fname, rc);
    rc = wh_intercomm_create(lc, local_leader, world, rg->wranks[remote_leader], itag, &n);
    wh_comm_release(lc);
    if (rc)
        return fail(NULL, fname, rc);
    give_errh(n, errhandler);
    n->session = lg->session;
    *newintercomm = n->obj.handle;
    return MPI_SUCCESS;
}

#include "entry/comm_inter.h"
