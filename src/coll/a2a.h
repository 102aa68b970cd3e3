/* Private to src/coll: one side of an all-to-all (alltoall, v, w), as the
 * blocking algorithms (pairwise.c, shmcells.c) and the schedules
 * (sched_move.c) read it. */
#ifndef WH_COLL_A2A_H
#define WH_COLL_A2A_H
#include "coll/coll.h"
#include "dtype/dtype.h"

/* One side of an all-to-all: per-peer count, displacement and type.
 * types == NULL: one type for all, displacements in its extents;
 * otherwise displacements are bytes (alltoallw).  counts == NULL: `count`
 * elements at j * count (alltoall). */
typedef struct wh_a2a_side {
    const MPI_Count *counts;
    MPI_Count count;
    const MPI_Aint *displs;
    wh_dtype_t *type;
    wh_dtype_t *const *types;
} wh_a2a_side_t;

static inline wh_dtype_t *wh_a2a_type(const wh_a2a_side_t *s, int j)
{
    return s->types ? s->types[j] : s->type;
}
static inline MPI_Count wh_a2a_count(const wh_a2a_side_t *s, int j)
{
    return s->counts ? s->counts[j] : s->count;
}
static inline char *wh_a2a_addr(const wh_a2a_side_t *s, const void *buf, int j)
{
    if (s->types)
        return (char *)buf + s->displs[j];
    return (char *)buf + (s->displs ? s->displs[j] : (MPI_Aint)j * s->count) * s->type->extent;
}

#endif
