#!/usr/bin/env python3
"""Feature detection as MPI bindings do it, checked against docs/UNIMPLEMENTED.md.

A binding's configure step (mpi4py's `build --configure`, for example) decides
whether an MPI function exists by compiling and linking a tiny program that
references it; at import or run time it calls what it found.  This test:

  1. every function of tools/gen/mpi_api.txt is exported by libmpi.so.12 if and
     only if docs/UNIMPLEMENTED.md does not list it, and the full-export
     compatibility library lib/compat/libmpi.so.12 exports all of them;
  2. runs real link tests (cc probe.c -lmpi) for a sample of listed and
     unlisted functions, which must fail and succeed accordingly;
  3. builds and runs a program calling the functions issue 14 added (sessions
     without MPI_Init, partitioned requests, f90 types, hardware info), which
     must work, and one linked against the compatibility library calling a
     listed function, which must get an MPI_ERR_OTHER-class error, not a crash.

    probe_features.py --cc CC --build BUILD_DIR --src SOURCE_DIR
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CALLS = r"""
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    MPI_Session s;
    MPI_Group g;
    int n = 0, sz = 0, flag = 0;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) || MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) ||
        MPI_Group_from_session_pset(s, "mpi://SELF", &g) || MPI_Group_size(g, &sz) || MPI_Group_free(&g))
        return 2;
    if (n != 3 || sz != 1)
        return 3;
    MPI_Init(NULL, NULL);
    MPI_Info hw;
    char v[64];
    int len = sizeof v;
    MPI_Datatype t;
    MPI_Request r;
    if (MPI_Get_hw_resource_info(&hw) || MPI_Info_get_string(hw, "mpi_hw_resource_type", &len, v, &flag) || !flag ||
        MPI_Info_free(&hw))
        return 4;
    if (MPI_Type_create_f90_real(15, MPI_UNDEFINED, &t) || MPI_Type_size(t, &sz) || sz != 8)
        return 5;
    int buf[4];
    if (MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r) || MPI_Start(&r) ||
        MPI_Pready_range(0, 1, r) || MPI_Wait(&r, MPI_STATUS_IGNORE) || MPI_Request_free(&r))
        return 6;
    MPI_Finalize();
    if (MPI_Session_finalize(&s))
        return 7;
    printf("calls ok\n");
    return 0;
}
"""

COMPAT_CALL = r"""
#include <mpi.h>
#include <stdio.h>
int main(void)
{
    MPI_Init(NULL, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int n = 0;
    int rc = MPI_T_category_get_num(&n), cls = -1;
    MPI_Error_class(rc, &cls);
    MPI_Finalize();
    printf("rc %d class %d\n", rc, cls);
    return rc != MPI_SUCCESS && cls == MPI_ERR_OTHER ? 0 : 1;
}
"""


def load_api(path):
    api = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                m = re.search(r"\b(MPI_\w+)\s*\(", line)
                if m:
                    api[m.group(1)] = " = " in line
    return api


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    return {p[2].split("@")[0] for p in (l.split() for l in out.splitlines()) if len(p) >= 3}


def link(cc, inc, libdir, src, exe, tmp):
    path = os.path.join(tmp, os.path.basename(exe) + ".c")
    with open(path, "w") as f:
        f.write(src)
    r = subprocess.run([cc, "-o", exe, path, "-I", inc, "-L", libdir, "-Wl,-rpath," + libdir, "-lmpi"],
                       capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--build", required=True)
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    api = load_api(os.path.join(a.src, "tools/gen/mpi_api.txt"))
    with open(os.path.join(a.src, "docs/UNIMPLEMENTED.md"), encoding="utf-8") as f:
        listed = set(re.findall(r"^- `(MPI_\w+)`", f.read(), re.M))
    lib = os.path.join(a.build, "lib/libmpi.so.12")
    compat_dir = os.path.join(a.build, "lib/compat")
    inc = os.path.join(a.build, "include")
    bad = []
    ours, compat = exported(lib), exported(os.path.join(compat_dir, "libmpi.so.12"))
    for name in api:
        want = name not in listed
        for sym in (name, "P" + name):
            if (sym in ours) != want:
                bad.append("%s: exported=%s but docs/UNIMPLEMENTED.md %s it" % (sym, sym in ours,
                                                                                 "lists" if name in listed else "omits"))
            if sym not in compat:
                bad.append("%s: missing from the compatibility library" % sym)
    for name in listed - set(api):
        bad.append("%s: listed in docs/UNIMPLEMENTED.md but not an MPI function of mpi_api.txt" % name)

    # link tests the configure way, on a sample of both kinds (sorted: deterministic)
    new = ["MPI_Session_init", "MPI_Group_from_session_pset", "MPI_Psend_init", "MPI_Parrived", "MPI_Pready_list",
           "MPI_Get_hw_resource_info", "MPI_Type_create_f90_integer", "MPI_Comm_create_from_group"]
    impl = sorted(n for n in api if n not in listed)
    sample = new + impl[:: max(1, len(impl) // 6)] + sorted(listed)[:: max(1, len(listed) // 6)]
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(sample):
            src = "#include <mpi.h>\nint main(void) { void *p = (void *)&%s; return p == 0; }\n" % name
            ok, err = link(a.cc, inc, os.path.join(a.build, "lib"), src, os.path.join(tmp, "probe%d" % i), tmp)
            if ok != (name not in listed):
                bad.append("link test of %s %s (listed: %s) %s" % (name, "succeeded" if ok else "failed",
                                                                   name in listed, err.strip()[-200:]))
        ok, err = link(a.cc, inc, os.path.join(a.build, "lib"), CALLS, os.path.join(tmp, "calls"), tmp)
        if not ok:
            bad.append("calls program does not link: " + err[-400:])
        else:
            r = subprocess.run([os.path.join(tmp, "calls")], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, WHARF_NODE_DIR=tmp))
            if r.returncode != 0 or "calls ok" not in r.stdout:
                bad.append("calls program: exit %d, %s %s" % (r.returncode, r.stdout, r.stderr))
        # the stubs of the compatibility library raise errors (while there is one to call)
        ok, err = (link(a.cc, inc, compat_dir, COMPAT_CALL, os.path.join(tmp, "compat"), tmp)
                   if "MPI_T_category_get_num" in listed else (None, ""))
        if ok is None:
            pass
        elif not ok:
            bad.append("compat program does not link: " + err[-400:])
        else:
            r = subprocess.run([os.path.join(tmp, "compat")], capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, WHARF_NODE_DIR=tmp))
            if r.returncode != 0:
                bad.append("compat program: exit %d, %s %s" % (r.returncode, r.stdout, r.stderr))
    for b in bad:
        print("FAIL", b)
    print("%d functions, %d listed unimplemented, %d link tests: %s" % (len(api), len(listed), len(sample),
                                                                       "FAIL" if bad else "ok"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
