/* Unit tests of src/util/scratch.c, the cache of collective temporaries:
 * a returned block is handed out again (no new mapping), best fit among
 * cached blocks, blocks are 64-byte aligned and fully writable (ASan runs
 * this), small blocks and blocks above the budget are not kept, the budget
 * holds after many puts, and drain empties the cache. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/scratch.h"
#include "util/tunables.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)

int main(void)
{
    setenv("WHARF_SCRATCH_CACHE", "4m", 1);
    char err[256];
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    CHECK(wh_tun.scratch_cache == 4 * MB);

    /* reuse: the same block comes back for a request it fits */
    char *a = wh_scratch_get(MB);
    CHECK(a && ((uintptr_t)a & 63) == 0);
    memset(a, 1, MB);
    wh_scratch_put(a);
    CHECK(wh_scratch_cached() == MB);
    char *b = wh_scratch_get(600 * KB);
    CHECK(b == a);
    CHECK(wh_scratch_cached() == 0);
    memset(b, 2, 600 * KB);

    /* best fit: of a 2 MiB and a 1 MiB block, a 700 KiB request takes the 1 MiB one */
    char *big = wh_scratch_get(2 * MB);
    memset(big, 3, 2 * MB);
    wh_scratch_put(big);
    wh_scratch_put(b);
    CHECK(wh_scratch_cached() == 3 * MB);
    char *c = wh_scratch_get(700 * KB);
    CHECK(c == b);
    char *d = wh_scratch_get(1536 * KB);
    CHECK(d == big);
    CHECK(wh_scratch_cached() == 0);
    /* a request nothing cached fits is a fresh block */
    wh_scratch_put(c);
    char *e = wh_scratch_get(3 * MB);
    CHECK(e && e != c && e != big);
    memset(e, 4, 3 * MB);
    CHECK(wh_scratch_cached() == MB);

    /* budget: 3 MiB + 1 MiB fit in 4 MiB; another 2 MiB evicts the smaller 1 MiB only if it is bigger */
    wh_scratch_put(e);
    CHECK(wh_scratch_cached() == 4 * MB);
    wh_scratch_put(d); /* 2 MiB: drops the 1 MiB block, still over: kept out, freed */
    CHECK(wh_scratch_cached() <= 4 * MB);

    /* small blocks go straight back to malloc; blocks above the budget too */
    char *s = wh_scratch_get(100);
    CHECK(s && ((uintptr_t)s & 63) == 0);
    memset(s, 5, 100);
    size_t before = wh_scratch_cached();
    wh_scratch_put(s);
    CHECK(wh_scratch_cached() == before);
    char *h = wh_scratch_get(5 * MB);
    memset(h, 6, 5 * MB);
    wh_scratch_put(h);
    CHECK(wh_scratch_cached() == before);

    /* many puts of varied sizes never exceed the budget; every block stays usable */
    for (int i = 0; i < 200; i++) {
        size_t sz = (size_t)(64 + (i * 37) % 1500) * KB;
        char *p = wh_scratch_get(sz), *q = wh_scratch_get(sz / 2 + 1);
        CHECK(p && q && p != q);
        memset(p, i, sz);
        memset(q, i, sz / 2 + 1);
        wh_scratch_put(q);
        wh_scratch_put(p);
        if (wh_scratch_cached() > 4 * MB)
            CHECK(0);
    }
    wh_scratch_put(NULL);
    wh_scratch_drain();
    CHECK(wh_scratch_cached() == 0);

    /* budget 0: nothing is ever kept */
    setenv("WHARF_SCRATCH_CACHE", "0", 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    char *z = wh_scratch_get(MB);
    wh_scratch_put(z);
    CHECK(wh_scratch_cached() == 0);
    return DONE();
}
