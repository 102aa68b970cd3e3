/* Windows: creation of every flavor (memory from the caller, malloc, the
 * node-shared allocator), the exchange of what each rank exposes, dynamic
 * attach/detach, and freeing. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "locality/locality.h"
#include "locality/nodeheap.h"
#include "mem/mem.h"
#include "comm/comm.h"
#include "coord/coord.h"
#include "rma/rma.h"
#include "util/log.h"
#include "util/tunables.h"

#define WH_SHM_ALIGN 64

int wh_win_rank_of(const wh_win_t *w, int wr)
{
    for (int i = 0; i < w->size_c; i++)
        if (w->peers[i].wrank == wr)
            return i;
    return -1;
}

/* every rank of c shares my node region */
static int all_coresident(const wh_comm_t *c)
{
    if (!wh_job.local_index)
        return c->size == 1;
    for (int i = 0; i < c->size; i++)
        if (wh_job.local_index[wh_comm_wrank(c, i)] < 0)
            return 0;
    return 1;
}

static void win_release(wh_win_t *w)
{
    if (w->reg)
        wh_chans[WH_CHAN_NET]->mem_dereg(w->reg);
    if (w->own_mem == 1) /* a shared window over one rank: the block starts with the lock word */
        free(w->flavor == MPI_WIN_FLAVOR_SHARED ? (void *)w->lockw : w->base);
    else if (w->own_mem == 2)
        wh_node_free(w->heap_off);
    else if (w->own_mem == 3 && w->rank == 0)
        wh_node_free(w->heap_off);
    while (w->regions) {
        wh_win_region_t *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    while (w->lk_head) {
        wh_win_lockq_t *q = w->lk_head;
        w->lk_head = q->next;
        free(q);
    }
    free(w->peers);
    free(w->slots);
    free(w->lock_mode);
    free(w->npend);
    free(w->flush_sent); /* the block of flush_sent, flush_done, grants, posts, ... (win_arrays) */
    free(w->tgt_err);
    if (w->info != MPI_INFO_NULL) {
        MPI_Info i = w->info;
        PMPI_Info_free(&i);
    }
    wh_errh_release(wh_errh_get(w->errh));
    if (w->comm)
        wh_comm_free(w->comm);
    wh_tab_free(&wh_win_tab, w);
}

/* per-peer arrays in three blocks (bytes, int64, uint64) */
static int win_arrays(wh_win_t *w)
{
    size_t n = (size_t)w->size_c;
    w->lock_mode = calloc(n, 4); /* lock_mode, in_start, dirty, in_post */
    w->npend = calloc(n, sizeof(int64_t));
    uint64_t *u = calloc(n * 8, sizeof(uint64_t));
    w->tgt_err = calloc(n, sizeof(int));
    if (!w->lock_mode || !w->npend || !u || !w->tgt_err) {
        free(u);
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a window of %zu ranks", n);
    }
    w->in_start = w->lock_mode + n;
    w->dirty = w->lock_mode + 2 * n;
    w->in_post = w->lock_mode + 3 * n;
    w->flush_sent = u;
    w->flush_done = u + n;
    w->grants = u + 2 * n;
    w->posts = u + 3 * n;
    w->posts_used = u + 4 * n;
    w->completes = u + 5 * n;
    w->completes_used = u + 6 * n;
    return MPI_SUCCESS;
}

static const char *const hint_keys[] = {"no_locks", "accumulate_ordering", "accumulate_ops", "same_size",
                                        "same_disp_unit", "alloc_shared_noncontig", NULL};

static int copy_hints(MPI_Info from, MPI_Info *to)
{
    if (*to == MPI_INFO_NULL)
        WH_CHECK(wh_info_new(to));
    static const char *const defs[] = {"false", "rar,raw,war,waw", "same_op_no_op", "false", "false", "false"};
    for (int i = 0; hint_keys[i]; i++) {
        const char *v = from != MPI_INFO_NULL ? wh_info_lookup(from, hint_keys[i]) : NULL;
        if (!v && wh_info_lookup(*to, hint_keys[i]))
            continue;
        WH_CHECK(wh_info_put(*to, hint_keys[i], v ? v : defs[i]));
    }
    return MPI_SUCCESS;
}

int wh_win_set_hints(wh_win_t *w, MPI_Info info)
{
    return copy_hints(info, &w->info);
}

/* the shared segment: rank 0 allocates every rank's part in one node-heap
 * allocation, the others attach it; parts are WH_SHM_ALIGN-aligned */
static int shared_alloc(wh_win_t *w, MPI_Aint size, uint64_t *offs)
{
    wh_comm_t *c = w->comm;
    int n = c->size;
    int64_t mine = size, *sizes = malloc(sizeof(int64_t) * (size_t)n);
    if (!sizes)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    wh_dtype_t *i64 = wh_dtype_get(MPI_INT64_T);
    int rc = wh_allgather(&mine, 1, i64, sizes, 1, i64, c);
    uint64_t total = WH_RMA_LOCKPAD; /* the lock word comes first */
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        offs[i] = total;
        total += ((uint64_t)sizes[i] + WH_SHM_ALIGN - 1) & ~(uint64_t)(WH_SHM_ALIGN - 1);
    }
    free(sizes);
    WH_CHECK(rc);
    uint64_t hoff = UINT64_MAX;
    char *seg = NULL;
    if (n == 1) {
        seg = calloc(1, total ? total : 1);
        if (!seg)
            return wh_error(MPI_ERR_NO_MEM, "cannot allocate %llu bytes of window memory", (unsigned long long)total);
        w->own_mem = 1;
    } else {
        if (w->rank == 0 && !(seg = wh_node_alloc(total ? total : 1, &hoff)))
            hoff = UINT64_MAX;
        WH_CHECK(wh_bcast(&hoff, 1, wh_dtype_get(MPI_UINT64_T), 0, c));
        if (hoff == UINT64_MAX)
            return wh_error(MPI_ERR_NO_MEM, "the node-shared allocator has no room for a %llu-byte shared window "
                                            "(WHARF_NODE_HEAP)", (unsigned long long)total);
        if (w->rank != 0)
            seg = wh_node_attach(hoff, total ? total : 1);
        int bad = seg == NULL, anybad = 0;
        WH_CHECK(wh_allreduce(&bad, &anybad, 1, MPI_INT, wh_dtype_get(MPI_INT), wh_op_get(MPI_MAX), c));
        if (anybad) {
            wh_barrier(c);
            if (w->rank == 0)
                wh_node_free(hoff);
            return wh_error(MPI_ERR_RMA_SHARED, "a rank could not map the shared window segment");
        }
        w->own_mem = 3;
        w->heap_off = hoff;
    }
    for (int i = 0; i < n; i++) {
        w->peers[i].ptr = seg + offs[i];
        w->peers[i].lockp = (uint32_t *)(void *)seg;
    }
    w->lockw = (uint32_t *)(void *)seg;
    w->base = size ? seg + offs[w->rank] : NULL;
    /* a zero-size part still gets a valid address (MPICH hands one out) */
    if (!size)
        w->base = seg + offs[w->rank];
    return MPI_SUCCESS;
}

