/* Locality detection through the node registry (see locality.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "locality/ident.h"
#include "locality/loc_impl.h"
#include "locality/nodeheap.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

wh_loc_t wh_loc;

#define ALIGN(x, a) (((x) + (a)-1) & ~((size_t)(a)-1))
#define SLOT_CAP_MAX 4096
#define WAIT_S 30.0

static volatile uint64_t probe_word;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *job_id(void)
{
    const char *j = getenv("WHARF_JOB_ID");
    return j && *j ? j : wh_pmi_kvsname();
}

int wh_loc_launcher_mode(void) { return !strcmp(wh_tun.locality, "launcher"); }

int wh_loc_publish(void)
{
    if (strcmp(wh_tun.locality, "detect") && strcmp(wh_tun.locality, "launcher"))
        return wh_error(MPI_ERR_OTHER, "WHARF_LOCALITY=%s: expected detect or launcher", wh_tun.locality);
    if (strcmp(wh_tun.node_fallback, "net") && strcmp(wh_tun.node_fallback, "error"))
        return wh_error(MPI_ERR_OTHER, "WHARF_NODE_FALLBACK=%s: expected net or error", wh_tun.node_fallback);
    if (wh_job.rank == 0) {
        uint64_t n = 0;
        if (getrandom(&n, sizeof n, 0) != (ssize_t)sizeof n)
            n = ((uint64_t)getpid() << 32) ^ (uint64_t)(mono() * 1e9);
        char v[32];
        snprintf(v, sizeof v, "%016" PRIx64, n | 1);
        if (wh_pmi_put("loc.nonce", v) != 0)
            return wh_error(MPI_ERR_OTHER, "PMI put of the job nonce failed: %s", wh_pmi_error());
    }
    return MPI_SUCCESS;
}

/* Wait (bounded) until *w == want. */
static int wait_for(volatile uint64_t *w, uint64_t want, const char *what)
{
    double t0 = mono();
    while (__atomic_load_n(w, __ATOMIC_ACQUIRE) != want) {
        if (mono() - t0 > WAIT_S)
            return wh_error(MPI_ERR_OTHER, "node region %s: timed out waiting for %s", wh_loc.reg.path, what);
        if (wh_pmi_lost())
            return wh_error(MPI_ERR_OTHER, "lost the launcher while waiting for %s", what);
        usleep(100);
    }
    return MPI_SUCCESS;
}

static void header_init(wh_reg_hdr_t *h)
{
    h->version = WH_REG_VERSION;
    h->world_size = (uint32_t)wh_job.size;
    h->slot_cap = wh_loc.slot_cap;
    h->nslots = 0;
    h->tags_off = wh_loc.tags_off;
    h->slots_off = wh_loc.slots_off;
    h->reg_len = wh_loc.reg_len;
    snprintf(h->job, sizeof h->job, "%s", job_id());
}

