#ifndef WH_LOCALITY_IDENT_H
#define WH_LOCALITY_IDENT_H
#include "locality/registry.h"
/* Fill rank, pid, uid, namespaces, boot_id, hostname, cpuset, NUMA node. */
void wh_ident_fill(wh_reg_rec_t *r);
#endif
