"""The `mpi` module for tools/gen/genfortran.py: the constants of mpif.h plus an explicit
interface for every generated Fortran entry point, choice buffers declared with gfortran's
`!GCC$ ATTRIBUTES NO_ARG_CHECK` (any type, kind and rank, including the MPI_BOTTOM and
MPI_IN_PLACE sentinels)."""
import re

# Fortran declarations of the C scalar types.
FTYPE = {"int": "INTEGER", "MPI_Aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
         "MPI_Offset": "INTEGER(KIND=MPI_OFFSET_KIND)", "MPI_Count": "INTEGER(KIND=MPI_COUNT_KIND)"}

# Hand-written entry points (src/fortran/) with their interfaces.
HAND_INTERFACES = """
  INTERFACE
    SUBROUTINE MPI_INIT(ierror)
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_INIT_THREAD(required, provided, ierror)
      INTEGER :: required, provided, ierror
    END SUBROUTINE
    DOUBLE PRECISION FUNCTION MPI_WTIME()
    END FUNCTION
    DOUBLE PRECISION FUNCTION MPI_WTICK()
    END FUNCTION
    DOUBLE PRECISION FUNCTION PMPI_WTIME()
    END FUNCTION
    DOUBLE PRECISION FUNCTION PMPI_WTICK()
    END FUNCTION
    FUNCTION MPI_AINT_ADD(base, disp)
      IMPORT :: MPI_ADDRESS_KIND
      INTEGER(KIND=MPI_ADDRESS_KIND) :: MPI_AINT_ADD, base, disp
    END FUNCTION
    FUNCTION MPI_AINT_DIFF(addr1, addr2)
      IMPORT :: MPI_ADDRESS_KIND
      INTEGER(KIND=MPI_ADDRESS_KIND) :: MPI_AINT_DIFF, addr1, addr2
    END FUNCTION
    SUBROUTINE MPI_COMM_SET_ATTR(comm, keyval, attribute_val, ierror)
      IMPORT :: MPI_ADDRESS_KIND
      INTEGER :: comm, keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
    END SUBROUTINE
    SUBROUTINE MPI_COMM_GET_ATTR(comm, keyval, attribute_val, flag, ierror)
      IMPORT :: MPI_ADDRESS_KIND
      INTEGER :: comm, keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val
      LOGICAL :: flag
    END SUBROUTINE
    SUBROUTINE MPI_COMM_CREATE_KEYVAL(copy_fn, delete_fn, keyval, extra_state, ierror)
      IMPORT :: MPI_ADDRESS_KIND
      EXTERNAL :: copy_fn, delete_fn
      INTEGER :: keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
    END SUBROUTINE
    SUBROUTINE MPI_COMM_SPAWN(command, argv, maxprocs, info, root, comm, intercomm, &
        array_of_errcodes, ierror)
      CHARACTER(LEN=*) :: command, argv(*)
      INTEGER :: maxprocs, info, root, comm, intercomm, array_of_errcodes(*), ierror
    END SUBROUTINE
    SUBROUTINE MPI_COMM_SPAWN_MULTIPLE(count, array_of_commands, array_of_argv, &
        array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes, ierror)
      INTEGER :: count, array_of_maxprocs(*), array_of_info(*), root, comm, intercomm
      INTEGER :: array_of_errcodes(*), ierror
      CHARACTER(LEN=*) :: array_of_commands(*), array_of_argv(count, *)
    END SUBROUTINE
  END INTERFACE
"""
HAND_EXTERNALS = ["MPI_DUP_FN", "MPI_NULL_DELETE_FN", "MPI_NULL_COPY_FN",
                  "MPI_COMM_DUP_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_NULL_COPY_FN",
                  "MPI_WIN_DUP_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_NULL_COPY_FN",
                  "MPI_TYPE_DUP_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_NULL_COPY_FN",
                  "MPI_CONVERSION_FN_NULL"]


def ctype_of(text, name):
    i = text.rfind(name)
    return " ".join((text[:i] + " " + text[i + len(name):]).split()).replace(" [", "[")


def decl(kind, ctext, name, fname=""):
    t = ctype_of(ctext, name).replace("const ", "").strip()
    scalar = re.sub(r"[\s\*\[\]\d]+$", "", t)
    ftype = FTYPE.get(scalar, "INTEGER")  # handles are INTEGERs
    if kind == "choice" or name == "baseptr":
        # buffers that outlive the call: ASYNCHRONOUS, TARGET, so gfortran does not treat
        # their address as non-escaping (genfortran_f08.ASYNC_RE)
        from genfortran_f08 import ASYNC_RE
        extra = ", ASYNCHRONOUS, TARGET" if kind == "choice" and ASYNC_RE.match(fname) else ""
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % name,
                "TYPE(*), DIMENSION(*)%s :: %s" % (extra, name)]
    if kind in ("logical_in", "logical_out"):
        return ["LOGICAL :: %s" % name]
    if kind == "logical_array":
        return ["LOGICAL :: %s(*)" % name]
    if kind in ("string_in", "string_out"):
        return ["CHARACTER(LEN=*) :: %s" % name]
    if kind == "fnptr":
        return ["EXTERNAL :: %s" % name]
    if kind in ("fint_in", "fint_out"):   # MPI-1 addresses: default INTEGER
        return ["INTEGER :: %s" % name]
    if kind == "fint_array":
        return ["INTEGER :: %s(*)" % name]
    if kind == "status":
        return ["INTEGER :: %s(MPI_STATUS_SIZE)" % name]
    if kind == "statuses":
        return ["INTEGER :: %s(MPI_STATUS_SIZE,*)" % name]
    if kind in ("value", "index_out"):
        return ["%s :: %s" % (ftype, name)]
    if kind in ("file_in", "file_out", "file_inout"):
        return ["INTEGER :: %s" % name]
    if kind == "pass" and re.search(r"\[\]\[(\d+)\]$", t):
        return ["%s :: %s(%s,*)" % (ftype, name, re.search(r"\[(\d+)\]$", t).group(1))]
    if kind == "pass" and t.endswith("[]"):
        return ["%s :: %s(*)" % (ftype, name)]
    if kind == "pass":  # pointer to a scalar: an INTEGER (or ...KIND) variable
        return ["%s :: %s" % (ftype, name)]
    if kind in ("indices_out", "weights", "errcodes"):
        return ["INTEGER :: %s(*)" % name]
    raise AssertionError((kind, ctext))


