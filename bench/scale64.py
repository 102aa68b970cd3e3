#!/usr/bin/env python3
"""Many ranks on few cores: 8-byte MPI_Allreduce with wharf, Debian's MPICH
and Open MPI side by side (issue 8: 64 ranks on the 2-core machine must
complete 10 000 iterations; report the latency next to the peers').

  bench/scale64.py [--np 64] [--iters 10000] [--warmup 100] [--reps 1]
                   [--timeout 1800] [--mpi wharf,mpich,openmpi] [--build build]

Builds bench/suite/wh_allreduce with each MPI's compiler wrapper (into
BUILD/bench-scale64/<mpi>), runs `wh_allreduce -m 8:8 -i ITERS -x WARMUP` at
NP ranks with each MPI's own launcher on this host, interleaved over the
repetitions (A B C A B C ...), and prints every run and the median per MPI
with wharf / best peer.  A run that fails or times out is reported with the
end of its output, never dropped.  Takes long at the defaults (MPICH polls
without yielding: tens of minutes); try --iters 100 first."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpis(build, np_):
    b = os.path.abspath(build)
    return {
        "wharf": (os.path.join(b, "bin", "mpicc"), [os.path.join(b, "bin", "wharfrun"), "-n", str(np_)], {}),
        "mpich": ("mpicc.mpich", ["mpiexec.mpich", "-n", str(np_)], {}),
        "openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe", "-n", str(np_)], OMPI_ENV),
    }


def build_one(name, cc, outdir):
    if not shutil.which(cc) and not os.path.exists(cc):
        return None, f"{cc} not installed"
    out = os.path.join(outdir, name)
    r = subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "bench", "suite"), f"MPICC={cc}", f"OUT={out}",
                        os.path.join(out, "wh_allreduce")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        return None, "build failed: " + r.stdout[-300:]
    return os.path.join(out, "wh_allreduce"), None


def run_one(launch, env, exe, iters, warmup, timeout):
    """(latency us, None) or (None, why)"""
    argv = launch + [exe, "-m", "8:8", "-i", str(iters), "-x", str(warmup)]
    t0 = time.time()
    try:
        r = subprocess.run(argv, env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        tail = (e.stdout or b"")[-300:]
        return None, f"timeout after {timeout} s: {tail!r}"
    took = time.time() - t0
    for line in r.stdout.splitlines() if r.returncode == 0 else []:
        f = line.split()
        if len(f) == 2 and f[0] == "8":
            try:
                return float(f[1]), None
            except ValueError:
                pass
    return None, f"exit {r.returncode} after {took:.0f} s: {r.stdout[-300:]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=64)
    ap.add_argument("--iters", type=int, default=10000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    ap.add_argument("--mpi", default="wharf,mpich,openmpi")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    table = mpis(a.build, a.np)
    names = [m for m in a.mpi.split(",") if m]
    for m in names:
        if m not in table:
            ap.error(f"unknown MPI {m} (wharf, mpich, openmpi)")
    outdir = os.path.join(os.path.abspath(a.build), "bench-scale64")
    exes, errors, res = {}, {}, {m: [] for m in names}
    for m in names:
        exes[m], err = build_one(m, table[m][0], outdir)
        if err:
            errors[m] = err
    print(f"# 8 B MPI_Allreduce, {a.np} ranks on {os.cpu_count()} cpus, {a.iters} iterations "
          f"(+{a.warmup} warm-up), {a.reps} repetition(s), interleaved; us per call, average over ranks")
    for rep in range(a.reps):
        for m in names:
            if m in errors:
                continue
            _, launch, env = table[m]
            v, err = run_one(launch, env, exes[m], a.iters, a.warmup, a.timeout)
            print(f"rep {rep + 1} {m:8s} " + (f"{v:.2f}" if v is not None else "FAILED: " + err), flush=True)
            if v is not None:
                res[m].append(v)
            else:
                errors.setdefault(m, err)
    print("\n| ranks | " + " | ".join(names) + " | wharf / best peer |")
    print("| --- | " + " | ".join("---" for _ in names) + " | --- |")
    med = {m: statistics.median(v) for m, v in res.items() if v}
    cells = [f"{med[m]:.2f}" if m in med else "failed" for m in names]
    peers = [med[m] for m in ("mpich", "openmpi") if m in med]
    ratio = f"{med['wharf'] / min(peers):.2f}x" if "wharf" in med and peers else "n/a"
    print(f"| {a.np} | " + " | ".join(cells) + f" | {ratio} |")
    for m, e in errors.items():
        print(f"\n{m}: {e}")
    return 0 if "wharf" in med or "wharf" not in names else 1


if __name__ == "__main__":
    sys.exit(main())
