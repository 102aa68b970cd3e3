/* rgpu: asynchronous peer copies back to back (docs/RGPU.md, "Peer copies
 * between servers").  The destination of an asynchronous copy answers once
 * its chunks are queued; that may reorder nothing.  Two GPUs
 * (one per server through the client), the emulator's random stream delays
 * on.  Each round, on one stream of the destination's context:
 *   B <- A0 (whole), B <- A1 (whole), B+h <- A0 (first part), a chain of
 *   three copies whose last two overwrite what the first wrote; then, with
 *   other work between copies, B cleared (12 times: slow) and a copy into its tail part (which
 *   must wait for the clear), a memset of B's end and a copy back to A1 and
 *   on to B again, in both directions; the host reads B and A1 and checks
 *   every byte.  Sizes: more chunks than intermediate buffers (the
 *   buffers are reused across copies) and odd ones.
 * The same program runs on the emulator directly (the reference). */
#include <string.h>

#include "t_common.h"

#define ROUNDS 8
#define SLOW 12

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)((i * 131u + seed * 7u + (i >> 12)) ^ seed);
}

int main(void)
{
    static const size_t sizes[] = {(3u << 20) + 4099, (1u << 20), 200000, 4096 + 3};
    size_t maxn = sizes[0];
    CUcontext ctx[2];
    if (t_two_gpus(ctx))
        return 1;
    CUdeviceptr a0, a1, b;
    CU(cuCtxSetCurrent(ctx[0]));
    CU(cuMemAlloc(&a0, maxn));
    CU(cuMemAlloc(&a1, maxn));
    CU(cuCtxSetCurrent(ctx[1]));
    CU(cuMemAlloc(&b, maxn));
    CUstream s1, s0;
    CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CU(cuCtxSetCurrent(ctx[0]));
    CU(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING));
    unsigned char *h0 = malloc(maxn), *h1 = malloc(maxn), *want = malloc(maxn), *got = malloc(maxn);
    int bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = sizes[r % 4], h = n / 3;
        fill(h0, n, 2u * (unsigned)r + 1);
        fill(h1, n, 2u * (unsigned)r + 2);
        CU(cuCtxSetCurrent(ctx[0]));
        CU(cuMemcpyHtoD(a0, h0, n));
        CU(cuMemcpyHtoD(a1, h1, n));
        /* the chain: three copies on s1 with nothing between them */
        CU(cuCtxSetCurrent(ctx[1]));
        CU(cuMemcpyPeerAsync(b, ctx[1], a0, ctx[0], n, s1));
        CU(cuMemcpyPeerAsync(b, ctx[1], a1, ctx[0], n, s1));
        CU(cuMemcpyPeerAsync(b + h, ctx[1], a0, ctx[0], n - h, s1));
        memset(got, 0, n);
        CU(cuMemcpyDtoHAsync(got, b, n, s1));
        CU(cuStreamSynchronize(s1));
        memcpy(want, h1, h);
        memcpy(want + h, h0, n - h);
        if (memcmp(got, want, n)) {
            fprintf(stderr, "round %d (%zu bytes): the chain left B wrong\n", r, n);
            bad++;
        }
        /* other work between copies: B cleared (a copy into it must wait
         * for that), a copy into its tail part, its last 100 bytes set, B
         * copied back over A1 (the other direction), A1 copied to B again */
        for (int k = 0; k < SLOW; k++) /* (slow, with the stream delays) */
            CU(cuMemsetD8Async(b, (unsigned char)(k == SLOW - 1 ? 0x5A : k), n, s1));
        CU(cuMemcpyPeerAsync(b + h, ctx[1], a1, ctx[0], n - h, s1));
        CU(cuMemsetD8Async(b + n - 100, 0xA5, 100, s1));
        CU(cuMemcpyPeerAsync(a1, ctx[0], b, ctx[1], n, s1));
        CU(cuMemcpyPeerAsync(b, ctx[1], a1, ctx[0], n, s1));
        memset(want, 0x5A, h);
        memcpy(want + h, h1, n - h);
        memset(want + n - 100, 0xA5, 100);
        memset(got, 0, n);
        CU(cuMemcpyDtoHAsync(got, b, n, s1));
        CU(cuStreamSynchronize(s1));
        if (memcmp(got, want, n)) {
            size_t i = 0;
            while (got[i] == want[i])
                i++;
            fprintf(stderr, "round %d (%zu bytes): B differs first at byte %zu (%u, expected %u)\n", r, n, i,
                    got[i], want[i]);
            bad++;
        }
        CU(cuCtxSetCurrent(ctx[0]));
        memset(got, 0, n);
        CU(cuMemcpyDtoH(got, a1, n));
        if (memcmp(got, want, n)) {
            fprintf(stderr, "round %d (%zu bytes): A1 differs\n", r, n);
            bad++;
        }
        /* the other direction, the stream on the destination's (A's) side */
        CU(cuMemcpyPeerAsync(a0, ctx[0], b, ctx[1], n, s0));
        CU(cuMemcpyPeerAsync(a0 + h, ctx[0], b, ctx[1], n - h, s0));
        CU(cuMemcpyDtoHAsync(got, a0, n, s0));
        CU(cuStreamSynchronize(s0));
        memmove(want + h, want, n - h);
        if (memcmp(got, want, n)) {
            fprintf(stderr, "round %d (%zu bytes): A0 differs\n", r, n);
            bad++;
        }
    }
    CHECK(bad == 0);
    CU(cuMemFree(a0));
    CU(cuMemFree(a1));
    CU(cuCtxSetCurrent(ctx[1]));
    CU(cuMemFree(b));
    free(h0);
    free(h1);
    free(want);
    free(got);
    printf("rgpu peerchain: %s\n", t_fail ? "FAILED" : "ok");
    return t_fail != 0;
}
