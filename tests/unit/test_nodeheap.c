/* The node-shared allocator (src/locality/nodeheap.h) over a real file
 * region: allocations are chunk-aligned, zeroed, never overlap (two processes
 * allocating and freeing concurrently, each checking its pattern), the
 * budget runs out with NULL (no failure), attach accepts exactly the live
 * allocations, a freed offset cannot be freed twice, and a lock held by a
 * dead rank makes alloc give up (NULL) instead of hanging. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/err.h"
#include "locality/nodeheap.h"
#include "locality/region.h"
#include "util/tunables.h"

#define NCHUNKS 64
#define BASE ((uint64_t)1 << 20)

static int grow(void *arg, size_t len)
{
    wh_region_t *r = arg;
    return r->prov->grow(r, len);
}

static void open_heap(wh_region_t *r, wh_nheap_t *h, const char *name, int format)
{
    CHECK(r->prov->open(r, name, BASE) == MPI_SUCCESS);
    wh_nheap_open(h, (wh_nheap_ctl_t *)r->base, r->base, BASE, NCHUNKS, format, grow, r);
}

/* allocate/check/free rounds; returns the number of errors */
static int churn(wh_nheap_t *h, unsigned seed, int rounds)
{
    int bad = 0;
    for (int i = 0; i < rounds; i++) {
        size_t len = (size_t)(rand_r(&seed) % (4 * WH_NHEAP_CHUNK)) + 1;
        uint64_t off;
        unsigned char *p = wh_nheap_alloc(h, len, &off);
        if (!p)
            continue; /* budget used by the other process: fine */
        if ((off - BASE) % WH_NHEAP_CHUNK || p[0] || p[len - 1])
            bad++;
        memset(p, (int)(seed & 0xff) | 1, len);
        usleep(100);
        for (size_t k = 0; k < len; k += 511)
            bad += p[k] != ((seed & 0xff) | 1);
        bad += wh_nheap_free(h, off) != 0;
    }
    return bad;
}

int main(void)
{
    char err[256], name[64], dir[] = "/tmp/wharf-nheap-XXXXXX";
    /* a private directory, not /dev/shm: the locality tests running beside
     * this one watch /dev/shm for leftovers */
    CHECK(mkdtemp(dir) != NULL);
    setenv("WHARF_NODE_DIR", dir, 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    snprintf(name, sizeof name, "wharf.test.nheap.%d", (int)getpid());
    wh_region_t a = {.prov = &wh_region_file, .fd = -1}, b = {.prov = &wh_region_file, .fd = -1};
    wh_nheap_t ha, hb;
    open_heap(&a, &ha, name, 1);
    open_heap(&b, &hb, name, 0);

    uint64_t o1, o2, o3;
    unsigned char *p1 = wh_nheap_alloc(&ha, 100, &o1);
    unsigned char *p2 = wh_nheap_alloc(&ha, WH_NHEAP_CHUNK + 1, &o2);
    CHECK(p1 && p2 && o1 == BASE && o2 == BASE + WH_NHEAP_CHUNK && wh_nheap_used(&ha) == 3);
    p1[5] = 42;
    unsigned char *q1 = wh_nheap_attach(&hb, o1, 100);
    CHECK(q1 && q1[5] == 42);                                   /* the second opener sees it */
    CHECK(wh_nheap_attach(&hb, o1, WH_NHEAP_CHUNK + 1) == NULL); /* longer than the allocation */
    CHECK(wh_nheap_attach(&hb, o2 + WH_NHEAP_CHUNK, 1) == NULL); /* inside one, not its start */
    CHECK(wh_nheap_attach(&hb, BASE + 7, 1) == NULL);            /* not chunk-aligned */
    CHECK(wh_nheap_attach(&hb, BASE + 10 * WH_NHEAP_CHUNK, 1) == NULL); /* free chunk */
    /* ranges inside allocations (region copies of MPI_Alloc_mem memory) */
    uint64_t lo;
    CHECK(wh_nheap_locate(&ha, p2 + 70000, 1000, &lo) && lo == o2 + 70000);
    CHECK(!wh_nheap_locate(&ha, ha.region + BASE - 1, 2, &lo));               /* starts before the chunks */
    CHECK(!wh_nheap_locate(&ha, p1, (size_t)NCHUNKS * WH_NHEAP_CHUNK + 1, &lo)); /* runs past them */
    CHECK(!wh_nheap_locate(&ha, &lo, 8, &lo));                                 /* not in the region */
    const unsigned char *r2 = wh_nheap_range(&hb, o2 + 70000, 1000);
    CHECK(r2 && r2 == hb.region + o2 + 70000);                 /* inside a two-chunk allocation */
    const unsigned char *r1 = wh_nheap_range(&hb, o1 + 5, 1);
    CHECK(r1 && r1[0] == 42);
    CHECK(wh_nheap_range(&hb, o2, 2 * WH_NHEAP_CHUNK + 1) == NULL); /* into a free chunk */
    CHECK(wh_nheap_range(&hb, BASE + 10 * WH_NHEAP_CHUNK, 1) == NULL); /* free chunk */
    CHECK(wh_nheap_range(&hb, BASE - 1, 1) == NULL);                   /* before the chunks */
    CHECK(wh_nheap_range(&hb, o1, 0) == NULL);
    CHECK(wh_nheap_range(&hb, UINT64_MAX - 3, 8) == NULL);             /* wraps */
    CHECK(wh_nheap_range(&hb, BASE + (uint64_t)NCHUNKS * WH_NHEAP_CHUNK, 1) == NULL); /* past the end */
    CHECK(wh_nheap_free(&hb, o1) == 0);                          /* any rank frees */
    CHECK(wh_nheap_free(&ha, o1) == -1);                         /* not twice */
    CHECK(wh_nheap_attach(&ha, o1, 1) == NULL);
    p1 = wh_nheap_alloc(&hb, 10, &o3);                           /* first fit reuses the hole, zeroed */
    CHECK(p1 && o3 == o1 && p1[5] == 0);
    CHECK(wh_nheap_alloc(&ha, (size_t)(NCHUNKS + 1) * WH_NHEAP_CHUNK, &o3) == NULL); /* over budget */
    CHECK(wh_nheap_free(&ha, o1) == 0 && wh_nheap_free(&ha, o2) == 0 && wh_nheap_used(&ha) == 0);
    int n = 0;
    uint64_t offs[NCHUNKS + 1];
    while (n <= NCHUNKS && wh_nheap_alloc(&ha, 1, &offs[n]))
        n++;
    CHECK(n == NCHUNKS); /* exhausted: NULL, not a failure */
    for (int i = 0; i < n; i++)
        CHECK(wh_nheap_free(&hb, offs[i]) == 0);

    /* two processes churning at once never see each other's bytes */
    pid_t pid = fork();
    if (pid == 0)
        _exit(churn(&hb, 77, 300) ? 1 : 0);
    CHECK(churn(&ha, 13, 300) == 0);
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(wh_nheap_used(&ha) == 0);

    /* a rank died holding the lock: alloc gives up after its bound */
    __atomic_store_n(&ha.ctl->lock, 1, __ATOMIC_RELEASE);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(wh_nheap_alloc(&hb, 1, &o3) == NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK(s >= 1.5 && s < 10.0);

    a.prov->unlink(&a);
    a.prov->close(&a);
    b.prov->close(&b);
    CHECK(rmdir(dir) == 0);
    return DONE();
}
