#!/bin/bash
# The split transfer through the node-shared heap (both ranks copy MPI_Alloc_mem buffers, also
# without CMA) against the tree before it, interleaved, medians.
# usage: bash bench/results/2026-11-29-heap-split-ab.sh BASE_TREE REPS OUT
#  (BASE_TREE built with `ninja -C build mpi wharfrun`, its suite in /tmp/bsw-base, this tree's in /tmp/bsw)
#  pidpriv and native, 2 ranks: wh_bw and wh_latency 64 KiB-4 MiB, -d host (MPI_Alloc_mem); native -d malloc as control;
#  native also Open MPI and MPICH (suites in /tmp/bs-openmpi, /tmp/bs-mpich)
cd "$(dirname "$0")/../.."
base=$1; reps=${2:-3}; out=${3:-/tmp/heap-split-ab.txt}; : > "$out"
run() { # tree suite scenario bench args...
  local t=$1 s=$2 sc=$3 b=$4; shift 4
  if [ "$sc" = native ]; then "$t/build/bin/wharfrun" -n 2 "$s/$b" "$@"
  else python3 tests/scenarios/wharfns.py run "$sc" -n 2 --wharfrun "$t/build/bin/wharfrun" --timeout 120 -- "$s/$b" "$@"; fi
}
for r in $(seq 1 "$reps"); do
  for sc in pidpriv native; do
    for b in wh_bw wh_latency; do
      for d in host malloc; do
        [ "$sc" = pidpriv ] && [ "$d" = malloc ] && continue
        for side in base new openmpi mpich; do
          a="-m 65536:4194304 -d $d"
          case $side in
            base) run "$base" /tmp/bsw-base "$sc" "$b" $a ;;
            new) run "$PWD" /tmp/bsw "$sc" "$b" $a ;;
            openmpi) [ "$sc" = native ] && env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                       mpirun.openmpi --oversubscribe -n 2 /tmp/bs-openmpi/$b $a ;;
            mpich) [ "$sc" = native ] && mpirun.mpich -n 2 /tmp/bs-mpich/$b $a ;;
          esac 2>&1 | awk -v k="$sc-$d $b $side" '/^[0-9]/{print k, $1, $2}' >> "$out"
        done
      done
    done
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    sc, b, side, n, v = line.split()
    d.setdefault((sc, b, int(n)), {}).setdefault(side, []).append(float(v))
for k in sorted(d):
    m = {s: st.median(v) for s, v in d[k].items()}
    if 'base' in m and 'new' in m:
        peers = "".join(f" {p} {m[p]:.1f}" for p in ("openmpi", "mpich") if p in m)
        print(*k, f"base {m['base']:.1f} new {m['new']:.1f} new/base {m['new'] / m['base']:.2f}{peers}")
PY