/* ---------- MPI_Alloc_mem in the node region ---------- */

/* A block handed out by MPI_Alloc_mem from the node heap: a lock word pad,
 * then the memory.  MPI_Win_create over memory inside such a block becomes a
 * node-region window (co-residents load, store and apply accumulates).
 *
 * How much: this rank's live blocks together (pads included) stay within
 * WHARF_ALLOC_MEM_NODE and within its share of three quarters of the node
 * heap (WHARF_NODE_HEAP * 3/4 / co-resident ranks), so MPI_Alloc_mem of all
 * ranks leaves a quarter to communicators and MPI_Win_allocate.  Beyond
 * that, or when the heap or its filesystem says no, the caller mallocs. */
typedef struct amem {
    struct amem *next;
    char *base;        /* what the program got */
    size_t size;
    uint64_t heap_off; /* of the block (pad first) */
} amem_t;
static amem_t *amem_list;
static size_t amem_held; /* bytes of the blocks in amem_list, pads included */

/* the most node-heap memory this rank's MPI_Alloc_mem blocks may hold */
size_t wh_rma_alloc_mem_cap(void)
{
    size_t cap = wh_tun.alloc_mem_node;
    int n = wh_job.local_size > 1 ? wh_job.local_size : 1;
    size_t share = wh_tun.node_heap / 4 * 3 / (size_t)n;
    return cap < share ? cap : share;
}

