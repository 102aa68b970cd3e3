#!/usr/bin/env python3
"""Scale test (issue 13): N ranks on one host (2 cores in CI), bounded time.

Asserts that the job completes with correct data and that the node region
stays within the budget (64 MiB at 128 ranks: Docker's default /dev/shm), read
from the locality report.  MPI_Init time is printed, not asserted (speed is
measured by benchmarks, docs/PERFORMANCE.md).

  check_scale.py --build BUILD N [N...]"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BUDGET_MIB = {64: 64.0, 128: 64.0, 256: 128.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("ranks", type=int, nargs="+")
    o = ap.parse_args()
    exe = os.path.join(o.build, "tests", "scale", "scale_init")
    fails = 0
    for n in o.ranks:
        # once with the locality report (the region size; rank 0 printing the
        # n x n matrix slows MPI_Init down), once without (the init time)
        runs = []
        for report in ("locality", ""):
            with tempfile.TemporaryDirectory(prefix="wharf-scale-") as d:
                env = dict(os.environ, WHARF_REPORT=report, WHARF_NODE_DIR=d)
                try:
                    p = subprocess.run([os.path.join(o.build, "bin", "wharfrun"), "-n", str(n), "--timeout", "200",
                                        exe], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                       timeout=260)
                    out, rc = p.stdout, p.returncode
                except subprocess.TimeoutExpired as e:
                    out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
                    rc = -1
                runs.append((out, rc, os.listdir(d)))
        (out, rc, left), (out2, rc2, left2) = runs
        m = re.search(r"node region of rank \d+'s group: ([\d.]+) MiB for (\d+) co-resident", out)
        s = re.search(r"scale: (\d+) ranks, slowest MPI_Init ([\d.]+) s, (\d+) wrong", out2)
        s1 = re.search(r"scale: (\d+) ranks, slowest MPI_Init ([\d.]+) s, (\d+) wrong", out)
        ok = (rc == 0 and rc2 == 0 and m and s and s1 and int(m.group(2)) == n and int(s.group(3)) == 0
              and int(s1.group(3)) == 0 and not left and not left2)
        left = left + left2
        out = out + out2
        budget = BUDGET_MIB.get(n)
        if ok and budget is not None and float(m.group(1)) > budget:
            ok = False
            print(f"{n} ranks: node region {m.group(1)} MiB exceeds {budget} MiB")
        if left:
            print(f"{n} ranks: left behind in the node directory: {left}")
        print(f"{n} ranks: rc={rc} region={m.group(1) if m else '?'} MiB init={s.group(2) if s else '?'} s "
              f"{'ok' if ok else 'FAILED'}")
        if not ok:
            print("\n".join(l for l in out.splitlines() if "locality: pair" not in l and "locality:  " not in l)[-3000:])
            fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
