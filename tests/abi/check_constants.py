#!/usr/bin/env python3
"""ABI self-check: wharf's mpi.h against MPICH's mpi.h.

Compiles one small C program twice -- against MPICH's header and against
wharf's -- that prints the value of every constant wharf's mpi.h defines
(every object-like MPI_* macro and every MPI_* enumerator), plus the size,
signedness and base type of the scalar and handle types and the MPI_Status
layout, then diffs the two outputs.  The list of constants comes from wharf's
header, so a constant added there is checked automatically.  Pointer-valued
constants that are addresses of library symbols (MPI_COMM_DUP_FN, ...) print
as the symbol name (dladdr), so the check also proves that wharf's library
exports the symbol MPICH-compiled binaries reference.

Also checked the other way: every MPI_* constant MPICH's header defines must
be defined by wharf's (MPICH-only names are excluded below); and every
MPI_*/PMPI_* symbol libmpich.so.12 exports (plus MPIR_Dup_fn) must be exported
by wharf's library, data objects with the same size.

    check_constants.py [--lib DIR_OR_FILE] [--keep]

--lib: wharf's built libmpi.so (or its directory) providing MPIR_Dup_fn; by
default a scratch library is built from the generated weak stubs.
Exit status: 0 pass, 1 differences, 77 skip (MPICH header or library absent).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WHARF_INC = os.path.join(ROOT, "include")
GENAPI = os.path.join(ROOT, "tools", "gen", "genapi.py")
API = os.path.join(ROOT, "tools", "gen", "mpi_api.txt")
MPICH_INC = "/usr/include/x86_64-linux-gnu/mpich"
MPICH_LIB = "/usr/lib/x86_64-linux-gnu/libmpich.so.12"
CC = os.environ.get("CC", "cc")

# wharf names whose value differs from MPICH 4.0 on purpose.
EXPECTED_DIFF = {
    "MPI_SUBVERSION": "wharf implements MPI-4.1, MPICH 4.0 reports 4.0",
}
# Object-like macros of either header that are not MPI constants.
NOT_CONSTANTS = {"MPI_FILE_DEFINED", "MPI_INCLUDED", "MPI_PROTO_H_INCLUDED"}
# MPI_* names only MPICH defines (implementation-specific, not MPI-4.1).
MPICH_ONLY = {"MPI_AINT_FMT_DEC_SPEC", "MPI_AINT_FMT_HEX_SPEC",
              "MPI_T_VERBOSITY_INVALID", "MPI_T_BIND_INVALID", "MPI_T_SCOPE_INVALID",
              "MPI_T_PVAR_CLASS_INVALID"}

TYPES = ["MPI_Aint", "MPI_Offset", "MPI_Count", "MPI_Fint", "MPI_Comm", "MPI_Datatype",
         "MPI_Group", "MPI_Op", "MPI_Errhandler", "MPI_Request", "MPI_Message", "MPI_Info",
         "MPI_Win", "MPI_Session", "MPI_File", "MPI_Status", "MPI_F08_status",
         "MPI_T_enum", "MPI_T_cvar_handle", "MPI_T_pvar_handle", "MPI_T_pvar_session",
         "MPI_T_event_registration", "MPI_T_event_instance", "MPI_T_cb_safety",
         "MPI_T_source_order"]
STATUS_FIELDS = ["count_lo", "count_hi_and_cancelled", "MPI_SOURCE", "MPI_TAG", "MPI_ERROR"]

PROGRAM_HEAD = r"""
#define _GNU_SOURCE 1
#include <mpi.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

static void pr_i(const char *n, long long v) { printf("%s = %lld\n", n, v); }
static void pr_u(const char *n, unsigned long long v) { printf("%s = %llu (unsigned)\n", n, v); }
static void pr_p(const char *n, const void *p)
{
    Dl_info di;
    uintptr_t v = (uintptr_t)p;
    if (v > 0x10000 && v < (uintptr_t)-0x10000 && dladdr(p, &di) && di.dli_sname)
        printf("%s = &%s\n", n, di.dli_sname);
    else
        printf("%s = (pointer)%#lx\n", n, (unsigned long)v);
}
#define PR(x) _Generic((x), \
    int: pr_i, long: pr_i, long long: pr_i, short: pr_i, signed char: pr_i, char: pr_i, \
    unsigned: pr_u, unsigned long: pr_u, unsigned long long: pr_u, \
    default: pr_p)(#x, (x))
#define TNAME(t) _Generic((t)0, int: "int", long: "long", long long: "long long", \
    unsigned: "unsigned", unsigned long: "unsigned long", default: "other")
