#!/usr/bin/env python3
"""Parallel HDF5 on wharf's MPI-IO: tests/external/hdf5_par.c, compiled with wharf's mpicc against
Debian's HDF5 for MPICH (libhdf5-mpich-dev, whose libhdf5 links libmpich.so.12), writes three
datasets (collective, independent, chunked and deflate-compressed) from every rank, reopens the
file and checks every value another rank wrote, natively or in a container scenario.

    tests/external/hdf5.py [--build build] [--scenario native] [-n 4]

HDF5 is a library written by others and the most common user of MPI-IO: its MPI-IO file driver
opens the file collectively, sets file views with derived datatypes, and writes and reads with
MPI_File_write_at_all / read_at_all and their independent forms; its metadata cache adds
broadcasts and allreduces.  Passes when the program prints "hdf5 ok", exits 0 and every rank
prints wharf's channel report.  Exit 77 (skip) without the package or the scenario.
docs/TESTING.md, "External suites".
"""
import argparse, os, re, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from extrun import SKIP, Lab, log, reports, run, rundir, verdict, wharf_opts  # noqa: E402

H5INC = "/usr/include/hdf5/mpich"
H5LIB = "/usr/lib/x86_64-linux-gnu/hdf5/mpich"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="work directory (default BUILD/hdf5)")
    ap.add_argument("--scenario", default="native")
    ap.add_argument("-n", type=int, default=4, help="ranks")
    ap.add_argument("--timeout", type=int, default=300, help="seconds")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(H5INC, "hdf5.h")) or not os.path.exists(os.path.join(H5LIB, "libhdf5.so")):
        log("SKIP: HDF5 for MPICH missing (apt-get install libhdf5-mpich-dev)")
        return SKIP
    build = os.path.abspath(a.build)
    lab_cm = Lab(a.scenario)
    if lab_cm.why:
        log(f"SKIP: {lab_cm.why}")
        return SKIP
    work = rundir(build, a.work, "hdf5", a.scenario)
    exe = os.path.join(work, "hdf5_par")
    cc = [os.path.join(build, "bin", "mpicc"), "-O2", "-Wall", "-Werror", "-I" + H5INC,
          os.path.join(HERE, "hdf5_par.c"), "-L" + H5LIB, "-Wl,-rpath," + H5LIB, "-lhdf5", "-o", exe]
    r = subprocess.run(cc, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        log(f"FAILED: {' '.join(cc)}\n{r.stdout}")
        return 1
    t0 = time.time()
    with lab_cm as lab:
        rc, out = run(lab, build, a.n, [exe, os.path.join(work, "wharf-test.h5")], wharf_opts(build, a.timeout),
                      work, a.timeout)
    bad = [] if rc == 0 else [f"exit status {rc}"]
    if not re.search(r"^hdf5 ok", out, re.M):
        bad.append("no 'hdf5 ok'")
    if reports(out) != a.n:
        bad.append(f"{reports(out)} wharf channel reports for {a.n} ranks (not running on wharf?)")
    return verdict(f"hdf5 {a.scenario} (-n {a.n})", bad, out, t0)


if __name__ == "__main__":
    sys.exit(main())