def interface(f, ps, prefix):
    fname = (prefix + f.name[4:]).upper()
    names = [p for _, _, p in ps] + ["ierror"]
    body = []
    for kind, ctext, p in ps:
        body += decl(kind, ctext, p, f.name)
    body.append("INTEGER :: ierror")
    needs = set()
    text = "\n".join(body)
    for k in ("MPI_ADDRESS_KIND", "MPI_OFFSET_KIND", "MPI_COUNT_KIND", "MPI_STATUS_SIZE"):
        if k in text:
            needs.add(k)
    out = ["    SUBROUTINE %s(%s)" % (fname, ", ".join(names))]
    if needs:
        out.append("      IMPORT :: %s" % ", ".join(sorted(needs)))
    out.append("      IMPLICIT NONE")
    out += ["      " + b if not b.startswith("!GCC$") else b for b in body]
    out.append("    END SUBROUTINE")
    return "\n".join(out) + "\n"


# MPI_SIZEOF(X, SIZE, IERROR): a generic over every intrinsic type and kind gfortran has on
# x86_64, assumed rank (any rank, scalars included); SIZE is the bytes of one element.
SIZEOF_TYPES = [("INTEGER", k) for k in (1, 2, 4, 8, 16)] + \
               [("REAL", k) for k in (4, 8, 10, 16)] + \
               [("COMPLEX", k) for k in (4, 8, 10, 16)] + \
               [("LOGICAL", k) for k in (1, 2, 4, 8)]


def sizeof_part():
    names = ["mpi_sizeof_%s%d" % (t[0].lower(), k) for t, k in SIZEOF_TYPES]
    out = ["  INTERFACE MPI_SIZEOF\n"]
    names.append("mpi_sizeof_ch")   # CHARACTER (as MPICH's): the bytes of one character
    out += ["    MODULE PROCEDURE %s\n" % n for n in names]
    out.append("  END INTERFACE\n  PRIVATE :: %s\n" % ", ".join(names))
    out.append("CONTAINS\n")
    for (t, k), n in zip(SIZEOF_TYPES, names):
        out.append("  SUBROUTINE %s(x, size, ierror)\n"
                   "    %s(KIND=%d), DIMENSION(..) :: x\n"
                   "    INTEGER :: size, ierror\n"
                   "    size = STORAGE_SIZE(x) / 8\n"
                   "    ierror = MPI_SUCCESS\n"
                   "  END SUBROUTINE\n" % (n, t, k))
    out.append("  SUBROUTINE mpi_sizeof_ch(x, size, ierror)\n"
               "    CHARACTER(LEN=*), DIMENSION(..) :: x\n"
               "    INTEGER :: size, ierror\n"
               "    size = STORAGE_SIZE(x) / 8 / MAX(LEN(x), 1)\n"
               "    ierror = MPI_SUCCESS\n"
               "  END SUBROUTINE\n")
    return "".join(out)


def gen_module(fl, constants):
    """fl: (func, [(kind, ctext, name)]) from genfortran.fortran_funcs; constants: the mpif.h
    statements for a module (genfortran.gen_mpif(module=True))."""
    out = ["! The `mpi` module: mpif.h's constants and explicit interfaces.\n",
           "! Generated by tools/gen/genfortran.py -- do not edit.\n",
           "MODULE mpi\n  IMPLICIT NONE\n  PRIVATE :: mpipriv_dummy\n  INTEGER :: mpipriv_dummy\n"]
    out.append(constants)
    out.append("  EXTERNAL :: %s\n" % ", ".join(HAND_EXTERNALS))
    out.append(HAND_INTERFACES)
    out.append("  INTERFACE\n")
    for f, ps in fl:
        if f.name.endswith("_c"):   # large-count forms: mpi_f08 only
            continue
        if any(k == "choice" for k, _, _ in ps):
            # as in MPICH's module: procedures with choice buffers have no explicit interface,
            # so programs that compile with MPICH's `use mpi` compile with ours (counts given
            # as a scalar 0 next to MPI_IN_PLACE, Fortran profiling wrappers named MPI_SEND
            # that `use mpi` themselves)
            continue
        out.append(interface(f, ps, "MPI_"))
    out.append("  END INTERFACE\n")
    out.append(sizeof_part())
    out.append("END MODULE mpi\n")
    return "".join(out)
