/* Who sets or reads an attribute (MPI-4.1 19.3.7, as MPICH): C stores a
 * pointer; Fortran stores an integer, INTEGER(KIND=MPI_ADDRESS_KIND)
 * (MPI_*_SET_ATTR) or INTEGER (MPI-1 MPI_ATTR_PUT).  C reading a Fortran
 * attribute gets the address of the stored integer; Fortran reading a C
 * attribute gets the pointer itself as an integer; callbacks see the value as
 * stored.  Shared by libmpi and libmpifort (which otherwise sees only mpi.h). */
#ifndef WHARF_ATTRLANG_H
#define WHARF_ATTRLANG_H

enum { WH_ATTR_C, WH_ATTR_FAINT, WH_ATTR_FINT };

/* libmpi (src/mpi/attr.c): the language of the next attribute call on this
 * thread; libmpifort sets it around its call into the C binding, whose body
 * takes it (back to C, so callbacks run from that call are C). */
__attribute__((visibility("default"))) void wharf_attr_lang(int lang);

#endif
