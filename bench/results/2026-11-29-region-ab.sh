#!/bin/bash
# Region copies (MPI_Alloc_mem buffers in the node-shared heap) against CMA / the cells,
# interleaved, medians.  usage: bash bench/results/2026-11-29-region-ab.sh REPS OUT
#  p2p:  2 ranks in pidpriv (no CMA), wh_latency 16 KiB-4 MiB, WHARF_REGION_COPY=1 / 0
#  coll2: 2 ranks native 1 MiB, region / WHARF_REGION_COPY=0 (CMA) / Open MPI / MPICH, -d host and -d malloc
#  coll4: 4 ranks 1 MiB, pidpriv region / pidpriv WHARF_REGION_COPY=0 / native
cd "$(dirname "$0")/../.."
reps=${1:-3}; out=${2:-/tmp/region-ab.txt}; : > "$out"
ns() { python3 tests/scenarios/wharfns.py run "$1" -n "$2" --wharfrun build/bin/wharfrun --timeout 120 -- "${@:3}"; }
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe "$@"; }
m="-m 1048576:1048576 -i 1000 -x 100"
for r in $(seq 1 "$reps"); do
  for rc in 1 0; do
    WHARF_REGION_COPY=$rc ns pidpriv 2 /tmp/bsw/wh_latency -m 16384:4194304 2>&1 | awk -v k="p2p region=$rc" '/^[0-9]/{print k, $1, $2}' >> "$out"
  done
  for b in reduce allgather bcast gather scatter allreduce; do
    for d in host malloc; do
      echo "coll2-$d wharf $b $(build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $m -d $d 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
      echo "coll2-$d cma $b $(WHARF_REGION_COPY=0 build/bin/wharfrun -n 2 /tmp/bsw/wh_$b $m -d $d 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
      echo "coll2-$d openmpi $b $(ompi -n 2 /tmp/bs-openmpi/wh_$b $m -d $d 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
      echo "coll2-$d mpich $b $(mpirun.mpich -n 2 /tmp/bs-mpich/wh_$b $m -d $d 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
    done
  done
  for b in gather scatter scan allgather reduce bcast; do
    echo "coll4 pidpriv $b $(ns pidpriv 4 /tmp/bsw/wh_$b -m 1048576:1048576 -i 500 -x 50 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
    echo "coll4 pidpriv-noregion $b $(WHARF_REGION_COPY=0 ns pidpriv 4 /tmp/bsw/wh_$b -m 1048576:1048576 -i 500 -x 50 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
    echo "coll4 native $b $(build/bin/wharfrun -n 4 /tmp/bsw/wh_$b -m 1048576:1048576 -i 500 -x 50 2>&1 | awk '/^[0-9]/{print $2}')" >> "$out"
  done
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 4: continue
    if f[0] == 'p2p': key, who, val = ('p2p', int(f[2])), f[1], f[3]
    else: key, who, val = (f[0], f[2]), f[1], f[3]
    d.setdefault(key, {}).setdefault(who, []).append(float(val))
for k in sorted(d, key=str):
    m = {w: st.median(v) for w, v in d[k].items()}
    print(k[0], k[1], "  ".join(f"{w} {v:.1f}" for w, v in sorted(m.items())))
PY
