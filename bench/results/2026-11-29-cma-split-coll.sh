#!/bin/bash
# 2-rank 1 MiB collectives, wharf default vs WHARF_CMA_SPLIT=0 vs Open MPI, interleaved; prints medians.
# usage: bash bench/results/2026-11-29-cma-split-coll.sh REPS OUT
cd "$(dirname "$0")/../.."
reps=${1:-5}; out=${2:-/tmp/cma-split-coll.txt}; : > "$out"
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 2 "$@"; }
a="-m 1048576:1048576 -i 2000 -x 200"
for r in $(seq 1 "$reps"); do
  for b in alltoall gather scatter allgather bcast allreduce reduce reduce_scatter; do
    echo "split $b $(build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $a 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
    echo "nosplit $b $(WHARF_CMA_SPLIT=0 build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $a 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
    echo "openmpi $b $(ompi /tmp/bs-openmpi/wh_$b $a 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    k, b, v = line.split()[:3] if len(line.split()) >= 3 else (None, None, None)
    if v: d.setdefault(b, {}).setdefault(k, []).append(float(v))
for b, m in d.items():
    med = {k: st.median(v) for k, v in m.items()}
    print(f"{b:15s} split {med['split']:8.1f}  nosplit {med['nosplit']:8.1f}  openmpi {med['openmpi']:8.1f}  "
          f"split/nosplit {med['split']/med['nosplit']:.2f}  split/openmpi {med['split']/med['openmpi']:.2f}")
PY
