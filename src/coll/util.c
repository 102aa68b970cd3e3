/* Helpers shared by the collective algorithms. */
#include <stdint.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "util/scratch.h"

/* bytes spanned by count elements and the offset of element 0's lower bound */
static size_t span(MPI_Count count, const wh_dtype_t *dt, MPI_Aint *lo_out)
{
    MPI_Aint lo = dt->true_lb, hi = dt->true_lb + dt->true_extent;
    if (count <= 0) {
        hi = lo;
    } else if (count > 1) {
        MPI_Aint ext = (MPI_Aint)(count - 1) * dt->extent;
        if (ext < 0)
            lo += ext;
        else
            hi += ext;
    }
    *lo_out = lo;
    return (size_t)(hi - lo);
}

void *wh_coll_tmp_in(MPI_Count count, const wh_dtype_t *dt, void *stack, size_t room, void **raw)
{
    MPI_Aint lo;
    size_t bytes = span(count, dt, &lo);
    void *mem = stack;
    *raw = NULL;
    if (!stack || bytes > room) {
        if (!(mem = *raw = wh_scratch_get(bytes)))
            return NULL;
    }
    /* typed pointer: element 0's lower bound lands on the memory */
    return (void *)((uintptr_t)mem - (uintptr_t)lo);
}

void *wh_coll_tmp(MPI_Count count, const wh_dtype_t *dt, void **raw)
{
    return wh_coll_tmp_in(count, dt, NULL, 0, raw);
}

wh_dtype_t *wh_coll_byte(void)
{
    static wh_dtype_t *byte;
    if (!byte)
        byte = wh_dtype_get(MPI_BYTE);
    return byte;
}

int wh_coll_copy(const void *sbuf, MPI_Count scount, wh_dtype_t *sdt, void *rbuf, MPI_Count rcount, wh_dtype_t *rdt)
{
    if (sbuf == rbuf && sdt == rdt && scount == rcount)
        return MPI_SUCCESS;
    return wh_dtype_copy(sbuf, (size_t)scount, sdt, rbuf, (size_t)rcount, rdt);
}

void wh_coll_split(MPI_Count count, int n, MPI_Aint *disp)
{
    MPI_Count base = count / n, rem = count % n;
    disp[0] = 0;
    for (int i = 0; i < n; i++)
        disp[i + 1] = disp[i] + (MPI_Aint)(base + (i < rem ? 1 : 0));
}

int wh_coll_nomem(const char *what, size_t bytes)
{
    return wh_error(MPI_ERR_NO_MEM, "out of memory allocating %zu bytes for %s", bytes, what);
}
