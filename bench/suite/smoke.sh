#!/bin/sh
# Smoke test of the benchmark suite with one MPI implementation.
#
#   bench/suite/smoke.sh MPICC LAUNCHER_PREFIX...
#
# Builds every benchmark with MPICC into a temporary directory, then runs each
# one as  LAUNCHER_PREFIX... NPROCS ./bench -m 1:1024 -i 10 -x 2 -c [...]
# (so the prefix ends with the process-count flag) and checks the exit status
# and that the output has data rows ("SIZE VALUE...").  Point-to-point and
# one-sided benchmarks run with 2 ranks (one-sided with -s fence and -s lock),
# collectives with 2 and 3; a few extra runs cover 1 rank, an idle third rank
# and MPI_Win_allocate.  A one-sided benchmark that prints
# "# SKIPPED: one-sided communication not available" and exits 0 passes.
#
# Examples:
#   bench/suite/smoke.sh mpicc.mpich mpiexec.mpich -n
#   OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
#     bench/suite/smoke.sh mpicc.openmpi mpirun.openmpi -n
#   bench/suite/smoke.sh build/bin/mpicc build/bin/wharfrun --timeout 60 -n
#
# Environment: SMOKE_TIMEOUT (seconds per run, default 60; needs timeout(1)),
# SMOKE_KEEP=1 keeps the temporary directory.  OMPI_MCA_rmaps_base_oversubscribe
# defaults to 1 so that Open MPI runs 3 ranks on fewer cores.  Exit status: 0 all passed,
# 1 some run failed, 2 usage or build error.
set -u

if [ $# -lt 2 ]; then
    sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
    exit 2
fi
MPICC=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wh-bench-smoke.XXXXXX") || exit 2
if [ "${SMOKE_KEEP:-0}" = 1 ]; then
    echo "smoke: keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
trap 'exit 130' INT TERM

echo "smoke: building with $MPICC into $tmp/bin"
if ! make -s -C "$here" MPICC="$MPICC" OUT="$tmp/bin" CFLAGS="-O1 -g" >"$tmp/build.log" 2>&1; then
    cat "$tmp/build.log"
    echo "smoke: FAILED to build the suite with $MPICC"
    exit 2
fi
[ -s "$tmp/build.log" ] && cat "$tmp/build.log"

# Open MPI refuses more ranks than cores unless told; the smoke test runs 3
# ranks anywhere (other MPIs ignore this variable).
OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
export OMPI_MCA_rmaps_base_oversubscribe

tmo=""
if command -v timeout >/dev/null 2>&1; then
    tmo="timeout -k 5 ${SMOKE_TIMEOUT:-60}"
fi

pass=0
fail=0
skip=0
failed=""
SIZES="-m 1:1024 -i 10 -x 2 -c"

# run NPROCS BENCH [ARGS...]: one run; expect exit 0 and data rows (or a
# one-sided SKIPPED line, or the 1-rank message when NPROCS is 1).
run() {
    np=$1
    bench=$2
    shift 2
    label="$bench -n $np${*:+ $*}"
    out="$tmp/out.txt"
    eval "$tmo $LAUNCH \"\$np\" \"\$tmp/bin/\$bench\" $SIZES \"\$@\"" >"$out" 2>&1 </dev/null
    rc=$?
    rows=$(grep -Ec '^[0-9]+[[:space:]]+[0-9]+\.[0-9]+' "$out")
    bad=$(grep -Eci '^[0-9]+[[:space:]].*(nan|inf)' "$out")
    verdict=""
    if [ "$rc" -ne 0 ]; then
        verdict="exit status $rc"
        [ "$rc" -eq 124 ] && verdict="timed out after ${SMOKE_TIMEOUT:-60} s"
    elif grep -q '^# SKIPPED: one-sided communication not available' "$out"; then
        case $bench in
        wh_put_* | wh_get_* | wh_acc_* | wh_fop_*) verdict=skip ;;
        *) verdict="unexpected SKIPPED" ;;
        esac
    elif [ "$np" -eq 1 ] && grep -q 'needs at least 2 ranks' "$out"; then
        verdict=ok
    elif [ "$rows" -eq 0 ]; then
        verdict="no data rows"
    elif [ "$bad" -ne 0 ]; then
        verdict="nan/inf in data rows"
    elif ! grep -q '^# MPI library: ' "$out"; then
        verdict="no MPI library header"
    else
        verdict=ok
    fi
    case $verdict in
    ok)
        pass=$((pass + 1))
        printf 'ok    %s (%s rows)\n' "$label" "$rows"
        ;;
    skip)
        skip=$((skip + 1))
        printf 'skip  %s: %s\n' "$label" "$(grep -m1 '^# SKIPPED' "$out" | cut -c3-)"
        ;;
    *)
        fail=$((fail + 1))
        failed="$failed
  $label: $verdict"
        printf 'FAIL  %s: %s\n' "$label" "$verdict"
        sed 's/^/      | /' "$out" | head -40
        ;;
    esac
}

# the launcher prefix, quoted for eval (arguments may contain spaces)
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
LAUNCH=""
for a in "$@"; do
    LAUNCH="$LAUNCH $(quote "$a")"
done
echo "smoke: launching with:$LAUNCH NPROCS ..."

for b in wh_latency wh_latency_nb wh_bw wh_bibw wh_mbw_mr; do
    run 2 $b
done
run 2 wh_bw -W 4
run 3 wh_latency
run 3 wh_mbw_mr
run 1 wh_latency
for s in fence lock; do
    for b in wh_put_latency wh_get_latency wh_acc_latency wh_put_bw wh_get_bw; do
        run 2 $b -s $s
    done
done
run 2 wh_put_bw -s lock -w allocate
run 2 wh_fop_latency -s lock -w allocate
run 3 wh_get_latency -s fence
for np in 2 3; do
    for b in wh_barrier wh_bcast wh_reduce wh_allreduce wh_gather wh_scatter wh_allgather wh_alltoall \
             wh_reduce_scatter wh_scan wh_exscan wh_allgatherv wh_alltoallv; do
        run $np $b -f
    done
    for b in wh_ibarrier wh_ibcast wh_ireduce wh_iallreduce wh_igather wh_iscatter wh_iallgather wh_ialltoall; do
        run $np $b
    done
done
run 1 wh_allreduce

echo "smoke: $pass passed, $skip skipped (one-sided not available), $fail failed"
if [ "$fail" -ne 0 ]; then
    echo "smoke: failures:$failed"
    exit 1
fi
exit 0