void *wh_rma_alloc_mem(size_t size)
{
    size_t cap = wh_rma_alloc_mem_cap();
    if (!size || size > cap || WH_RMA_LOCKPAD > cap - size || size + WH_RMA_LOCKPAD > cap - amem_held)
        return NULL;
    amem_t *a = malloc(sizeof *a);
    uint64_t off;
    char *m = a ? wh_node_alloc(size + WH_RMA_LOCKPAD, &off) : NULL;
    if (!m) {
        WH_DEBUG("rma", "MPI_Alloc_mem(%zu): node heap said no, private memory", size);
        free(a);
        return NULL;
    }
    a->base = m + WH_RMA_LOCKPAD;
    a->size = size;
    a->heap_off = off;
    a->next = amem_list;
    amem_list = a;
    amem_held += size + WH_RMA_LOCKPAD;
    return a->base;
}

int wh_rma_free_mem(void *base)
{
    for (amem_t **pp = &amem_list; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base) {
            amem_t *a = *pp;
            *pp = a->next;
            amem_held -= a->size + WH_RMA_LOCKPAD;
            wh_node_free(a->heap_off);
            free(a);
            return 1;
        }
    return 0;
}

static const amem_t *amem_find(const void *base, size_t size)
{
    const char *b = base;
    for (const amem_t *a = amem_list; a; a = a->next)
        if (b >= a->base && b <= a->base + a->size && size <= (size_t)(a->base + a->size - b))
            return a;
    return NULL;
}

typedef struct win_pub {
    uint64_t base, size, heap_off;
    uint64_t heap_len, heap_skip; /* node region: bytes to attach at heap_off, memory at +heap_skip (lock word at +0) */
    int64_t disp_unit;
    uint64_t id;
    uint64_t atomics; /* WHARF_RMA_ATOMICS here: all must agree for atomics to be used */
    uint64_t rkey, rbase, has_rkey; /* registration with the net channel */
    uint64_t fab;     /* element classes this rank would move by libfabric atomics (fabric.c), 0: none */
    uint64_t gate;    /* node-heap offset of its atomic-update slot (atomic.c), UINT64_MAX: no bulk gate */
    uint64_t dev;     /* its memory is device memory */
} win_pub_t;

/* The bulk gate (atomic.c) on this window: every co-resident rank has a slot
 * and runs on my kernel (membarrier reaches CPUs of this kernel only, not
 * other VMs on a fixed region), I mapped every slot, and all ranks agree.
 * Collective over the window's communicator. */
static int gate_setup(wh_win_t *w, const win_pub_t *pub)
{
    int bad = !w->acc_atomic || pub[w->rank].gate == UINT64_MAX, anybad = 0, n = 0;
    const wh_reg_rec_t *me = wh_loc_me();
    if (!bad && !(w->slots = calloc((size_t)w->size_c, sizeof *w->slots)))
        bad = 1;
    for (int i = 0; i < w->size_c && !bad; i++) {
        int lp = wh_job.local_index ? wh_job.local_index[w->peers[i].wrank] : -1;
        if (lp < 0)
            continue; /* not co-resident: never applies accumulates to node-region memory itself */
        const wh_reg_rec_t *o = wh_loc_rec(lp);
        if (pub[i].gate == UINT64_MAX || !me || !o || strncmp(o->boot_id, me->boot_id, sizeof me->boot_id) ||
            !(w->slots[n++] = wh_node_attach(pub[i].gate, 64)))
            bad = 1;
    }
    WH_CHECK(wh_allreduce(&bad, &anybad, 1, MPI_INT, wh_dtype_get(MPI_INT), wh_op_get(MPI_MAX), w->comm));
    w->acc_fast = !anybad;
    w->nslots = w->acc_fast ? n : 0;
    if (!w->acc_fast) {
        free(w->slots);
        w->slots = NULL;
    }
    return MPI_SUCCESS;
}

