"""The `mpi_f08` module for tools/gen/genfortran.py.

Every procedure is a thin Fortran wrapper over libmpifort's mpif.h-level entry point (mpi_send_
& co., called through BIND(C, name=...) interfaces, arguments by reference, CHARACTER lengths
passed explicitly as the trailing size_t values gfortran would pass), so sentinels, LOGICAL,
strings, 1-based indices and callbacks are converted in one place.  What is f08-specific:
  - handles are TYPE(MPI_Comm) etc. (BIND(C), one INTEGER MPI_VAL: the mpif.h handle) and
    TYPE(MPI_Status) is the 5 integers of MPI_Status, so both pass by reference unchanged;
  - choice buffers are TYPE(*), DIMENSION(..): src/fortran/fort_f08.c reads the array
    descriptor (ISO_Fortran_binding.h) and passes the address; a non-contiguous section whose
    count/datatype pair covers it exactly travels as a derived datatype built from the
    descriptor's strides; any other non-contiguous use is refused with MPI_ERR_BUFFER;
  - IERROR is optional;
  - the sentinels are the same common-block variables as mpif.h's (typed for f08), so the
    mpif.h-level entry points recognize them.
The work is done by module procedures named whf08_<name>; MPI_<name> and PMPI_<name> are
generic interfaces to external procedures with the standard's specific names (MPI_Send_f08ts,
PMPI_Send_f08ts: gen_mpich_f08), so profiling tools can intercept (MPI-4.1 19.1.5).
Not yet: the f08 forms of the hand-written procedures other than those below.
"""
import re

HANDLE_TYPES = ["Comm", "Datatype", "Group", "Op", "Errhandler", "Request", "Message", "Info",
                "Win", "Session", "File"]
FKIND = {"int": "INTEGER", "aint": "INTEGER(KIND=MPI_ADDRESS_KIND)",
         "offset": "INTEGER(KIND=MPI_OFFSET_KIND)", "count": "INTEGER(KIND=MPI_COUNT_KIND)"}


def _len(p, names):
    """Explicit shape from the table's length when it is a parameter name, else *."""
    if p.length and p.length in names:
        return p.length
    return "*"


def _intent(p):
    return {"in": "IN", "out": "OUT", "inout": "INOUT"}.get(p.dir, "INOUT")


ASYNC_RE = re.compile(r"^MPI_(I[a-z].*|.*_init(_c)?|.*attach.*|R(put|get|accumulate|get_accumulate)(_c)?|"
                      r"(Put|Get|Accumulate|Get_accumulate|Fetch_and_op|Compare_and_swap)(_c)?|"
                      r"Win_(create|attach|detach)(_c)?)$")


def f08_decl(kind, p, names, for_iface, fname=""):
    """Declaration of parameter p in the f08 procedure (for_iface=False) or in the BIND(C)
    interface of the mpif.h-level entry point (for_iface=True)."""
    n = p.name
    if kind == "choice":
        if for_iface:
            return "TYPE(C_PTR), VALUE :: %s" % n
        # buffers that outlive the call (nonblocking, persistent, attached, one-sided): the
        # compiler must not assume their address does not escape (TARGET: gfortran then does
        # not mark the argument as non-escaping)
        asyn = ", ASYNCHRONOUS, TARGET" if ASYNC_RE.match(fname) else ""
        intent = ", INTENT(IN)" if p.dir == "in" else ""
        return "TYPE(*), DIMENSION(..)%s%s :: %s" % (intent, asyn, n)
    intent = "" if for_iface else ", INTENT(%s)" % _intent(p)
    if kind in ("string_in", "string_out"):
        if for_iface:
            return "CHARACTER(KIND=C_CHAR) :: %s(*)" % n
        return "CHARACTER(LEN=*)%s :: %s" % (intent, n)
    if kind in ("logical_in", "logical_out"):
        return "LOGICAL%s :: %s" % (intent, n)
    if kind == "logical_array":
        return "LOGICAL%s :: %s(%s)" % (intent, n, _len(p, names))
    if kind == "fnptr":
        if for_iface:
            return "TYPE(C_FUNPTR), VALUE :: %s" % n
        return "PROCEDURE(MPI_%s) :: %s" % (p.handle, n)
    if kind == "status":
        return "TYPE(MPI_Status)%s :: %s" % (intent, n)
    if kind == "statuses":
        return "TYPE(MPI_Status)%s :: %s(%s)" % (intent, n, _len(p, names))
    if p.kind == "handle":
        t = "TYPE(MPI_%s)" % p.handle
    else:
        t = FKIND.get(p.kind, "INTEGER")
    if p.kind == "ptr":  # baseptr: TYPE(C_PTR) in mpi_f08 (MPI-4.1 19.3), the C pointer's storage
        t = "TYPE(C_PTR)"
    if p.is_array or kind in ("indices_out", "weights", "errcodes"):
        m = re.match(r"^\d+$", str(p.length or ""))
        dims = "%s" % _len(p, names)
        if "[3]" in p.decl:
            dims = "3,%s" % dims
        return "%s%s :: %s(%s)" % (t, intent, n, dims)
    return "%s%s :: %s" % (t, intent, n)


