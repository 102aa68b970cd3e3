#!/usr/bin/env python3
"""ADIOS 1.x (Debian's libadios-mpich-dev, ADIOS 1.13.1 built against MPICH) on wharf's
libmpich.so.12: tests/external/adios_rw.c is compiled with Debian's mpicc.mpich (MPICH's mpi.h,
linked with libmpich.so.12) against ADIOS's static libraries, then run unchanged on wharf, natively
or in a container scenario, once per write method: POSIX (one subfile per rank, metadata gathered
to rank 0), MPI (one shared file through MPI-IO: MPI_File_open/seek/write, offsets passed along
with point-to-point messages and collectives) and MPI_AGGREGATE with 1 and 2 aggregators (data
sent to aggregator ranks with MPI_Isend/Irecv, MPI_Comm_split).  Each run writes 3 steps and reads
them back in parallel with the BP read method (MPI_Bcast of the metadata); the program checks every
value; then Debian's bpls (libadios-bin) lists the file and the listing must show the expected
shape and range.

    tests/external/adios.py [--build build] [--scenario native] [-n 4] [--timeout 300]

Debian's libadios.a for MPICH refers to netCDF's parallel API (its NC4 method), but Debian's
libnetcdf_mpi is built for Open MPI (it would load libmpi.so.40 next to libmpich.so.12), so the
program is linked with stubs for those 14 functions (the NC4 method is not used).  Passes when every
method's run exits 0, prints "passed", every rank prints wharf's channel report and bpls agrees.
Exit 77 (skip) without the packages or the scenario.  First run (2026-11-30): MPICH and wharf
(native, pidpriv, twohost; 2 and 4 ranks) wrote byte-identical bpls/bpdump listings; 0.1-2.5 s
per run.  docs/TESTING.md, "External suites".
"""
import os, re, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from extrun import SKIP, app_args, lab_for, log, reports_bad, run, rundir, verdict, wharf_opts  # noqa: E402

MPICC = "/usr/bin/mpicc.mpich"
BPLS = "/usr/bin/bpls.mpich"
LIB = "/usr/lib/x86_64-linux-gnu"
ADIOS = LIB + "/adios/mpich"
NC_STUBS = ("nc_close nc_create_par nc_def_dim nc_def_var nc_get_var nc_get_vara nc_inq_dimid nc_inq_dimlen "
            "nc_inq_varid nc_open_par nc_put_var nc_put_vara nc_sync nc_var_par_access").split()
METHODS = [("POSIX", "POSIX", ""), ("MPI", "MPI", ""),
           ("AGG1", "MPI_AGGREGATE", "num_aggregators=1;num_ost=1"),
           ("AGG2", "MPI_AGGREGATE", "num_aggregators=2;num_ost=2")]
STEPS = 3


def build_prog(work):
    """Path of the compiled adios_rw, or None (logged)."""
    stub = os.path.join(work, "ncstub.c")
    with open(stub, "w") as f:
        f.write("#include <stdio.h>\n" + "".join(
            f'int {s}() {{ fprintf(stderr, "ncstub: {s} called\\n"); return -1; }}\n' for s in NC_STUBS))
    exe = os.path.join(work, "adios_rw")
    cc = [MPICC, "-O1", "-w", "-Wl,--as-needed", "-o", exe, os.path.join(HERE, "adios_rw.c"), stub,
          "-I/usr/include/hdf5/mpich", "-L" + ADIOS, "-ladios", "-ladiosread", "-lhdf5_mpich_hl", "-lhdf5_mpich",
          "-lz", "-libverbs", "-l:libglib-2.0.so.0", "-lbz2", "-lsz", "-l:liblz4.so.1", "-l:libblosc.so.1",
          "-lm", "-lpthread", "-ldl"]
    r = subprocess.run(cc, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        log(f"FAILED: {' '.join(cc)}\n{r.stdout}")
        return None
    ldd = subprocess.run(["ldd", exe], stdout=subprocess.PIPE, text=True).stdout
    if "libmpich.so.12" not in ldd or "libmpi.so.40" in ldd:
        log(f"FAILED: {exe} does not link libmpich.so.12 alone:\n{ldd}")
        return None
    return exe


def bpls_bad(path, n):
    """[problems] in bpls's listing of PATH written by n ranks over STEPS steps."""
    r = subprocess.run([BPLS, "-l", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    gi = sum(10 + i for i in range(n))
    want = [rf"double\s+T\s+{STEPS}\*\{{{37 * n}, 1000\}} = 0 /",
            rf"integer\s+I\s+{STEPS}\*\{{{gi}\}} = 0 / {(STEPS - 1) * 100000 + (n - 1) * 1000 + 9 + n - 1} ",
            rf"integer\s+step\s+{STEPS}\*scalar = 0 / {STEPS - 1} "]
    bad = [] if r.returncode == 0 else [f"bpls exit status {r.returncode}"]
    return bad + [f"bpls {os.path.basename(path)}: no /{w}/" for w in want if not re.search(w, r.stdout)]


def main():
    a = app_args(__doc__, "adios", "ranks", 4)
    for p, pkg in ((MPICC, "libmpich-dev"), (BPLS, "libadios-bin"), (ADIOS + "/libadios.a", "libadios-mpich-dev")):
        if not os.path.exists(p):
            log(f"SKIP: {p} missing (apt-get install {pkg})")
            return SKIP
    lab_cm = lab_for(BPLS, "libadios-bin", a.scenario)
    if not lab_cm:
        return SKIP
    build = os.path.abspath(a.build)
    work = rundir(build, a.work, "adios", a.scenario)
    exe = build_prog(work)
    if not exe:
        return 1
    t0 = time.time()
    bad, outs = [], []
    with lab_cm as lab:
        for name, method, params in METHODS:
            bp = os.path.join(work, name + ".bp")
            rc, out = run(lab, build, a.n, [exe, method, params, bp, str(STEPS)],
                          wharf_opts(build, a.timeout), work, a.timeout)
            outs.append(out)
            with open(os.path.join(work, name + ".out"), "w") as f:
                f.write(out)
            b = [] if rc == 0 else [f"exit status {rc}"]
            if not re.search(rf"^adtest {method} on {a.n} ranks, {STEPS} steps: passed", out, re.M):
                b.append("no 'passed'")
            b += reports_bad(out, a.n)
            if rc == 0:
                b += bpls_bad(bp, a.n)
            bad += [f"{name}: {x}" for x in b]
    return verdict(f"adios {a.scenario} (-n {a.n})", bad, "\n".join(outs), t0)


if __name__ == "__main__":
    sys.exit(main())
