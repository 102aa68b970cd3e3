#!/usr/bin/env python3
"""Side-by-side point-to-point comparison of wharf, Debian's MPICH and Open MPI
on this machine, interleaved (A B C A B C ...) so noise hits all alike.

  bench/compare.py [--build build] [--reps 7] [--markdown]

Builds bench/p2p.c with each MPI's compiler wrapper, runs 8-byte latency and
4 MB bandwidth, reports medians (min-max) and the ratio of wharf to the better
peer.  A peer that is not installed or fails is reported as such."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
            "OMPI_MCA_btl_vader_single_copy_mechanism": "cma", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def mpis(build):
    b = os.path.abspath(build)
    return [
        ("wharf", os.path.join(b, "bin", "mpicc"), [os.path.join(b, "bin", "wharfrun"), "-n", "2"], {}),
        ("mpich", "mpicc.mpich", ["mpiexec.mpich", "-n", "2"], {}),
        ("openmpi", "mpicc.openmpi", ["mpirun.openmpi", "-n", "2"], OMPI_ENV),
    ]


def compile_all(build, outdir):
    ok = {}
    for name, cc, _, _ in mpis(build):
        exe = os.path.join(outdir, f"p2p.{name}")
        if not shutil.which(cc) and not os.path.exists(cc):
            ok[name] = f"{cc} not installed"
            continue
        r = subprocess.run([cc, "-O2", "-w", "-o", exe, os.path.join(ROOT, "bench", "p2p.c")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ok[name] = exe if r.returncode == 0 else "compile failed: " + r.stdout[-300:]
    return ok


def run_one(launch, env, exe, args):
    r = subprocess.run(launch + [exe] + args, env=dict(os.environ, **env), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    vals = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(\d+)\s+([\d.]+)$", line.strip())
        if m:
            vals[int(m.group(1))] = float(m.group(2))
    if r.returncode or not vals:
        raise RuntimeError(r.stdout[-400:])
    return vals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    outdir = os.path.join(os.path.abspath(a.build), "bench")
    os.makedirs(outdir, exist_ok=True)
    exes = compile_all(a.build, outdir)
    tests = [("lat 8 B (us)", ["lat", "-m", "8:8", "-i", "20000", "-w", "1000"], 8, min),
             ("bw 4 MB (MB/s)", ["bw", "-m", "4194304:4194304", "-i", "100", "-W", "16"], 4194304, max)]
    res = {(t[0], m[0]): [] for t in tests for m in mpis(a.build)}
    errors = {}
    for _ in range(a.reps):
        for t in tests:
            for name, _, launch, env in mpis(a.build):
                exe = exes[name]
                if not os.path.isabs(exe) or name in errors:
                    errors.setdefault(name, exe)
                    continue
                try:
                    res[(t[0], name)].append(run_one(launch, env, exe, t[1])[t[2]])
                except Exception as e:  # noqa: BLE001
                    errors[name] = str(e)
    lines = ["| benchmark | wharf | MPICH | Open MPI | wharf / best peer |", "| --- | --- | --- | --- | --- |"]
    for t in tests:
        cells, med = [], {}
        for name, _, _, _ in mpis(a.build):
            v = res[(t[0], name)]
            if v:
                med[name] = statistics.median(v)
                cells.append(f"{med[name]:.3f} ({min(v):.3f}-{max(v):.3f})")
            else:
                cells.append("failed")
        peers = [med[n] for n in ("mpich", "openmpi") if n in med]
        ratio = "n/a"
        if "wharf" in med and peers:
            best = t[3](peers)
            ratio = f"{med['wharf'] / best:.2f}x"
        lines.append(f"| {t[0]} | " + " | ".join(cells) + f" | {ratio} |")
    print("\n".join(lines))
    for n, e in errors.items():
        print(f"\n{n}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
