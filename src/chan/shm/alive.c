/* Liveness of co-resident peers, for the slow path of waits only: a rank
 * that waits for a peer that died (killed, crashed) without leaving the job
 * would otherwise spin forever on a ring nobody fills.  The progress engine
 * calls wh_shm_check_peers() every few hundred thousand idle polls (never on
 * the message fast path).
 *
 * A peer is checked only when its pid means something here: same kernel
 * (boot id) and same PID namespace as ours.  A pidfd (Linux >= 5.3), opened
 * while the peer is known to be alive, reports its exit without any pid
 * reuse race; without pidfds, kill(pid, 0) returning ESRCH.  A peer that
 * went through MPI_Finalize marks its registry record (shm_state 3) first,
 * so its normal exit is not reported. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "chan/shm/shm.h"
#include "core/core.h"
#include "locality/locality.h"
#include "util/log.h"

static int *alive_fd;   /* per local index: pidfd, -1 kill(pid, 0), -2 not checkable */
static int alive_n;

static int pidfd_open_(int pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

void wh_shm_alive_setup(void)
{
    int n = wh_shm.nlocal;
    const wh_reg_rec_t *me = wh_loc_me();
    alive_fd = calloc((size_t)n, sizeof *alive_fd);
    if (!alive_fd || !me)
        return;
    alive_n = n;
    for (int lp = 0; lp < n; lp++) {
        const wh_reg_rec_t *r = wh_loc_rec(lp);
        alive_fd[lp] = -2;
        if (lp == wh_shm.me || !r || !wh_shm.peer_ok[lp] || r->pid <= 0 ||
            strncmp(r->boot_id, me->boot_id, sizeof r->boot_id) || !r->ns[WH_NS_PID] ||
            r->ns[WH_NS_PID] != me->ns[WH_NS_PID])
            continue;
        int fd = pidfd_open_(r->pid); /* close-on-exec by definition */
        alive_fd[lp] = fd >= 0 ? fd : -1;
    }
}

void wh_shm_alive_leave(void)
{
    wh_reg_rec_t *me = wh_loc_me();
    if (me) /* my exit from now on is not a death */
        __atomic_store_n(&me->shm_state, 3, __ATOMIC_RELEASE);
    for (int lp = 0; lp < alive_n; lp++)
        if (alive_fd[lp] >= 0)
            close(alive_fd[lp]);
    free(alive_fd);
    alive_fd = NULL;
    alive_n = 0;
}

/* 1 if local peer lp is gone without having left the job. */
static int peer_died(int lp)
{
    int fd = alive_fd[lp];
    if (fd == -2)
        return 0;
    int gone;
    if (fd >= 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        gone = poll(&p, 1, 0) == 1;
    } else {
        gone = kill(wh_shm.pid[lp], 0) != 0 && errno == ESRCH;
    }
    if (!gone)
        return 0;
    const wh_reg_rec_t *r = wh_loc_rec(lp);
    if (r && __atomic_load_n(&r->shm_state, __ATOMIC_ACQUIRE) == 3) {
        alive_fd[lp] = -2; /* finalized and exited: fine, stop looking */
        if (fd >= 0)
            close(fd);
        return 0;
    }
    return 1;
}

void wh_shm_check_peers(void)
{
    for (int lp = 0; lp < alive_n; lp++) {
        if (!peer_died(lp))
            continue;
        char msg[256];
        snprintf(msg, sizeof msg,
                 "rank %d: co-resident rank %d (pid %d) died without MPI_Finalize while rank %d was "
                 "waiting; ending the job",
                 wh_job.rank, wh_job.local_ranks[lp], wh_shm.pid[lp], wh_job.rank);
        WH_ERRLOG("shm", "%s", msg);
        wh_job_abort(1, msg);
    }
}
