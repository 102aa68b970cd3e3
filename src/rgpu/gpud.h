/* wharf-gpud internals: one forked process per authenticated client. */
#ifndef WH_RGPU_GPUD_H
#define WH_RGPU_GPUD_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    size_t max_mem;     /* device bytes per client (0: unlimited) */
    int max_handles;    /* contexts/streams/events/modules/functions/allocations per client */
    int timeout_ms;     /* a message begun must complete within this; peer connects too */
    int verbose;
    uint8_t key[256];
    size_t keylen;
} gpud_cfg_t;

/* serve one connected client (after fork); returns the process exit code */
int gpud_session(int fd, const gpud_cfg_t *cfg, int id);

#define GPUD_LOG(cfg, ...)                                                                                  \
    do {                                                                                                    \
        if ((cfg)->verbose)                                                                                 \
            fprintf(stderr, "wharf-gpud: " __VA_ARGS__);                                                    \
    } while (0)

#include "rgpu/rg_plan.h"
#define RG_PEER_MAXCHUNK (4u << 20)
#define RG_PEER_MAXIN 8 /* peer connections a session keeps */
#endif