def signature(f):
    """What generic resolution sees: type and kind (MPI_Count and MPI_Aint are both 8 bytes,
    so MPI_Type_get_extent and MPI_Type_get_extent_c cannot share a generic: the large-count
    form keeps its _c name then) and array-ness of every argument."""
    kind = {"count": "i8", "aint": "i8", "offset": "i8", "int": "i4", "ptr": "i8"}
    return tuple((kind.get(p.kind, p.kind), p.handle, p.is_array) for p in f.params)


def proc_name(name):
    """The module procedure that does the work: whf08_<name> (whf08_Send, whf08_Send_c).  The
    MPI and PMPI names are generic interfaces to external procedures with the standard's
    specific names (MPI_Send_f08ts, PMPI_Send_f08ts: gen_mpich_f08), so that a profiling tool
    that defines MPI_Send_f08ts intercepts calls made through the module (MPI-4.1 19.1.5)."""
    return "whf08_" + name[4:]


def procedure(f, ps, pairs_c=frozenset()):
    """The f08 procedure and the BIND(C) interface of its mpif.h-level entry point."""
    name = f.name
    lname = name.lower()
    params = [p for p in f.params]
    kinds = {p.name: k for k, _, p_name in ps for p in params if p.name == p_name}
    names = {p.name for p in params}
    strings = [p.name for p in params if kinds[p.name] in ("string_in", "string_out")]
    choices = [p.name for p in params if kinds[p.name] == "choice"]
    fnptrs = [p.name for p in params if kinds[p.name] == "fnptr"]
    # interface of the entry point
    iface = ["    SUBROUTINE whf77_%s(%s) BIND(C, name=\"%s_\")" % (
        lname[4:], ", ".join([p.name for p in params] + ["ierror"] + [s + "_len" for s in strings]),
        lname)]
    iface.append("      IMPORT")
    for p in params:
        iface.append("      " + f08_decl(kinds[p.name], p, names, True))
    iface.append("      INTEGER :: ierror")
    for s in strings:
        iface.append("      INTEGER(C_SIZE_T), VALUE :: %s_len" % s)
    iface.append("    END SUBROUTINE")
    # the procedure
    body = ["  SUBROUTINE %s(%s)" % (proc_name(name),
                                     ", ".join([p.name for p in params] + ["ierror"]))]
    decls = [f08_decl(kinds[p.name], p, names, False, name) for p in params]
    decls.append("INTEGER, OPTIONAL, INTENT(OUT) :: ierror")
    body += ["    " + d for d in decls]
    body.append("    INTEGER :: ierr_")
    for c in choices:
        body.append("    TYPE(C_PTR) :: %s_" % c)
    # a choice buffer followed (other buffers aside) by its own scalar (count, datatype) pair
    # may be a non-contiguous section: it then travels as one element of a derived datatype
    pairs = {}
    for i, p in enumerate(params):
        if kinds[p.name] != "choice":
            continue
        j = i + 1
        while j < len(params) and kinds[params[j].name] == "choice":
            j += 1
        if (j + 1 < len(params) and params[j].kind == "int" and params[j].depth == 0
                and params[j + 1].kind == "handle" and params[j + 1].handle == "Datatype"
                and params[j + 1].depth == 0):
            pairs[p.name] = (params[j].name, params[j + 1].name)
    shared = [v for v in pairs.values()]
    pairs = {c: v for c, v in pairs.items() if shared.count(v) == 1}
    subst = {}
    for c, (cnt, dt) in pairs.items():
        body.append("    INTEGER :: %s_n" % c)
        body.append("    TYPE(MPI_Datatype) :: %s_t" % c)
        subst[cnt], subst[dt] = c + "_n", c + "_t"
    body.append("    ierr_ = MPI_SUCCESS")
    for c, (cnt, dt) in pairs.items():
        body.append("    %s_t = %s" % (c, dt))
    call = []
    for p in params:
        k = kinds[p.name]
        if k == "choice":
            call.append(p.name + "_")
        elif k == "fnptr":
            call.append("C_FUNLOC(%s)" % p.name)
        else:
            call.append(subst.get(p.name, p.name))
    call.append("ierr_")
    call += ["LEN(%s, KIND=C_SIZE_T)" % s for s in strings]
    for c in choices:
        if c in pairs:
            cnt, dt = pairs[c]
            body.append("    IF (ierr_ == MPI_SUCCESS) %s_ = whf08_section(%s, %s, %s, %s_n, %s_t, ierr_)"
                        % (c, c, cnt, dt, c, c))
        else:
            body.append("    IF (ierr_ == MPI_SUCCESS) %s_ = whf08_addr(%s, ierr_)" % (c, c))
    body.append("    IF (ierr_ == MPI_SUCCESS) CALL whf77_%s(%s)" % (lname[4:], ", ".join(call)))
    for c, (cnt, dt) in pairs.items():
        body.append("    IF (%s_t%%MPI_VAL /= %s%%MPI_VAL .AND. %s_t%%MPI_VAL /= MPI_DATATYPE_NULL%%MPI_VAL) &\n"
                    "        CALL whf08_free_type(%s_t)" % (c, dt, c, c))
    body.append("    IF (PRESENT(ierror)) ierror = ierr_")
    body.append("  END SUBROUTINE")
    return "\n".join(iface) + "\n", "\n".join(body) + "\n", decls


