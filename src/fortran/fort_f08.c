/* The choice buffers of the mpi_f08 module: TYPE(*), DIMENSION(..) arguments arrive as C
 * descriptors (ISO_Fortran_binding.h); wharf_f08_addr returns the address the mpif.h-level
 * entry point gets.  Sentinels (MPI_BOTTOM, MPI_IN_PLACE) are scalars in mpif.h's common
 * blocks, so their descriptor's base address is the address libmpifort recognizes. */
#include <ISO_Fortran_binding.h>

#include "fort.h"

/* Contiguous in Fortran order: each dimension's stride is the bytes of the ones before it. */
static int whf08_contiguous(const CFI_cdesc_t *d)
{
    size_t expect = d->elem_len;
    for (int i = 0; i < d->rank; i++) {
        if (d->dim[i].extent <= 1)
            continue;
        if ((size_t)d->dim[i].sm != expect)
            return 0;
        expect *= (size_t)d->dim[i].extent;
    }
    return 1;
}

WHF_PUBLIC void *wharf_f08_addr(CFI_cdesc_t *d, MPI_Fint *ierr)
{
    *ierr = MPI_SUCCESS;
    if (d->rank == 0 || whf08_contiguous(d))
        return d->base_addr;
    /* A non-contiguous array section: not supported yet (MPI_SUBARRAYS_SUPPORTED is .FALSE.;
     * pass a contiguous copy or describe the section with a derived datatype). */
    *ierr = MPI_ERR_BUFFER;
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_BUFFER);
    return NULL;
}
