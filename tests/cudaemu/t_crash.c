/* cudaemu: the CPU cannot touch device memory: a host read or write of a
 * device pointer kills the process with SIGSEGV, as on a GPU. */
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t_common.h"

F(cuInit); F(cuDeviceGet); F(cuDevicePrimaryCtxRetain); F(cuCtxSetCurrent); F(cuMemAlloc); F(cuMemcpyHtoD);
F(cuMemcpyDtoH);

static int child_status(int write_it, CUdeviceptr d)
{
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into an abort */
        volatile unsigned char *p = (volatile unsigned char *)(uintptr_t)d;
        if (write_it)
            p[3] = 1;
        else
            (void)p[3];
        _exit(0); /* reached only if the host could touch device memory */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return st;
}

int main(void)
{
    t_load();
    LOAD(cuInit); LOAD(cuDeviceGet); LOAD(cuDevicePrimaryCtxRetain); LOAD(cuCtxSetCurrent); LOAD(cuMemAlloc);
    LOAD(cuMemcpyHtoD); LOAD(cuMemcpyDtoH);
    CK(p_cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUdeviceptr d;
    CK(p_cuMemAlloc(&d, 4096));
    char msg[16] = "device data", back[16] = {0};
    CK(p_cuMemcpyHtoD(d, msg, sizeof msg));
    CK(p_cuMemcpyDtoH(back, d, sizeof back));
    CHECK(!strcmp(back, msg)); /* the driver itself reaches the memory */
    int st = child_status(0, d);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    st = child_status(1, d);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    printf("cudaemu crash: %s (%d failed checks)\n", t_fail ? "FAILED" : "ok", t_fail);
    return t_fail != 0;
}
