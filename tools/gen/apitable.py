#!/usr/bin/env python3
"""Read tools/gen/mpi_api.txt: every MPI function with the kind of each parameter.

This module is the one parser of the API table.  genapi.py (C prototypes,
weak stubs, generated entry points) and the Fortran generator import it:

    import apitable
    funcs = apitable.load("tools/gen/mpi_api.txt")   # list of Func, table order
    for fn in funcs:
        fn.name, fn.ret, fn.flags ("preinit", "conly"), fn.expr
        for p in fn.params:  p.name, p.ctype, p.kind, p.handle, p.dir,
                             p.length, p.is_array, p.const, p.decl

Line format (the full description is at the top of mpi_api.txt):

    RET MPI_Name(PARAMS) [= EXPR] [| ANNOTATION, ANNOTATION, ...]

ANNOTATION is a function flag (`preinit`, `conly`) or a parameter override
`name:SPEC`, where SPEC is one or more of KIND, DIRECTION and `[LENGTH]`,
joined with `/` (the length last, with no `/` before it):

    flag:logical   request:inout   array_of_requests:inout[count]
    periods:logical[ndims]   baseptr:ptr/out   name:[MPI_MAX_PROCESSOR_NAME]

Resolved parameter kinds (what `apitable.py --dump-kinds` prints):

    int       C int                       logical  int that is a Fortran LOGICAL
    count     MPI_Count                   aint     MPI_Aint
    offset    MPI_Offset                  fint     MPI_Fint
    handle    MPI_Comm, MPI_Datatype, ... (p.handle names it: "Comm", "T_enum")
    choice    choice buffer: void * / const void * (Fortran TYPE(*), DIMENSION(..))
    ptr       a void * that is not a choice buffer: an address or attribute
              value passed as an integer of kind MPI_ADDRESS_KIND (attribute
              values, Alloc_mem/Win_allocate baseptr, extra_state)
    status    MPI_Status (one, or an array when it has a length)
    f08status MPI_F08_status
    string    char * (in when const, else out; an out string has a length,
              the C buffer size the Fortran wrapper must provide)
    strings   char *[]  an array of strings (argv of MPI_Comm_spawn)
    argvs     char **[] an array of argument vectors (MPI_Comm_spawn_multiple)
    cargs     argc/argv of MPI_Init, MPI_Init_thread, MPI_Info_create_env:
              C only, the Fortran binding has no such parameter
    callback  a function pointer (p.handle names the typedef)
    enum      an MPI_T enumeration (MPI_T_cb_safety, MPI_T_source_order)
    double    C double            varargs  `...` (MPI_Pcontrol)

Directions: in, out, inout.  Inferred: a value parameter is in; a const
pointer or array is in; any other pointer or array is out.  Lengths name a
parameter of the function (`count`, `incount`, `n`, `ndims`, `maxdims`), an
expression of parameters (`3*n`), or one of the symbols of LENGTH_SYMBOLS.
"""
import argparse
import os
import re
import sys

LINE_RE = re.compile(
    r"^(?P<ret>[A-Za-z_][\w ]*?\s*\**)\s*(?P<name>MPI_\w+)\s*\((?P<params>.*)\)\s*$")
PARAM_NAME_RE = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$")
NOT_NAMES = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
             "const", "volatile", "restrict", "_Bool", "struct"}

HANDLE_TYPES = {
    "MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Request", "MPI_Op", "MPI_Info", "MPI_Errhandler",
    "MPI_Win", "MPI_File", "MPI_Message", "MPI_Session", "MPI_T_enum", "MPI_T_cvar_handle",
    "MPI_T_pvar_handle", "MPI_T_pvar_session", "MPI_T_event_registration", "MPI_T_event_instance",
}
SCALAR_TYPES = {"int": "int", "MPI_Count": "count", "MPI_Aint": "aint", "MPI_Offset": "offset",
                "MPI_Fint": "fint", "double": "double"}
ENUM_TYPES = {"MPI_T_cb_safety", "MPI_T_source_order"}
CALLBACK_RE = re.compile(r"^MPI_\w+_function(_c)?$")