#define TYPE(t) printf("type %s: size %zu, %s\n", #t, sizeof(t), TNAME(t))
#define STRUCT(t) printf("type %s: size %zu\n", #t, sizeof(t))
#define FIELD(t, f) printf("field %s.%s: offset %zu, size %zu\n", #t, #f, \
                           offsetof(t, f), sizeof(((t *)0)->f))

int main(void)
{
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def macro_names(inc_dirs, header="mpi.h"):
    """Object-like MPI_* macros defined after including header."""
    args = [CC, "-E", "-dM", "-x", "c", "-"] + ["-I" + d for d in inc_dirs]
    out = run(args, input="#include <%s>\n" % header)
    names = set()
    for line in out.splitlines():
        m = re.match(r"#define (MPI_[A-Z0-9_]+)(\s|$)", line)  # '(' right after = function-like
        if m:
            names.add(m.group(1))
    return names - NOT_CONSTANTS


def enumerator_names(inc_dirs, header="mpi.h"):
    """MPI_* enumerators declared after including header."""
    args = [CC, "-E", "-P", "-x", "c", "-"] + ["-I" + d for d in inc_dirs]
    out = run(args, input="#include <%s>\n" % header)
    names = set()
    for tag, body in re.findall(r"\benum\b\s*(\w*)\s*\{([^}]*)\}", out):
        if tag.startswith("QMPI"):  # MPICH's tool-interception function enum
            continue
        for item in body.split(","):
            m = re.match(r"\s*(MPI_[A-Z0-9_]+)\b", item)
            if m:
                names.add(m.group(1))
    return names


def program(constants):
    lines = [PROGRAM_HEAD]
    for t in TYPES:
        if t in ("MPI_Status", "MPI_F08_status"):
            lines.append("    STRUCT(%s);\n" % t)
            for f in STATUS_FIELDS:
                lines.append("    FIELD(%s, %s);\n" % (t, f))
        elif t.startswith("MPI_T_") and t not in ("MPI_T_cb_safety", "MPI_T_source_order"):
            lines.append('    printf("type %s: size %%zu\\n", sizeof(%s));\n' % (t, t))
        elif t == "MPI_File":
            lines.append('    printf("type MPI_File: size %zu\\n", sizeof(MPI_File));\n')
        else:
            lines.append("    TYPE(%s);\n" % t)
    for c in constants:
        lines.append("    PR(%s);\n" % c)
    lines.append("    return 0;\n}\n")
    return "".join(lines)


def build_and_run(tmp, tag, source, inc_dirs, link):
    src = os.path.join(tmp, "consts_%s.c" % tag)
    exe = os.path.join(tmp, "consts_%s" % tag)
    with open(src, "w") as f:
        f.write(source)
    cmd = [CC, "-std=c11", "-O0", "-w", "-o", exe, src] + ["-I" + d for d in inc_dirs] + link
    try:
        run(cmd)
    except subprocess.CalledProcessError as e:
        sys.exit("check_constants: compiling against %s failed:\n%s%s" % (tag, e.stdout, e.stderr))
    return run([exe]).splitlines()


def dynamic_symbols(lib):
    """name -> (nm type, size) of the defined dynamic symbols of lib."""
    syms = {}
    for line in run(["nm", "-D", "-S", "--defined-only", lib]).splitlines():
        parts = line.split()
        if len(parts) == 4:
            syms[parts[3].split("@")[0]] = (parts[2], int(parts[1], 16))
        elif len(parts) == 3:
            syms[parts[2].split("@")[0]] = (parts[1], 0)
    return syms


def check_symbols(our_lib):
    """Every MPI_/PMPI_ symbol (and MPIR_Dup_fn) libmpich exports must be
    exported by wharf; exported data objects must have the same size (a
    program linked against MPICH holds copy relocations of that size)."""
    theirs = dynamic_symbols(MPICH_LIB)
    ours = dynamic_symbols(our_lib)
    failures = 0
    for name, (kind, size) in sorted(theirs.items()):
        if not (name.startswith(("MPI_", "PMPI_")) or name == "MPIR_Dup_fn"):
            continue
        if name not in ours:
            print("SYMBOL %s (%s in libmpich) not exported by %s" % (name, kind, our_lib))
            failures += 1
        elif kind in "BDRVbdr" and ours[name][1] != size:
            print("SYMBOL %s: size %d in libmpich, %d in wharf" % (name, size, ours[name][1]))
            failures += 1
    return failures


def scratch_wharf_lib(tmp, gen_dir):
    """libwharfabi.so from the generated stubs (exports MPIR_Dup_fn and all MPI_x)."""
    dummy = os.path.join(tmp, "dummy_err.c")
    with open(dummy, "w") as f:
        f.write("int wh_err_unimplemented(const char *fname);\n"
                "int wh_err_unimplemented(const char *fname) { (void)fname; return 15; }\n")
    lib = os.path.join(tmp, "libwharfabi.so")
    run([CC, "-std=c11", "-shared", "-fPIC", "-w", "-I" + WHARF_INC, "-I" + gen_dir, "-o", lib,
         os.path.join(gen_dir, "wharf_stubs.c"), dummy])
    return lib


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", help="wharf's built libmpi.so or its directory")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()
    if not os.path.exists(os.path.join(MPICH_INC, "mpi.h")) or not os.path.exists(MPICH_LIB):
        print("check_constants: MPICH header or library not found; skipping")
        return 77

    tmp = tempfile.mkdtemp(prefix="wharf-abi-")
    try:
        gen = os.path.join(tmp, "gen")
        os.makedirs(gen)
        run([sys.executable, GENAPI, "--api", API, "--proto-out", gen + "/",
             "--stubs-out", gen + "/"])
        ours_inc = [WHARF_INC, gen]

        ours = macro_names(ours_inc) | enumerator_names(ours_inc)
        theirs_decl = macro_names([MPICH_INC]) | enumerator_names([MPICH_INC])
        mpich_pp = run([CC, "-E", "-P", "-x", "c", "-", "-I" + MPICH_INC],
                       input="#include <mpi.h>\n")
        in_mpich = {c for c in ours if c in theirs_decl or re.search(r"\b%s\b" % c, mpich_pp)}
        wharf_only = sorted(ours - in_mpich)
        compared = sorted(in_mpich)
        missing = sorted(c for c in theirs_decl - ours
                         if not c.startswith(("MPIX_", "MPICH_", "MPIR_", "MPII_"))
                         and c not in MPICH_ONLY)

        if args.lib:
            lib = args.lib
            if os.path.isdir(lib):
                lib = os.path.join(lib, "libmpi.so")
            libdir = os.path.dirname(os.path.abspath(lib))
            link = [lib, "-Wl,-rpath," + libdir]
        else:
            lib = scratch_wharf_lib(tmp, gen)
            link = [lib, "-Wl,-rpath," + tmp]
        src = program(compared)
        out_mpich = build_and_run(tmp, "mpich", src, [MPICH_INC],
                                  [MPICH_LIB, "-Wl,--no-as-needed", "-ldl"])
        out_ours = build_and_run(tmp, "wharf", src, ours_inc, link + ["-ldl"])

        failures = 0
        for a, b in zip(out_mpich, out_ours):
            if a != b:
                name = b.split(" = ")[0]
                if name in EXPECTED_DIFF:
                    print("expected difference: %s | %s (%s)" % (a, b, EXPECTED_DIFF[name]))
                    continue
                print("DIFF  mpich: %s\n      wharf: %s" % (a, b))
                failures += 1
        if len(out_mpich) != len(out_ours):
            print("DIFF  output lengths differ (%d vs %d)" % (len(out_mpich), len(out_ours)))
            failures += 1
        for c in missing:
            print("MISSING in wharf's mpi.h: %s (defined by MPICH)" % c)
            failures += 1
        failures += check_symbols(lib)
        print("checked %d constants and %d types; %d wharf-only (MPI-4.1, not in MPICH 4.0): %s"
              % (len(compared), len(TYPES), len(wharf_only), " ".join(wharf_only)))
        print("check_constants: %s" % ("FAIL (%d)" % failures if failures else "PASS"))
        return 1 if failures else 0
    finally:
        if args.keep:
            print("scratch directory kept: %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
