#!/bin/bash
# WHARF_SHM_EAGER_MAX 16384 (before) vs 8192 against Open MPI and MPICH, 2 ranks native, interleaved.
# usage: bash bench/results/2026-11-29-eager8k-ab.sh REPS OUT
cd "$(dirname "$0")/../.."
reps=${1:-3}; out=${2:-/tmp/eager8k-ab.txt}; : > "$out"
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 2 "$@"; }
a="-m 4096:65536 -i 5000 -x 500"
for r in $(seq 1 "$reps"); do
  for b in latency bw bibw; do
    echo "e16k $b $(WHARF_SHM_EAGER_MAX=16384 build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "e8k $b $(WHARF_SHM_EAGER_MAX=8192 build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "openmpi $b $(ompi /tmp/bs-openmpi/wh_$b $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
    echo "mpich $b $(mpirun.mpich -n 2 /tmp/bs-mpich/wh_$b $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    p = line.split()
    d.setdefault((p[0], p[1]), []).append([float(x) for x in p[2:]])
for b in ("latency", "bw", "bibw"):
    print(b, "(4K 8K 16K 32K 64K)")
    for m in ("e16k", "e8k", "openmpi", "mpich"):
        print(f"  {m:8s}", " ".join(f"{st.median(c):9.2f}" for c in zip(*d[(m, b)])))
PY
