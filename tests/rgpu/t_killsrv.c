/* Copies between the GPUs of two servers until the harness kills the second
 * server: the copy in flight and every later call on that server must end
 * with a clean CUDA error (never a hang), and the first server must keep
 * working.  Prints "clean error: NAME" and exits 0 when so.
 *   t_killsrv idle: the client is idle when the server dies, then writes
 *   32 MiB to it (the write must fail with an error, not SIGPIPE). */
#include <string.h>
#include <unistd.h>

#include "t_common.h"

int main(int argc, char **argv)
{
    int idle = argc > 1 && !strcmp(argv[1], "idle");
    CU(cuInit(0));
    int ndev;
    CU(cuDeviceGetCount(&ndev));
    CHECK(ndev >= 2);
    CUcontext c1, c2;
    CU(cuDevicePrimaryCtxRetain(&c1, 0));
    CU(cuDevicePrimaryCtxRetain(&c2, ndev - 1));
    size_t n = 32u << 20;
    CUdeviceptr a, b;
    CU(cuCtxSetCurrent(c2));
    CU(cuMemAlloc(&b, n));
    CU(cuCtxSetCurrent(c1));
    CU(cuMemAlloc(&a, n));
    CU(cuMemsetD8(a, 3, n));
    printf("copying\n");
    fflush(stdout);
    CUresult rc = CUDA_SUCCESS;
    if (idle) {
        sleep(3); /* the harness kills the server meanwhile */
        unsigned char *h = malloc(n);
        memset(h, 1, n);
        for (int i = 0; i < 4 && rc == CUDA_SUCCESS; i++)
            rc = cuMemcpyHtoD(b, h, n);
        free(h);
    }
    for (int i = 0; i < 100000 && rc == CUDA_SUCCESS; i++)
        rc = (i & 1) ? cuMemcpyPeer(a, c1, b, c2, n) : cuMemcpyPeer(b, c2, a, c1, n);
    const char *name = "?";
    cuGetErrorName(rc, &name);
    CHECK(rc != CUDA_SUCCESS);
    /* the dead server's resources answer at once; the other server works */
    CU_IS(cuMemFree(b), CUDA_ERROR_DEVICE_UNAVAILABLE);
    unsigned char h[64];
    CU(cuMemcpyDtoH(h, a, sizeof h));
    CHECK(h[0] == 3 && h[63] == 3);
    CU(cuMemFree(a));
    if (!t_fail)
        printf("clean error: %s\n", name);
    return t_fail ? 1 : 0;
}
