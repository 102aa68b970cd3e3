#!/usr/bin/env python3
"""The layering rule of docs/DESIGN.md, enforced.

  check_layers.py SRC_DIR

Every directory of src/ is a layer with a rank; a file may include headers of
its own directory and of layers of lower rank, never of a higher one (which
would also make an import cycle between directories).  Fails (exit 1) listing
every offending include, and when a directory has no rank (a new layer must be
placed in LAYERS, and in docs/DESIGN.md).  KNOWN lists the violations still
being removed; an entry that no longer occurs fails too, so the list only shrinks."""
import os
import re
import sys

# bottom to top (docs/DESIGN.md, "Layers")
LAYERS = ["util", "pmi", "core", "mem", "dtype", "op", "locality", "chan", "coord", "proto", "coll", "comm", "rma", "io", "mpi", "fortran", "rgpu"]
RANK = {d: i for i, d in enumerate(LAYERS)}

# (file, included header) pairs allowed for now; each must still occur
KNOWN = set()


def main():
    src = os.path.abspath(sys.argv[1])
    bad, seen_known = [], set()
    inc = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            layer = rel.split(os.sep)[0]
            if layer not in RANK:
                bad.append(f"{rel}: directory '{layer}' has no place in the layer order (tools/check_layers.py)")
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            for m in inc.finditer(text):
                target = m.group(1)
                if target not in RANK:
                    continue  # not a src/ directory
                if RANK[target] > RANK[layer]:
                    hdr = m.group(0).split('"')[1]
                    if (rel, hdr) in KNOWN:
                        seen_known.add((rel, hdr))
                        continue
                    bad.append(f"{rel}: includes {hdr}: layer '{layer}' must not depend on '{target}' above it")
    for k in sorted(KNOWN - seen_known):
        bad.append(f"{k[0]}: the known exception for {k[1]} no longer occurs: remove it from KNOWN")
    for b in bad:
        print(b)
    print(f"{len(bad)} layering violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
