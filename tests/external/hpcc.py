#!/usr/bin/env python3
"""Build the HPC Challenge benchmark (HPCC 1.5.0: HPL, PTRANS, RandomAccess, FFT, STREAM, DGEMM,
b_eff latency/bandwidth) with wharf's mpicc and run it, natively or in a container scenario.

    tests/external/hpcc.py [--build build] [--scenario native] [--ranks 4] [--timeout 600] [--setup-only]

HPCC is an application written by others (University of Tennessee, HLRS): its MPI usage is
theirs, read and run unchanged.  The source comes from Debian's archive (hpcc_1.5.0.orig.tar.gz,
SHA-256 of Debian's .dsc), downloaded once into $WHARF_CACHE_DIR (default ~/.cache/wharf); it is
compiled with wharf's mpicc against OpenBLAS and run with wharfrun on a small problem (N=1000).
The run passes when HPCC reports Success=1 and every check it makes passes: HPL's and PTRANS's
scaled residuals, RandomAccess's error counts, FFT's error, STREAM's validation, no node with
errors.  Exit 77 (skip) when the source cannot be fetched or the scenario cannot be built.
docs/TESTING.md, "External suites".
"""
import argparse, os, re, shutil, subprocess, sys, tarfile, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mpich_suite  # noqa: E402  (fetch: download once, SHA-256 checked)

URL = "http://deb.debian.org/debian/pool/main/h/hpcc/hpcc_1.5.0.orig.tar.gz"
SHA256 = "0a6fef7ab9f3347e549fed65ebb98234feea9ee18aea0c8f59baefbe3cf7ffb8"
TOP = "hpcc-1.5.0"
SKIP = 77

# HPL's generic CBLAS makefile with wharf's compiler wrapper as CC and linker
MAKE_ARCH = """\
SHELL = /bin/sh
CD = cd
CP = cp
LN_S = ln -s
MKDIR = mkdir
RM = /bin/rm -f
TOUCH = touch
ARCH = $(arch)
TOPdir = ../../..
INCdir = $(TOPdir)/include
BINdir = $(TOPdir)/bin/$(ARCH)
LIBdir = $(TOPdir)/lib/$(ARCH)
HPLlib = $(LIBdir)/libhpl.a
MPdir =
MPinc =
MPlib =
LAdir =
LAinc =
LAlib = {blas} -lm
F2CDEFS =
HPL_INCLUDES = -I$(INCdir) -I$(INCdir)/$(ARCH) $(LAinc) $(MPinc)
HPL_LIBS = $(HPLlib) $(LAlib) $(MPlib)
HPL_OPTS = -DHPL_CALL_CBLAS
HPL_DEFS = $(F2CDEFS) $(HPL_OPTS) $(HPL_INCLUDES)
CC = {mpicc}
CCNOOPT = $(HPL_DEFS)
CCFLAGS = $(HPL_DEFS) -O2 -fcommon -w
LINKER = {mpicc}
LINKFLAGS = $(CCFLAGS)
ARCHIVER = ar
ARFLAGS = r
RANLIB = echo
"""

# hpccinf.txt: HPL N=1000 NB=80 on a P x Q grid, one PTRANS size (HPCC's sample input, smaller)
INPUT = """\
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
"""


def log(msg):
    print(msg, flush=True)


def blas_lib():
    """-l flag of a CBLAS the linker finds (OpenBLAS, else the reference BLAS)."""
    for lib, flag in (("libopenblas.so", "-lopenblas"), ("libcblas.so", "-lcblas -lblas"), ("libblas.so", "-lblas")):
        for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
            if os.path.exists(os.path.join(d, lib)):
                return flag
    return None


