# Record of a run (2026-11-29): RG_DIV was a temporary override of the chunk divisor in
# rg_peer_plan (wharf-gpud), not kept in the tree; output: divisor, then bytes and /slowest pairs.
cd /work/wt
for rep in 1 2 3 4 5; do
 for d in 8 16 32 64; do
  echo "div $d $(RG_DIV=$d CUDAEMU_D2H_GBPS=2 CUDAEMU_H2D_GBPS=2 timeout 300 python3 tests/rgpu/rgpu_harness.py --build build --server 0 --server 1 run -- build/bench/rgpu/rgpu_bench copy 16777216 2>&1 | awk '$1==1048576||$1==4194304||$1==16777216{printf "%s %s ", $1, $6}')"
 done
done
