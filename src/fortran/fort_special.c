/* Hand-written Fortran entry points: the procedures whose Fortran binding is not a mechanical
 * translation of the C one (tools/gen/genfortran.py lists them in HANDWRITTEN), the common
 * blocks of the sentinels, and the string helpers.  Attributes and callbacks: fort_attr.c. */
#include "fort.h"

/* 16-byte aligned like the common blocks gfortran emits for the mpi and mpi_f08 modules */
#define WHF_COMMON __attribute__((aligned(16)))
struct whf_priv1 mpipriv1_ WHF_COMMON;
struct whf_priv2 mpipriv2_ WHF_COMMON;
struct whf_privc mpiprivc_ WHF_COMMON;
MPI_Fint mpifcmb5_ WHF_COMMON;
MPI_Fint mpifcmb9_ WHF_COMMON;

char *whf_str_f2c(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

char *whf_str_f2c_trim(const char *s, size_t len)
{
    while (len > 0 && *s == ' ') {
        s++;
        len--;
    }
    return whf_str_f2c(s, len);
}

MPI_Aint *whf_fint_to_aint(const MPI_Fint *a, MPI_Fint n)
{
    MPI_Aint *c = malloc(sizeof(*c) * (size_t)(n > 0 ? n : 1));
    if (c)
        for (MPI_Fint i = 0; i < n; i++)
            c[i] = a[i];
    return c;
}

char *whf_str_out_alloc(size_t len)
{
    char *c = malloc(len + MPI_MAX_LIBRARY_VERSION_STRING + 1);
    if (c)
        c[0] = '\0';
    return c;
}

void whf_str_c2f(const char *c, char *f, size_t len)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

/* MPI_INIT(IERROR), MPI_INIT_THREAD(REQUIRED, PROVIDED, IERROR): no argc/argv in Fortran. */
WHF_PUBLIC void mpi_init_(MPI_Fint *ierr)
{
    *ierr = MPI_Init(NULL, NULL);
}
WHF_ALL_NAMES(mpi_init, "MPI_INIT")

WHF_PUBLIC void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    *ierr = MPI_Init_thread(NULL, NULL, *required, provided);
}
WHF_ALL_NAMES(mpi_init_thread, "MPI_INIT_THREAD")

/* MPI_INFO_CREATE_ENV(INFO, IERROR) */
WHF_PUBLIC void mpi_info_create_env_(MPI_Fint *info, MPI_Fint *ierr)
{
    *ierr = MPI_Info_create_env(0, NULL, info);
}
WHF_ALL_NAMES(mpi_info_create_env, "MPI_INFO_CREATE_ENV")

/* DOUBLE PRECISION MPI_WTIME(), MPI_WTICK() */
WHF_PUBLIC double mpi_wtime_(void)
{
    return MPI_Wtime();
}
WHF_ALL_NAMES(mpi_wtime, "MPI_WTIME")

WHF_PUBLIC double mpi_wtick_(void)
{
    return MPI_Wtick();
}
WHF_ALL_NAMES(mpi_wtick, "MPI_WTICK")

/* MPI_PCONTROL(LEVEL): no IERROR. */
WHF_PUBLIC void mpi_pcontrol_(MPI_Fint *level)
{
    (void)MPI_Pcontrol(*level);
}
WHF_ALL_NAMES(mpi_pcontrol, "MPI_PCONTROL")

/* INTEGER(KIND=MPI_ADDRESS_KIND) MPI_AINT_ADD(BASE, DISP), MPI_AINT_DIFF(ADDR1, ADDR2) */
WHF_PUBLIC MPI_Aint mpi_aint_add_(MPI_Aint *base, MPI_Aint *disp)
{
    return MPI_Aint_add(*base, *disp);
}
WHF_ALL_NAMES(mpi_aint_add, "MPI_AINT_ADD")

WHF_PUBLIC MPI_Aint mpi_aint_diff_(MPI_Aint *addr1, MPI_Aint *addr2)
{
    return MPI_Aint_diff(*addr1, *addr2);
}
WHF_ALL_NAMES(mpi_aint_diff, "MPI_AINT_DIFF")