/* Element classes for which accumulates to my memory may use libfabric
 * atomics: only if every other rank reaches me and I reach every other rank
 * over the network channel (nobody maps anybody's memory, no CPU atomics or
 * lock word anywhere in the window) and my memory is registered. */
static uint32_t fab_classes_mine(const wh_win_t *w)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->flavor == MPI_WIN_FLAVOR_SHARED || w->lockw ||
        (w->size > 0 && !w->reg) || w->size_c < 2 || w->dev)
        return 0;
    for (int i = 0; i < w->size_c; i++) {
        int wr = wh_comm_wrank(w->comm, i);
        if (wr != wh_job.rank &&
            (wh_coord_peers[wr].chan != WH_CHAN_NET || !(wh_coord_peers[wr].caps & WH_CAP_ATOMIC)))
            return 0;
    }
    return wh_rma_fab_classes_local();
}

/* Register my memory with the net channel when a peer of the window reaches
 * me through it and the channel can (libfabric RMA, src/chan/net/net_rma.c). */
static void net_register(wh_win_t *w, uint64_t *rkey, uint64_t *rbase)
{
    const wh_chan_ops_t *net = wh_chans[WH_CHAN_NET];
    if (!w->base || w->size <= 0 || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || !net->mem_reg ||
        !wh_chan_usable[WH_CHAN_NET] || w->dev) /* device memory: the channel's FI_HMEM is not used */
        return;
    int any = 0;
    for (int i = 0; i < w->size_c && !any; i++) {
        int wr = wh_comm_wrank(w->comm, i);
        any = wr != wh_job.rank && wh_coord_peers[wr].chan == WH_CHAN_NET &&
              (wh_coord_peers[wr].caps & WH_CAP_RMA_REG);
    }
    if (any && net->mem_reg(w->base, (size_t)w->size, rkey, rbase, &w->reg) != MPI_SUCCESS)
        w->reg = NULL;
}

