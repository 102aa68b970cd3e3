#!/usr/bin/env python3
"""Run Debian's ScaLAPACK test programs (package scalapack-mpi-test: the BLACS tester, the PBLAS
testers and the ScaLAPACK drivers, built by Debian against MPICH and linked with libmpich.so.12)
unchanged on wharf's libmpi.so.12, natively or in a container scenario.

    tests/external/scalapack.py [--build build] [--scenario native] [--set ci|all] [--only x,y]

ScaLAPACK is an application written by others (netlib); these binaries were compiled by Debian
with MPICH's mpi.h and mpif.h, so they test the ABI promise (handles, constants, Fortran
bindings through libmpich.so.12) as well as communicators, groups, derived datatypes,
point-to-point and collectives under a real library's usage.  A program passes when it reports
no failed check and, except the BLACS tester (whose last test is BLACS_ABORT, which must take the
whole job down), exits 0 with wharf's channel report from every rank.  Exit 77 (skip) when the
package is not installed or the scenario cannot be built.  docs/TESTING.md, "External suites".

Left out of every set: the LU and Cholesky drivers (xslu..xzllt) and PxHSEQR, which deadlock now
and then on any MPI (ranks take different branches in PxLACON and PxTRORD on rounding
differences: Reference-ScaLAPACK/scalapack issues 121 and 43; seen here with Open MPI too).
"""
import argparse, glob, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mpich_suite  # noqa: E402  (scenario_lab)

TESTS = "/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests"
DATA = "/usr/share/scalapack"
SKIP = 77
# upstream deadlocks (see the docstring)
FLAKY = re.compile(r"^x[sdcz](lu|llt)$|hseqr$")
# the CI set: the BLACS tester (C and Fortran interfaces), one PBLAS level each, drivers touching
# different communication patterns (QR, inverse, SVD, generalised eigenproblem, band LU)
CI = ["xCbtest", "xFbtest", "dpb1tst", "zpb2tst", "dpb3tst", "xdqr", "xzinv", "xdsvd", "xzgsep", "xddblu"]


def log(msg):
    print(msg, flush=True)


def programs():
    """{name: (path, ranks)} from the package's CTest files."""
    progs = {}
    for f in glob.glob(os.path.join(TESTS, "**", "CTestTestfile.cmake"), recursive=True):
        d = os.path.dirname(f)
        for line in open(f):
            m = re.match(r'add_test\((\S+) "[^"]*" "-n" "(\d+)" \$\{MPIEXEC_PREFLAGS\} "([^"]+)"', line)
            if m:
                progs[m.group(1)] = (os.path.join(d, os.path.basename(m.group(3))), int(m.group(2)))
            elif re.match(r"add_test\(x[CF]btest ", line):
                name = line.split("(")[1].split()[0]
                progs[name] = (os.path.join(d, name), 4)
    return progs


