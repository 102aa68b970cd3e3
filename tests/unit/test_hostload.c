/* Unit test of src/util/hostload.c, the host-busy signal of the waiting
 * policies: with more busy processes than cpus (children spinning, at most
 * 5 s each) wh_host_busy() turns 1 within 2 s of looking, and the verdict
 * is remembered right after the children are gone (a rank that slept
 * because of it lowers the count it would see next). */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "util/hostload.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    int nkids = (int)ncpu + 3;
    pid_t kids[64];
    if (nkids > 64)
        nkids = 64;
    for (int i = 0; i < nkids; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            alarm(5); /* bounded even if the parent dies */
            volatile unsigned long x = 0;
            for (;;)
                x++;
        }
        CHECK(kids[i] > 0);
    }
    int busy = 0;
    double t0 = now();
    while (!busy && now() - t0 < 2.0) {
        busy = wh_host_busy();
        usleep(1000);
    }
    CHECK(busy == 1);
    for (int i = 0; i < nkids; i++)
        if (kids[i] > 0)
            kill(kids[i], SIGKILL);
    for (int i = 0; i < nkids; i++)
        if (kids[i] > 0)
            waitpid(kids[i], NULL, 0);
    CHECK(wh_host_busy() == 1); /* remembered for a second */
    return DONE();
}