int wh_win_make(wh_comm_t *c, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                void **base_out, wh_win_t **out)
{
    *out = NULL;
    if (flavor == MPI_WIN_FLAVOR_SHARED && !all_coresident(c))
        return wh_error(MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared needs every rank of the communicator to share "
                                            "the node region; they do not (different hosts or isolated "
                                            "containers)");
    wh_group_t *g = wh_comm_group(c);
    if (!g)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    wh_comm_t *wc;
    int rc = wh_comm_create(c, g, &wc);
    wh_group_release(g);
    WH_CHECK(rc);
    wh_win_t *w = wh_tab_alloc(&wh_win_tab);
    if (!w) {
        wh_comm_free(wc);
        return wh_error(MPI_ERR_NO_MEM, "out of memory creating a window");
    }
    w->comm = wc;
    w->flavor = flavor;
    w->size = size;
    w->disp_unit = disp_unit;
    w->errh = MPI_ERRORS_ARE_FATAL;
    w->errh_default = 1;
    w->info = MPI_INFO_NULL;
    w->rank = wc->rank;
    w->size_c = wc->size;
    w->heap_off = UINT64_MAX;
    w->peers = calloc((size_t)wc->size, sizeof *w->peers);
    const amem_t *am = NULL;
    uint64_t heap_len = 0, heap_skip = 0;
    uint64_t *offs = calloc((size_t)wc->size, sizeof(uint64_t));
    win_pub_t *pub = calloc((size_t)wc->size, sizeof *pub);
    if (!w->peers || !offs || !pub) {
        rc = wh_error(MPI_ERR_NO_MEM, "out of memory creating a window");
        goto fail;
    }
    if ((rc = win_arrays(w)) || (rc = copy_hints(info, &w->info)))
        goto fail;
    switch (flavor) {
    case MPI_WIN_FLAVOR_CREATE:
        w->base = base;
        if (size > 0 && wh_mem_query(base) != WH_MEM_HOST)
            w->dev = 1; /* nobody maps, registers or copies into it directly */
        else if (size > 0 && (am = amem_find(base, (size_t)size))) {
            /* MPI_Alloc_mem memory in the node region: its block's lock word */
            w->lockw = (uint32_t *)(void *)(am->base - WH_RMA_LOCKPAD);
            heap_len = am->size + WH_RMA_LOCKPAD;
            heap_skip = (uint64_t)((char *)base - am->base) + WH_RMA_LOCKPAD;
        }
        break;
    case MPI_WIN_FLAVOR_ALLOCATE:
        /* among co-residents, node-region memory lets origins load and store directly */
        if (size > 0 && wc->size > 1 && all_coresident(wc) &&
            (w->lockw = wh_node_alloc((size_t)size + WH_RMA_LOCKPAD, &w->heap_off))) {
            w->base = (char *)w->lockw + WH_RMA_LOCKPAD;
            w->own_mem = 2;
        }
        else if ((w->base = calloc(1, size ? (size_t)size : 1)))
            w->own_mem = 1;
        else {
            rc = wh_error(MPI_ERR_NO_MEM, "cannot allocate %ld bytes of window memory", (long)size);
            goto fail;
        }
        break;
    case MPI_WIN_FLAVOR_SHARED:
        if ((rc = shared_alloc(w, size, offs)))
            goto fail;
        break;
    default:
        break;
    }
    /* local state is ready before anyone learns the window exists */
    uint64_t rkey = 0, rbase = 0;
    net_register(w, &rkey, &rbase);
    if (w->own_mem == 2) {
        heap_len = (uint64_t)size + WH_RMA_LOCKPAD;
        heap_skip = WH_RMA_LOCKPAD;
    }
    win_pub_t me = {.base = (uint64_t)(uintptr_t)w->base, .size = (uint64_t)size, .disp_unit = disp_unit,
                    .heap_off = w->own_mem == 2 ? w->heap_off : am ? am->heap_off : UINT64_MAX,
                    .heap_len = heap_len, .heap_skip = heap_skip, .id = WH_HINDEX(w->obj.handle),
                    .atomics = (uint64_t)(wh_tun.rma_atomics != 0), .rkey = rkey, .rbase = rbase,
                    .has_rkey = w->reg != NULL, .fab = fab_classes_mine(w), .dev = (uint64_t)w->dev,
                    .gate = wc->size > 1 ? wh_rma_gate_local() : UINT64_MAX};
    wh_dtype_t *bt = wh_dtype_get(MPI_BYTE);
    if ((rc = wh_allgather(&me, sizeof me, bt, pub, sizeof me, bt, wc)))
        goto fail;
    w->acc_atomic = 1;
    w->fab_classes = UINT32_MAX;
    for (int i = 0; i < wc->size; i++) {
        wh_win_peer_t *p = &w->peers[i];
        w->acc_atomic &= pub[i].atomics != 0;
        w->fab_classes &= (uint32_t)pub[i].fab; /* every rank must offer a class, with its memory registered */
        p->base = pub[i].base;
        p->size = pub[i].size;
        p->disp_unit = pub[i].disp_unit;
        p->heap_off = pub[i].heap_off;
        p->id = (uint32_t)pub[i].id;
        p->rkey = pub[i].rkey;
        p->rbase = pub[i].rbase;
        p->has_rkey = pub[i].has_rkey != 0;
        p->dev = pub[i].dev != 0;
        p->wrank = wh_comm_wrank(wc, i);
        if (p->dev)
            ; /* device memory: operations go to the target's handlers, even mine */
        else if (i == w->rank && flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            p->ptr = w->base;
            p->lockp = w->lockw;
        } else if (p->heap_off != UINT64_MAX && p->size && wh_job.local_index &&
                   wh_job.local_index[p->wrank] >= 0) { /* its node heap is mine only if it shares my node */
            char *m = wh_node_attach(p->heap_off, pub[i].heap_len); /* NULL: active messages */
            if (m) {
                p->lockp = (uint32_t *)(void *)m;
                p->ptr = m + pub[i].heap_skip;
            }
        }
    }
    if (wc->size > 1 && (rc = gate_setup(w, pub)))
        goto fail;
    free(offs);
    free(pub);
    if (base_out)
        *base_out = w->base;
    WH_DEBUG("rma", "window 0x%x: flavor %d, %ld bytes, unit %ld, %d ranks, libfabric atomics for classes 0x%03x, "
             "memory %s, CPU atomics %s", (unsigned)w->obj.handle, flavor, (long)size, (long)disp_unit, wc->size,
             (unsigned)w->fab_classes,
             flavor == MPI_WIN_FLAVOR_DYNAMIC ? "attached" : w->dev ? "device"
             : w->own_mem >= 2 || w->lockw ? "node region" : "private",
             !w->acc_atomic ? "off" : w->acc_fast ? "through the bulk gate" : "holding the lock word shared");
    *out = w;
    return wh_rma_async_start();
fail:
    free(offs);
    free(pub);
    win_release(w);
    return rc;
}

