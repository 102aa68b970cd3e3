/* rgpu: cuStreamWaitEvent on an event of another server, without a host
 * wait (docs/RGPU.md, "Waits across servers").  Two GPUs (through the
 * client: one per server), the emulator's random stream delays on (the
 * harness sets CUDAEMU_STREAM_DELAY_US for the servers).  Each round, in
 * both directions:
 *   the source stream clears its buffer many times (slow), then fills it
 *   with the round's value and records an event; the destination stream
 *   waits for that event (the call must return while the event is still
 *   pending: no host wait), then peer-copies the buffer (the source's part
 *   must also wait for the event) and copies it back to the host; another
 *   stream of the destination is not held (it finishes while an event
 *   recorded after the wait is still pending).
 * The same program runs on the emulator directly (the reference). */
#include <string.h>

#include "t_common.h"

#define NB (1u << 20)
#define ROUNDS 12
#define SLOW 24

int main(void)
{
    CUcontext ctx[2];
    CUdeviceptr buf[2], other;
    CUstream st[2], st2;
    CUevent ev[2], after;
    if (t_two_gpus(ctx))
        return 1;
    unsigned char *host = malloc(NB);
    for (int d = 0; d < 2; d++) {
        CU(cuCtxSetCurrent(ctx[d]));
        CU(cuMemAlloc(&buf[d], NB));
        CU(cuStreamCreate(&st[d], CU_STREAM_NON_BLOCKING));
        CU(cuEventCreate(&ev[d], CU_EVENT_DISABLE_TIMING));
    }
    CU(cuMemAlloc(&other, NB)); /* (on the second GPU, current) */
    CU(cuStreamCreate(&st2, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
    int pending_after_wait = 0, other_free = 0, after_pending = 0;
    for (int r = 0; r < ROUNDS; r++) {
        int s = r & 1, d = !s; /* source and destination alternate */
        unsigned char v = (unsigned char)(r + 1);
        CU(cuCtxSetCurrent(ctx[s]));
        for (int i = 0; i < SLOW; i++)
            CU(cuMemsetD8Async(buf[s], 0, NB, st[s]));
        CU(cuMemsetD8Async(buf[s], v, NB, st[s]));
        CU(cuEventRecord(ev[s], st[s]));
        CU(cuCtxSetCurrent(ctx[d]));
        CU(cuStreamWaitEvent(st[d], ev[s], 0));
        pending_after_wait += cuEventQuery(ev[s]) == CUDA_ERROR_NOT_READY;
        CU(cuMemcpyPeerAsync(buf[d], ctx[d], buf[s], ctx[s], NB, st[d]));
        if (d == 1) {
            /* another stream of the destination goes on meanwhile */
            CU(cuEventRecord(after, st[d]));
            CU(cuMemsetD8Async(other, 7, NB, st2));
            CU(cuStreamSynchronize(st2));
            /* (asked of the destination: the source's server is busy sending the copy) */
            other_free += cuEventQuery(after) == CUDA_ERROR_NOT_READY;
            after_pending += cuStreamQuery(st[d]) == CUDA_ERROR_NOT_READY;
        }
        CU(cuMemcpyDtoHAsync(host, buf[d], NB, st[d]));
        CU(cuStreamSynchronize(st[d]));
        int bad = 0;
        for (size_t i = 0; i < NB; i++)
            bad += host[i] != v;
        CHECK(bad == 0);
        if (bad)
            fprintf(stderr, "round %d: %d bytes are not %u (first %u)\n", r, bad, v, host[0]);
        if (d == 1)
            CU(cuEventSynchronize(after));
    }
    CU(cuCtxSetCurrent(ctx[1]));
    CU(cuMemcpyDtoH(host, other, 16));
    CHECK(host[0] == 7 && host[15] == 7);
    printf("rounds %d: source still busy after the wait %d; %d rounds of %d: another stream of the destination "
           "done while an event recorded after the wait is pending, %d: the waiting stream busy\n", ROUNDS,
           pending_after_wait, other_free, ROUNDS / 2, after_pending);
    /* without a host wait the source is still busy in most rounds (it is in
     * every round unless the machine is very slow); a host wait makes it 0 */
    CHECK(pending_after_wait >= ROUNDS / 2);
    CHECK(other_free >= ROUNDS / 4);
    CHECK(after_pending >= ROUNDS / 4);
    for (int d = 0; d < 2; d++) {
        CU(cuCtxSetCurrent(ctx[d]));
        CU(cuEventDestroy(ev[d]));
        CU(cuStreamDestroy(st[d]));
        CU(cuMemFree(buf[d]));
    }
    CU(cuMemFree(other));
    CU(cuStreamDestroy(st2));
    CU(cuEventDestroy(after));
    free(host);
    if (t_fail)
        return 1;
    printf("rgpu xwait: ok\n");
    return 0;
}
