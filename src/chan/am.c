/* The active-message registry (see am.h). */
#include <mpi.h>
#include <string.h>

#include "chan/am.h"
#include "core/err.h"
#include "util/log.h"

wh_am_handler_t wh_am_table[WH_AM_MAX];
static const char *am_names[WH_AM_MAX];
static unsigned am_next = 1;

int wh_am_register(const char *name, wh_am_handler_t fn, uint8_t *id)
{
    for (unsigned i = 1; i < am_next; i++)
        if (wh_am_table[i] == fn && !strcmp(am_names[i], name)) {
            *id = (uint8_t)i;
            return MPI_SUCCESS;
        }
    if (am_next >= WH_AM_MAX)
        return wh_error(MPI_ERR_INTERN, "active-message table full registering %s", name);
    wh_am_table[am_next] = fn;
    am_names[am_next] = name;
    *id = (uint8_t)am_next++;
    WH_TRACE("am", "handler %u = %s", *id, name);
    return MPI_SUCCESS;
}

const char *wh_am_name(unsigned id)
{
    return id < WH_AM_MAX && am_names[id] ? am_names[id] : "unknown";
}

void wh_am_reset(void)
{
    memset(wh_am_table, 0, sizeof wh_am_table);
    memset(am_names, 0, sizeof am_names);
    am_next = 1;
}

void wh_am_unknown(int chan, int wpeer, const wh_hdr_t *h)
{
    WH_ERRLOG("am", "message of unknown type %u from rank %d on channel %d dropped", h->type, wpeer, chan);
}
