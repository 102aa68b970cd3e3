#!/bin/sh
# Interleaved A/B of the network bulk chunk size (docs/PERFORMANCE.md, 2026-11-30):
# A = WHARF_NET_BULK_CHUNK=8388608 (the chunking before: one ofi_rxm rendezvous per chunk),
# B = default (auto).  ROOT=wharf tree with build/ and build/bench-suite (bench/run builds it);
# SCEN (isolated) and BENCH (wh_latency, wh_bw) select; summary: python3 ab_sum.py OUT.
ROOT=${ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
for rep in 1 2 3 4 5; do
  for v in "WHARF_NET_BULK_CHUNK=8388608" "X=1"; do
    printf "%s " "$v"
    env $v python3 $ROOT/tests/scenarios/wharfns.py run ${SCEN:-isolated} -n 2 --wharfrun $ROOT/build/bin/wharfrun --timeout 150 -- $ROOT/build/bench-suite/wharf/${BENCH:-wh_latency} -m 65536:4194304 -i 200 -x 20 2>&1 | grep -E "^[0-9]" | awk '{printf "%s %s ", $1, $2}'; echo
  done
done
