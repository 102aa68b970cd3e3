#!/usr/bin/env python3
"""Medians [min-max] of ab.txt (sh ab.sh ...): per side and size, direct cuMemcpyPeer and queued
cuMemcpyPeerAsync MB/s, their ratio to the slowest stage, and direct against staging."""
import statistics, sys
rows = {}
side = None
for line in open(sys.argv[1] if len(sys.argv) > 1 else "ab.txt"):
    f = line.split()
    if line.startswith("## "):
        side = f[3]
    elif len(f) == 8 and f[0].isdigit():
        rows.setdefault((int(f[0]), side), []).append([float(x) for x in f[1:]])
def m(v):
    return f"{statistics.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]"
print("| bytes | side | direct MB/s | direct / slowest | queued / slowest | direct / staged |")
print("|---|---|---|---|---|---|")
for (n, s) in sorted(rows):
    r = rows[(n, s)]
    print(f"| {n} | {s} | {statistics.median([x[0] for x in r]):.0f} | {m([x[4] for x in r])} | {m([x[6] for x in r])} | {m([x[2] for x in r])} |")
