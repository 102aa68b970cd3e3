#!/bin/bash
# Allgatherv above WHARF_COLL_SHM_MAX through the big cells (wh_shmc_allgatherv_large) against the tree
# before it (the ring), 4 ranks, malloc buffers (no single copy between containers), interleaved, medians.
# usage: bash bench/results/2026-11-29-allgatherv-cells-ab.sh BASE_TREE REPS OUT
#  (BASE_TREE built with `ninja -C build mpi wharfrun`, its suite in /tmp/bsw-base, this tree's in /tmp/bsw)
cd "$(dirname "$0")/../.."
base=$1; reps=${2:-3}; out=${3:-/tmp/agv-ab.txt}; : > "$out"
for r in $(seq 1 "$reps"); do
  for sc in native pidpriv volume; do
    for side in base new; do
      if [ $side = base ]; then t=$base s=/tmp/bsw-base; else t=$PWD s=/tmp/bsw; fi
      python3 tests/scenarios/wharfns.py run "$sc" -n 4 --wharfrun "$t/build/bin/wharfrun" --timeout 120 -- \
        "$s/wh_allgatherv" -m 65536:1048576 -i 1000 -x 100 -d malloc 2>&1 |
        awk -v k="$sc $side" '/^[0-9]/{print k, $1, $2}' >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    sc, side, n, v = line.split()
    d.setdefault((sc, int(n)), {}).setdefault(side, []).append(float(v))
for k in sorted(d):
    m = {s: st.median(v) for s, v in d[k].items()}
    print(*k, f"base {m['base']:.1f} new {m['new']:.1f} new/base {m['new'] / m['base']:.2f}")
PY