KINDS = ("int", "logical", "count", "aint", "offset", "fint", "double", "handle", "choice", "ptr",
         "status", "f08status", "string", "strings", "argvs", "cargs", "callback", "enum", "varargs")
# kinds an annotation may set (the others follow from the C type alone)
OVERRIDE_KINDS = {"logical", "ptr", "cargs", "choice"}
DIRS = ("in", "out", "inout")
FLAGS = {
    "preinit": "callable before MPI_Init and after MPI_Finalize (no initialization check)",
    "conly": "C only: no Fortran binding",
    "nocheck": "not in the standard's list of functions callable outside initialization, but wharf "
               "does no initialization check either (MPI_Abort, MPI_Wtime, ...)",
}
# Length symbols that are not parameters of the function.
LENGTH_SYMBOLS = {
    "comm_size": "size of the group of comm (the remote group for an intercommunicator)",
    "indegree": "number of sources of the topology of comm (neighbourhood collectives)",
    "outdegree": "number of destinations of the topology of comm (neighbourhood collectives)",
    "cart_ndims": "number of dimensions of the cartesian topology of comm",
    "graph_nedges": "number of edges: indx[nnodes-1]",
    "sum_degrees": "sum of degrees[0..n-1]",
    "sum_maxprocs": "sum of array_of_maxprocs[0..count-1]",
    "nullterm": "terminated by a NULL pointer (argv)",
    "MPI_STATUS_SIZE": "the Fortran status size",
}
LENGTH_TOKEN_RE = re.compile(r"[A-Za-z_]\w*|\d+|[*+()]")


class ApiError(Exception):
    pass


class Param:
    """One parameter: its C declaration and what the table resolves it to."""

    def __init__(self, decl, name):
        self.decl = decl          # "const int array_of_blocklengths[]"
        self.name = name          # "array_of_blocklengths"
        self.ctype = None         # base C type name: "int", "MPI_Comm", "void", "char"
        self.const = False
        self.depth = 0            # pointers + array dimensions of the declarator
        self.brackets = 0         # array dimensions written as []
        self.kind = None
        self.handle = None        # handle/callback/enum type name without the MPI_ prefix
        self.dir = None
        self.length = None        # array length expression, or None
        self.explicit = set()     # which of kind/dir/length the table annotated

    @property
    def is_array(self):
        return self.length is not None

    def describe(self):
        k = self.kind
        if self.handle:
            k += "(%s)" % self.handle
        s = "%s %s" % (k, self.dir)
        if self.length is not None:
            s += " [%s]" % self.length
        return s

    def __repr__(self):
        return "Param(%s: %s)" % (self.name, self.describe())


class Func:
    def __init__(self, ret, name, params, expr, lineno, flags=()):
        self.ret = " ".join(ret.split())
        self.name = name
        self.params = params      # list of Param
        self.expr = expr          # default body expression, or None
        self.lineno = lineno
        self.flags = set(flags)

    @property
    def preinit(self):
        return "preinit" in self.flags

    @property
    def conly(self):
        return "conly" in self.flags

    @property
    def param_text(self):
        if not self.params:
            return "void"
        return ", ".join(p.decl for p in self.params)

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError("%s has no parameter %s" % (self.name, name))

    def decl(self, name):
        sep = "" if self.ret.endswith("*") else " "
        return "%s%s%s(%s)" % (self.ret, sep, name, self.param_text)