def wrap(line, width=130):
    """Free-form continuation for long lines."""
    out = []
    while len(line) > width:
        cut = line.rfind(", ", 0, width)
        if cut < 0:
            break
        out.append(line[:cut + 1] + " &")
        line = "      " + line[cut + 2:]
    out.append(line)
    return "\n".join(out)


# The callback interfaces of MPI-4.1 (19.3.6 / Appendix A): what user procedures passed to
# MPI_Op_create, MPI_*_create_keyval, MPI_*_create_errhandler and MPI_Grequest_start look like.
ABSTRACT = """  ABSTRACT INTERFACE
    SUBROUTINE MPI_User_function(invec, inoutvec, len, datatype)
      IMPORT
      TYPE(C_PTR), VALUE :: invec, inoutvec
      INTEGER :: len
      TYPE(MPI_Datatype) :: datatype
    END SUBROUTINE
    SUBROUTINE MPI_User_function_c(invec, inoutvec, len, datatype)
      IMPORT
      TYPE(C_PTR), VALUE :: invec, inoutvec
      INTEGER(KIND=MPI_COUNT_KIND) :: len
      TYPE(MPI_Datatype) :: datatype
    END SUBROUTINE
""" + "".join("""    SUBROUTINE MPI_%(O)s_copy_attr_function(old%(o)s, %(o)s_keyval, extra_state, &
        attribute_val_in, attribute_val_out, flag, ierror)
      IMPORT
      TYPE(MPI_%(T)s) :: old%(o)s
      INTEGER :: %(o)s_keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      LOGICAL :: flag
    END SUBROUTINE
    SUBROUTINE MPI_%(O)s_delete_attr_function(%(o)s, %(o)s_keyval, attribute_val, extra_state, ierror)
      IMPORT
      TYPE(MPI_%(T)s) :: %(o)s
      INTEGER :: %(o)s_keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: attribute_val, extra_state
    END SUBROUTINE
""" % {"O": o, "T": t, "o": lo} for o, t, lo in [("Comm", "Comm", "comm"), ("Type", "Datatype", "type"),
                                                ("Win", "Win", "win")]) + "".join("""    SUBROUTINE MPI_%(O)s_errhandler_function(%(o)s, error_code)
      IMPORT
      TYPE(MPI_%(O)s) :: %(o)s
      INTEGER :: error_code
    END SUBROUTINE
""" % {"O": o, "o": o.lower()} for o in ("Comm", "Win", "File", "Session")) + """    SUBROUTINE MPI_Handler_function(comm, error_code)
      IMPORT
      TYPE(MPI_Comm) :: comm
      INTEGER :: error_code
    END SUBROUTINE
    SUBROUTINE MPI_Grequest_query_function(extra_state, status, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      TYPE(MPI_Status) :: status
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Grequest_free_function(extra_state, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE MPI_Grequest_cancel_function(extra_state, complete, ierror)
      IMPORT
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra_state
      LOGICAL :: complete
      INTEGER :: ierror
    END SUBROUTINE
  END INTERFACE
"""

HAND = """
  ! ---- hand-written: no mpif.h-level equivalent with the same arguments ----
  SUBROUTINE MPI_Init(ierror)
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_init(ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_Init_thread(required, provided, ierror)
    INTEGER, INTENT(IN) :: required
    INTEGER, INTENT(OUT) :: provided
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_init_thread(required, provided, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  DOUBLE PRECISION FUNCTION MPI_Wtime()
    MPI_Wtime = whf77_wtime()
  END FUNCTION
  DOUBLE PRECISION FUNCTION MPI_Wtick()
    MPI_Wtick = whf77_wtick()
  END FUNCTION
  DOUBLE PRECISION FUNCTION PMPI_Wtime()
    PMPI_Wtime = whf77_wtime()
  END FUNCTION
  DOUBLE PRECISION FUNCTION PMPI_Wtick()
    PMPI_Wtick = whf77_wtick()
  END FUNCTION
  INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION MPI_Aint_add(base, disp)
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: base, disp
    MPI_Aint_add = base + disp
  END FUNCTION
  INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION MPI_Aint_diff(addr1, addr2)
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: addr1, addr2
    MPI_Aint_diff = addr1 - addr2
  END FUNCTION
  SUBROUTINE MPI_F_sync_reg(buf)
    TYPE(*), DIMENSION(..) :: buf
    CALL whf08_sync_reg(buf)
  END SUBROUTINE
  SUBROUTINE MPI_Pcontrol(level)
    INTEGER, INTENT(IN) :: level
    CALL whf77_pcontrol(level)
  END SUBROUTINE
  SUBROUTINE MPI_Info_create_env(info, ierror)
    TYPE(MPI_Info), INTENT(OUT) :: info
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_info_create_env(info, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_Buffer_detach(buffer_addr, size, ierror)
    TYPE(C_PTR), INTENT(OUT) :: buffer_addr
    INTEGER, INTENT(OUT) :: size
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    ierr_ = whfc_buffer_detach(buffer_addr, size)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
    PROCEDURE(MPI_Grequest_query_function) :: query_fn
    PROCEDURE(MPI_Grequest_free_function) :: free_fn
    PROCEDURE(MPI_Grequest_cancel_function) :: cancel_fn
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: extra_state
    TYPE(MPI_Request), INTENT(OUT) :: request
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_grequest_start(C_FUNLOC(query_fn), C_FUNLOC(free_fn), C_FUNLOC(cancel_fn), &
                              extra_state, request, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, &
      array_of_errcodes, ierror)
    CHARACTER(LEN=*), INTENT(IN) :: command, argv(*)
    INTEGER, INTENT(IN) :: maxprocs, root
    TYPE(MPI_Info), INTENT(IN) :: info
    TYPE(MPI_Comm), INTENT(IN) :: comm
    TYPE(MPI_Comm), INTENT(OUT) :: intercomm
    INTEGER :: array_of_errcodes(*)
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, &
                          array_of_errcodes, ierr_, LEN(command, KIND=C_SIZE_T), LEN(argv, KIND=C_SIZE_T))
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs, &
      array_of_info, root, comm, intercomm, array_of_errcodes, ierror)
    INTEGER, INTENT(IN) :: count, array_of_maxprocs(*), root
    CHARACTER(LEN=*), INTENT(IN) :: array_of_commands(*), array_of_argv(count, *)
    TYPE(MPI_Info), INTENT(IN) :: array_of_info(*)
    TYPE(MPI_Comm), INTENT(IN) :: comm
    TYPE(MPI_Comm), INTENT(OUT) :: intercomm
    INTEGER :: array_of_errcodes(*)
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_comm_spawn_multiple(count, array_of_commands, array_of_argv, array_of_maxprocs, &
                                   array_of_info, root, comm, intercomm, array_of_errcodes, ierr_, &
                                   LEN(array_of_commands, KIND=C_SIZE_T), LEN(array_of_argv, KIND=C_SIZE_T))
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
%(attr)s
"""

