#!/bin/bash
# Device pipeline A/B/C/D, native, GPUs 0,1 of topo4, WHARF_CUDA_SCHEME=pipeline, wh_bw -d cuda,
# 3 interleaved reps.  Two changes, crossed:
#   libmpi   m = main's (the receiver sends one CTS at a time, once the ring is empty)
#            w = this tree's (every matched transfer's CTS at once, naming its first ring chunk)
#   emulator m = main's (a thread that queries a stream runs a copy and waits out its modeled time)
#            w = this tree's (the query moves the data and returns; the copy completes at its
#                modeled end, seen by whoever looks then)
# under the emulator's default timing model (25 GB/s host<->device: this cpu's memcpy is slower,
# so the copies, not the model, set the pace) and a 4 GB/s one (slower than this machine's
# memcpy: the modeled copies are the bound, and the rest is overhead).
# Modeled bound of the pipeline's slowest stage for an M-byte message in C-byte chunks:
#   M / (ceil(M/C) * LAT + M / G)   with LAT = 2 us (CUDAEMU_LAT_US), G the model's GB/s.
W=${W:-/work/wt}; M=${M:-/work/main}
make -s -C $W/bench/suite MPICC=$M/build/bin/mpicc OUT=/tmp/bsl >/dev/null
make -s -C $W/bench/suite MPICC=$W/build/bin/mpicc OUT=/tmp/bsw >/dev/null
E="CUDAEMU_TOPOLOGY=$W/tests/cudaemu/topo4.txt CUDAEMU_VISIBLE=0,1 WHARF_CUDA=1 WHARF_CUDA_SCHEME=pipeline"
for rep in 1 2 3; do
  for g in 25 4; do
    for cfg in mm:bsl:$M mw:bsl:$W wm:bsw:$M ww:bsw:$W; do
      IFS=: read n b e <<<"$cfg"
      echo "rep $rep G=$g $n: $(env $E LD_LIBRARY_PATH=$e/build/cudaemu CUDAEMU_H2D_GBPS=$g CUDAEMU_D2H_GBPS=$g timeout 300 $W/build/bin/wharfrun -n 2 /tmp/$b/wh_bw -d cuda -m 256K:4M -i 20 -x 3 2>&1 | grep -E '^[0-9]' | awk '{printf "%s:%.0f ", $1, $2}')"
    done
  done
done
