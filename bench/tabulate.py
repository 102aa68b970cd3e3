#!/usr/bin/env python3
"""Medians of several bench/run record files (--json), per scenario, benchmark and size,
for each MPI, with wharf's ratio to the best peer and, with --baseline, to an earlier wharf.
Ratios are times (latency) or inverse rates (bandwidth): below 1 means wharf is faster.

  python3 bench/tabulate.py [--baseline 'old/*.json'] 'run/after[0-9].json' ...
"""
import argparse
import collections
import glob
import json
import statistics


def load(patterns):
    out = []
    for p in patterns:
        for f in sorted(glob.glob(p)):
            if not f.endswith(".meta.json"):
                out += [r for r in json.load(open(f)) if not r.get("failed")]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="record files (globs)")
    ap.add_argument("--baseline", help="record files (glob) of an earlier wharf, shown as 'before'")
    a = ap.parse_args()
    vals = collections.defaultdict(list)
    for r in load(a.runs):
        vals[(r["scenario"], r["benchmark"], r["size"], r["mpi"])].append(r["value"])
    if a.baseline:
        for r in load([a.baseline]):
            if r["mpi"] == "wharf":
                vals[(r["scenario"], r["benchmark"], r["size"], "before")].append(r["value"])
    cols = (["before"] if a.baseline else []) + ["wharf", "mpich", "openmpi"]
    print("%-9s %-16s %8s " % ("scenario", "benchmark", "size") + " ".join("%9s" % c for c in cols) +
          ("  %12s" % "wharf/before" if a.baseline else "") + "  %14s" % "wharf/best-peer")
    for key in sorted(set(k[:3] for k in vals)):
        med = {c: statistics.median(vals[key + (c,)]) for c in cols if vals.get(key + (c,))}
        rate = key[1].endswith("_bw") or key[1].endswith("_bibw")
        ratio = (lambda w, o: o / w) if rate else (lambda w, o: w / o)
        peers = [med[c] for c in ("mpich", "openmpi") if c in med]
        best = (max(peers) if rate else min(peers)) if peers else None
        line = "%-9s %-16s %8d " % key + " ".join("%9.2f" % med[c] if c in med else "%9s" % "-" for c in cols)
        if a.baseline:
            line += "  %12s" % ("%.2f" % ratio(med["wharf"], med["before"]) if "wharf" in med and "before" in med
                                 else "-")
        line += "  %14s" % ("%.2f" % ratio(med["wharf"], best) if "wharf" in med and best else "-")
        print(line)


if __name__ == "__main__":
    main()
