/* Per-communicator state of src/coll (cstate.h): allocation, release with
 * the communicator, and WHARF_REPORT=coll — rank 0 of every communicator
 * prints, when it is freed (MPI_COMM_WORLD: at MPI_Finalize), how often
 * each collective ran each algorithm. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/cstate.h"
#include "util/tunables.h"
#include "util/scratch.h"

static const char *const kind_names[WH_CK_N] = {"barrier", "bcast", "reduce", "allreduce", "allgather",
                                                 "gather", "scatter", "alltoall", "scan", "exscan", "reduce_scatter", "allgatherv",
                                                 "alltoallv", "alltoallw"};
static const char *const alg_names[WH_CA_N] = {"p2p", "shm", "shm-large", "hier", "scattered", "chain", "cma"};

wh_coll_state_t *wh_coll_state(wh_comm_t *c)
{
    if (!c->coll_data)
        c->coll_data = calloc(1, sizeof(wh_coll_state_t));
    return c->coll_data;
}

static int report_on(void)
{
    return wh_tun.report && strstr(wh_tun.report, "coll") != NULL;
}

static void report(const wh_comm_t *c, const wh_coll_state_t *s)
{
    if (!report_on() || c->rank != 0)
        return;
    char line[1024];
    int off = snprintf(line, sizeof line, "wharf: coll comm %#x%s%s%s (%d ranks, world rank %d)%s:", (unsigned)c->obj.handle,
                       c->name[0] ? " \"" : "", c->name, c->name[0] ? "\"" : "", c->size, wh_job.rank,
                       s->internal ? " [node/leader sub-communicator]" : "");
    if (s->hier.state == 1 && off < (int)sizeof line)
        off += snprintf(line + off, sizeof line - (size_t)off, " %d node groups%s;", s->hier.nnodes,
                        s->hier.contiguous ? " (contiguous)" : " (interleaved)");
    int any = 0;
    for (int k = 0; k < WH_CK_N; k++) {
        int first = 1;
        for (int a = 0; a < WH_CA_N; a++) {
            if (!s->count[k][a] || off >= (int)sizeof line)
                continue;
            if (first)
                off += snprintf(line + off, sizeof line - (size_t)off, " %s", kind_names[k]);
            if (off < (int)sizeof line)
                off += snprintf(line + off, sizeof line - (size_t)off, "%s %s %llu", first ? "" : ",", alg_names[a],
                                (unsigned long long)s->count[k][a]);
            first = 0;
            any = 1;
        }
        if (!first && off < (int)sizeof line)
            off += snprintf(line + off, sizeof line - (size_t)off, ";");
    }
    if (any) {
        printf("%s\n", line);
        fflush(stdout);
    }
}

void wh_coll_comm_release(wh_comm_t *c)
{
    wh_coll_state_t *s = c->coll_data;
    if (!s)
        return;
    report(c, s);
    if (s->shm)
        wh_shmc_release(c, s->shm);
    wh_comm_release(s->hier.node);
    wh_comm_release(s->hier.leaders);
    free(s->hier.node_of); /* leader and node_rank share its allocation */
    free(s);
    c->coll_data = NULL;
}

void wh_coll_finalize(void)
{
    wh_scratch_drain();
    wh_comm_t *w = wh_comm_get(MPI_COMM_WORLD);
    wh_coll_state_t *s = w ? w->coll_data : NULL;
    if (!s)
        return;
    report(w, s);
    if (s->hier.node && s->hier.node->coll_data)
        report(s->hier.node, s->hier.node->coll_data);
    if (s->hier.leaders && s->hier.leaders->coll_data)
        report(s->hier.leaders, s->hier.leaders->coll_data);
}