def split_top(text, sep=","):
    """Split at top-level separators (outside () and [])."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [" ".join(p.split()) for p in parts]


def _ctype(p, where):
    """Fill ctype/const/depth/brackets of p from its declaration."""
    text = p.decl
    p.brackets = text.count("[")
    head = re.sub(r"\[[^\]]*\]", "", text)
    head = head[:head.rfind(p.name)]
    p.depth = head.count("*") + p.brackets
    words = head.replace("*", " ").split()
    p.const = "const" in words
    words = [w for w in words if w not in ("const", "volatile", "restrict")]
    if len(words) != 1:
        raise ApiError("%s: cannot read the type of %r" % (where, text))
    p.ctype = words[0]


def _infer(p, fname, where):
    """Kind and direction from the C type alone."""
    t = p.ctype
    if p.decl == "...":
        p.kind, p.dir = "varargs", "in"
        return
    if t in HANDLE_TYPES:
        p.kind, p.handle = "handle", t[4:]
    elif t in SCALAR_TYPES:
        p.kind = SCALAR_TYPES[t]
    elif t in ENUM_TYPES:
        p.kind, p.handle = "enum", t[4:]
    elif CALLBACK_RE.match(t):
        p.kind, p.handle = "callback", t[4:]
    elif t == "MPI_Status":
        p.kind = "status"
    elif t == "MPI_F08_status":
        p.kind = "f08status"
    elif t == "void":
        if p.depth != 1:
            raise ApiError("%s: %s: void with %d indirections" % (where, p.name, p.depth))
        p.kind = "choice"
    elif t == "char":
        p.kind = {1: "string", 2: "strings", 3: "argvs"}.get(p.depth)
        if p.kind is None:
            raise ApiError("%s: %s: char with %d indirections" % (where, p.name, p.depth))
        if p.depth == 3 and p.brackets == 0:
            p.kind = "cargs"          # char ***argv of MPI_Init(_thread)
    else:
        raise ApiError("%s: %s: unknown C type %s" % (where, p.name, t))
    if p.kind in ("callback", "strings", "argvs") or p.depth == 0 or p.const:
        p.dir = "in"              # function pointers, argv arrays, values, const pointers
    else:
        p.dir = "out"
    # arrays written with [] are arrays; a length must be given (checked later)
    if p.brackets and p.kind not in ("string",):
        p.length = "?"
    if p.kind == "string" and p.dir == "out":
        p.length = "?"   # out strings need their buffer size
    if p.kind == "cargs":
        p.dir = "inout"


def _apply(p, spec, where):
    m = re.match(r"^(?P<words>[a-z0-9_/]*?)(?:\[(?P<len>[^\]]+)\])?$", spec)
    if not m or (not m.group("words") and m.group("len") is None):
        raise ApiError("%s: bad annotation %s:%s" % (where, p.name, spec))
    words = [w for w in m.group("words").split("/") if w]
    for w in words:
        if w in DIRS:
            p.dir = w
            p.explicit.add("dir")
        elif w in OVERRIDE_KINDS:
            if w == "logical" and p.kind != "int":
                raise ApiError("%s: %s is %s, not int: cannot be logical" % (where, p.name, p.kind))
            if w in ("ptr", "choice") and p.kind not in ("choice", "ptr"):
                raise ApiError("%s: %s is not a void *: cannot be %s" % (where, p.name, w))
            if w == "cargs" and p.kind not in ("int", "strings", "cargs"):
                raise ApiError("%s: %s cannot be cargs" % (where, p.name))
            p.kind = w
            p.explicit.add("kind")
        else:
            raise ApiError("%s: unknown word %r in annotation of %s (kinds: %s; directions: %s)"
                           % (where, w, p.name, ", ".join(sorted(OVERRIDE_KINDS)), ", ".join(DIRS)))
    if m.group("len") is not None:
        p.length = m.group("len").replace(" ", "")
        p.explicit.add("length")


def _check_length(fn, p, where):
    if p.length == "?":
        if p.kind == "string":
            raise ApiError("%s: out string %s needs its buffer size: %s:[LEN]" % (where, p.name, p.name))
        raise ApiError("%s: array %s needs a length: %s:[LEN]" % (where, p.name, p.name))
    if p.length is None:
        return
    names = {q.name for q in fn.params}
    for tok in LENGTH_TOKEN_RE.findall(p.length):
        if tok[0].isalpha() or tok[0] == "_":
            if tok not in names and tok not in LENGTH_SYMBOLS and not tok.startswith("MPI_MAX_"):
                raise ApiError("%s: length of %s names %r: not a parameter nor one of %s"
                               % (where, p.name, tok, ", ".join(sorted(LENGTH_SYMBOLS))))
    if "".join(LENGTH_TOKEN_RE.findall(p.length)) != p.length:
        raise ApiError("%s: bad length expression %r of %s" % (where, p.length, p.name))


def parse_line(line, lineno, path="mpi_api.txt"):
    where = "%s:%d" % (path, lineno)
    body, bar, annot = line.partition(" | ")
    decl, eq, expr = body.partition(" = ")
    m = LINE_RE.match(decl.strip())
    if not m:
        raise ApiError("%s: cannot parse: %s" % (where, line))
    name = m.group("name")
    where = "%s (%s)" % (where, name)
    params = []
    ptext = m.group("params").strip()
    if ptext != "void":
        for d in split_top(ptext):
            if d == "...":
                p = Param(d, None)
                p.ctype = "..."
                params.append(p)
                continue
            if "(" in d:
                raise ApiError("%s: use a typedef for function-pointer parameter %r" % (where, d))
            pm = PARAM_NAME_RE.search(d)
            if (not pm or pm.group(1) == d.strip() or pm.group(1) in NOT_NAMES
                    or pm.group(1).startswith("MPI_")):
                raise ApiError("%s: parameter without a name: %r" % (where, d))
            p = Param(d, pm.group(1))
            _ctype(p, where)
            params.append(p)
    if eq and not expr.strip():
        raise ApiError("%s: empty default expression" % where)
    for p in params:
        _infer(p, name, where)
    fn = Func(m.group("ret"), name, params, expr.strip() if eq else None, lineno)
    if bar:
        if not annot.strip():
            raise ApiError("%s: empty annotation after |" % where)
        for item in split_top(annot):
            if not item:
                raise ApiError("%s: empty annotation item" % where)
            if ":" in item:
                pname, _, spec = item.partition(":")
                try:
                    p = fn.param(pname.strip())
                except KeyError:
                    raise ApiError("%s: annotation names no parameter: %s" % (where, item))
                _apply(p, spec.strip(), where)
            elif item in FLAGS:
                if item in fn.flags:
                    raise ApiError("%s: flag %s given twice" % (where, item))
                fn.flags.add(item)
            else:
                raise ApiError("%s: unknown flag %r (flags: %s)" % (where, item, ", ".join(sorted(FLAGS))))
    for p in params:
        _check_length(fn, p, where)
    return fn


def load(path):
    """Parse the table; returns the functions in table order.  Raises ApiError."""
    funcs, seen = [], {}
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fn = parse_line(line, lineno, path)
            if fn.name in seen:
                raise ApiError("%s:%d: %s already declared on line %d"
                               % (path, lineno, fn.name, seen[fn.name]))
            seen[fn.name] = lineno
            funcs.append(fn)
    if not funcs:
        raise ApiError("%s: no functions" % path)
    return funcs


def large_pair(funcs):
    """{base name: large-count name} for every MPI_X that has an MPI_X_c."""
    names = {fn.name for fn in funcs}
    return {n[:-2]: n for n in names if n.endswith("_c") and n[:-2] in names}


def dump_kinds(funcs, out):
    for fn in funcs:
        flags = " [%s]" % ",".join(sorted(fn.flags)) if fn.flags else ""
        out.write("%s%s\n" % (fn.name, flags))
        for p in fn.params:
            out.write("    %-28s %s\n" % (p.name or "...", p.describe()))


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api", default=os.path.join(here, "mpi_api.txt"))
    ap.add_argument("--dump-kinds", action="store_true",
                    help="print every function with the resolved kind of each parameter")
    ap.add_argument("--flag", choices=sorted(FLAGS), help="list the functions with this flag")
    ap.add_argument("names", nargs="*", help="only these functions (with --dump-kinds)")
    args = ap.parse_args(argv)
    try:
        funcs = load(args.api)
    except (OSError, ApiError) as e:
        print("apitable: %s" % e, file=sys.stderr)
        return 1
    if args.names:
        want = set(args.names)
        funcs = [fn for fn in funcs if fn.name in want]
    if args.flag:
        for fn in funcs:
            if args.flag in fn.flags:
                print(fn.name)
        return 0
    dump_kinds(funcs, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
