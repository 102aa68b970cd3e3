#!/usr/bin/env python3
"""Paired ratios from run.sh's output directory: for each repetition, a container scenario's value over
native's of the same repetition (run seconds apart), then the median and range of those ratios."""
import glob, json, os, re, statistics, sys
d = sys.argv[1]
v = {}
for f in glob.glob(os.path.join(d, "*.json")):
    m = re.match(r"(\w+)\.(\d+)\.json$", os.path.basename(f))
    if not m:
        continue
    for r in json.load(open(f)):
        if r["mpi"] == "wharf" and not r.get("failed") and r.get("value") is not None:
            v[(m.group(1), int(m.group(2)), r["benchmark"].replace("wh_", ""))] = r["value"]
benches = sorted({k[2] for k in v})
reps = sorted({k[1] for k in v})
print(f"{'bench':12} " + " ".join(f"{s + ' median [min-max]':>26}" for s in ("shared", "pidpriv", "volume")))
for b in benches:
    row = [f"{b:12}"]
    for s in ("shared", "pidpriv", "volume"):
        rs = [v[(s, r, b)] / v[("native", r, b)] for r in reps if (s, r, b) in v and ("native", r, b) in v]
        row.append(f"{statistics.median(rs):10.2f} [{min(rs):.2f}-{max(rs):.2f}]".rjust(26) if rs else "-".rjust(26))
    print(" ".join(row))
