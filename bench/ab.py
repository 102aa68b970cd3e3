#!/usr/bin/env python3
"""Before/after comparison of two wharf library builds in one interleaved run.

  bench/ab.py --a OLD_LIBDIR --b NEW_LIBDIR [--build build] [--reps 7]

Builds bench/p2p.c once with build/bin/mpicc and runs it against each
libmpi.so.12 (LD_LIBRARY_PATH; the wrapper links with RUNPATH), A B A B ...,
for 8 B, 256 B and 4 KiB latency and 4 MB bandwidth over shm (CMA), shm (pipelined copy,
WHARF_CMA=0) and net (WHARF_CHANNEL=net, 8 B latency).  Prints medians and
the ratio B/A (latency: lower is better; bandwidth: higher is better)."""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [
    ("shm 8 B latency (us)", {"WHARF_CMA": "1"}, ["lat", "-m", "8:8", "-i", "20000"], 8),
    ("shm 256 B latency (us)", {"WHARF_CMA": "1"}, ["lat", "-m", "256:256", "-i", "20000"], 256),
    ("shm 4 KiB latency (us)", {"WHARF_CMA": "1"}, ["lat", "-m", "4096:4096", "-i", "10000"], 4096),
    ("shm+cma 4 MB bandwidth (MB/s)", {"WHARF_CMA": "1"}, ["bw", "-m", "4194304:4194304", "-i", "40"], 4194304),
    ("shm copy 4 MB bandwidth (MB/s)", {"WHARF_CMA": "0"}, ["bw", "-m", "4194304:4194304", "-i", "40"], 4194304),
    ("net 8 B latency (us)", {"WHARF_CHANNEL": "net"}, ["lat", "-m", "8:8", "-i", "5000"], 8),
]


def run(build, lib, exe, env, args, size):
    e = dict(os.environ, LD_LIBRARY_PATH=lib, **env)
    out = subprocess.run([os.path.join(build, "bin", "wharfrun"), "-n", "2", "--timeout", "120", exe] + args,
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180).stdout
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+([\d.]+)$", line.strip())
        if m and int(m.group(1)) == size:
            return float(m.group(2))
    raise RuntimeError(out[-500:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=7)
    o = ap.parse_args()
    build = os.path.abspath(o.build)
    with tempfile.TemporaryDirectory() as d:
        exe = os.path.join(d, "p2p")
        subprocess.run([os.path.join(build, "bin", "mpicc"), "-O2", "-o", exe, os.path.join(ROOT, "bench", "p2p.c")],
                       check=True)
        print(f"| case | A median | B median | B/A |\n| --- | --- | --- | --- |")
        for name, env, args, size in CASES:
            va, vb = [], []
            for _ in range(o.reps):
                va.append(run(build, os.path.abspath(o.a), exe, env, args, size))
                vb.append(run(build, os.path.abspath(o.b), exe, env, args, size))
            ma, mb = statistics.median(va), statistics.median(vb)
            print(f"| {name} | {ma:.3f} | {mb:.3f} | {mb / ma:.3f} |", flush=True)


if __name__ == "__main__":
    main()
