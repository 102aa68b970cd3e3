#!/bin/sh
# An error under MPI_ERRORS_ARE_FATAL (or MPI_ERRORS_ABORT) prints exactly one
# line "wharf: rank R: FUNCTION: message (CLASS)" and ends the whole job with a
# non-zero status, without hanging the ranks that wait for the failed one.
# Usage: err_fatal.sh WHARFRUN ERR_FATAL_PROGRAM
set -u
run=$1
prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

bad() {
    echo "FAIL: $*"
    echo "--- stdout"; cat "$tmp/out"
    echo "--- stderr"; cat "$tmp/err"
    fail=1
}

# one job: mode, ranks
fatal_case() {
    mode=$1
    n=$2
    start=$(date +%s)
    timeout 60 "$run" -n "$n" --timeout 50 "$prog" "$mode" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    elapsed=$(( $(date +%s) - start ))
    last=$((n - 1))
    bad_dest=$((n + 2))
    if [ "$rc" -eq 0 ]; then
        bad "$mode: the job exited with status 0"
    elif [ "$rc" -eq 124 ]; then
        bad "$mode: the job hung (killed by timeout)"
    fi
    if [ "$elapsed" -gt 30 ]; then
        bad "$mode: the job took ${elapsed}s to end"
    fi
    lines=$(grep -c '^wharf: rank ' "$tmp/err")
    if [ "$lines" -ne 1 ]; then
        bad "$mode: expected exactly one 'wharf: rank' line on stderr, got $lines"
    fi
    line=$(grep '^wharf: rank ' "$tmp/err" | head -n 1)
    case "$line" in
    "wharf: rank $last: MPI_Send: "*"$bad_dest"*"(MPI_ERR_RANK)") ;;
    *) bad "$mode: unexpected error line: '$line'" ;;
    esac
    if grep -q 'returned' "$tmp/out"; then
        bad "$mode: a rank continued after the fatal error"
    fi
}

fatal_case rank 3
fatal_case rank 2
fatal_case abort 2

# MPI before MPI_Init: a clear message and status 1
timeout 60 "$run" -n 1 --timeout 50 "$prog" preinit >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    bad "preinit: status $rc"
fi
if ! grep -q 'MPI_Comm_rank called before MPI_Init' "$tmp/err"; then
    bad "preinit: no message naming MPI_Comm_rank and MPI_Init"
fi
if grep -q 'returned' "$tmp/out"; then
    bad "preinit: MPI_Comm_rank returned"
fi

if [ "$fail" -eq 0 ]; then
    echo "err_fatal: all cases passed"
fi
exit $fail
