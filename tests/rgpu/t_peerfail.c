/* A peer copy that fails at the destination after the source has sent all
 * of it, then one that must work on a new connection.  Run with
 * CUDAEMU_FAIL=cuMemcpyAsync@3 on both servers: the destination server
 * makes two asynchronous copies of its own first, so its third, the peer
 * copy's host-to-device copy, fails, while the source server makes only two
 * (device-to-host) in the whole test.  The source answered the first copy
 * as soon as its data had left and kept the connection; the destination
 * closed it without an ack, so the source must notice when it uses it next
 * and reconnect (its log says so: the harness checks).  The first copy
 * reports an error (at the latest from the synchronize after it), the second
 * one the right data. */
#include <stdint.h>
#include <string.h>

#include "t_common.h"

enum { N = 64 << 10 };

int main(void)
{
    CU(cuInit(0));
    int nd = 0;
    CU(cuDeviceGetCount(&nd));
    if (nd < 2) {
        fprintf(stderr, "t_peerfail: needs two devices (two servers)\n");
        return 1;
    }
    CUcontext ca, cb;
    CU(cuDevicePrimaryCtxRetain(&ca, 0));
    CU(cuDevicePrimaryCtxRetain(&cb, nd - 1));
    CUdeviceptr a, b, b2;
    CU(cuCtxSetCurrent(ca));
    CU(cuMemAlloc(&a, N));
    CU(cuMemsetD8(a, 0x5a, N));
    CU(cuCtxSetCurrent(cb));
    CU(cuMemAlloc(&b, N));
    CU(cuMemAlloc(&b2, N));
    CU(cuMemsetD8(b, 0, N));
    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    /* the destination server's asynchronous copies 1 and 2 */
    CU(cuMemcpyDtoDAsync(b2, b, N, s));
    CU(cuMemcpyDtoDAsync(b2, b, N, s));
    CU(cuStreamSynchronize(s));
    /* its third: the peer copy's host-to-device copy fails; cuMemcpyPeer is
     * asynchronous with respect to the host (device to device), so the error
     * may come from the next call that synchronizes */
    CUresult r = cuMemcpyPeer(b, cb, a, ca, N);
    if (r == CUDA_SUCCESS)
        r = cuCtxSynchronize();
    CHECK(r != CUDA_SUCCESS);
    /* the source's connection lost its ack: the next copy reconnects */
    CU(cuCtxSetCurrent(ca));
    CU(cuMemsetD8(a, 0x33, N));
    CU(cuMemcpyPeer(b, cb, a, ca, N));
    unsigned char *h = malloc(N);
    CHECK(h != NULL);
    if (h) {
        CU(cuCtxSetCurrent(cb));
        CU(cuMemcpyDtoH(h, b, N));
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += h[i] != 0x33;
        CHECK(bad == 0);
        free(h);
    }
    if (!t_fail)
        printf("t_peerfail: ok (failed copy: error %d; the next one right)\n", (int)r);
    return t_fail ? 1 : 0;
}
