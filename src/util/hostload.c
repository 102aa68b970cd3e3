/* The host-busy signal (hostload.h). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "util/hostload.h"
#include "util/log.h"

#define LOOK_US 2000u     /* between looks at /proc/loadavg (~5 us each) */
#define REMEMBER_US 1000000u /* a busy verdict lasts this long */

#define LOOKS 3            /* busy in this many looks in a row */

static uint64_t looked, busy_until;
static int ncpu, streak;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* runnable tasks now (the 4th field's numerator, "4/123"), or -1 */
static int runnable(void)
{
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char b[128];
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0)
        return -1;
    b[n] = '\0';
    double a, bb, c;
    int run, all;
    if (sscanf(b, "%lf %lf %lf %d/%d", &a, &bb, &c, &run, &all) != 5)
        return -1;
    return run;
}

/* relaxed atomics: threads of an MPI_THREAD_MULTIPLE process may look at
 * once; a look more or less does not matter */
int wh_host_busy(void)
{
    uint64_t t = now_us(), last = __atomic_load_n(&looked, __ATOMIC_RELAXED);
    if (!last || t - last >= LOOK_US) {
        __atomic_store_n(&looked, t, __ATOMIC_RELAXED);
        int n = __atomic_load_n(&ncpu, __ATOMIC_RELAXED);
        if (!n) {
            long c = sysconf(_SC_NPROCESSORS_ONLN);
            n = c > 0 ? (int)c : 1;
            __atomic_store_n(&ncpu, n, __ATOMIC_RELAXED);
        }
        /* LOOKS looks in a row: a task that runs for a moment (a kernel
         * worker, a shell) is not a busy host */
        int run = runnable();
        int row = run > n + 1 ? __atomic_load_n(&streak, __ATOMIC_RELAXED) + 1 : 0;
        __atomic_store_n(&streak, row, __ATOMIC_RELAXED);
        if (row >= LOOKS) {
            if (t >= __atomic_load_n(&busy_until, __ATOMIC_RELAXED))
                WH_DEBUG("wait", "host busy: %d runnable tasks on %d cpus; waiters sleep instead of yielding", run, n);
            __atomic_store_n(&busy_until, t + REMEMBER_US, __ATOMIC_RELAXED);
        }
    }
    return t < __atomic_load_n(&busy_until, __ATOMIC_RELAXED);
}