def check(name, rc, out):
    """[problems] in one program's output (empty: it passed)."""
    bad = []
    if name.endswith("btest"):  # BLACS tester: summary lines, then BLACS_ABORT ends the job
        sums = re.findall(r"^(.*TESTS:\s+\d+ TESTS;\s+(\d+) PASSED,\s+\d+ SKIPPED,\s+(\d+) FAILED\.)", out, re.M)
        if len(sums) < 20:
            bad.append(f"{len(sums)} test summaries instead of at least 20")
        bad += [s[0].strip() for s in sums if s[2] != "0" or s[1] == "0"]
        if "PASSED  BLACS_SET/BLACS_GET TESTS" not in out:
            bad.append("the auxiliary tests did not pass")
        if not re.search(r"killed other procs, exiting with error #-1", out) or rc == 0:
            bad.append(f"BLACS_ABORT did not take the job down (exit {rc})")
        if not re.search(r"^wharf: rank \d+: MPI_Abort", out, re.M):
            bad.append("no wharf MPI_Abort report (not running on wharf?)")
        return bad
    if rc != 0:
        bad.append(f"exit status {rc}")
    if re.search(r"pb\dtst$", name):  # PBLAS: a table of TOTAL / PASSED / FAILED / SKIPPED per routine
        rows = re.findall(r"^\s*\|\s+(P\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", out, re.M)
        if not rows:
            bad.append("no PBLAS result table")
        bad += [f"{r[0]}: {r[3]} failed" for r in rows if r[3] != "0"]
        if rows and not any(int(r[2]) > 0 for r in rows):
            bad.append("no PBLAS test passed")
        if "End of Tests." not in out:
            bad.append("no 'End of Tests.'")
    else:  # drivers: "N tests completed and passed/failed ...", or Passed/Failed per line (SVD)
        passed = sum(map(int, re.findall(r"(\d+) tests completed and passed", out)))
        passed += len(re.findall(r"^\s*Passed\b|\bPASSED\s*$", out, re.M))
        failed = sum(map(int, re.findall(r"(\d+) tests completed and failed", out)))
        failed += len(re.findall(r"^\s*Failed\b|\bFAILED\s*$", out, re.M))
        if passed == 0:
            bad.append("no test passed")
        if failed:
            bad.append(f"{failed} failed tests")
        if not re.search(r"END OF TESTS|End of tests", out, re.I):
            bad.append("no end-of-tests line")
    reports = len(re.findall(r"^wharf: rank \d+ channels:", out, re.M))
    if reports == 0:
        bad.append("no wharf channel report (not running on wharf?)")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="work directory (default BUILD/scalapack)")
    ap.add_argument("--scenario", default="native")
    ap.add_argument("--set", choices=["ci", "all"], default="ci")
    ap.add_argument("--only", help="comma-separated program names (overrides --set)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program")
    a = ap.parse_args()
    if not os.path.isdir(TESTS):
        log(f"SKIP: {TESTS} missing (apt-get install scalapack-mpi-test)")
        return SKIP
    build = os.path.abspath(a.build)
    progs = programs()
    names = a.only.split(",") if a.only else CI if a.set == "ci" else sorted(
        n for n in progs if not FLAKY.search(n) and not n.endswith("tim"))  # ?pb?tim: timers, no checks
    missing = [n for n in names if n not in progs]
    if missing:
        log(f"unknown programs: {missing}")
        return 1
    lab_cm, why = mpich_suite.scenario_lab(a.scenario)
    if why:
        log(f"SKIP: {why}")
        return SKIP
    work = os.path.abspath(a.work or os.path.join(build, "scalapack"))
    rundir = os.path.join(work, "run-" + a.scenario)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    for sub in ("", "PBLAS", "BLACS"):
        for f in glob.glob(os.path.join(DATA, sub, "*.dat")):
            shutil.copy(f, rundir)
    wharfrun = os.path.join(build, "bin", "wharfrun")
    lib = os.path.join(build, "lib")
    ldp = lib + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    opts = ["--timeout", str(a.timeout), "-x", "OPENBLAS_NUM_THREADS=1", "-x", "WHARF_REPORT=channels",
            "-x", "LD_LIBRARY_PATH=" + ldp]
    failures, t00 = [], time.time()
    lab = lab_cm.__enter__() if lab_cm else None
    try:
        for name in names:
            exe, n = progs[name]
            cmd, env = mpich_suite.launch_cmd(lab, wharfrun, n, [exe], opts)
            t0 = time.time()
            try:
                r = subprocess.run(cmd, cwd=rundir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=a.timeout + 60)
                rc, out = r.returncode, r.stdout
            except subprocess.TimeoutExpired as e:
                rc, out = -1, (e.stdout or b"").decode(errors="replace") + "\n[killed: timeout]"
            bad = check(name, rc, out)
            open(os.path.join(rundir, name + ".log"), "w").write(out)
            log(f"{a.scenario} {name} (-n {n}): {'ok' if not bad else 'FAILED'} in {time.time() - t0:.0f} s"
                + ("".join(f"\n    {b}" for b in bad)))
            if bad:
                failures.append(name)
                log(out[-3000:])
    finally:
        if lab_cm:
            lab_cm.__exit__(None, None, None)
    log(f"scalapack {a.scenario}: {len(names) - len(failures)}/{len(names)} programs passed in "
        f"{time.time() - t00:.0f} s" + (f"; failed: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
