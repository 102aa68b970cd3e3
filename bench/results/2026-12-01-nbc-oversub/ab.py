#!/usr/bin/env python3
"""Nonblocking collectives with overlap (bench/suite wh_i*: the overall time of
start + computation + wait), two wharf libraries and Open MPI interleaved.

  python3 ab.py REPS BENCH,BENCH,... NRANKS OLD_LIBDIR [JSON]

'old' runs the bench-suite binaries with LD_LIBRARY_PATH=OLD_LIBDIR (a build
of the previous main), 'new' with the build's own library; Open MPI runs its
own binaries (mpirun.openmpi --oversubscribe --bind-to none).  8 B,
5000 iterations, 500 warm-up.  Prints medians and the ratios."""
import json
import os
import statistics as st
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
W = os.path.join(ROOT, "build/bench-suite/wharf/")
O = os.path.join(ROOT, "build/bench-suite/openmpi/")
ARGS = ["-m", "8:8", "-i", "5000", "-x", "500"]


def value(out):
    rows = [l for l in out.splitlines() if l.strip() and l.split()[0].isdigit()]
    return float(rows[-1].split()[1])


def main():
    reps, benches, n, old = int(sys.argv[1]), sys.argv[2].split(","), sys.argv[3], sys.argv[4]
    res = {}
    for _ in range(reps):
        for b in benches:
            for who in ("old", "new", "ompi"):
                env = dict(os.environ)
                if who == "ompi":
                    cmd = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-n", n,
                           O + "wh_" + b] + ARGS
                else:
                    cmd = [os.path.join(ROOT, "build/bin/wharfrun"), "-n", n, W + "wh_" + b] + ARGS
                    if who == "old":
                        env["LD_LIBRARY_PATH"] = old
                try:
                    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120).stdout
                    res.setdefault(b, {}).setdefault(who, []).append(value(out))
                except Exception as e:  # a failed run is reported, not counted
                    print("failed:", b, who, e)
    if len(sys.argv) > 5:
        with open(sys.argv[5], "w") as f:
            json.dump(res, f, indent=1)
    print("| benchmark | before | after | Open MPI | after / before | after / Open MPI |")
    print("|---|---|---|---|---|---|")
    for b, d in res.items():
        m = {k: st.median(v) for k, v in d.items()}
        print("| %s | %.2f | %.2f | %.2f | %.2f | %.2f |" % (b, m["old"], m["new"], m["ompi"], m["new"] / m["old"],
                                                             m["new"] / m["ompi"]))


if __name__ == "__main__":
    main()
