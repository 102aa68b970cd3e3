/* LD_PRELOAD shim for tests: process_vm_writev always fails with EPERM, as
 * under a policy that lets a process read its peers but not write them
 * (reads, process_vm_readv, are untouched).  Used by mpi.p2p.split_nowritev. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sys/uio.h>

ssize_t process_vm_writev(pid_t pid, const struct iovec *local_iov, unsigned long liovcnt,
                          const struct iovec *remote_iov, unsigned long riovcnt, unsigned long flags)
{
    (void)pid, (void)local_iov, (void)liovcnt, (void)remote_iov, (void)riovcnt, (void)flags;
    errno = EPERM;
    return -1;
}
