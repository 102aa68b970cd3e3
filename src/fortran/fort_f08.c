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

/* A buffer with its own (count, datatype) pair: a non-contiguous section travels as one
 * element of a datatype built from the descriptor -- datatype repeated to fill one array
 * element, then one hvector per dimension with the section's byte strides (negative ones
 * included) -- so it works for nonblocking operations too, without a copy.  The section must
 * be exactly count x datatype (datatype's extent dividing the array element); otherwise
 * MPI_ERR_BUFFER.  *ntype differs from *dtype when a type was built: wharf_f08_free_type
 * releases it after the call (MPI allows freeing a type a pending operation uses). */
WHF_PUBLIC void *wharf_f08_section(CFI_cdesc_t *d, MPI_Fint *count, MPI_Fint *dtype,
                                   MPI_Fint *ncount, MPI_Fint *ntype, MPI_Fint *ierr)
{
    *ierr = MPI_SUCCESS;
    *ncount = *count;
    *ntype = *dtype;
    if (d->rank == 0 || whf08_contiguous(d))
        return d->base_addr;
    MPI_Aint lb, extent, n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= d->dim[i].extent;
    int rc = MPI_Type_get_extent(*dtype, &lb, &extent);
    if (rc != MPI_SUCCESS) {
        *ierr = rc;
        return NULL;
    }
    if (extent <= 0 || d->elem_len % (size_t)extent != 0 ||
        (MPI_Aint)*count != n * (MPI_Aint)(d->elem_len / (size_t)extent)) {
        *ierr = MPI_ERR_BUFFER;
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_BUFFER);
        return NULL;
    }
    MPI_Datatype t, next;
    rc = MPI_Type_contiguous((int)(d->elem_len / (size_t)extent), *dtype, &t);
    for (int i = 0; rc == MPI_SUCCESS && i < d->rank; i++) {
        rc = MPI_Type_create_hvector((int)d->dim[i].extent, 1, (MPI_Aint)d->dim[i].sm, t, &next);
        MPI_Type_free(&t);
        t = next;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) {
        *ierr = rc;
        return NULL;
    }
    *ncount = 1;
    *ntype = t;
    return d->base_addr;
}

WHF_PUBLIC void wharf_f08_free_type(MPI_Fint *t)
{
    MPI_Datatype dt = *t;
    MPI_Type_free(&dt);
}

/* MPI_F_sync_reg(buf) of mpi_f08: an opaque call (see mpi_f_sync_reg_). */
WHF_PUBLIC void wharf_f08_sync_reg(CFI_cdesc_t *d)
{
    __asm__ __volatile__("" : : "r"(d->base_addr) : "memory");
}
