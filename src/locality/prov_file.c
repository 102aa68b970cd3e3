/* Region provider "file": a file in the node directory.  The whole address
 * range is reserved at open (so growing never moves the mapping); the file
 * is extended with posix_fallocate so a full directory shows up as ENOSPC
 * here, not as SIGBUS later. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "core/err.h"
#include "locality/region.h"
#include "util/log.h"
#include "util/tunables.h"

/* address space reserved per region (the file grows inside it): the largest
 * of 64 GiB .. 256 MiB the process may map (tools such as valgrind refuse
 * the largest) */
#define RESERVE_MAX ((size_t)1 << 36)
#define RESERVE_MIN ((size_t)1 << 28)

static int file_open(wh_region_t *r, const char *name, size_t len)
{
    const char *dir = wh_tun.node_dir && *wh_tun.node_dir ? wh_tun.node_dir : "/dev/shm";
    struct stat st;
    if (stat(dir, &st) != 0)
        return wh_error(MPI_ERR_OTHER, "node directory %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return wh_error(MPI_ERR_OTHER, "node directory %s is not a directory", dir);
    struct statfs sf;
    r->tmpfs = statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
    if (!r->tmpfs)
        WH_WARN("locality", "node directory %s is not a tmpfs: shared memory through it may be slow", dir);
    snprintf(r->path, sizeof r->path, "%s/%s", dir, name);
    int fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        r->created = 1;
    } else if (errno == EEXIST) {
        fd = open(r->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    }
    if (fd < 0)
        return wh_error(MPI_ERR_OTHER, "node directory %s: cannot create or open %s: %s", dir, name, strerror(errno));
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "node directory %s: refusing %s: owned by uid %d mode %o (expected uid %d, 0600)",
                        dir, name, (int)st.st_uid, (unsigned)(st.st_mode & 0777), (int)geteuid());
    }
    if (!r->created && st.st_size > 0 && (size_t)st.st_size < len) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "node region %s is %lld bytes, shorter than the %zu its creator made: "
                        "another process truncated it", r->path, (long long)st.st_size, len);
    }
    r->fd = fd;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    void *m = MAP_FAILED;
    size_t res = RESERVE_MAX;
    for (; res >= RESERVE_MIN && res >= len; res >>= 2)
        if ((m = mmap(NULL, res, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) != MAP_FAILED)
            break;
    if (m == MAP_FAILED) {
        close(fd);
        r->fd = -1;
        return wh_error(MPI_ERR_NO_MEM, "cannot reserve address space for the node region: %s", strerror(errno));
    }
    r->base = m;
    r->map_len = res;
    r->len = 0;
    return r->prov->grow(r, len);
}

static int file_grow(wh_region_t *r, size_t len)
{
    if (len <= r->len)
        return MPI_SUCCESS;
    if (len > r->map_len)
        return wh_error(MPI_ERR_NO_MEM, "node region %s: %zu bytes exceed the reserved %zu", r->path, len, r->map_len);
    struct stat st; /* what we mapped must still be there, or growing would paper over a truncation */
    if (r->len && fstat(r->fd, &st) == 0 && (size_t)st.st_size < r->len)
        return wh_error(MPI_ERR_OTHER, "node region %s was truncated to %lld bytes (%zu in use): another process "
                        "changed it", r->path, (long long)st.st_size, r->len);
    int e = posix_fallocate(r->fd, (off_t)r->len, (off_t)(len - r->len)); /* [0, r->len) is in place */
    if (e != 0)
        return wh_error(MPI_ERR_NO_MEM, "node directory: cannot size %s to %zu bytes: %s", r->path, len, strerror(e));
    if (mmap(r->base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, r->fd, 0) == MAP_FAILED)
        return wh_error(MPI_ERR_OTHER, "cannot map the node region %s: %s", r->path, strerror(errno));
    r->len = len;
    return MPI_SUCCESS;
}

static void file_unlink(wh_region_t *r)
{
    if (!r->unlinked && r->path[0]) {
        if (unlink(r->path) != 0 && errno != ENOENT)
            WH_WARN("locality", "cannot remove %s: %s", r->path, strerror(errno));
        r->unlinked = 1;
    }
}

/* shared by both providers: drop the mapping and the descriptor */
void wh_region_close_map(wh_region_t *r)
{
    if (r->base)
        munmap(r->base, r->map_len);
    if (r->fd >= 0)
        close(r->fd);
    r->base = NULL;
    r->fd = -1;
}

const wh_region_provider_t wh_region_file = {
    .name = "file", .open = file_open, .grow = file_grow, .unlink = file_unlink, .close = wh_region_close_map};
