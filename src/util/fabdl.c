/* libfabric, loaded on first use: see fabdl.h and docs/NET.md, "Loading libfabric".
 *
 * Why: Debian's libfabric.so.1 links the psm provider's libinfinipath, whose
 * constructor calibrates a clock with usleep for ~200 ms.  Linked into libmpi, that
 * was the start-up time of every MPI process, network or not (a 2-rank hello world:
 * 0.20 s against MPICH's 0.04 s).
 *
 * Symbol versions: libfabric versions its exports (fi_getinfo@@FABRIC_1.3 ...) and
 * changed struct fi_info between them, so a forwarder must reach the version a link
 * against the headers we compile with would have bound.  The build reads those from the
 * library it found (CMakeLists.txt: WH_FAB_V_*) and dlvsym() asks for exactly them;
 * without them (no nm at configure time) dlsym() takes the library's default, which is
 * the same for a library installed with its own headers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlvsym */
#endif
#include "util/fabdl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#ifndef WH_FAB_SONAME
#define WH_FAB_SONAME "libfabric.so.1"
#endif

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    uint32_t (*version)(void);
} fab;

static pthread_once_t fab_once = PTHREAD_ONCE_INIT;
static int fab_ok;
static char fab_err[320];

static void *sym(void *h, const char *name, const char *ver)
{
    void *p = ver && *ver ? dlvsym(h, name, ver) : dlsym(h, name);
    if (!p && !fab_err[0])
        snprintf(fab_err, sizeof fab_err, "%s has no %s%s%s", WH_FAB_SONAME, name, ver && *ver ? "@" : "",
                 ver ? ver : "");
    return p;
}

#ifndef WH_FAB_V_getinfo
#define WH_FAB_V_getinfo NULL
#define WH_FAB_V_freeinfo NULL
#define WH_FAB_V_dupinfo NULL
#define WH_FAB_V_fabric NULL
#define WH_FAB_V_strerror NULL
#define WH_FAB_V_version NULL
#endif

static void fab_open(void)
{
    /* the soname first, so LD_LIBRARY_PATH chooses as it would for a linked library;
     * then the file the build found (a libfabric outside the loader's paths) */
    void *h = dlopen(WH_FAB_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef WH_FAB_PATH
    if (!h)
        h = dlopen(WH_FAB_PATH, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h) {
        const char *e = dlerror();
        snprintf(fab_err, sizeof fab_err, "cannot load %s: %s", WH_FAB_SONAME, e ? e : "?");
        return;
    }
    *(void **)&fab.getinfo = sym(h, "fi_getinfo", WH_FAB_V_getinfo);
    *(void **)&fab.freeinfo = sym(h, "fi_freeinfo", WH_FAB_V_freeinfo);
    *(void **)&fab.dupinfo = sym(h, "fi_dupinfo", WH_FAB_V_dupinfo);
    *(void **)&fab.fabric = sym(h, "fi_fabric", WH_FAB_V_fabric);
    *(void **)&fab.strerror = sym(h, "fi_strerror", WH_FAB_V_strerror);
    *(void **)&fab.version = sym(h, "fi_version", WH_FAB_V_version);
    if (fab.getinfo && fab.freeinfo && fab.dupinfo && fab.fabric && fab.strerror && fab.version) {
        fab_ok = 1;
        return;
    }
    memset(&fab, 0, sizeof fab);
    dlclose(h);
}

int wh_fab_load(void)
{
    pthread_once(&fab_once, fab_open);
    return fab_ok ? 0 : -1;
}

const char *wh_fab_error(void) { return fab_ok ? "" : fab_err[0] ? fab_err : "not loaded yet"; }

int wh_fab_loaded(void) { return __atomic_load_n(&fab_ok, __ATOMIC_ACQUIRE); }

int wh_fab_in_process(void)
{
    if (wh_fab_loaded())
        return 1;
    void *h = dlopen(WH_FAB_SONAME, RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

/* ---- the forwarders: hidden (the library is built with -fvisibility=hidden), so
 * they bind only the calls of this library, never the application's ---- */

int fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
               const struct fi_info *hints, struct fi_info **info)
{
    if (wh_fab_load())
        return -FI_ENOSYS;
    return fab.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(struct fi_info *info)
{
    if (info && !wh_fab_load())
        fab.freeinfo(info);
}

struct fi_info *fi_dupinfo(const struct fi_info *info)
{
    return wh_fab_load() ? NULL : fab.dupinfo(info);
}

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    if (wh_fab_load())
        return -FI_ENOSYS;
    return fab.fabric(attr, fabric, context);
}

const char *fi_strerror(int errnum)
{
    if (wh_fab_load())
        return fab_err; /* why it could not be loaded: the reason for any error then */
    return fab.strerror(errnum);
}

uint32_t fi_version(void)
{
    return wh_fab_load() ? 0 : fab.version();
}
