#!/bin/bash
# MPI_Reduce (MPI_FLOAT sum, root 0): wharf default (single-copy slices) vs
# WHARF_COLL_CMA=0 (the node cells' slices) vs Open MPI vs MPICH, interleaved;
# prints medians.  usage: bash bench/results/2026-11-29-cma-reduce-ab.sh REPS RANKS OUT
cd "$(dirname "$0")/../.."
reps=${1:-5}; n=${2:-2}; out=${3:-/tmp/cma-reduce-ab.txt}; : > "$out"
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n "$n" "$@"; }
a="-m 65536:4194304 -i 400 -x 40"
for r in $(seq 1 "$reps"); do
  build/bin/wharfrun -n "$n" /tmp/bsw/wh_reduce $a 2>&1 | awk '/^[0-9]/{print "cma", $1, $2}' >> "$out"
  WHARF_COLL_CMA=0 build/bin/wharfrun -n "$n" /tmp/bsw/wh_reduce $a 2>&1 | awk '/^[0-9]/{print "cells", $1, $2}' >> "$out"
  ompi /tmp/bs-openmpi/wh_reduce $a 2>&1 | awk '/^[0-9]/{print "openmpi", $1, $2}' >> "$out"
  mpirun.mpich -n "$n" /tmp/bs-mpich/wh_reduce $a 2>&1 | awk '/^[0-9]/{print "mpich", $1, $2}' >> "$out"
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    k, s, v = line.split()
    d.setdefault(int(s), {}).setdefault(k, []).append(float(v))
for s, m in sorted(d.items()):
    med = {k: st.median(v) for k, v in m.items()}
    best = min(med['openmpi'], med['mpich'])
    print(f"{s:>8}  cma {med['cma']:8.1f}  cells {med['cells']:8.1f}  openmpi {med['openmpi']:8.1f}  "
          f"mpich {med['mpich']:8.1f}  cma/cells {med['cma']/med['cells']:.2f}  cma/best {med['cma']/best:.2f}")
PY
