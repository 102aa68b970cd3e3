/* The plan of a peer copy between two servers (src/rgpu/rg_plan.c): for
 * sizes around every switch point and random ones, the pieces tile the copy
 * in order, none is empty or larger than the chunk, only the last is shorter,
 * the buffers are 1..8, and a copy of 2 MiB or more is cut into at least 16
 * pieces (the pipeline's fill and drain are one piece each). */
#include <stdio.h>
#include <stdlib.h>

#include "rgpu/rg_plan.h"

static int fails;
#define CHECK(c, ...)                                                                                       \
    do {                                                                                                    \
        if (!(c)) {                                                                                         \
            fprintf(stderr, "check failed: " __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                                          \
            fails++;                                                                                        \
        }                                                                                                   \
    } while (0)

static void one(uint64_t n)
{
    size_t chunk;
    int nbuf;
    rg_peer_plan(n, &chunk, &nbuf);
    uint64_t np = rg_peer_npieces(n, chunk), at = 0, first = 0, last = 0;
    CHECK(chunk >= (64u << 10) && chunk <= (1u << 20) && chunk % 4096 == 0, "n %llu: chunk %zu",
          (unsigned long long)n, chunk);
    CHECK(nbuf >= 1 && nbuf <= RG_PEER_MAXBUF && (uint64_t)nbuf <= (np ? np : 1), "n %llu: %d buffers",
          (unsigned long long)n, nbuf);
    for (uint64_t k = 0; k < np; k++) {
        uint64_t off, len;
        rg_peer_piece(n, chunk, k, &off, &len);
        CHECK(off == at && len > 0 && len <= chunk, "n %llu piece %llu: offset %llu (expected %llu), length %llu",
              (unsigned long long)n, (unsigned long long)k, (unsigned long long)off, (unsigned long long)at,
              (unsigned long long)len);
        if (!k)
            first = len;
        last = len;
        at = off + len;
    }
    CHECK(at == n, "n %llu: the pieces end at %llu", (unsigned long long)n, (unsigned long long)at);
    CHECK(first == (n < chunk ? n : chunk) && last == n - (np - 1) * chunk, "n %llu (chunk %zu): first piece %llu, last %llu",
          (unsigned long long)n, chunk, (unsigned long long)first, (unsigned long long)last);
    CHECK(n < (2u << 20) || np >= 32 / 2, "n %llu: only %llu pieces", (unsigned long long)n, (unsigned long long)np);
}

int main(void)
{
    static const uint64_t sizes[] = {1, 7, 4095, 4099, 65535, 65536, 65537, 262144, 262147, 1048576, 1048581,
                                     2097152, 4194304, 4194307, 8388608, 17825795, 33554432, 67108864,
                                     (1ull << 30) + 7, 5ull << 32};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int d = -2; d <= 2; d++)
            if ((int64_t)sizes[i] + d > 0)
                one(sizes[i] + (uint64_t)d);
    srand(7);
    for (int i = 0; i < 20000; i++)
        one(1 + (((uint64_t)rand() << 20) ^ (uint64_t)rand()) % (256ull << 20));
    if (fails)
        return 1;
    printf("rgpu plan: ok\n");
    return 0;
}
