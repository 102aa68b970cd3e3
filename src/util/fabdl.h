/* libfabric, loaded on first use (docs/NET.md, "Loading libfabric").
 *
 * Neither libmpi nor the remote-GPU client links libfabric: fabdl.c defines, hidden, the
 * six functions libfabric exports that wharf calls (fi_getinfo, fi_freeinfo, fi_dupinfo,
 * fi_fabric, fi_strerror, fi_version; every other call in <rdma/fabric.h> is inline
 * through the objects' ops tables) and forwards them to the real library, dlopen()ed on
 * the first call.  A process whose peers all share memory with it never loads it. */
#ifndef WH_UTIL_FABDL_H
#define WH_UTIL_FABDL_H

/* Load libfabric if not yet done (thread-safe, tried once).  0: loaded; -1: not
 * loadable, wh_fab_error() says why (the fi_* calls then fail: fi_getinfo and
 * fi_fabric return -FI_ENOSYS, fi_dupinfo NULL). */
int wh_fab_load(void);
const char *wh_fab_error(void);
/* Was libfabric loaded by this process through wh_fab_load (without loading it)? */
int wh_fab_loaded(void);
/* Is libfabric in the process at all, loaded by anyone (the application, another library)?
 * Its providers read their FI_* variables once, at its first fi_getinfo. */
int wh_fab_in_process(void);

#endif
