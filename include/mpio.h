/* MPI-IO declarations live in mpi.h; this header exists for programs that include <mpio.h>. */
#ifndef WHARF_MPIO_H
#define WHARF_MPIO_H
#include "mpi.h"
#endif