ATTR_T = """  SUBROUTINE MPI_%(O)s_set_attr(obj, keyval, attribute_val, ierror)
    TYPE(MPI_%(T)s), INTENT(IN) :: obj
    INTEGER, INTENT(IN) :: keyval
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: attribute_val
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_%(o)s_set_attr(obj, keyval, attribute_val, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_%(O)s_get_attr(obj, keyval, attribute_val, flag, ierror)
    TYPE(MPI_%(T)s), INTENT(IN) :: obj
    INTEGER, INTENT(IN) :: keyval
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT) :: attribute_val
    LOGICAL, INTENT(OUT) :: flag
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_%(o)s_get_attr(obj, keyval, attribute_val, flag, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
  SUBROUTINE MPI_%(O)s_create_keyval(copy_fn, delete_fn, keyval, extra_state, ierror)
    PROCEDURE(MPI_%(O)s_copy_attr_function) :: copy_fn
    PROCEDURE(MPI_%(O)s_delete_attr_function) :: delete_fn
    INTEGER, INTENT(OUT) :: keyval
    INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: extra_state
    INTEGER, OPTIONAL, INTENT(OUT) :: ierror
    INTEGER :: ierr_
    CALL whf77_%(o)s_create_keyval(C_FUNLOC(copy_fn), C_FUNLOC(delete_fn), keyval, extra_state, ierr_)
    IF (PRESENT(ierror)) ierror = ierr_
  END SUBROUTINE
"""
ATTR_I = """    SUBROUTINE whf77_%(o)s_set_attr(obj, keyval, val, ierror) BIND(C, name="mpi_%(o)s_set_attr_")
      IMPORT
      TYPE(MPI_%(T)s) :: obj
      INTEGER :: keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: val
    END SUBROUTINE
    SUBROUTINE whf77_%(o)s_get_attr(obj, keyval, val, flag, ierror) BIND(C, name="mpi_%(o)s_get_attr_")
      IMPORT
      TYPE(MPI_%(T)s) :: obj
      INTEGER :: keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: val
      LOGICAL :: flag
    END SUBROUTINE
    SUBROUTINE whf77_%(o)s_create_keyval(c, d, keyval, extra, ierror) BIND(C, name="mpi_%(o)s_create_keyval_")
      IMPORT
      TYPE(C_FUNPTR), VALUE :: c, d
      INTEGER :: keyval, ierror
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra
    END SUBROUTINE
"""
HAND_IFACE = """    SUBROUTINE whf77_init(ierror) BIND(C, name="mpi_init_")
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE whf77_init_thread(required, provided, ierror) BIND(C, name="mpi_init_thread_")
      INTEGER :: required, provided, ierror
    END SUBROUTINE
    REAL(C_DOUBLE) FUNCTION whf77_wtime() BIND(C, name="mpi_wtime_")
      IMPORT
    END FUNCTION
    REAL(C_DOUBLE) FUNCTION whf77_wtick() BIND(C, name="mpi_wtick_")
      IMPORT
    END FUNCTION
    SUBROUTINE whf08_sync_reg(buf) BIND(C, name="wharf_f08_sync_reg")
      TYPE(*), DIMENSION(..) :: buf
    END SUBROUTINE
    SUBROUTINE whf77_pcontrol(level) BIND(C, name="mpi_pcontrol_")
      INTEGER :: level
    END SUBROUTINE
    SUBROUTINE whf77_info_create_env(info, ierror) BIND(C, name="mpi_info_create_env_")
      IMPORT
      TYPE(MPI_Info) :: info
      INTEGER :: ierror
    END SUBROUTINE
    INTEGER(C_INT) FUNCTION whfc_buffer_detach(addr, size) BIND(C, name="MPI_Buffer_detach")
      IMPORT
      TYPE(C_PTR) :: addr
      INTEGER(C_INT) :: size
    END FUNCTION
    SUBROUTINE whf77_grequest_start(q, f, c, extra, request, ierror) BIND(C, name="mpi_grequest_start_")
      IMPORT
      TYPE(C_FUNPTR), VALUE :: q, f, c
      INTEGER(KIND=MPI_ADDRESS_KIND) :: extra
      TYPE(MPI_Request) :: request
      INTEGER :: ierror
    END SUBROUTINE
    SUBROUTINE whf77_comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, errcodes, &
        ierror, command_len, argv_len) BIND(C, name="mpi_comm_spawn_")
      IMPORT
      CHARACTER(KIND=C_CHAR) :: command(*), argv(*)
      INTEGER :: maxprocs, root, errcodes(*), ierror
      TYPE(MPI_Info) :: info
      TYPE(MPI_Comm) :: comm, intercomm
      INTEGER(C_SIZE_T), VALUE :: command_len, argv_len
    END SUBROUTINE
    SUBROUTINE whf77_comm_spawn_multiple(count, commands, argvs, maxprocs, infos, root, comm, &
        intercomm, errcodes, ierror, commands_len, argv_len) BIND(C, name="mpi_comm_spawn_multiple_")
      IMPORT
      CHARACTER(KIND=C_CHAR) :: commands(*), argvs(*)
      INTEGER :: count, maxprocs(*), root, errcodes(*), ierror
      TYPE(MPI_Info) :: infos(*)
      TYPE(MPI_Comm) :: comm, intercomm
      INTEGER(C_SIZE_T), VALUE :: commands_len, argv_len
    END SUBROUTINE
    TYPE(C_PTR) FUNCTION whf08_addr(buf, ierror) BIND(C, name="wharf_f08_addr")
      IMPORT
      TYPE(*), DIMENSION(..) :: buf
      INTEGER :: ierror
    END FUNCTION
    TYPE(C_PTR) FUNCTION whf08_section(buf, count, datatype, ncount, ntype, ierror) &
        BIND(C, name="wharf_f08_section")
      IMPORT
      TYPE(*), DIMENSION(..) :: buf
      INTEGER :: count, ncount, ierror
      TYPE(MPI_Datatype) :: datatype, ntype
    END FUNCTION
    SUBROUTINE whf08_free_type(t) BIND(C, name="wharf_f08_free_type")
      IMPORT
      TYPE(MPI_Datatype) :: t
    END SUBROUTINE
"""
OBJS = [("Comm", "Comm", "comm"), ("Type", "Datatype", "type"), ("Win", "Win", "win")]
HAND_NAMES = {"MPI_Init", "MPI_Init_thread", "MPI_Wtime", "MPI_Wtick", "MPI_Aint_add",
              "MPI_Aint_diff", "MPI_Pcontrol", "MPI_Info_create_env", "MPI_Buffer_detach",
              "MPI_Grequest_start", "MPI_Comm_spawn", "MPI_Comm_spawn_multiple"} | {"MPI_%s_%s" % (o, w) for o, _, _ in OBJS
                                  for w in ("set_attr", "get_attr", "create_keyval")}


