/* The emulator's copy rates when the two stages of the device pipeline run at
 * once, as they do in it: one process copies device -> pinned host while
 * another copies pinned host -> device (both are cpu memcpys in the emulator
 * and share the memory bus).  Prints each stage's MB/s and the slower one:
 * the pipeline's bound on this machine.  Each stage copies for the same wall
 * time (SECONDS), so the two overlap from start to end.
 * Usage: bound-pair BYTES SECONDS */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double stage(int dir, size_t n, double secs, int go)
{
    cuInit(0); CUcontext c; cuDevicePrimaryCtxRetain(&c, dir); cuCtxSetCurrent(c);
    CUdeviceptr d; cuMemAlloc(&d, n); void *h; cuMemAllocHost(&h, n); cuMemsetD8(d, 1, n);
    dir ? cuMemcpyHtoD(d, h, n) : cuMemcpyDtoH(h, d, n);
    char b; if (read(go, &b, 1) != 1) return 0;
    double t0 = now(), t;
    long it = 0;
    do {
        dir ? cuMemcpyHtoD(d, h, n) : cuMemcpyDtoH(h, d, n);
        it++;
    } while ((t = now() - t0) < secs);
    return (double)n * it / t / 1e6;
}
int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], 0, 0) : 1 << 20;
    double it = argc > 2 ? atof(argv[2]) : 1.0;
    int go[2], res[2];
    if (pipe(go) || pipe(res)) return 1;
    pid_t p = fork();
    if (p == 0) { double r = stage(1, n, it, go[0]); return write(res[1], &r, sizeof r) != sizeof r; }
    double r0 = 0, r1 = 0;
    usleep(200000);
    if (write(go[1], "xx", 2) != 2) return 1;
    r0 = stage(0, n, it, go[0]);
    if (read(res[0], &r1, sizeof r1) != sizeof r1) return 1;
    waitpid(p, NULL, 0);
    printf("%zu dtoh %.0f htod %.0f (at once) bound %.0f\n", n, r0, r1, r0 < r1 ? r0 : r1);
    return 0;
}
