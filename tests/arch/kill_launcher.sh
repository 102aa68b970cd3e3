#!/bin/sh
# kill -9 of wharfrun: its ranks die with it (PR_SET_PDEATHSIG) and cannot
# clean up, so wharfrun's sentinel removes the job's node-region files.  The
# rank (a shell) makes a file named like a node region of its job, then
# sleeps; the test kills wharfrun and expects the file gone.
# usage: kill_launcher.sh WHARFRUN
set -u
run=$1
# not in /dev/shm: the locality tests running beside this one watch it for leftovers
dir=$(mktemp -d /tmp/wharf-kill-XXXXXX)
WHARF_NODE_DIR=$dir "$run" -n 1 sh -c 'touch "$WHARF_NODE_DIR/wharf.$WHARF_JOB_ID.test"; sleep 30' &
w=$!
i=0
while [ -z "$(ls -A "$dir")" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
made=$(ls -A "$dir")
kill -9 $w
i=0
while [ -n "$(ls -A "$dir")" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
left=$(ls -A "$dir")
rm -rf "$dir"
[ -n "$made" ] || { echo "the rank made no file"; exit 1; }
[ -z "$left" ] || { echo "left behind after kill -9 of wharfrun: $left"; exit 1; }
echo "node region of a killed launcher removed ($made)"
