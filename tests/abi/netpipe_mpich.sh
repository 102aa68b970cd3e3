#!/bin/sh
# Debian's NetPIPE binary built against MPICH (netpipe-mpich2: /usr/bin/NPmpich2, linked with
# libmpich.so.12) runs unchanged on wharf's libmpich.so.12 through LD_LIBRARY_PATH: a
# ping-pong over every size up to 1 MiB between two ranks, checked for a complete table
# and wharf's own channel report from both ranks.  Skips (77) when the package is absent.
# usage: netpipe_mpich.sh BUILD_DIR
B=$1
NP=/usr/bin/NPmpich2
[ -x $NP ] || { echo "SKIP: $NP not installed (apt-get install netpipe-mpich2)"; exit 77; }
ldd $NP | grep -q 'libmpich.so.12' || { echo "SKIP: $NP is not linked with libmpich.so.12"; exit 77; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
LD_LIBRARY_PATH=$B/lib WHARF_REPORT=channels "$B/bin/wharfrun" -n 2 --timeout 120 \
    -x LD_LIBRARY_PATH $NP -p 0 -u 1048576 -o np.out > run.log 2>&1
rc=$?
cat run.log | tail -5
[ $rc -eq 0 ] || { echo "FAIL: NPmpich2 exited $rc"; cat run.log; exit 1; }
n=$(grep -c 'wharf: rank [01] channels:' run.log)
[ "$n" -eq 2 ] || { echo "FAIL: $n of 2 ranks printed wharf's channel report (not on wharf?)"; exit 1; }
rows=$(wc -l < np.out)
last=$(tail -1 np.out | awk '{print $1}')
[ "$rows" -ge 35 ] && [ "$last" -ge 1048576 ] || { echo "FAIL: NetPIPE table has $rows rows, last size $last"; exit 1; }
echo "PASS: NPmpich2 (Debian, built against MPICH) on wharf: $rows sizes up to $last bytes"
