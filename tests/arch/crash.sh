#!/bin/sh
# A rank that crashes is reported as killed by its signal, over every channel
# (libraries loaded with libfabric install fatal-signal handlers that would
# turn it into "exit 1"), and the job leaves nothing in the node directory.
# usage: crash.sh WHARFRUN PROGRAM
set -u
run=$1 prog=$2
# not in /dev/shm: the locality tests running beside this one watch it for leftovers
dir=$(mktemp -d /tmp/wharf-crash-XXXXXX)
fail=0
for ch in auto net; do
    out=$(WHARF_CHANNEL=$ch WHARF_NODE_DIR=$dir "$run" -n 2 --timeout 60 "$prog" 2>&1)
    rc=$?
    case "$out" in
    *"killed by signal 11"*) ;;
    *) echo "channel $ch: no 'killed by signal 11' in: $out"; fail=1 ;;
    esac
    [ "$rc" -ne 0 ] || { echo "channel $ch: wharfrun exited 0"; fail=1; }
    left=$(ls -A "$dir")
    [ -z "$left" ] || { echo "channel $ch: left in the node directory: $left"; fail=1; }
done
rmdir "$dir"
[ $fail -eq 0 ] && echo "crash reporting ok"
exit $fail
