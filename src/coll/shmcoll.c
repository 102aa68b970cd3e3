/* Node-shared-memory collectives: when every rank of an intracommunicator
 * shares this node region and is served by the shm channel, small barriers,
 * broadcasts, reductions and allreduces go through one block of node memory
 * (the node-shared allocator) instead of messages.
 *
 * Block layout (per rank r, each on its own cache lines): flag[r] (the last
 * collective r has arrived at: it finished every earlier one), done[r] (the
 * last one r has finished, read only when the block is freed), and NCELL
 * cells of WHARF_COLL_SHM_MAX bytes (collective k uses cell k % NCELL).  Flags are
 * single-writer sequence numbers that only grow, never reset: collective k
 * (every rank counts the same k: collectives are called in the same order)
 * waits for flag >= k.  A rank writes cell k % NCELL, which readers of
 * k - NCELL used, once every flag >= k - NCELL + 1 (all of them left
 * k - NCELL): after an allreduce or a barrier that holds already, and a
 * broadcast root may run NCELL - 1 broadcasts ahead of slow readers.  Reductions combine the cells in rank order, so non-commutative
 * ops are right.
 *
 * Set up lazily by the first eligible collective on the communicator (one
 * allocation by rank 0, its offset broadcast, everyone attaches, all agree);
 * when the allocator says no (budget, no region) the communicator keeps the
 * point-to-point algorithms for good.  Waiting polls the progress engine and
 * gives the core away under oversubscription (wh_progress_idle). */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/cstate.h"
#include "coll/shmcoll.h"
#include "coord/coord.h"
#include "locality/locality.h"
#include "locality/nodeheap.h"
#include "util/log.h"
#include "util/tunables.h"

#define LINE 64
#define NCELL 4 /* cells per rank: a root may run NCELL - 1 collectives ahead */

typedef struct shmc {
    int state;          /* 1 ready, -1 not available */
    unsigned char *base;
    uint64_t off;       /* node-heap offset (rank 0 frees it) */
    size_t cell;        /* bytes per cell */
    size_t stride;      /* bytes per rank */
    uint64_t seq;       /* the collective being run */
} shmc_t;

static inline volatile uint64_t *flag(const shmc_t *s, int r)
{
    return (volatile uint64_t *)(s->base + (size_t)r * s->stride);
}
static inline volatile uint64_t *done(const shmc_t *s, int r)
{
    return (volatile uint64_t *)(s->base + (size_t)r * s->stride + LINE);
}
/* cell of rank r for collective k */
static inline unsigned char *cell(const shmc_t *s, int r, uint64_t k)
{
    return s->base + (size_t)r * s->stride + 2 * LINE + (size_t)(k % NCELL) * s->cell;
}

static void wait_ge(volatile uint64_t *p, uint64_t v)
{
    unsigned idle = 0;
    while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < v) {
        if (wh_progress())
            idle = 0;
        else
            wh_progress_idle(&idle);
    }
}

static void wait_all(const shmc_t *s, int n, volatile uint64_t *(*which)(const shmc_t *, int), uint64_t v)
{
    for (int r = 0; r < n; r++)
        wait_ge(which(s, r), v);
}

/* every member co-resident and served by the shm channel */
static int members_local(const wh_comm_t *c)
{
    for (int r = 0; r < c->size; r++) {
        int w = wh_comm_wrank(c, r);
        if (w != wh_job.rank && (wh_job.local_index[w] < 0 || wh_coord_peers[w].chan != WH_CHAN_SHM))
            return 0;
    }
    return 1;
}

static shmc_t *setup(wh_comm_t *c, wh_coll_state_t *st)
{
    shmc_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->state = -1;
    st->shm = s;
    s->cell = (wh_tun.coll_shm_max + LINE - 1) & ~(size_t)(LINE - 1);
    s->stride = 2 * LINE + NCELL * s->cell;
    size_t len = (size_t)c->size * s->stride;
    int ok = wh_loc_have_region() && members_local(c);
    uint64_t off = 0;
    if (c->rank == 0 && ok && !wh_node_alloc(len, &off))
        off = 0;
    wh_dtype_t *byte = wh_coll_byte();
    int rc = wh_bcast_binomial(&off, sizeof off, byte, 0, c);
    if (rc == MPI_SUCCESS && off)
        s->base = wh_node_attach(off, len);
    int mine = rc == MPI_SUCCESS && s->base != NULL, all = 0;
    wh_dtype_t *i32 = wh_dtype_get(MPI_INT);
    rc = wh_allreduce_recdbl(&mine, &all, 1, MPI_INT, i32, wh_op_get(MPI_MIN), c);
    if (rc == MPI_SUCCESS && all) {
        s->state = 1;
        s->off = off;
        WH_DEBUG("coll", "communicator %#x: shared-memory collectives, %d x %zu bytes at node offset %llu",
                 (unsigned)c->obj.handle, c->size, s->stride, (unsigned long long)off);
    } else {
        if (c->rank == 0 && off)
            wh_node_free(off);
        s->base = NULL;
    }
    return s;
}

