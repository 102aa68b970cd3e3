for r in 1 2 3; do
 for b in barrier bcast allreduce reduce allgather alltoall gather scatter scan reduce_scatter; do
  line="$r $b"
  for sp in 20 0; do
   v=$(WHARF_COLL_SPIN=$sp build/bin/wharfrun -n 4 /tmp/bsw/wh_$b -m 8:8 -i 3000 2>&1 | awk '/^(0|8) /{print $2}')
   line="$line $v"
  done
  echo $line
 done
done
