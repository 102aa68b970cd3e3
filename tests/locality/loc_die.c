/* LD_PRELOAD shim for tests/locality/check_locality.py (faults): kills a rank
 * with SIGKILL in the middle of MPI_Init, at a PMI barrier.
 *
 *   LOC_DIE_RANK=R        only the rank with PMI_RANK=R dies (default 1)
 *   LOC_DIE_BARRIER=K     it dies instead of sending its K-th "cmd=barrier_in"
 *                         PMI line (1 = first), i.e. after everything MPI_Init
 *                         does before that barrier (creating/attaching the node
 *                         region, publishing its records) and before the others
 *                         can go on.
 *
 * The PMI client writes its lines with send(2) (write(2) as a fallback); other
 * traffic (libfabric sockets) passes through untouched.
 *
 * It also injects Cross Memory Attach failures:
 *
 *   LOC_CMA_FAIL=E        process_vm_readv fails with errno E (a number, e.g.
 *                         1 = EPERM as under Yama ptrace_scope or seccomp) ...
 *   LOC_CMA_FAIL_AFTER=K  ... after the first K calls have gone through
 *                         (default 0: every call fails; K = 1 lets the
 *                         locality probe pass and the data transfers fail).
 *
 * Without these variables the shim does nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int barriers;

static void maybe_die(const void *buf, size_t len)
{
    static const char key[] = "cmd=barrier_in";
    if (len < sizeof key - 1 || memcmp(buf, key, sizeof key - 1))
        return;
    const char *k = getenv("LOC_DIE_BARRIER");
    const char *r = getenv("LOC_DIE_RANK");
    const char *me = getenv("PMI_RANK");
    if (!k || !*k || !me || atoi(me) != (r && *r ? atoi(r) : 1))
        return;
    if (++barriers == atoi(k)) {
        char msg[128];
        int n = snprintf(msg, sizeof msg, "loc_die: rank %s dies now (SIGKILL) before PMI barrier %d\n", me,
                         barriers);
        if (n > 0)
            (void)!write(2, msg, (size_t)n);
        kill(getpid(), SIGKILL);
    }
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    static ssize_t (*real)(int, const void *, size_t, int);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t, int))dlsym(RTLD_NEXT, "send");
    maybe_die(buf, len);
    return real(fd, buf, len, flags);
}

ssize_t write(int fd, const void *buf, size_t len)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    maybe_die(buf, len);
    return real(fd, buf, len);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt, const struct iovec *remote,
                         unsigned long riovcnt, unsigned long flags)
{
    static ssize_t (*real)(pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long,
                           unsigned long);
    static long calls;
    if (!real)
        real = (ssize_t(*)(pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long,
                           unsigned long))dlsym(RTLD_NEXT, "process_vm_readv");
    const char *e = getenv("LOC_CMA_FAIL"), *k = getenv("LOC_CMA_FAIL_AFTER");
    if (e && *e && __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) > (k && *k ? atol(k) : 0)) {
        errno = atoi(e);
        return -1;
    }
    return real(pid, local, liovcnt, remote, riovcnt, flags);
}
