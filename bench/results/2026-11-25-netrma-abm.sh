#!/bin/bash
# abm.sh REPS SCENARIOS...: per-iteration medians (lat.c), alternating A, B, B+WHARF_NET_ATOMICS=0 (acc/fop), MPICH
reps=$1; shift
cd /work/wt-netrma
for sc in "$@"; do
 for rep in $(seq $reps); do
  for b in put get acc fop; do
   vs="A B mpich"; [ $b = acc -o $b = fop ] && vs="A B Bam mpich"
   for v in $vs; do
    case $v in
     mpich) cmd="/tmp/netrma-st/lat-mpich";;
     Bam) cmd="env LD_LIBRARY_PATH=/tmp/netrma-B WHARF_NET_ATOMICS=0 /tmp/netrma-st/lat-wharf";;
     *) cmd="env LD_LIBRARY_PATH=/tmp/netrma-$v /tmp/netrma-st/lat-wharf";;
    esac
    m=wharf; [ $v = mpich ] && m=mpich
    out=$(timeout 200 python3 /tmp/netrma-st/labrun.py $sc $m -- $cmd $b 1000 2>&1)
    val=$(printf '%s\n' "$out" | grep "median" | head -1)
    echo "$sc $rep $b $v ${val:-FAIL} load=$(cut -d' ' -f1 /proc/loadavg)"
   done
  done
 done
done
