/* Node region providers (src/locality/region.h): the file provider creates a
 * 0600 file in WHARF_NODE_DIR, grows it with the mapping staying put and data
 * kept, shares it with a second opener, refuses a file readable by others and
 * removes it on unlink; a missing directory is a clear error.  The fixed
 * provider maps a pre-sized file, refuses requests beyond its size and never
 * removes it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/err.h"
#include "locality/region.h"
#include "util/tunables.h"

static void msg_has(int rc, const char *what)
{
    char m[MPI_MAX_ERROR_STRING];
    wh_error_text(rc, m, sizeof m);
    CHECK(strstr(m, what) != NULL);
    if (!strstr(m, what))
        fprintf(stderr, "  message was: %s\n", m);
}

static void file_provider(const char *dir)
{
    char err[256];
    setenv("WHARF_NODE_DIR", dir, 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    wh_region_t a = {.prov = &wh_region_file, .fd = -1}, b = {.prov = &wh_region_file, .fd = -1};
    CHECK(a.prov->open(&a, "wharf.test.1", 8192) == MPI_SUCCESS);
    CHECK(a.created == 1 && a.len == 8192);
    struct stat st;
    CHECK(stat(a.path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 8192);
    memset(a.base, 0x5a, 8192);
    unsigned char *base = a.base;
    CHECK(a.prov->grow(&a, 1 << 20) == MPI_SUCCESS);
    CHECK(a.base == base && a.len == (1u << 20) && a.base[100] == 0x5a && a.base[(1 << 20) - 1] == 0);
    CHECK(b.prov->open(&b, "wharf.test.1", 8192) == MPI_SUCCESS);
    CHECK(b.created == 0 && b.dev == a.dev && b.ino == a.ino);
    b.base[5] = 7;
    CHECK(a.base[5] == 7);
    a.prov->unlink(&a);
    CHECK(stat(a.path, &st) != 0);
    a.base[6] = 8; /* the mapping outlives the name */
    CHECK(b.base[6] == 8);
    a.prov->close(&a);
    b.prov->close(&b);

    char path[512];
    snprintf(path, sizeof path, "%s/wharf.test.2", dir);
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    CHECK(fd >= 0);
    close(fd);
    wh_region_t c = {.prov = &wh_region_file, .fd = -1};
    int rc = c.prov->open(&c, "wharf.test.2", 4096);
    CHECK(rc != MPI_SUCCESS);
    msg_has(rc, "refusing");
    unlink(path);

    setenv("WHARF_NODE_DIR", "/nonexistent-wharf-dir", 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    wh_region_t d = {.prov = &wh_region_file, .fd = -1};
    rc = d.prov->open(&d, "wharf.test.3", 4096);
    CHECK(rc != MPI_SUCCESS);
    msg_has(rc, "/nonexistent-wharf-dir");
}

static void fixed_provider(const char *dir)
{
    char err[256], path[512];
    snprintf(path, sizeof path, "%s/fixed", dir);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
    close(fd);
    setenv("WHARF_NODE_REGION", path, 1);
    CHECK(wh_tunables_load(err, sizeof err) == 0);
    wh_region_t a = {.prov = &wh_region_fixed, .fd = -1};
    CHECK(a.prov->open(&a, "ignored", 4096) == MPI_SUCCESS && a.len == (1u << 20));
    CHECK(a.prov->grow(&a, 1 << 20) == MPI_SUCCESS);
    int rc = a.prov->grow(&a, (1 << 20) + 1);
    CHECK(rc != MPI_SUCCESS);
    msg_has(rc, path);
    a.prov->unlink(&a);
    a.prov->close(&a);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size == (1 << 20));
    wh_region_t b = {.prov = &wh_region_fixed, .fd = -1};
    rc = b.prov->open(&b, "ignored", 2u << 20);
    CHECK(rc != MPI_SUCCESS);
    msg_has(rc, "at least");
    unlink(path);
}

int main(void)
{
    char dir[] = "/tmp/wharf-test-region.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    file_provider(dir);
    fixed_provider(dir);
    rmdir(dir);
    return DONE();
}
