for r in 1 2 3; do
 for cfg in "A WHARF_COLL_HIER=1" "B WHARF_COLL_HIER=0" "C WHARF_COLL_HIER=1 WHARF_WAIT_SLEEP=on WHARF_WAIT_SLEEP_NET=20" "D WHARF_COLL_HIER=0 WHARF_WAIT_SLEEP=on WHARF_WAIT_SLEEP_NET=20"; do
  set -- $cfg; tag=$1; shift
  line="$r $tag"
  for b in allreduce bcast barrier; do
   v=$(env "$@" python3 tests/scenarios/wharfns.py run twohost -n 4 --wharfrun build/bin/wharfrun --timeout 60 -- /tmp/bsw/wh_$b -m 8:8 -i 1000 -x 100 2>&1 | awk '/^(0|8) /{print $2}')
   line="$line $b=$v"
  done
  echo $line
 done
done
