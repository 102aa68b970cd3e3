/* MPI entry points that build intercommunicators or merge them:
 * MPI_Intercomm_create, MPI_Intercomm_create_from_groups, MPI_Intercomm_merge.
 * (Queries, dup, split and free of intercommunicators are in comm.c.) */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "mpi/reqapi.h"

static int fail(wh_comm_t *c, const char *fname, int code)
{
    return wh_raise_comm(c, fname, code);
}

WH_API int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                                 MPI_Comm *newintercomm)
{
    static const char fname[] = "MPI_Intercomm_create";
    WH_CHECK_INIT(fname);
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
        if (pc->is_inter || wh_comm_wrank(pc, remote_leader) == wh_job.rank)
            return fail(lc, fname, wh_error(MPI_ERR_RANK, "remote_leader %d of peer_comm is not in the remote group",
                                            remote_leader));
    }
    if (tag < 0)
        return fail(lc, fname, wh_error(MPI_ERR_TAG, "invalid tag %d: tags must be in 0..MPI_TAG_UB (%d)", tag, INT_MAX));
    if ((rc = wh_intercomm_create(lc, local_leader, pc, remote_leader, tag, &n)) != MPI_SUCCESS)
        return fail(lc, fname, rc);
    *newintercomm = n->obj.handle;
    return MPI_SUCCESS;
}
WH_ALIAS(MPI_Intercomm_create, PMPI_Intercomm_create)

WH_API int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fname[] = "MPI_Intercomm_merge";
    WH_CHECK_INIT(fname);
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
WH_ALIAS(MPI_Intercomm_merge, PMPI_Intercomm_merge)
