/* C half of f90_attrlang.f90: attributes set in one language and read in the other
 * (MPI-4.1 19.3.7).  kind: 0 communicator, 1 datatype, 2 window; handles are Fortran's. */
#include <mpi.h>
#include <stdio.h>

static int cvalue = 4242; /* what C attributes point at */

static int get(int kind, MPI_Fint h, int key, void *val, int *flag)
{
    return kind == 0 ? MPI_Comm_get_attr(MPI_Comm_f2c(h), key, val, flag)
         : kind == 1 ? MPI_Type_get_attr(MPI_Type_f2c(h), key, val, flag)
                     : MPI_Win_get_attr(MPI_Win_f2c(h), key, val, flag);
}

static int set(int kind, MPI_Fint h, int key, void *val)
{
    return kind == 0 ? MPI_Comm_set_attr(MPI_Comm_f2c(h), key, val)
         : kind == 1 ? MPI_Type_set_attr(MPI_Type_f2c(h), key, val)
                     : MPI_Win_set_attr(MPI_Win_f2c(h), key, val);
}

/* C sets a pointer to cvalue; *addr gets that pointer as an integer */
int wharf_attr_cset(int kind, MPI_Fint h, int key, MPI_Aint *addr)
{
    *addr = (MPI_Aint)(void *)&cvalue;
    return set(kind, h, key, &cvalue) != MPI_SUCCESS;
}

/* C reads an attribute Fortran set: a pointer to the stored integer, an INTEGER (fint) or an
 * INTEGER(KIND=MPI_ADDRESS_KIND); returns the number of failed checks */
int wharf_attr_cget_fortran(int kind, MPI_Fint h, int key, MPI_Aint expect, int fint)
{
    void *p = NULL;
    int flag = 0;
    if (get(kind, h, key, &p, &flag) != MPI_SUCCESS || !flag || !p) {
        fprintf(stderr, "C get (kind %d, key %d): flag %d, pointer %p\n", kind, key, flag, p);
        return 1;
    }
    MPI_Aint got = fint ? (MPI_Aint) * (MPI_Fint *)p : *(MPI_Aint *)p;
    if (got != expect) {
        fprintf(stderr, "C get (kind %d, key %d): *pointer %ld, expected %ld\n", kind, key, (long)got,
                (long)expect);
        return 1;
    }
    return 0;
}

/* C reads an attribute C set: the pointer itself */
int wharf_attr_cget_c(int kind, MPI_Fint h, int key)
{
    void *p = NULL;
    int flag = 0;
    if (get(kind, h, key, &p, &flag) != MPI_SUCCESS || !flag || p != &cvalue) {
        fprintf(stderr, "C get of a C attribute (kind %d): %p, expected %p\n", kind, p, (void *)&cvalue);
        return 1;
    }
    return 0;
}

/* a keyval created in C with C's MPI_COMM_DUP_FN */
int wharf_attr_ckeyval(void)
{
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    return key;
}