# Not in mpi_f08: MPI-1's datatype procedures with INTEGER addresses (deleted in MPI-3; neither
# MPICH's nor Open MPI's mpi_f08 has them).
NOT_F08 = {"MPI_Type_extent", "MPI_Type_lb", "MPI_Type_ub", "MPI_Type_hvector",
           "MPI_Type_hindexed", "MPI_Type_struct"}


def _f08_funcs(fl):
    """The generated procedures of mpi_f08, with their kinds: (f, kinds, ps)."""
    byname = {f.name: f for f, _ in fl}
    for f, ps in fl:
        if f.name in HAND_NAMES or f.name in NOT_F08:
            continue
        if f.name.endswith("_c") and f.name[:-2] not in byname:
            continue   # a large-count form without its int form here
        yield f, {n: k for k, _, n in ps}, ps


def generics(fl, pairs_c):
    """The MPI_ and PMPI_ generic names of the generated procedures: interface bodies of the
    external procedures with the standard's specific names (MPI_Send_f08ts, its large-count
    form where the generic covers both); the hand-written procedures' PMPI_ names are generics
    over the module procedures themselves (no interposition for those)."""
    groups = {}
    for f, kinds, ps in _f08_funcs(fl):
        base = f.name[:-2] if f.name.endswith("_c") else f.name
        g = base if (not f.name.endswith("_c") or base in pairs_c) else f.name
        _, _, decls = procedure(f, ps, pairs_c)
        args = [p.name for p in f.params] + ["ierror"]
        groups.setdefault(g, []).append((mpich_name(f, kinds), args, decls))
    o = []
    for g, specs in groups.items():
        for pre in ("", "P"):
            o.append("  INTERFACE %s%s\n" % (pre, g))
            for ext, args, decls in specs:
                o.append(wrap("    SUBROUTINE %s%s(%s)" % (pre, ext, ", ".join(args))) + "\n")
                o.append("      IMPORT\n")
                o += [wrap("      " + d) + "\n" for d in decls]
                o.append("    END SUBROUTINE\n")
            o.append("  END INTERFACE\n")
    text = HAND + "".join(ATTR_T % {"O": ob, "T": t, "o": lo} for ob, t, lo in OBJS)
    hand = re.findall(r"^  (?:SUBROUTINE|[A-Z()=_ ]*FUNCTION) (MPI_\w+)\(", text, re.M)
    for n in dict.fromkeys(hand):
        if n not in ("MPI_Wtime", "MPI_Wtick"):   # PMPI_Wtime, PMPI_Wtick: functions of HAND
            o.append("  INTERFACE P%s\n    MODULE PROCEDURE %s\n  END INTERFACE\n" % (n, n))
    return o


