#!/usr/bin/env python3
"""A/B of remote-GPU copies and small calls between two wharf trees (or one tree under two
environments), interleaved in one run: for each repetition and device model (CUDAEMU_D2H/H2D_GBPS
2 and 25), `rgpu_bench copy` in "before" then "after", then `rgpu_bench lat` in both; medians.
Each tree needs `make build`; two emulated servers run on this machine (tests/rgpu/rgpu_harness.py).

    python3 bench/rgpu_ab.py --before /tmp/wt-old --after . --reps 5
    python3 bench/rgpu_ab.py --before . --after . --before-env CUDAEMU_HELP=0 --reps 3
"""
import argparse, json, os, re, statistics, subprocess

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--before", required=True, help="tree root of the 'before' side")
ap.add_argument("--after", required=True, help="tree root of the 'after' side")
ap.add_argument("--before-env", action="append", default=[], help="VAR=value for the 'before' runs")
ap.add_argument("--after-env", action="append", default=[], help="VAR=value for the 'after' runs")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--json", help="write every run's numbers here")
a = ap.parse_args()
trees = {"before": a.before, "after": a.after}
extra = {"before": dict(kv.split("=", 1) for kv in a.before_env), "after": dict(kv.split("=", 1) for kv in a.after_env)}


def run(side, args, env):
    e = dict(os.environ, **env, **extra[side])
    return subprocess.run(["python3", "tests/rgpu/rgpu_harness.py", "--build", "build", "--server", "0", "--server", "1",
                           "run", "--", "build/bench/rgpu/rgpu_bench"] + args, cwd=trees[side], env=e,
                          capture_output=True, text=True, timeout=600).stdout


res = {}
for rep in range(a.reps):
    for g in ("2", "25"):
        for side in ("before", "after"):
            for line in run(side, ["copy"], {"CUDAEMU_D2H_GBPS": g, "CUDAEMU_H2D_GBPS": g}).splitlines():
                f = line.split()
                if len(f) >= 6 and f[0].isdigit():  # 8 columns since the queued copies
                    res.setdefault((g, side, int(f[0])), []).append([float(x) for x in f[1:]])
    for side in ("before", "after"):
        for line in run(side, ["lat"], {}).splitlines():
            m = re.match(r"(.*?):\s+([\d.]+)", line)
            if m and not line.startswith("#"):
                res.setdefault(("lat", side, m.group(1).strip()), []).append([float(m.group(2))])
    print("rep", rep, "done", flush=True)
if a.json:
    json.dump({"|".join(map(str, k)): v for k, v in res.items()}, open(a.json, "w"))


def med(v, i):
    return statistics.median(x[i] for x in v)


for g in ("2", "25"):
    print(f"\n## device copies modeled at {g} GB/s (median of {a.reps} runs)")
    print("| bytes | direct before MB/s | direct after MB/s | after/before | staged MB/s | after/staged "
          "| slowest stage MB/s | after/slowest |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sorted({k[2] for k in res if k[0] == g}):
        b, f = res[(g, "before", n)], res[(g, "after", n)]
        print(f"| {n} | {med(b, 0):.0f} | {med(f, 0):.0f} | {med(f, 0) / med(b, 0):.2f} | {med(f, 1):.0f} "
              f"| {med(f, 0) / med(f, 1):.2f} | {med(f, 3):.0f} | {med(f, 0) / med(f, 3):.2f} |")
print("\n## small calls (us, median): before | after")
for k in sorted({k[2] for k in res if k[0] == "lat"}):
    print(f"| {k} | {med(res[('lat', 'before', k)], 0):.1f} | {med(res[('lat', 'after', k)], 0):.1f} |")