int wh_win_free(wh_win_t *w)
{
    if (wh_win_epoch_active(w))
        return wh_error(MPI_ERR_RMA_SYNC, "MPI_Win_free with an access or exposure epoch still open (a lock, "
                                          "MPI_Win_lock_all, MPI_Win_start or MPI_Win_post without its end)");
    WH_CHECK(wh_win_flush(w, -1, 0));
    wh_attr_t *a = w->attrs;
    int rc = wh_attr_delete_all(&a, w->obj.handle);
    w->attrs = a;
    WH_CHECK(rc);
    /* nobody touches the memory after everyone is here */
    WH_CHECK(wh_barrier(w->comm));
    win_release(w);
    return MPI_SUCCESS;
}

int wh_win_attach(wh_win_t *w, void *base, MPI_Aint size)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return wh_error(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a window made by MPI_Win_create_dynamic");
    if (size < 0)
        return wh_error(MPI_ERR_SIZE, "negative size %ld", (long)size);
    if (size > 0 && !base)
        return wh_error(MPI_ERR_RMA_ATTACH, "base is NULL");
    char *b = base;
    for (wh_win_region_t *r = w->regions; r; r = r->next)
        if (b < r->base + r->size && r->base < b + size)
            return wh_error(MPI_ERR_RMA_ATTACH, "memory [%p, +%ld) overlaps a region already attached", base,
                            (long)size);
    wh_win_region_t *r = malloc(sizeof *r);
    if (!r)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    r->base = b;
    r->size = (size_t)size;
    r->dev = size > 0 && wh_mem_query(b) != WH_MEM_HOST;
    w->dev += r->dev;
    r->next = w->regions;
    w->regions = r;
    return MPI_SUCCESS;
}

int wh_win_detach(wh_win_t *w, const void *base)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return wh_error(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a window made by MPI_Win_create_dynamic");
    for (wh_win_region_t **pp = &w->regions; *pp; pp = &(*pp)->next)
        if ((*pp)->base == base) {
            wh_win_region_t *r = *pp;
            *pp = r->next;
            w->dev -= r->dev;
            free(r);
            return MPI_SUCCESS;
        }
    return wh_error(MPI_ERR_RMA_ATTACH, "%p is not the base of a region attached to the window", base);
}