def gen_f08(fl, consts):
    """fl: (func, [(kind, decl, name)]) of genfortran.fortran_funcs; consts: [(name, value,
    ftype)] with ftype 'INTEGER', 'INTEGER*8' or a handle type name ('Comm')."""
    o = ["! The `mpi_f08` module. Generated by tools/gen/genfortran.py -- do not edit.\n",
         "MODULE mpi_f08\n  USE, INTRINSIC :: ISO_C_BINDING\n  IMPLICIT NONE\n"]
    for t in HANDLE_TYPES:
        o.append("  TYPE, BIND(C) :: MPI_%s\n    INTEGER(C_INT) :: MPI_VAL\n  END TYPE\n" % t)
    o.append("  TYPE, BIND(C) :: MPI_Status\n    INTEGER(C_INT) :: count_lo, count_hi_and_cancelled\n"
             "    INTEGER(C_INT) :: MPI_SOURCE, MPI_TAG, MPI_ERROR\n  END TYPE\n")
    eq = ["whf08_eq_%s" % t.lower() for t in HANDLE_TYPES]
    ne = ["whf08_ne_%s" % t.lower() for t in HANDLE_TYPES]
    o.append("  INTERFACE OPERATOR(==)\n    MODULE PROCEDURE %s\n  END INTERFACE\n" % ", ".join(eq))
    o.append("  INTERFACE OPERATOR(/=)\n    MODULE PROCEDURE %s\n  END INTERFACE\n" % ", ".join(ne))
    o.append("  PRIVATE :: %s\n  PRIVATE :: %s\n" % (", ".join(eq), ", ".join(ne)))
    for n in ("ADDRESS", "OFFSET", "COUNT", "INTEGER"):
        pass
    for name, value, ftype in consts:
        if ftype in HANDLE_TYPES:
            o.append("  TYPE(MPI_%s), PARAMETER :: %s = MPI_%s(%d)\n" % (ftype, name, ftype, value))
        elif ftype == "LOGICAL":
            o.append("  LOGICAL, PARAMETER :: %s = %s\n" % (name, value))
        else:
            o.append("  %s, PARAMETER :: %s = %d\n" % (ftype, name, value))
    o.append(ABSTRACT)
    o.append("""  ! the sentinels: mpif.h's common blocks, typed for mpi_f08
  INTEGER :: MPI_BOTTOM, MPI_IN_PLACE, MPI_ERRCODES_IGNORE(1), MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)
  TYPE(MPI_Status) :: MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE(1)
  CHARACTER(LEN=1) :: MPI_ARGV_NULL(1), MPI_ARGVS_NULL(1, 1)
  COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE
  COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE
  COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL
  COMMON /MPIFCMB5/ MPI_UNWEIGHTED
  COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY
  SAVE /MPIPRIV1/, /MPIPRIV2/, /MPIPRIVC/, /MPIFCMB5/, /MPIFCMB9/
  EXTERNAL :: MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN
  EXTERNAL :: MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN
  EXTERNAL :: MPI_WIN_DUP_FN, MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN
""")
    ifaces, procs = [], []
    byname = {f.name: f for f, _ in fl}
    pairs_c = {n for n in byname if n + "_c" in byname
               and signature(byname[n]) != signature(byname[n + "_c"])}
    for f, _, ps in _f08_funcs(fl):
        i, p, _ = procedure(f, ps, pairs_c)
        ifaces.append(i)
        procs.append(p)
    o.append("  INTERFACE\n")
    o.append(HAND_IFACE)
    for ob, t, lo in OBJS:
        o.append(ATTR_I % {"O": ob, "T": t, "o": lo})
    o += [wrap(l) + "\n" for i in ifaces for l in i.splitlines()]
    o.append("  END INTERFACE\n")
    o += generics(fl, pairs_c)
    o.append("CONTAINS\n")
    for t in HANDLE_TYPES:
        o.append("  ELEMENTAL LOGICAL FUNCTION whf08_eq_%s(a, b)\n    TYPE(MPI_%s), INTENT(IN) :: a, b\n"
                 "    whf08_eq_%s = a%%MPI_VAL == b%%MPI_VAL\n  END FUNCTION\n" % (t.lower(), t, t.lower()))
        o.append("  ELEMENTAL LOGICAL FUNCTION whf08_ne_%s(a, b)\n    TYPE(MPI_%s), INTENT(IN) :: a, b\n"
                 "    whf08_ne_%s = a%%MPI_VAL /= b%%MPI_VAL\n  END FUNCTION\n" % (t.lower(), t, t.lower()))
    o.append(HAND % {"attr": "".join(ATTR_T % {"O": ob, "T": t, "o": lo} for ob, t, lo in OBJS)})
    o += [wrap(l) + "\n" for p in procs for l in p.splitlines()]
    o.append("END MODULE mpi_f08\n")
    return "".join(o)


