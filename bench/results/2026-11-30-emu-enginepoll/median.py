#!/usr/bin/env python3
"""Medians per (poll, case, size) of run.sh's output and the ratio poll 50 / poll 0
(latency: time ratio; bandwidth: the inverse, so < 1 means poll 50 is better in both)."""
import re, statistics, sys
from collections import defaultdict
d = defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"rep \d+ poll (\d+) (.*?): (.*)", line)
    if not m:
        continue
    for kv in m.group(3).split():
        s, v = kv.split(":")
        d[(m.group(2), int(s), int(m.group(1)))].append(float(v))
cases = sorted({k[0] for k in d})
sizes = sorted({k[1] for k in d})
show = [s for s in sizes if s in (8, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)]
print("| case | " + " | ".join(str(s) for s in show) + " |")
print("|---|" + "---|" * len(show))
for c in cases:
    cells = []
    for s in show:
        a, b = d.get((c, s, 0)), d.get((c, s, 50))
        if not a or not b:
            cells.append("")
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        r = mb / ma if "lat" in c else ma / mb
        cells.append(f"{ma:.4g} / {mb:.4g} ({r:.2f})")
    print(f"| {c} | " + " | ".join(cells) + " |")
