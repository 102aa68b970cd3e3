#!/bin/bash
# 2-rank bcast, the root writing the upper half (default) vs WHARF_CMA_SPLIT=0 (the other rank reads
# it all) vs Open MPI, interleaved; medians per size.  usage: bash THIS REPS OUT
cd "$(dirname "$0")/../.."
reps=${1:-5}; out=${2:-/tmp/bcast-split-ab.txt}; : > "$out"
ompi() { env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi --oversubscribe -n 2 "$@"; }
a="-m 65536:4194304 -i 2000 -x 200"
for r in $(seq 1 "$reps"); do
  echo "split $(build/bin/wharfrun -n 2 /tmp/bsw/wh_bcast $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
  echo "reader $(WHARF_CMA_SPLIT=0 build/bin/wharfrun -n 2 /tmp/bsw/wh_bcast $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
  echo "openmpi $(ompi /tmp/bs-openmpi/wh_bcast $a 2>&1 | awk '/^[0-9]/{printf "%s ", $2}')" >> "$out"
done
python3 - "$out" <<'PY'
import sys, statistics as st
d = {}
for line in open(sys.argv[1]):
    p = line.split()
    d.setdefault(p[0], []).append([float(x) for x in p[1:]])
print("sizes 64K 128K 256K 512K 1M 2M 4M (us)")
for k, rows in d.items():
    print(f"  {k:8s}", " ".join(f"{st.median(c):8.1f}" for c in zip(*rows)))
PY
