/* Region provider "fixed": an existing mapping of fixed size, such as an
 * ivshmem PCI BAR inside a VM (/sys/bus/pci/devices/.../resource2) or a
 * pre-sized file.  Nothing is created or removed; growing only checks that the
 * request fits.  Ranks in different VMs that share the device share the
 * region (and have different boot_ids, which rules out CMA between them). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "locality/region.h"
#include "util/tunables.h"

static int fixed_open(wh_region_t *r, const char *name, size_t len)
{
    (void)name;
    const char *path = wh_tun.node_region;
    snprintf(r->path, sizeof r->path, "%s", path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return wh_error(MPI_ERR_OTHER, "node region WHARF_NODE_REGION=%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "node region %s: %s", path, strerror(errno));
    }
    if (S_ISREG(st.st_mode) && st.st_uid != geteuid()) {
        close(fd);
        return wh_error(MPI_ERR_OTHER, "node region %s: refusing a file owned by uid %d (I am uid %d)", path,
                        (int)st.st_uid, (int)geteuid());
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) { /* devices may report 0: ask lseek */
        off_t end = lseek(fd, 0, SEEK_END);
        size = end > 0 ? (size_t)end : 0;
    }
    if (size < len) {
        close(fd);
        return wh_error(MPI_ERR_NO_MEM, "node region %s holds %zu bytes; at least %zu are needed", path, size, len);
    }
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        return wh_error(MPI_ERR_OTHER, "cannot map the node region %s: %s", path, strerror(e));
    }
    r->fd = fd;
    r->base = m;
    r->len = r->map_len = size;
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->tmpfs = 1;
    r->unlinked = 1; /* nothing to remove */
    return MPI_SUCCESS;
}

static int fixed_grow(wh_region_t *r, size_t len)
{
    if (len > r->len)
        return wh_error(MPI_ERR_NO_MEM, "node region %s holds %zu bytes; %zu are needed", r->path, r->len, len);
    return MPI_SUCCESS;
}

static void fixed_unlink(wh_region_t *r) { (void)r; }

const wh_region_provider_t wh_region_fixed = {
    .name = "fixed", .open = fixed_open, .grow = fixed_grow, .unlink = fixed_unlink, .close = wh_region_close_map};