/* MPI_ADDRESS(LOCATION, ADDRESS, IERROR), MPI-1: ADDRESS is a default INTEGER. */
WHF_PUBLIC void mpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierr)
{
    MPI_Aint a = 0;
    *ierr = MPI_Get_address(WHF_BUF(location), &a);
    if (*ierr == MPI_SUCCESS) {
        *address = (MPI_Fint)a;
        if ((MPI_Aint)*address != a)
            *ierr = MPI_ERR_ARG; /* the address does not fit a default INTEGER */
    }
}
WHF_ALL_NAMES(mpi_address, "MPI_ADDRESS")

/* MPI_BUFFER_DETACH(BUFFER_ADDR, SIZE, IERROR) and friends: Fortran cannot use the returned
 * C pointer (mpif.h declares BUFFER_ADDR as a choice buffer), so it is dropped, as MPICH does. */
WHF_PUBLIC void mpi_buffer_detach_(void *buffer_addr, MPI_Fint *size, MPI_Fint *ierr)
{
    void *p = NULL;
    (void)buffer_addr;
    *ierr = MPI_Buffer_detach(&p, size);
}
WHF_ALL_NAMES(mpi_buffer_detach, "MPI_BUFFER_DETACH")

WHF_PUBLIC void mpi_comm_detach_buffer_(MPI_Fint *comm, void *buffer_addr, MPI_Fint *size,
                                        MPI_Fint *ierr)
{
    void *p = NULL;
    (void)buffer_addr;
    *ierr = MPI_Comm_detach_buffer(*comm, &p, size);
}
WHF_ALL_NAMES(mpi_comm_detach_buffer, "MPI_COMM_DETACH_BUFFER")

/* MPI_SESSION_DETACH_BUFFER: wharf has no session buffers yet (docs/UNIMPLEMENTED.md), so no binding. */

/* MPI_F_SYNC_REG(BUF): a call the compiler cannot see through, so registers holding BUF are
 * stored before and reloaded after it (MPI-4.1 19.1.17); nothing to do at run time. */
WHF_PUBLIC void mpi_f_sync_reg_(void *buf)
{
    __asm__ __volatile__("" : : "r"(buf) : "memory");
}
WHF_ALL_NAMES(mpi_f_sync_reg, "MPI_F_SYNC_REG")

/* MPICH's `use mpi` resolves the generic MPI_SIZEOF to these module procedures of its
 * mpi_sizeofs module (scalar and array variants; X by reference, CHARACTER with a hidden
 * length); a program built with mpif90.mpich calls them by these names.  wharf's own module
 * has its own generic (tools/gen/genfortran_mod.py). */
#define WHF_MPICH_SIZEOF(suffix, bytes)                                                        \
    WHF_PUBLIC void __mpi_sizeofs_MOD_mpi_sizeof_##suffix(void *x, MPI_Fint *size, MPI_Fint *ierr) \
    {                                                                                          \
        (void)x;                                                                               \
        *size = (bytes);                                                                       \
        *ierr = MPI_SUCCESS;                                                                   \
    }                                                                                          \
    WHF_PUBLIC void __mpi_sizeofs_MOD_mpi_sizeof_##suffix##v(void *x, MPI_Fint *size, MPI_Fint *ierr) \
    {                                                                                          \
        (void)x;                                                                               \
        *size = (bytes);                                                                       \
        *ierr = MPI_SUCCESS;                                                                   \
    }
WHF_MPICH_SIZEOF(ch, 1)
WHF_MPICH_SIZEOF(cx, 8)
WHF_MPICH_SIZEOF(d, 8)
WHF_MPICH_SIZEOF(i, 4)
WHF_MPICH_SIZEOF(i1, 1)
WHF_MPICH_SIZEOF(i2, 2)
WHF_MPICH_SIZEOF(i8, 8)
WHF_MPICH_SIZEOF(l, 4)
WHF_MPICH_SIZEOF(r, 4)

/* C code of a mixed program recognizes the Fortran MPI_STATUS(ES)_IGNORE through these
 * pointers of libmpi (MPI-4.1 19.3.5); they name the common-block sentinels once libmpifort is
 * loaded (through the GOT: a program's own copy of the blocks wins, as for the wrappers). */
__attribute__((constructor)) static void whf_set_f_sentinels(void)
{
    MPI_F_STATUS_IGNORE = mpipriv1_.status_ignore;
    MPI_F_STATUSES_IGNORE = mpipriv2_.statuses_ignore;
    MPI_F08_STATUS_IGNORE = (MPI_F08_status *)(void *)mpipriv1_.status_ignore;
    MPI_F08_STATUSES_IGNORE = (MPI_F08_status *)(void *)mpipriv2_.statuses_ignore;
}
