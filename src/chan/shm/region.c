/* The node-level shared region: created by the first local rank, attached by
 * the others, and unlinked as soon as everyone is attached (so a crash leaves
 * nothing behind in /dev/shm). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "chan/shm/shm.h"
#include "mpi/init.h"
#include "pmi/pmi.h"
#include "util/log.h"
#include "util/tunables.h"

wh_shm_state_t wh_shm;
static int unlinked;

static void abort_cleanup(void)
{
    if (wh_shm.me == 0 && wh_shm.path[0] && !unlinked)
        unlink(wh_shm.path);
}
void (*wh_shm_abort_cleanup)(void) = abort_cleanup;

static const char *job_id(void)
{
    const char *j = getenv("WHARF_JOB_ID");
    return j && *j ? j : wh_pmi_kvsname();
}

static uint64_t nonce(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
}

static int layout(void)
{
    int cells = wh_tun.shm_cells;
    if (cells < 2 || (cells & (cells - 1)))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_CELLS=%d must be a power of two >= 2", cells);
    size_t pay = wh_tun.shm_cell_size;
    if (pay < 64 || pay > (64u << 20))
        return wh_error(MPI_ERR_OTHER, "WHARF_SHM_CELL_SIZE=%zu must be between 64 bytes and 64 MiB", pay);
    wh_shm.ncells = (uint32_t)cells;
    wh_shm.cell_stride = (WH_SHM_CELL_HDR + pay + 63) & ~(uint64_t)63;
    wh_shm.cell_payload = (uint32_t)(wh_shm.cell_stride - WH_SHM_CELL_HDR);
    return MPI_SUCCESS;
}

static size_t region_bytes(int nlocal)
{
    size_t q = (size_t)wh_shm.ncells * wh_shm.cell_stride;
    return 4096 + (size_t)nlocal * (size_t)nlocal * q;
}

static int map_queues(void)
{
    int n = wh_shm.nlocal, me = wh_shm.me;
    size_t qb = (size_t)wh_shm.ncells * wh_shm.cell_stride;
    unsigned char *base = (unsigned char *)wh_shm.region + 4096;
    wh_shm.txq = calloc((size_t)n, sizeof(void *));
    wh_shm.rxq = calloc((size_t)n, sizeof(void *));
    wh_shm.tx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.rx_idx = calloc((size_t)n, sizeof(uint32_t));
    wh_shm.peers = calloc((size_t)n, sizeof(int));
    wh_shm.stream_head = calloc((size_t)n, sizeof(void *));
    wh_shm.stream_tail = calloc((size_t)n, sizeof(void *));
    if (!wh_shm.txq || !wh_shm.rxq || !wh_shm.tx_idx || !wh_shm.rx_idx || !wh_shm.peers || !wh_shm.stream_head ||
        !wh_shm.stream_tail)
        return wh_error(MPI_ERR_NO_MEM, "out of memory setting up shared-memory queues");
    wh_shm.npeers = 0;
    for (int p = 0; p < n; p++) {
        wh_shm.txq[p] = base + ((size_t)me * n + p) * qb;
        wh_shm.rxq[p] = base + ((size_t)p * n + me) * qb;
        if (p != me)
            wh_shm.peers[wh_shm.npeers++] = p;
    }
    return MPI_SUCCESS;
}

static int create_region(void)
{
    const char *dir = "/dev/shm";
    size_t len = region_bytes(wh_shm.nlocal);
    struct statvfs sv;
    if (statvfs(dir, &sv) == 0 && (unsigned long long)sv.f_bavail * sv.f_frsize < len / 8)
        WH_WARN("shm", "%s has %llu bytes free; the region may use up to %zu bytes", dir,
                (unsigned long long)sv.f_bavail * sv.f_frsize, len);
    snprintf(wh_shm.path, sizeof wh_shm.path, "%s/wharf.%s.%d.%016llx", dir, job_id(), wh_job.my_host,
             (unsigned long long)nonce());
    int fd = open(wh_shm.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return wh_error(MPI_ERR_OTHER, "cannot create the shared region %s: %s", wh_shm.path, strerror(errno));
    if (ftruncate(fd, (off_t)len) != 0) {
        int e = errno;
        close(fd);
        unlink(wh_shm.path);
        return wh_error(MPI_ERR_OTHER, "cannot size the shared region %s to %zu bytes: %s", wh_shm.path, len,
                        strerror(e));
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        unlink(wh_shm.path);
        return wh_error(MPI_ERR_OTHER, "cannot map the shared region %s: %s", wh_shm.path, strerror(errno));
    }
    wh_shm.region = m;
    wh_shm.map_len = len;
    wh_shm_region_t *r = m;
    r->version = 1;
    r->nlocal = (uint32_t)wh_shm.nlocal;
    r->ncells = wh_shm.ncells;
    r->cell_payload = wh_shm.cell_payload;
    r->cell_stride = wh_shm.cell_stride;
    r->queue_bytes = (uint64_t)wh_shm.ncells * wh_shm.cell_stride;
    r->total_bytes = len;
    snprintf(r->job, sizeof r->job, "%s", job_id());
    __atomic_store_n(&r->magic, WH_SHM_MAGIC, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}

static int attach_region(const char *path)
{
    snprintf(wh_shm.path, sizeof wh_shm.path, "%s", path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return wh_error(MPI_ERR_OTHER, "cannot open the shared region %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "refusing the shared region %s: not owned by uid %d", path, (int)geteuid());
    }
    size_t len = region_bytes(wh_shm.nlocal);
    if ((size_t)st.st_size != len) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "shared region %s has %lld bytes, expected %zu (mismatched WHARF_SHM_* tunables?)",
                        path, (long long)st.st_size, len);
    }
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return wh_error(MPI_ERR_OTHER, "cannot map the shared region %s: %s", path, strerror(errno));
    wh_shm.region = m;
    wh_shm.map_len = len;
    wh_shm_region_t *r = m;
    if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != WH_SHM_MAGIC || r->nlocal != (uint32_t)wh_shm.nlocal ||
        r->cell_stride != wh_shm.cell_stride || r->ncells != wh_shm.ncells)
        return wh_error(MPI_ERR_OTHER, "shared region %s has an unexpected layout", path);
    return MPI_SUCCESS;
}

int wh_shm_region_setup(int phase)
{
    char key[64];
    snprintf(key, sizeof key, "shm.%d", wh_job.my_host);
    if (phase == 0) {
        wh_shm.nlocal = wh_job.local_size;
        wh_shm.me = wh_job.local_rank;
        WH_CHECK(layout());
        if (wh_shm.me == 0) {
            WH_CHECK(create_region());
            if (wh_pmi_put(key, wh_shm.path) != 0)
                return wh_error(MPI_ERR_OTHER, "PMI put of %s failed", key);
        }
        return MPI_SUCCESS;
    }
    if (phase == 1) {
        if (wh_shm.me != 0) {
            char path[256];
            if (wh_pmi_get(key, path, sizeof path) != 0)
                return wh_error(MPI_ERR_OTHER, "PMI get of %s failed", key);
            WH_CHECK(attach_region(path));
        }
        return map_queues();
    }
    if (wh_shm.me == 0 && wh_shm.path[0])
        unlink(wh_shm.path);
    unlinked = 1;
    WH_DEBUG("shm", "region %s: %d local ranks, %u cells x %u bytes per pair, %zu bytes", wh_shm.path, wh_shm.nlocal,
             wh_shm.ncells, wh_shm.cell_payload, wh_shm.map_len);
    return MPI_SUCCESS;
}

void wh_shm_region_teardown(void)
{
    if (wh_shm.region)
        munmap(wh_shm.region, wh_shm.map_len);
    free(wh_shm.txq);
    free(wh_shm.rxq);
    free(wh_shm.tx_idx);
    free(wh_shm.rx_idx);
    free(wh_shm.peers);
    free(wh_shm.stream_head);
    free(wh_shm.stream_tail);
    free(wh_shm.cma_ok);
    free(wh_shm.pid);
    memset(&wh_shm, 0, sizeof wh_shm);
}
