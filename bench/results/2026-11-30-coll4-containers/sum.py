#!/usr/bin/env python3
"""Median over repetitions per (scenario, benchmark) of run.sh's records: wharf native against Open
MPI native, and each container scenario's median over wharf native's."""
import glob, json, os, statistics, sys
d = sys.argv[1]
vals = {}
for f in glob.glob(os.path.join(d, "*.json")):
    if f.endswith(".meta.json"):
        continue
    sc = os.path.basename(f).split(".")[0]
    for r in json.load(open(f)):
        if not r.get("failed") and r.get("value") is not None:
            key = sc if r["mpi"] == "wharf" else r["mpi"]
            vals.setdefault((key, r["benchmark"].replace("wh_", "")), []).append(r["value"])
benches = sorted({b for _, b in vals})
print(f"{'bench':14} {'native us':>10} {'ompi us':>10} {'native/ompi':>11} " + " ".join(f"{s + ' x':>10}" for s in ("shared", "pidpriv", "volume")))
for b in benches:
    nat = vals.get(("native", b))
    if not nat:
        continue
    m = statistics.median(nat)
    o = vals.get(("openmpi", b))
    om = statistics.median(o) if o else float("nan")
    row = [f"{b:14} {m:10.2f} {om:10.2f} {m / om:11.2f}"]
    for s in ("shared", "pidpriv", "volume"):
        v = vals.get((s, b))
        row.append(f"{statistics.median(v) / m:10.2f}" if v else f"{'-':>10}")
    print(" ".join(row) + f"   (n={len(nat)})")