/* the block of c, or NULL when c uses the point-to-point algorithms */
static shmc_t *get(wh_comm_t *c)
{
    wh_coll_state_t *st = c->coll_data;
    if (__builtin_expect(st != NULL && st->shm != NULL, 1))
        return st->shm->state == 1 ? st->shm : NULL;
    /* only what every rank sees alike may decide here: the setup itself is collective */
    if (!wh_tun.coll_shm || c->size < 2 || c->is_inter || !(st = wh_coll_state(c)))
        return NULL;
    shmc_t *s = setup(c, st);
    return s && s->state == 1 ? s : NULL;
}

void wh_shmc_release(wh_comm_t *c, shmc_t *s)
{
    if (s->state == 1 && c->rank == 0) {
        /* the others may still be reading the last collective: wait (bounded) */
        int late = 0;
        for (int r = 0; r < c->size && !late; r++) {
            for (unsigned long i = 0; __atomic_load_n(done(s, r), __ATOMIC_ACQUIRE) < s->seq; i++) {
                if (i > 2000000UL) {
                    late = 1;
                    break;
                }
                unsigned idle = 0;
                wh_progress_idle(&idle);
            }
        }
        if (!late)
            wh_node_free(s->off); /* else leaked to the node heap rather than reused under a reader */
    }
    free(s);
}

int wh_shmc_usable(wh_comm_t *c, size_t bytes)
{
    if (bytes > wh_tun.coll_shm_max)
        return 0;
    return get(c) != NULL;
}

int wh_shmc_barrier(wh_comm_t *c)
{
    shmc_t *s = get(c);
    uint64_t k = ++s->seq;
    __atomic_store_n(flag(s, c->rank), k, __ATOMIC_RELEASE);
    wait_all(s, c->size, flag, k);
    __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

int wh_shmc_bcast(void *buf, size_t bytes, int root, wh_comm_t *c)
{
    shmc_t *s = get(c);
    uint64_t k = ++s->seq;
    if (c->rank == root) {
        if (k >= NCELL)
            wait_all(s, c->size, flag, k - NCELL + 1);
        memcpy(cell(s, root, k), buf, bytes);
        __atomic_store_n(flag(s, root), k, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(flag(s, c->rank), k, __ATOMIC_RELEASE);
        wait_ge(flag(s, root), k);
        memcpy(buf, cell(s, root, k), bytes);
    }
    __atomic_store_n(done(s, c->rank), k, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

/* reduce (root >= 0: only root gets the result) or allreduce (root < 0) of
 * count elements that form one block at the buffer (lower bound 0) */
int wh_shmc_reduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype dth, wh_dtype_t *dt, wh_op_t *op,
                   int root, wh_comm_t *c)
{
    shmc_t *s = get(c);
    uint64_t k = ++s->seq;
    int n = c->size, me = c->rank;
    size_t bytes = (size_t)count * dt->size;
    const void *mine = sbuf == MPI_IN_PLACE ? rbuf : sbuf; /* one block at the buffer (selectors check) */
    if (k >= NCELL)
        wait_all(s, n, flag, k - NCELL + 1);
    memcpy(cell(s, me, k), mine, bytes);
    __atomic_store_n(flag(s, me), k, __ATOMIC_RELEASE);
    int rc = MPI_SUCCESS;
    if (root < 0 || me == root) {
        wait_ge(flag(s, n - 1), k);
        memcpy(rbuf, cell(s, n - 1, k), bytes);
        /* out = c0 op (c1 op (... op c(n-1))): rank order for non-commutative ops */
        for (int r = n - 2; r >= 0 && rc == MPI_SUCCESS; r--) {
            wait_ge(flag(s, r), k);
            rc = wh_op_apply(op, cell(s, r, k), rbuf, (size_t)count, dth, dt);
        }
    }
    __atomic_store_n(done(s, me), k, __ATOMIC_RELEASE);
    return rc;
}
