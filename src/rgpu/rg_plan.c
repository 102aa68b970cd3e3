/* wharf-gpud: the plan of a peer copy between two servers, which both
 * compute alike (docs/RGPU.md, "Peer copies between servers"). */
#include "rgpu/rg_plan.h"

void rg_peer_plan(uint64_t n, size_t *chunk, int *nbuf)
{
    /* The seed's adaptive version: the chunk grows with the copy, about 32 of
     * them per copy, at least 64 KiB (per-piece costs: a modeled copy's
     * latency, an event wait, a send), at most 1 MiB; up to 8 buffers in
     * flight.  Where the two servers' device copies run at the same rate, a
     * piece that arrives late idles the destination's engine for good, so
     * the copy ends about one piece plus its worst delay after the source's
     * last DtoH: size/8, /16, /32, /64 gave 4 MiB at 0.79 / 0.86 / 0.87 /
     * 0.84x of the slowest stage.  Starting and ending with smaller pieces
     * (a ramp of halvings) did not help: the worst delay is anywhere in the
     * copy (docs/PERFORMANCE.md, "Remote GPUs"). */
    size_t c = (size_t)(n / 32);
    if (c < (64u << 10))
        c = 64u << 10;
    if (c > (1u << 20))
        c = 1u << 20;
    c = (c + 4095) & ~(size_t)4095;
    uint64_t chunks = rg_peer_npieces(n, c);
    int b = RG_PEER_MAXBUF;
    *chunk = c;
    *nbuf = chunks < (uint64_t)b ? (int)(chunks ? chunks : 1) : b;
}