/* file provider: the creator writes the header; others wait for it */
static int attach_file(wh_reg_hdr_t *h)
{
    if (wh_loc.reg.created) {
        header_init(h);
        h->owner = wh_loc.nonce;
        /* magic before ready: a joiner that sees ready checks the magic (it
         * saw the header without it now and then, and fell back to the network) */
        __atomic_store_n(&h->magic, WH_REG_MAGIC, __ATOMIC_RELEASE);
        __atomic_store_n(&h->ready, wh_loc.nonce, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    return wait_for(&h->ready, wh_loc.nonce, "its creator to initialize it");
}

/* fixed provider: the first rank of this job to arrive claims it (its
 * contents may be a stale earlier job's) and resets the registry area */
static int attach_fixed(wh_reg_hdr_t *h)
{
    for (;;) {
        uint64_t o = __atomic_load_n(&h->owner, __ATOMIC_ACQUIRE);
        if (o == wh_loc.nonce)
            return wait_for(&h->ready, wh_loc.nonce, "the first rank to reset it");
        if (__atomic_compare_exchange_n(&h->owner, &o, wh_loc.nonce, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&h->ready, 0, __ATOMIC_RELEASE);
            memset(wh_loc.reg.base + sizeof *h, 0, wh_loc.reg_len - sizeof *h);
            header_init(h);
            __atomic_store_n(&h->magic, WH_REG_MAGIC, __ATOMIC_RELEASE);
            __atomic_store_n(&h->ready, wh_loc.nonce, __ATOMIC_RELEASE);
            return MPI_SUCCESS;
        }
    }
}

static int join_region(void)
{
    char nonce[32], name[256];
    if (wh_pmi_get("loc.nonce", nonce, sizeof nonce) != 0)
        return wh_error(MPI_ERR_OTHER, "PMI get of the job nonce failed: %s", wh_pmi_error());
    wh_loc.nonce = strtoull(nonce, NULL, 16);
    if (wh_loc_launcher_mode())
        snprintf(name, sizeof name, "wharf.%s.%s.h%d", job_id(), nonce, wh_job.my_host);
    else
        snprintf(name, sizeof name, "wharf.%s.%s", job_id(), nonce);
    int n = wh_job.size;
    wh_loc.slot_cap = (uint32_t)(n < SLOT_CAP_MAX ? n : SLOT_CAP_MAX);
    wh_loc.tags_off = 4096;
    wh_loc.slots_off = ALIGN(wh_loc.tags_off + (size_t)n, 4096);
    wh_loc.reg_len = ALIGN(wh_loc.slots_off + (size_t)wh_loc.slot_cap * sizeof(wh_reg_rec_t), 4096);
    wh_loc.reg.fd = -1;
    wh_loc.reg.prov = wh_tun.node_region && *wh_tun.node_region ? &wh_region_fixed : &wh_region_file;
    WH_CHECK(wh_loc.reg.prov->open(&wh_loc.reg, name, wh_loc.reg_len));
    wh_loc_guard_on();
    wh_loc.cursor = wh_loc.reg_len;
    wh_reg_hdr_t *h = (wh_reg_hdr_t *)wh_loc.reg.base;
    WH_CHECK(wh_loc.reg.prov == &wh_region_fixed ? attach_fixed(h) : attach_file(h));
    if (h->magic != WH_REG_MAGIC || h->version != WH_REG_VERSION || h->world_size != (uint32_t)n ||
        h->reg_len != wh_loc.reg_len)
        return wh_error(MPI_ERR_OTHER, "node region %s has an unexpected layout (version %u, %u ranks)",
                        wh_loc.reg.path, h->version, h->world_size);
    uint32_t slot = __atomic_fetch_add(&h->nslots, 1, __ATOMIC_ACQ_REL);
    if (slot >= wh_loc.slot_cap)
        return wh_error(MPI_ERR_OTHER, "node region %s: more than %u co-resident ranks", wh_loc.reg.path,
                        wh_loc.slot_cap);
    wh_reg_rec_t *me = (wh_reg_rec_t *)(wh_loc.reg.base + wh_loc.slots_off) + slot;
    memset(me, 0, sizeof *me);
    wh_ident_fill(me);
    me->region_dev = (uint64_t)wh_loc.reg.dev;
    me->region_ino = (uint64_t)wh_loc.reg.ino;
    probe_word = (((uint64_t)getpid() << 32) ^ wh_loc.nonce ^ (uint64_t)(mono() * 1e9)) | 1;
    me->cma_addr = (uint64_t)(uintptr_t)&probe_word;
    me->cma_cookie = probe_word;
    wh_loc.me = me;
    __atomic_store_n(&me->ready, 1, __ATOMIC_RELEASE);
    __atomic_store_n(wh_loc.reg.base + wh_loc.tags_off + wh_job.rank, 1, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

static void drop_region(void)
{
    wh_loc_guard_off();
    if (wh_loc.reg.prov) {
        if (wh_loc.reg.created)
            wh_loc.reg.prov->unlink(&wh_loc.reg);
        wh_loc.reg.prov->close(&wh_loc.reg);
    }
    memset(&wh_loc.reg, 0, sizeof wh_loc.reg);
    wh_loc.reg.fd = -1;
    wh_loc.me = NULL;
}

int wh_loc_join(void)
{
    if (wh_tun.cma_ptracer && prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0)
        WH_WARN("locality", "WHARF_CMA_PTRACER=1: prctl(PR_SET_PTRACER) failed: %s", strerror(errno));
    wh_job_on_abort(wh_loc_abort_cleanup);
    int rc = join_region();
    if (rc == MPI_SUCCESS)
        return rc;
    char msg[MPI_MAX_ERROR_STRING];
    wh_error_text(rc, msg, sizeof msg);
    drop_region();
    if (!strcmp(wh_tun.node_fallback, "error"))
        return rc;
    snprintf(wh_loc.fail, sizeof wh_loc.fail, "%s", msg);
    WH_WARN("locality", "%s; using the network channel for every peer (WHARF_NODE_FALLBACK=net)", msg);
    return MPI_SUCCESS;
}

/* After the barrier that follows wh_loc_join: the ranks whose tags are in my
 * region are my co-residents. */
/* ---------- the node heap (nodeheap.h) ---------- */
static wh_nheap_t heap;
static int heap_ok;

/* The budget; a fixed-size region (WHARF_NODE_REGION, the same size for
 * every co-resident) bounds it to half its size, so a budget larger than the
 * device leaves a smaller heap instead of none.  File regions grow on demand
 * inside a large reservation: the budget applies as given (every co-resident
 * must carve the same control block, so nothing per-process may change it). */
static uint32_t heap_chunks(void)
{
    size_t b = wh_tun.node_heap;
    if (wh_loc.reg.prov == &wh_region_fixed && b > wh_loc.reg.map_len / 2)
        b = wh_loc.reg.map_len / 2;
    return (uint32_t)(b / WH_NHEAP_CHUNK);
}

static int heap_grow(void *arg, size_t len)
{
    (void)arg;
    return wh_loc.reg.prov->grow(&wh_loc.reg, len);
}

/* The control block, carved by every co-resident in the same order; the
 * first of them formats it (the PMI barriers of channel init follow). */
static void heap_carve(void)
{
    if (wh_job.local_size < 2 || !heap_chunks())
        return;
    int rc;
    wh_loc.heap_ctl = wh_loc_carve(wh_nheap_ctl_size(heap_chunks()), &rc);
    if (wh_loc.heap_ctl && wh_job.local_rank == 0)
        wh_nheap_open(&heap, wh_loc.heap_ctl, wh_loc.reg.base, 0, heap_chunks(), 1, heap_grow, NULL);
}

/* After init's carving: chunks start past everything carved, the same offset
 * for every co-resident (checked through the control block). */
void wh_loc_heap_open(void)
{
    heap_ok = 0;
    if (!wh_loc.heap_ctl || wh_loc.carve_failed)
        return;
    uint64_t base = ALIGN(wh_loc.cursor, WH_NHEAP_CHUNK), zero = 0;
    if (base + (uint64_t)heap_chunks() * WH_NHEAP_CHUNK > wh_loc.reg.map_len) {
        WH_INFO("nodeheap", "node region cannot hold a %zu-byte heap: run-time shared memory disabled", wh_tun.node_heap);
        return;
    }
    if (!__atomic_compare_exchange_n(&wh_loc.heap_ctl->base, &zero, base, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        zero != base) {
        WH_WARN("nodeheap", "node heap starts at %llu for a peer but %llu here: run-time shared memory disabled",
                (unsigned long long)zero, (unsigned long long)base);
        return;
    }
    wh_nheap_open(&heap, wh_loc.heap_ctl, wh_loc.reg.base, base, heap_chunks(), 0, heap_grow, NULL);
    heap_ok = 1;
    WH_DEBUG("nodeheap", "%u chunks of %zu bytes from offset %llu", heap_chunks(), WH_NHEAP_CHUNK,
             (unsigned long long)base);
}

void *wh_node_alloc(size_t len, uint64_t *off) { return heap_ok ? wh_nheap_alloc(&heap, len, off) : NULL; }
void *wh_node_attach(uint64_t off, size_t len) { return heap_ok ? wh_nheap_attach(&heap, off, len) : NULL; }
int wh_node_free(uint64_t off) { return heap_ok ? wh_nheap_free(&heap, off) : -1; }
int wh_node_locate(const void *p, size_t len, uint64_t *off) { return heap_ok && wh_nheap_locate(&heap, p, len, off); }
const void *wh_node_range(uint64_t off, size_t len) { return heap_ok ? wh_nheap_range(&heap, off, len) : NULL; }

int wh_loc_members(void)
{
    int n = wh_job.size;
    int *ranks = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!ranks)
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    int nl = 0;
    if (wh_loc.me) {
        const unsigned char *tags = wh_loc.reg.base + wh_loc.tags_off;
        for (int r = 0; r < n; r++)
            if (__atomic_load_n(&tags[r], __ATOMIC_ACQUIRE))
                ranks[nl++] = r;
    } else {
        ranks[nl++] = wh_job.rank;
    }
    if (wh_loc_launcher_mode() && wh_loc.me) {
        /* the launcher's hosts must agree with what the region shows */
        for (int r = 0; r < n; r++) {
            int present = 0;
            for (int i = 0; i < nl; i++)
                present |= ranks[i] == r;
            if ((wh_job.host_of[r] == wh_job.my_host) != present) {
                free(ranks);
                return wh_error(MPI_ERR_OTHER,
                                "WHARF_LOCALITY=launcher: the launcher puts rank %d %s this host, but the node region "
                                "%s says otherwise (containers that do not share /dev/shm?)",
                                r, present ? "off" : "on", wh_loc.reg.path);
            }
        }
    }
    wh_loc.recs = calloc((size_t)nl, sizeof *wh_loc.recs);
    if (!wh_loc.recs) {
        free(ranks);
        return wh_error(MPI_ERR_NO_MEM, "out of memory");
    }
    for (int r = 0; r < n; r++)
        wh_job.local_index[r] = -1;
    wh_job.local_size = nl;
    for (int i = 0; i < nl; i++) {
        wh_job.local_ranks[i] = ranks[i];
        wh_job.local_index[ranks[i]] = i;
        if (ranks[i] == wh_job.rank)
            wh_job.local_rank = i;
    }
    free(ranks);
    if (wh_loc.me) {
        wh_reg_hdr_t *h = (wh_reg_hdr_t *)wh_loc.reg.base;
        wh_reg_rec_t *slots = (wh_reg_rec_t *)(wh_loc.reg.base + wh_loc.slots_off);
        uint32_t ns = __atomic_load_n(&h->nslots, __ATOMIC_ACQUIRE);
        for (uint32_t s = 0; s < ns && s < wh_loc.slot_cap; s++) {
            if (!__atomic_load_n(&slots[s].ready, __ATOMIC_ACQUIRE))
                continue;
            int r = slots[s].rank;
            if (r >= 0 && r < n && wh_job.local_index[r] >= 0)
                wh_loc.recs[wh_job.local_index[r]] = &slots[s];
        }
        for (int i = 0; i < nl; i++)
            if (!wh_loc.recs[i])
                return wh_error(MPI_ERR_OTHER, "node region %s: no record for co-resident rank %d", wh_loc.reg.path,
                                wh_job.local_ranks[i]);
        heap_carve();
        /* everyone is attached: the name can go (nothing outlives a crash) */
        if (wh_job.local_rank == 0)
            wh_loc.reg.prov->unlink(&wh_loc.reg);
        wh_loc.reg.unlinked = 1;
    }
    if (!wh_loc_launcher_mode()) {
        wh_job.my_host = wh_job.local_ranks[0]; /* a group is named by its lowest rank */
        wh_job.host_of[wh_job.rank] = wh_job.my_host;
    }
    char key[64], val[160];
    snprintf(key, sizeof key, "loc.grp.%d", wh_job.rank);
    snprintf(val, sizeof val, "%d/%.8s/%.64s", wh_job.my_host, wh_loc.me ? wh_loc.me->boot_id : "-", wh_job.hostname);
    if (wh_pmi_put(key, val) != 0)
        return wh_error(MPI_ERR_OTHER, "PMI put of %s failed: %s", key, wh_pmi_error());
    WH_DEBUG("locality", "%d co-resident ranks (local rank %d) in %s", nl, wh_job.local_rank,
             wh_loc.me ? wh_loc.reg.path : "no node region");
    return MPI_SUCCESS;
}

int wh_loc_region_zeroed(void) { return wh_loc.me && wh_loc.reg.prov == &wh_region_file; }

size_t wh_loc_region_bytes(void) { return wh_loc.me ? wh_loc.reg.len : 0; }

int wh_loc_have_region(void) { return wh_loc.me != NULL && wh_job.local_size > 1; }

int wh_loc_failed(void) { return wh_loc.fail[0] != 0; }

void *wh_loc_carve(size_t len, int *rc)
{
    size_t off = ALIGN(wh_loc.cursor, 4096);
    *rc = wh_loc.reg.prov->grow(&wh_loc.reg, off + len);
    if (*rc != MPI_SUCCESS) {
        wh_loc.carve_failed = 1;
        return NULL;
    }
    wh_loc.cursor = off + len;
    return wh_loc.reg.base + off;
}

wh_reg_rec_t *wh_loc_me(void) { return wh_loc.me; }

const wh_reg_rec_t *wh_loc_rec(int lp) { return wh_loc.recs && lp >= 0 ? wh_loc.recs[lp] : NULL; }

int wh_loc_cma_check(int lp, int *why)
{
    const wh_reg_rec_t *p = wh_loc_rec(lp), *me = wh_loc.me;
    if (!wh_tun.cma)
        return *why = WH_WHY_CMA_OFF, 0;
    if (!p || !me)
        return *why = WH_WHY_NA, 0;
    if (strncmp(p->boot_id, me->boot_id, sizeof p->boot_id))
        return *why = WH_WHY_KERNEL, 0;
    if (p->ns[WH_NS_PID] && me->ns[WH_NS_PID] && p->ns[WH_NS_PID] != me->ns[WH_NS_PID])
        return *why = WH_WHY_PIDNS, 0;
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)p->cma_addr, sizeof got};
    ssize_t n = process_vm_readv(p->pid, &l, 1, &r, 1, 0);
    if (n == (ssize_t)sizeof got && got == p->cma_cookie)
        return *why = WH_WHY_OK, 1;
    *why = n < 0 && (errno == EPERM || errno == EACCES) ? WH_WHY_EPERM : WH_WHY_PROBE;
    WH_INFO("cma", "rank %d (pid %d): probe failed: %s", p->rank, p->pid,
            n < 0 ? strerror(errno) : "read a different value");
    return 0;
}

void wh_loc_set_choice(int wpeer, char code, int shm_why, int cma_why)
{
    if (!wh_loc.code) {
        size_t n = (size_t)wh_job.size;
        wh_loc.code = calloc(n, 1);
        wh_loc.shm_why = calloc(n, 1);
        wh_loc.cma_why = calloc(n, 1);
        if (!wh_loc.code || !wh_loc.shm_why || !wh_loc.cma_why)
            return;
    }
    wh_loc.code[wpeer] = code;
    wh_loc.shm_why[wpeer] = (unsigned char)shm_why;
    wh_loc.cma_why[wpeer] = (unsigned char)cma_why;
}

const char *wh_loc_region_desc(void) { return wh_loc.me ? wh_loc.reg.path : wh_loc.fail; }

void wh_loc_abort_cleanup(void)
{
    if (wh_loc.reg.prov && wh_loc.reg.created && !wh_loc.reg.unlinked)
        wh_loc.reg.prov->unlink(&wh_loc.reg);
}

void wh_loc_finalize(void)
{
    heap_ok = 0;
    drop_region();
    free(wh_loc.recs);
    free(wh_loc.code);
    free(wh_loc.shm_why);
    free(wh_loc.cma_why);
    memset(&wh_loc, 0, sizeof wh_loc);
}