# ---------------------------------------------------------------- MPICH's mpi_f08 ABI
#
# A program compiled with MPICH's mpi_f08 module calls external procedures named
# mpi_<name>_f08_ (no choice buffer) or mpi_<name>_f08ts_ (TYPE(*), DIMENSION(..) buffers),
# with _large before the trailing underscore for the large-count forms; the arguments are those
# of the standard's f08 interface, exactly what our module procedures take.  Each is generated
# here as an external subroutine forwarding to our module procedure.

def mpich_name(f, kinds):
    base = f.name[:-2] if f.name.endswith("_c") else f.name
    ts = any(kinds[p.name] == "choice" for p in f.params)
    return "%s_%s%s" % (base, "f08ts" if ts else "f08", "_large" if f.name.endswith("_c") else "")


MPICH_HAND = """INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION MPI_Aint_add_f08(base, disp)
  USE mpi_f08, ONLY: MPI_ADDRESS_KIND
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: base, disp
  MPI_Aint_add_f08 = base + disp
END FUNCTION
INTEGER(KIND=MPI_ADDRESS_KIND) FUNCTION MPI_Aint_diff_f08(addr1, addr2)
  USE mpi_f08, ONLY: MPI_ADDRESS_KIND
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: addr1, addr2
  MPI_Aint_diff_f08 = addr1 - addr2
END FUNCTION
SUBROUTINE MPI_Pcontrol_f08(level)
  USE mpi_f08, whf_impl => MPI_Pcontrol
  INTEGER, INTENT(IN) :: level
  CALL whf_impl(level)
END SUBROUTINE
SUBROUTINE MPI_Info_create_env_f08(info, ierror)
  USE mpi_f08, whf_impl => MPI_Info_create_env
  TYPE(MPI_Info), INTENT(OUT) :: info
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(info, ierror)
END SUBROUTINE
SUBROUTINE MPI_Grequest_start_f08(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
  USE mpi_f08, whf_impl => MPI_Grequest_start
  PROCEDURE(MPI_Grequest_query_function) :: query_fn
  PROCEDURE(MPI_Grequest_free_function) :: free_fn
  PROCEDURE(MPI_Grequest_cancel_function) :: cancel_fn
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: extra_state
  TYPE(MPI_Request), INTENT(OUT) :: request
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
END SUBROUTINE
SUBROUTINE MPI_Comm_spawn_f08(command, argv, maxprocs, info, root, comm, intercomm, &
    array_of_errcodes, ierror)
  USE mpi_f08, whf_impl => MPI_Comm_spawn
  CHARACTER(LEN=*), INTENT(IN) :: command, argv(*)
  INTEGER, INTENT(IN) :: maxprocs, root
  TYPE(MPI_Info), INTENT(IN) :: info
  TYPE(MPI_Comm), INTENT(IN) :: comm
  TYPE(MPI_Comm), INTENT(OUT) :: intercomm
  INTEGER :: array_of_errcodes(*)
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes, ierror)
END SUBROUTINE
SUBROUTINE MPI_Comm_spawn_multiple_f08(count, array_of_commands, array_of_argv, array_of_maxprocs, &
    array_of_info, root, comm, intercomm, array_of_errcodes, ierror)
  USE mpi_f08, whf_impl => MPI_Comm_spawn_multiple
  INTEGER, INTENT(IN) :: count, array_of_maxprocs(*), root
  CHARACTER(LEN=*), INTENT(IN) :: array_of_commands(*), array_of_argv(count, *)
  TYPE(MPI_Info), INTENT(IN) :: array_of_info(*)
  TYPE(MPI_Comm), INTENT(IN) :: comm
  TYPE(MPI_Comm), INTENT(OUT) :: intercomm
  INTEGER :: array_of_errcodes(*)
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, &
                comm, intercomm, array_of_errcodes, ierror)
END SUBROUTINE
SUBROUTINE MPI_F_sync_reg_f08ts(buf)
  USE mpi_f08, whf_impl => MPI_F_sync_reg
  TYPE(*), DIMENSION(..) :: buf
  CALL whf_impl(buf)
END SUBROUTINE
""" + "".join("""SUBROUTINE MPI_Delete_error_%(w)s_f08(%(a)s, ierror)
  USE mpi_f08, whf_impl => MPI_Remove_error_%(w)s
  INTEGER, INTENT(IN) :: %(a)s
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(%(a)s, ierror)
END SUBROUTINE
""" % {"w": w, "a": a} for w, a in (("class", "errorclass"), ("code", "errorcode"),
                                     ("string", "errorcode"))) + """SUBROUTINE MPI_Init_f08(ierror)
  USE mpi_f08, whf_impl => MPI_Init
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(ierror)
END SUBROUTINE
SUBROUTINE MPI_Init_thread_f08(required, provided, ierror)
  USE mpi_f08, whf_impl => MPI_Init_thread
  INTEGER, INTENT(IN) :: required
  INTEGER, INTENT(OUT) :: provided
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(required, provided, ierror)
END SUBROUTINE
DOUBLE PRECISION FUNCTION MPI_Wtime_f08()
  USE mpi_f08, whf_impl => MPI_Wtime
  MPI_Wtime_f08 = whf_impl()
END FUNCTION
DOUBLE PRECISION FUNCTION MPI_Wtick_f08()
  USE mpi_f08, whf_impl => MPI_Wtick
  MPI_Wtick_f08 = whf_impl()
END FUNCTION
SUBROUTINE MPI_Buffer_detach_f08(buffer_addr, size, ierror)
  USE, INTRINSIC :: ISO_C_BINDING, ONLY: C_PTR
  USE mpi_f08, whf_impl => MPI_Buffer_detach
  TYPE(C_PTR), INTENT(OUT) :: buffer_addr
  INTEGER, INTENT(OUT) :: size
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(buffer_addr, size, ierror)
END SUBROUTINE
""" + "".join("""SUBROUTINE MPI_%(O)s_set_attr_f08(obj, keyval, attribute_val, ierror)
  USE mpi_f08, whf_impl => MPI_%(O)s_set_attr
  TYPE(MPI_%(T)s), INTENT(IN) :: obj
  INTEGER, INTENT(IN) :: keyval
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: attribute_val
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(obj, keyval, attribute_val, ierror)
END SUBROUTINE
SUBROUTINE MPI_%(O)s_get_attr_f08(obj, keyval, attribute_val, flag, ierror)
  USE mpi_f08, whf_impl => MPI_%(O)s_get_attr
  TYPE(MPI_%(T)s), INTENT(IN) :: obj
  INTEGER, INTENT(IN) :: keyval
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(OUT) :: attribute_val
  LOGICAL, INTENT(OUT) :: flag
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(obj, keyval, attribute_val, flag, ierror)
END SUBROUTINE
SUBROUTINE MPI_%(O)s_create_keyval_f08(copy_fn, delete_fn, keyval, extra_state, ierror)
  USE mpi_f08, whf_impl => MPI_%(O)s_create_keyval
  PROCEDURE(MPI_%(O)s_copy_attr_function) :: copy_fn
  PROCEDURE(MPI_%(O)s_delete_attr_function) :: delete_fn
  INTEGER, INTENT(OUT) :: keyval
  INTEGER(KIND=MPI_ADDRESS_KIND), INTENT(IN) :: extra_state
  INTEGER, OPTIONAL, INTENT(OUT) :: ierror
  CALL whf_impl(copy_fn, delete_fn, keyval, extra_state, ierror)
END SUBROUTINE
""" % {"O": o, "T": t} for o, t, _ in OBJS)