def build_hpcc(tarball, build, work, mpicc):
    """Path of the hpcc binary built with `mpicc` (rebuilt when it or wharf's mpi.h changes)."""
    src = os.path.join(work, TOP)
    exe = os.path.join(src, "hpcc")
    stamp = os.path.join(src, ".built")
    want = f"{mpicc}\n{os.path.getmtime(os.path.join(build, 'include', 'mpi.h'))}\n"
    if os.path.exists(exe) and os.path.exists(stamp) and open(stamp).read() == want:
        return exe
    blas = blas_lib()
    if not blas:
        log("hpcc: no BLAS library found (apt-get install libopenblas-dev)")
        return None
    shutil.rmtree(src, ignore_errors=True)
    tmp = tempfile.mkdtemp(dir=work)
    with tarfile.open(tarball) as t:
        t.extractall(tmp)
    os.rename(os.path.join(tmp, TOP), src)
    shutil.rmtree(tmp)
    with open(os.path.join(src, "hpl", "Make.wharf"), "w") as f:
        f.write(MAKE_ARCH.format(mpicc=mpicc, blas=blas))
    t0 = time.time()
    with open(os.path.join(work, "make.log"), "w") as f:
        rc = subprocess.run(["make", "arch=wharf", "-j2"], cwd=src, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0 or not os.path.exists(exe):
        log(f"hpcc: build failed (see {work}/make.log)")
        return None
    log(f"hpcc: built with {mpicc} and {blas} in {time.time() - t0:.0f} s")
    open(stamp, "w").write(want)
    return exe


def grid(n):
    p = int(n ** 0.5)
    while n % p:
        p -= 1
    return p, n // p


def check(out):
    """[problems] found in hpccoutf.txt (empty: every check HPCC makes passed)."""
    bad = []
    if not re.search(r"^Success=1$", out, re.M):
        bad.append("HPCC did not report Success=1")
    for sec in ("HPL", "PTRANS"):
        m = re.search(rf"Begin of {sec} section\.(.*?)End of {sec} section\.", out, re.S)
        if not m:
            bad.append(f"no {sec} section")
            continue
        body = m.group(1)
        passed = re.search(r"(\d+) tests completed and passed residual checks", body)
        failed = re.search(r"(\d+) tests completed and failed residual checks", body)
        if not passed or int(passed.group(1)) == 0:
            bad.append(f"{sec}: no test passed its residual check")
        if not failed or int(failed.group(1)) != 0:
            bad.append(f"{sec}: {failed.group(1) if failed else '?'} tests failed their residual check")
    found = re.findall(r"Found (\d+) errors in (\d+) locations \((\w+)\)", out)
    if len(found) < 4:
        bad.append(f"RandomAccess: {len(found)} verifications instead of 4")
    bad += [f"RandomAccess: {e} errors in {n} locations ({v})" for e, n, v in found if v != "passed"]
    bad += [f"a benchmark reports errors on {k} node(s)" for k in re.findall(r"Node\(s\) with error (\d+)", out)
            if k != "0"]
    fft = re.search(r"Begin of MPIFFT section\..*?max\(\|x-x0\|\): (\S+)", out, re.S)
    if not fft or not float(fft.group(1)) < 1e-10:
        bad.append(f"MPIFFT: max(|x-x0|) = {fft.group(1) if fft else 'missing'}")
    if "Solution Validates" not in out:
        bad.append("STREAM did not validate")
    for key in ("HPL_Tflops", "PTRANS_GBs", "MPIRandomAccess_GUPs", "MPIFFT_Gflops", "MinPingPongBandwidth_GBytes"):
        m = re.search(rf"^{key}=(\S+)$", out, re.M)
        if not m or not float(m.group(1)) > 0:
            bad.append(f"{key} missing or not positive")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="work directory (default BUILD/hpcc)")
    ap.add_argument("--scenario", default="native")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--n", type=int, default=1000, help="HPL problem size")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--abi", choices=["wharf", "mpich"], default="wharf",
                    help="mpich: build with Debian's mpicc.mpich against MPICH's mpi.h and run the "
                         "binary on wharf's libmpi.so.12 (LD_LIBRARY_PATH): the ABI promise")
    ap.add_argument("--setup-only", action="store_true", help="fetch and build; run nothing")
    ap.add_argument("--cache", default=os.environ.get("WHARF_CACHE_DIR", os.path.expanduser("~/.cache/wharf")))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work or os.path.join(build, "hpcc" if a.abi == "wharf" else "hpcc-mpich"))
    os.makedirs(work, exist_ok=True)
    tarball = mpich_suite.fetch(a.cache, URL, SHA256, "hpcc")
    if not tarball:
        log("SKIP: HPCC's source is not available")
        return SKIP
    mpicc = os.path.join(build, "bin", "mpicc")
    if a.abi == "mpich":
        mpicc = shutil.which("mpicc.mpich")
        if not mpicc:
            log("SKIP: no mpicc.mpich (apt-get install libmpich-dev)")
            return SKIP
    exe = build_hpcc(tarball, build, work, mpicc)
    if not exe:
        return 1
    if a.setup_only:
        return 0
    lab_cm, why = mpich_suite.scenario_lab(a.scenario)
    if why:
        log(f"SKIP: {why}")
        return SKIP
    rundir = os.path.join(work, "run-" + a.scenario)
    shutil.rmtree(rundir, ignore_errors=True)
    os.makedirs(rundir)
    p, q = grid(a.ranks)
    with open(os.path.join(rundir, "hpccinf.txt"), "w") as f:
        f.write(INPUT.format(n=a.n, p=p, q=q))
    lab = lab_cm.__enter__() if lab_cm else None
    try:
        wharfrun = os.path.join(build, "bin", "wharfrun")
        opts = ["--timeout", str(a.timeout), "-x", "OPENBLAS_NUM_THREADS=1", "-x", "WHARF_REPORT=channels"]
        if a.abi == "mpich":  # MPICH's binary finds wharf's libmpich.so.12 / libmpi.so.12 first
            lib = os.path.join(build, "lib")
            opts += ["-x", "LD_LIBRARY_PATH=" + lib + (":" + os.environ["LD_LIBRARY_PATH"]
                                                         if os.environ.get("LD_LIBRARY_PATH") else "")]
        cmd, env = mpich_suite.launch_cmd(lab, wharfrun, a.ranks, [exe], opts)
        t0 = time.time()
        r = subprocess.run(cmd, cwd=rundir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=a.timeout + 60)
        took = time.time() - t0
    finally:
        if lab_cm:
            lab_cm.__exit__(None, None, None)
    outf = os.path.join(rundir, "hpccoutf.txt")
    out = open(outf).read() if os.path.exists(outf) else ""
    if r.returncode != 0:
        log(r.stdout[-4000:])
        log(f"hpcc {a.scenario}: wharfrun exited {r.returncode} after {took:.0f} s")
        return 1
    bad = check(out)
    # every rank ran on wharf (the channel report is wharf's), not on a library found elsewhere
    reports = len(re.findall(r"^wharf: rank \d+ channels:", r.stdout, re.M))
    if reports != a.ranks:
        bad.append(f"{reports} of {a.ranks} ranks printed wharf's channel report (not running on wharf?)")
    for b in bad:
        log(f"  FAIL {b}")
    summary = {k: v for k, v in re.findall(r"^(HPL_Tflops|PTRANS_GBs|MPIRandomAccess_GUPs|MPIFFT_Gflops|"
                                            r"RandomlyOrderedRingLatency_usec|MinPingPongBandwidth_GBytes)=(\S+)$",
                                            out, re.M)}
    log(f"hpcc {a.scenario} (built with {os.path.basename(mpicc)}; {a.ranks} ranks, {p}x{q} grid, N={a.n}): "
        f"{'passed' if not bad else 'FAILED'} in {took:.0f} s; " + ", ".join(f"{k}={v}" for k, v in summary.items()))
    if bad:
        log(f"  output: {outf}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