def gen_mpich_f08(fl):
    """The external procedures behind mpi_f08's generic names, with the standard's specific
    names (also MPICH's mpi_f08 ABI): MPI_Send_f08ts and PMPI_Send_f08ts, both calling the
    module procedure whf08_Send.  A tool that defines its own MPI_Send_f08ts (and calls
    PMPI_Send) intercepts every MPI_Send made through the module."""
    byname = {f.name: f for f, _ in fl}
    pairs_c = {n for n in byname if n + "_c" in byname
               and signature(byname[n]) != signature(byname[n + "_c"])}
    o = ["! mpi_f08's specific procedures (MPI_ and PMPI_) over its module procedures.\n",
         "! Generated by tools/gen/genfortran.py -- do not edit.\n", MPICH_HAND]
    for f, kinds, ps in _f08_funcs(fl):
        _, _, decls = procedure(f, ps, pairs_c)
        args = [p.name for p in f.params] + ["ierror"]
        ext = mpich_name(f, kinds)
        # only what the declarations name (loading all of mpi_f08 in each of ~2300 procedures
        # takes minutes)
        uses = sorted(set(re.findall(r"\bMPI_[A-Za-z_]+\b", " ".join(decls)))) + [proc_name(f.name)]
        for pre in ("", "P"):
            o.append(wrap("SUBROUTINE %s%s(%s)" % (pre, ext, ", ".join(args))) + "\n")
            o.append("  USE, INTRINSIC :: ISO_C_BINDING\n")
            o.append(wrap("  USE mpi_f08, ONLY: %s" % ", ".join(uses)) + "\n")
            o.append("  IMPLICIT NONE\n")
            o += [wrap("  " + d) + "\n" for d in decls]
            o.append(wrap("  CALL %s(%s)" % (proc_name(f.name), ", ".join(args))) + "\n")
            o.append("END SUBROUTINE\n")
    return "".join(o)
