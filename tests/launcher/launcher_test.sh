#!/bin/sh
# Launcher tests: sh launcher_test.sh CASE WHARFRUN PMI_TEST MPI_HOLD
# One CASE per ctest test (see CMakeLists.part.cmake); exit 0 pass, 1 fail,
# 77 skip.  Every command is bounded in time; scratch files live in a private
# temporary directory; process markers are unique per run, so cases can run in
# parallel (and as root).
set -u
CASE=$1
W=$2
P=$3
M=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/wharf-launcher.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cp "$HERE/fake_agent.sh" "$T/agent" && cp "$HERE/flood.py" "$T/flood.py" && chmod +x "$T/agent"
A="$T/agent"
MARK=$((20000 + $$ % 30000)) # "pmi_test sleep $MARK" identifies this run's ranks
RC=0
ELAPSED=0

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in out err; do
        if [ -s "$T/$f" ]; then
            echo "--- std$f:" >&2
            head -40 "$T/$f" >&2
        fi
    done
    exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# run LIMIT CMD...: run with a hard time limit (SIGKILL: status 137, never
# mistaken for wharfrun's own 124), stdout/stderr to $T/out, $T/err.
run() {
    lim=$1
    shift
    s=$(now_ms)
    timeout -s KILL "$lim" "$@" >"$T/out" 2>"$T/err" </dev/null
    RC=$?
    ELAPSED=$(($(now_ms) - s))
}
expect_rc() { [ "$RC" = "$1" ] || fail "exit status $RC, expected $1"; }
# exactly one "wharfrun:" line on stderr, matching the extended regex $1
expect_msg() {
    n=$(grep -c '^wharfrun:' "$T/err")
    [ "$n" = 1 ] || fail "$n 'wharfrun:' lines on stderr, expected 1"
    grep -Eq "$1" "$T/err" || fail "stderr does not match /$1/"
}
expect_fast() { [ "$ELAPSED" -le "$1" ] || fail "took $ELAPSED ms, limit $1 ms"; }
expect_out_lines() { # COUNT REGEX: COUNT stdout lines match REGEX
    n=$(grep -Ec "$2" "$T/out")
    [ "$n" = "$1" ] || fail "$n stdout lines match /$2/, expected $1"
}
no_survivors() { # PATTERN: no process matches it (within 3 s)
    i=0
    while pgrep -f "$1" >/dev/null; do
        i=$((i + 1))
        [ $i -ge 30 ] && fail "processes survived: $(pgrep -af "$1")"
        sleep 0.1
    done
}
# start_bg CMD...: start in the background with stdio to files; PID in BG
start_bg() {
    : >"$T/out"
    : >"$T/err"
    "$@" >"$T/out" 2>"$T/err" </dev/null &
    BG=$!
}
wait_ready() { # COUNT: wait until COUNT "ready" lines are printed (10 s)
    i=0
    while :; do
        n=$(grep -c ' ready$' "$T/out" 2>/dev/null)
        [ "${n:-0}" -ge "$1" ] && break
        i=$((i + 1))
        if [ $i -ge 100 ]; then
            kill -KILL "$BG" 2>/dev/null
            fail "ranks not ready after 10 s"
        fi
        sleep 0.1
    done
}
wait_bg() { # LIMIT_S: wait for $BG, kill it if it lasts longer; status in RC
    i=0
    # (a zombie still answers kill -0: look at its state)
    while st=$(ps -o stat= -p "$BG" 2>/dev/null | tr -d " ") && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; do
        i=$((i + 1))
        if [ $i -ge $(($1 * 10)) ]; then
            kill -KILL "$BG"
            wait "$BG"
            fail "wharfrun still running after $1 s"
        fi
        sleep 0.1
    done
    wait "$BG"
    RC=$?
}

case $CASE in
basic)
    run 60 "$W" -n 4 "$P" kvs
    expect_rc 0
    expect_out_lines 4 '^rank [0-3] of 4: kvs ok$'
    for r in 0 1 2 3; do grep -q "^rank $r of 4: kvs ok$" "$T/out" || fail "rank $r missing"; done
    [ -s "$T/err" ] && fail "unexpected stderr"
    run 60 "$W" -np 1 "$P" kvs
    expect_rc 0
    expect_out_lines 1 '^rank 0 of 1: kvs ok$'
    ;;
singleton)
    # no PMI environment at all: rank 0 of 1 with a local KVS
    run 30 env -u PMI_FD -u PMI_PORT -u PMI_ID "$P" kvs
    expect_rc 0
    expect_out_lines 1 '^rank 0 of 1: kvs ok$'
    ;;
exitcode)
    run 60 "$W" -n 3 "$P" exit 5 2
    expect_rc 5
    expect_msg '^wharfrun: rank 2 \(host [^,]+, pid [0-9]+\) exited with status 5$'
    expect_fast 5000
    run 60 "$W" -n 2 "$P" nofinalize
    expect_rc 1
    expect_msg '^wharfrun: rank [01] \(host [^,]+, pid [0-9]+\) exited with status 0 without calling PMI finalize'
    run 60 "$W" -n 2 false
    expect_rc 1
    expect_msg '^wharfrun: rank [01] \(host [^,]+, pid [0-9]+\) exited with status 1$'
    run 60 "$W" -n 3 sh -c 'exit 0'
    expect_rc 0
    [ -s "$T/err" ] && fail "stderr for a clean non-PMI job"
    ;;
abort)
    run 60 "$W" -n 3 "$P" abort 7 1
    expect_rc 7
    expect_msg '^wharfrun: rank 1 \(host [^,]+, pid [0-9]+\) called MPI_Abort with code 7: test abort from rank 1$'
    expect_fast 5000 # the aborting rank would wait 10 s if we did not kill it
    run 60 "$W" -n 2 "$P" abort 0 0
    expect_rc 0 # the job still ends at once, with status 0 as under hydra and mpirun
    expect_msg 'called MPI_Abort with code 0: test abort from rank 0$'
    expect_fast 5000
    run 60 "$W" -n 2 "$P" abort 256 1
    expect_rc 0
    expect_msg 'called MPI_Abort with code 256'
    ;;
signal)
    run 60 "$W" -n 3 "$P" crash 1
    expect_rc 137
    expect_msg '^wharfrun: rank 1 \(host [^,]+, pid [0-9]+\) killed by signal 9 \(SIGKILL\)$'
    expect_fast 5000
    run 60 "$W" -n 2 sh -c 'kill -SEGV $$'
    expect_rc 139
    expect_msg 'killed by signal 11 \(SIGSEGV\)$'
    ;;
protocol)
    # a rank that sends garbage (or breaks the protocol) fails the job, the
    # server survives
    for line in 'garbage\n' 'cmd=init\0x\n' 'cmd=init pmi_version=1\ncmd=put key=a\n' \
        'cmd=frobnicate\n' 'cmd=initack pmiid=3\n' 'cmd=init pmi_version=1\ncmd=finalize\ncmd=get key=x\n'; do
        run 60 "$W" -n 2 "$P" raw "$line"
        expect_rc 1
        expect_msg '^wharfrun: rank [01] \(host [^,]+, pid [0-9]+\) broke the PMI protocol: '
        expect_fast 5000
    done
    # an overlong line without newline
    long=$(head -c 5000 /dev/zero | tr '\0' x)
    run 60 "$W" -n 1 "$P" raw "cmd=$long"
    expect_rc 1
    expect_msg 'broke the PMI protocol: line too long'
    run 60 "$W" -n 3 "$P" skip 1
    expect_rc 1
    expect_msg '^wharfrun: rank 1 \(host [^,]+, pid [0-9]+\) exited while other ranks wait in a PMI barrier$'
    run 60 "$W" -n 3 "$P" closefd 2
    expect_rc 1
    expect_msg '^wharfrun: rank 2 \(host [^,]+, pid [0-9]+\) closed its PMI connection before PMI finalize$'
    expect_fast 5000
    ;;
tag_output)
    run 60 "$W" -n 3 --tag-output "$P" kvs
    expect_rc 0
    for r in 0 1 2; do
        grep -q "^\[$r\] rank $r of 3: kvs ok$" "$T/out" || fail "no tagged line of rank $r"
    done
    expect_out_lines 3 '^\[[0-2]\] rank [0-2] of 3: kvs ok$'
    run 60 "$W" -n 2 --tag-output sh -c 'echo to-err >&2; printf "no newline"'
    expect_rc 0
    [ "$(grep -c '^\[[01]\] to-err$' "$T/err")" = 2 ] || fail "stderr not tagged"
    expect_out_lines 2 '^\[[01]\] no newline$'
    ;;
output)
    # every line of every rank arrives whole, on the right stream
    run 120 "$W" -n 4 "$P" output 3000
    expect_rc 0
    expect_out_lines 12000 '^out rank [0-3] line [0-9]+ end$'
    [ "$(wc -l <"$T/out")" = 12000 ] || fail "extra stdout lines"
    [ "$(grep -Ec '^err rank [0-3] line [0-9]+ end$' "$T/err")" = 12000 ] || fail "stderr lines lost or mixed"
    for r in 0 1 2 3; do
        [ "$(grep -c "^out rank $r line " "$T/out")" = 3000 ] || fail "rank $r stdout incomplete"
        grep "^out rank $r line " "$T/out" | awk -v r=$r '{ if ($5 != n++) { print "rank " r " out of order at " $5; exit 1 } }' ||
            fail "rank $r lines out of order"
    done
    run 120 "$W" -n 3 --tag-output "$P" output 500
    expect_rc 0
    n=$(grep -Ec '^\[([0-2])\] out rank \1 line [0-9]+ end$' "$T/out")
    [ "$n" = 1500 ] || fail "$n correctly tagged lines, expected 1500"
    # stdin goes to rank 0 only (the others read /dev/null; case stdin)
    echo data | timeout -s KILL 30 "$W" -n 2 cat >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    [ "$(cat "$T/out")" = data ] || fail "wharfrun's stdin not read once: $(head -3 "$T/out")"
    ;;
timeout)
    run 60 "$W" -n 3 --timeout 1.5 "$P" sleep $MARK
    expect_rc 124
    expect_msg '^wharfrun: timeout after 1.5 s$'
    [ "$ELAPSED" -ge 1400 ] || fail "timeout fired early ($ELAPSED ms)"
    expect_fast 6000
    no_survivors "pmi_test sleep $MARK"
    ;;
sigterm)
    for sig in TERM HUP INT; do
        case $sig in TERM) want=143 ;; HUP) want=129 ;; INT) want=130 ;; esac
        # a background job of a non-interactive shell ignores SIGINT, and
        # wharfrun keeps an inherited "ignore": start it with the default
        start_bg env --default-signal=INT "$W" -n 3 "$P" sleep $MARK
        wait_ready 3
        kill -s $sig "$BG"
        wait_bg 10
        expect_rc $want
        expect_msg "^wharfrun: caught SIG$sig, killing the job$"
        no_survivors "pmi_test sleep $MARK"
    done
    # nohup-style: an ignored SIGHUP stays ignored
    start_bg env --ignore-signal=HUP "$W" -n 2 --timeout 3 "$P" sleep $MARK
    wait_ready 2
    kill -s HUP "$BG"
    wait_bg 10
    expect_rc 124
    no_survivors "pmi_test sleep $MARK"
    ;;
badinput)
    printf 'a slots=2\nb slots=x\n' >"$T/hf_bad"
    printf 'a:2 slots=3\n' >"$T/hf_bad2"
    printf 'x' >"$T/noexec"
    chmod -x "$T/noexec"
    check_bad() { # STATUS ARGS...
        want=$1
        shift
        run 20 "$W" "$@"
        expect_rc "$want"
        expect_msg '^wharfrun: error: '
        [ -s "$T/out" ] && fail "stdout for: $*"
        expect_fast 10000
    }
    check_bad 2 --bogus -n 1 true
    check_bad 2 -n 1
    check_bad 2 true
    check_bad 2 -n 0 true
    check_bad 2 -n -3 true
    check_bad 2 -n abc true
    check_bad 2 -n
    check_bad 2 -n 2 --hosts a:x true
    check_bad 2 -n 2 --hosts a:0 true
    check_bad 2 -n 2 --hosts a:-1 true
    check_bad 2 -n 2 --hosts a, true
    check_bad 2 -n 2 --hosts -oProxyCommand=x true
    check_bad 2 -n 2 --hostfile "$T/hf_bad" true
    check_bad 2 -n 2 --hostfile "$T/hf_bad2" true
    check_bad 2 -n 2 --hostfile "$T/missing" true
    check_bad 2 -n 2 --hostfile /dev/zero true   # a device: bounded, an error
    check_bad 2 -n 2 --hosts a --hostfile "$T/hf_bad" true
    check_bad 2 -n 2 --hosts no-such-host.invalid --rsh "$A" true
    check_bad 2 -n 2 --hosts 127.0.0.2 --rsh "$T/no-such-agent" true
    check_bad 2 -n 2 --timeout 0 true
    check_bad 2 -n 2 --timeout abc true
    check_bad 2 -n 1 -x 9BAD=1 true
    check_bad 2 -n 1 -x WHARF_SURELY_UNSET_VAR true
    check_bad 2 -n 1 --iface no-such-if0 --hosts 127.0.0.2 --rsh "$A" true
    check_bad 127 -n 2 "$T/no-such-program"
    check_bad 127 -n 2 no-such-program-in-path-xyz
    check_bad 126 -n 2 "$T/noexec"
    check_bad 126 -n 2 "$T"
    run 10 "$W" --version
    expect_rc 0
    grep -q '^wharfrun (wharf) ' "$T/out" || fail "--version"
    run 10 "$W" --help
    expect_rc 0
    grep -q '^usage: wharfrun' "$T/out" || fail "--help"
    ;;
placement)
    # not every host has a slot count: ceil(5/2) = 3 per host, in order
    run 60 "$W" -n 5 --hosts localhost,127.0.0.1 "$P" env
    expect_rc 0
    for spec in 0:0:0:3 1:0:1:3 2:0:2:3 3:1:0:2 4:1:1:2; do
        IFS=: read -r r h l s <<EOF
$spec
EOF
        grep -q "^rank $r WHARF_HOST_INDEX=$h$" "$T/out" || fail "rank $r host index (want $h)"
        grep -q "^rank $r WHARF_LOCAL_RANK=$l$" "$T/out" || fail "rank $r local rank (want $l)"
        grep -q "^rank $r WHARF_LOCAL_SIZE=$s$" "$T/out" || fail "rank $r local size (want $s)"
    done
    grep -q '^rank 4 WHARF_HOST_NAME=127.0.0.1$' "$T/out" || fail "host name"
    expect_out_lines 5 'remote=no$'
    # all counts, sum 3 < 5: wrap around -> 2 and 3 ranks
    run 60 "$W" -n 5 --hosts localhost:1,127.0.0.1:2 "$P" env
    expect_rc 0
    for spec in 1:0:1:2 2:1:0:3 4:1:2:3; do
        IFS=: read -r r h l s <<EOF
$spec
EOF
        grep -q "^rank $r WHARF_HOST_INDEX=$h$" "$T/out" || fail "wrap: rank $r host index"
        grep -q "^rank $r WHARF_LOCAL_RANK=$l$" "$T/out" || fail "wrap: rank $r local rank"
        grep -q "^rank $r WHARF_LOCAL_SIZE=$s$" "$T/out" || fail "wrap: rank $r local size"
    done
    # hostfile: comments, both syntaxes, duplicates merged
    printf '# hosts\n\nlocalhost slots=1  # first\n127.0.0.1:2\nlocalhost:1\n' >"$T/hf"
    run 60 "$W" -n 4 --hostfile "$T/hf" "$P" env
    expect_rc 0
    expect_out_lines 2 '^rank [01] WHARF_HOST_INDEX=0$'
    expect_out_lines 2 '^rank [23] WHARF_HOST_INDEX=1$'
    # local ranks inherit the environment, -x adds and overrides
    WHARF_TEST_VAR=inherited XTEST_B=old run 60 "$W" -n 2 -x XTEST_A="a b" -x XTEST_B=new "$P" env
    expect_rc 0
    expect_out_lines 2 'WHARF_TEST_VAR=inherited$'
    expect_out_lines 2 'XTEST_A=a b$'
    expect_out_lines 2 'XTEST_B=new$'
    ;;
parent_pmi)
    # PMI_* variables of a parent launcher are ignored
    PMI_FD=77 PMI_PORT=192.0.2.1:9 PMI_ID=5 PMI_RANK=9 PMI_SIZE=12 run 60 "$W" -n 3 "$P" kvs
    expect_rc 0
    expect_out_lines 3 '^rank [0-2] of 3: kvs ok$'
    if command -v mpiexec.hydra >/dev/null 2>&1; then
        # wharfrun as a rank of hydra
        run 60 mpiexec.hydra -n 1 "$W" -n 2 "$P" kvs
        expect_rc 0
        expect_out_lines 2 '^rank [01] of 2: kvs ok$'
    fi
    ;;
shm_cleanup)
    # leftovers /dev/shm/wharf.<jobid>.* of the job are removed
    run 60 "$W" -n 2 sh -c 'touch /dev/shm/wharf.$WHARF_JOB_ID.$PMI_RANK; echo $WHARF_JOB_ID'
    expect_rc 0
    job=$(head -1 "$T/out")
    case $job in wharf-*) ;; *) fail "bad WHARF_JOB_ID '$job'" ;; esac
    [ "$(sort -u "$T/out" | wc -l)" = 1 ] || fail "ranks disagree on WHARF_JOB_ID"
    ls /dev/shm/wharf."$job".* >/dev/null 2>&1 && fail "leftover /dev/shm/wharf.$job.*"
    # abnormal end with remote ranks: the agent is asked to clean each host
    FAKE_AGENT_LOG="$T/agent.log" run 60 "$W" -n 2 --hosts 127.0.0.2 --rsh "$A" \
        sh -c 'touch /dev/shm/wharf.$WHARF_JOB_ID.r$PMI_RANK; echo $WHARF_JOB_ID; exit 3'
    expect_rc 3
    job=$(head -1 "$T/out")
    grep -q "^127.0.0.2 rm -f '/dev/shm'/wharf.$job.\*$" "$T/agent.log" || fail "no remote cleanup"
    ls /dev/shm/wharf."$job".* >/dev/null 2>&1 && fail "leftover /dev/shm/wharf.$job.*"
    ;;
remote)
    # the agent path over TCP (PMI_PORT + PMI_ID), with a fake ssh
    FAKE_AGENT_LOG="$T/agent.log" run 60 "$W" -n 4 --hosts 127.0.0.2:2,127.0.0.3:2 --rsh "$A" "$P" kvs
    expect_rc 0
    expect_out_lines 4 '^rank [0-3] of 4: kvs ok$'
    [ "$(grep -c '^127.0.0.2 cd ' "$T/agent.log")" = 2 ] || fail "agent not used for 127.0.0.2"
    # nothing of the rank's environment on the agent's command line: it comes on stdin
    grep -Eq "PMI_|WHARF_" "$T/agent.log" && fail "rank environment on the agent command line: $(head -1 "$T/agent.log")"
    # mixed local and remote, environment forwarding
    WHARF_TEST_VAR=fwd LD_LIBRARY_PATH=/opt/x XTEST_B=notsent run 60 "$W" -n 4 \
        --hosts 127.0.0.2,localhost --rsh "$A" -x "XTEST_A=it's \"q\" \$HOME *" "$P" env
    expect_rc 0
    expect_out_lines 2 '^rank [01] remote=yes$'
    expect_out_lines 2 '^rank [23] remote=no$'
    expect_out_lines 4 'WHARF_TEST_VAR=fwd$'
    expect_out_lines 4 'LD_LIBRARY_PATH=/opt/x$'
    expect_out_lines 4 "XTEST_A=it's \"q\" [$]HOME [*]$"
    expect_out_lines 2 '^rank [01] XTEST_B=\(unset\)$'
    expect_out_lines 2 '^rank [23] XTEST_B=notsent$'
    expect_out_lines 2 '^rank [01] WHARF_HOST_NAME=127.0.0.2$'
    # quoting of arguments: spaces, quotes, shell metacharacters, empty
    run 60 "$W" -n 1 --hosts 127.0.0.3 --rsh "$A" "$P" args "a b" "it's" 'say "hi"' '$HOME' '*' '' 'x;y|z&' '\n'
    expect_rc 0
    cat >"$T/want" <<'EOF'
arg[0]=<a b>
arg[1]=<it's>
arg[2]=<say "hi">
arg[3]=<$HOME>
arg[4]=<*>
arg[5]=<>
arg[6]=<x;y|z&>
arg[7]=<\n>
EOF
    cmp -s "$T/want" "$T/out" || fail "arguments mangled: $(cat "$T/out")"
    # failures of remote ranks
    run 60 "$W" -n 3 --hosts 127.0.0.2 --rsh "$A" "$P" abort 3 2
    expect_rc 3
    expect_msg '^wharfrun: rank 2 \(host 127.0.0.2, pid [0-9]+\) called MPI_Abort with code 3: test abort from rank 2$'
    expect_fast 5000
    run 60 "$W" -n 3 --hosts 127.0.0.2,localhost --rsh "$A" "$P" crash 1
    expect_rc 137
    expect_msg '^wharfrun: rank 1 \(host 127.0.0.2, pid [0-9]+\) killed by signal 9 \(SIGKILL\)$'
    # a failing agent
    FAKE_AGENT_FAIL=1 run 60 "$W" -n 2 --hosts 127.0.0.2,localhost --rsh "$A" "$P" kvs
    expect_rc 255
    expect_msg '^wharfrun: rank 0 \(host 127.0.0.2, pid [0-9]+\) exited with status 255 \(before contacting the PMI server'
    # an agent that hangs: the local rank connects, the remote one never does
    FAKE_AGENT_HANG=fake-agent-hang-$$ WHARF_CONNECT_TIMEOUT=2 run 60 "$W" -n 2 --hosts 127.0.0.2,localhost --rsh "$A" "$P" kvs
    expect_rc 1
    expect_msg '^wharfrun: rank 0 \(host 127.0.0.2, pid [0-9]+\) did not contact the PMI server within 2 s'
    # 2 s to notice, <= 1 s to kill, <= 5 s for the (hanging) remote cleanup
    expect_fast 15000
    no_survivors "fake-agent-hang-$$"
    # an agent whose death does not end the remote command (like ssh without
    # a tty): the ranks still end, because wharfrun closes their PMI connection
    FAKE_AGENT_DETACH=1 run 60 "$W" -n 3 --hosts 127.0.0.2 --rsh "$A" "$P" watch 1 "$T/noticed"
    expect_rc 3
    expect_msg '^wharfrun: rank 1 \(host 127.0.0.2, pid [0-9]+\) exited with status 3$'
    i=0
    while [ ! -e "$T/noticed.0" ] || [ ! -e "$T/noticed.2" ]; do
        i=$((i + 1))
        [ $i -ge 50 ] && fail "detached ranks did not notice the closed PMI connection"
        sleep 0.1
    done
    no_survivors "pmi_test watch 1 $T/noticed"
    # a rank with a wrong key is refused: it fails, naming the reason
    FAKE_AGENT_BADKEY=1 run 60 "$W" -n 2 --hosts 127.0.0.2 --rsh "$A" "$P" kvs
    expect_rc 3
    grep -q 'rejected the authentication (wrong WHARF_PMI_SECRET?)' "$T/err" || fail "no authentication failure reported"
    grep -q 'authentication failed for pmiid' "$T/err" || fail "wharfrun did not report the failed authentication"
    # a server that does not know the key (an impostor on the rank's
    # PMI_PORT) is not trusted: its auth_ok MAC is wrong
    python3 - "$T/port" <<'PYEOF' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); s.settimeout(20)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept(); c.settimeout(20); f = c.makefile("rb")
f.readline(); c.sendall(b"cmd=auth_challenge snonce=" + b"ab" * 16 + b"\n")
f.readline(); c.sendall(b"cmd=auth_ok mac=" + b"0" * 64 + b"\ncmd=initack\ncmd=set size=1\ncmd=set rank=0\ncmd=set debug=0\n")
f.readline()
PYEOF
    i=0
    while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
    run 30 env PMI_PORT=127.0.0.1:$(cat "$T/port") PMI_ID=5 WHARF_PMI_SECRET=$(printf '1%.0s' $(seq 64)) "$P" kvs
    expect_rc 3
    grep -q 'failed to prove the job' "$T/err" || fail "an impostor PMI server was trusted: $(cat "$T/err")"
    wait
    # 2 x 80 idle connections to the PMI port ahead of the ranks (beyond the
    # 2N+64 unauthenticated ones kept): the oldest are dropped, the ranks get
    # in, and the warnings stay few
    FAKE_AGENT_FLOOD=80 run 60 "$W" -n 2 --hosts 127.0.0.2 --rsh "$A" "$P" kvs
    expect_rc 0
    expect_out_lines 2 '^rank [01] of 2: kvs ok$'
    [ "$(grep -c 'dropped' "$T/err")" -le 5 ] || fail "a flood of connections floods the terminal: $(grep -c dropped "$T/err") lines"
    # --iface: the address handed to remote ranks, and the only one listened on
    FAKE_AGENT_ENVLOG="$T/env2" run 60 "$W" -n 2 --hosts 127.0.0.2 --iface 127.0.0.1 --rsh "$A" "$P" kvs
    expect_rc 0
    grep -q "^PMI_PORT=127.0.0.1:" "$T/env2" || fail "--iface not used"
    ;;
attacker)
    # a second local user against a running job: the node region, the PMI
    # port, the process table
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP: the attacker case creates a second local user and needs root"
        exit 77
    fi
    for c in useradd userdel setpriv python3; do
        command -v $c >/dev/null 2>&1 || { echo "SKIP: $c not installed"; exit 77; }
    done
    U=whatk$$
    useradd -M -N -d /nonexistent -s /bin/sh "$U" 2>"$T/useradd.err" ||
        { echo "SKIP: useradd failed: $(cat "$T/useradd.err")"; exit 77; }
    # (the user's processes are all this test's floods: end them, then the user)
    trap 'pgrep -u "$U" | xargs -r kill -KILL 2>/dev/null; sleep 0.2; userdel "$U" 2>/dev/null; rm -rf "$T"' EXIT
    AS="setpriv --reuid=$(id -u "$U") --regid=$(id -g "$U") --clear-groups -- env PATH=/usr/bin:/bin"
    $AS sh -c 'test "$(id -u)" != 0' || fail "setpriv did not drop root"
    # the attacker may enter the scratch dir; the node directory is like
    # /dev/shm (world-writable, sticky)
    chmod 711 "$T"
    mkdir "$T/node" && chmod 1777 "$T/node"
    cp "$HERE/flood.py" "$T/flood.py" && chmod 644 "$T/flood.py"

    # 1. the node region: 0600 files of the job's user (unlinked once every
    #    rank mapped them: reached through the ranks' descriptors), which the
    #    other user can neither read, write, nor reach through /proc
    start_bg env WHARF_NODE_DIR="$T/node" "$W" -n 2 --timeout 60 "$M" hold "$T/go"
    wait_ready 2
    nfiles=0
    for pid in $(pgrep -f "$M hold $T/go"); do
        for fd in /proc/$pid/fd/* /proc/$pid/map_files/*; do
            case $(readlink "$fd" 2>/dev/null) in "$T/node/"*) ;; *) continue ;; esac
            nfiles=$((nfiles + 1))
            [ "$(stat -L -c %a:%u "$fd")" = "600:0" ] || fail "region $(readlink "$fd") is $(stat -L -c %a:%u "$fd"), want 600:0"
            $AS sh -c "cat '$fd' >/dev/null" 2>/dev/null && fail "the other user read $fd"
            $AS sh -c ": >>'$fd'" 2>/dev/null && fail "the other user opened $fd for writing"
        done
        $AS cat /proc/$pid/environ >/dev/null 2>&1 && fail "the other user read the environment of pid $pid"
    done
    [ "$nfiles" -ge 1 ] || fail "no node region mapped from \$WHARF_NODE_DIR"
    ls -A "$T/node" | grep -q . && fail "node region still named in the directory after init: $(ls -A "$T/node")"
    touch "$T/go"
    wait_bg 30
    expect_rc 0
    ls -A "$T/node" | grep -q . && fail "node region left behind: $(ls -A "$T/node")"

    # 2. remote ranks: the key and the rank variables are on no command
    #    line; the other user cannot read them from /proc either
    start_bg "$W" -n 2 --hosts 127.0.0.2 --rsh "$A" --timeout 60 "$P" sleep $MARK
    wait_ready 2
    rpid=$(pgrep -f "pmi_test sleep $MARK" | while read -r p; do
        tr '\0' '\n' </proc/$p/environ 2>/dev/null | grep -q '^WHARF_PMI_SECRET=' && echo $p; done | head -1)
    [ -n "$rpid" ] || fail "no remote rank with WHARF_PMI_SECRET in its environment"
    key=$(tr '\0' '\n' </proc/$rpid/environ | sed -n 's/^WHARF_PMI_SECRET=//p')
    [ ${#key} = 64 ] || fail "key '$key' is not 64 hex digits"
    id=$(tr '\0' '\n' </proc/$rpid/environ | sed -n 's/^PMI_ID=//p')
    # the key anywhere on the machine; PMI variables on the command line of this job's
    # processes (wharfrun and its descendants: agent, bootstrap, ranks), not of other jobs
    # that may run beside this test
    job=$(ps -e -o pid=,ppid= | awk -v root="$BG" '{ kids[$2] = kids[$2] " " $1 }
        END { q = root; while (q != "") { split(q, a, " "); q = ""; for (i in a) { print a[i]; q = q " " kids[a[i]] } } }')
    for c in /proc/[0-9]*/cmdline; do
        pid=${c#/proc/}; pid=${pid%/cmdline}
        pat="$key"
        echo " $job " | tr '\n' ' ' | grep -q " $pid " && pat="$key|PMI_ID=|PMI_PORT=|WHARF_PMI_SECRET"
        { tr '\0' ' ' <"$c"; } 2>/dev/null | grep -Eq "$pat" &&
            fail "secret or PMI variables on a command line: $c: $({ tr '\0' ' ' <"$c"; } 2>/dev/null | head -c 300)"
    done
    $AS sh -c "tr '\\0' '\\n' </proc/$rpid/environ" 2>/dev/null | grep -q . &&
        fail "the other user read the remote rank's environment"
    kill -TERM "$BG"
    wait_bg 10
    no_survivors "pmi_test sleep $MARK"

    # 3. the other user, knowing the PMI port and the rank's PMI_ID but not
    #    the key, tries to claim the rank first (plainly and with a made-up
    #    MAC): refused, the real job completes
    FAKE_AGENT_AS="$AS" FAKE_AGENT_CLAIM="$T/claims" run 60 "$W" -n 2 --hosts 127.0.0.2 --rsh "$A" "$P" kvs
    expect_rc 0
    expect_out_lines 2 '^rank [01] of 2: kvs ok$'
    [ "$(grep -o 'flood claim: [0-9]* connections, [0-9]* answered' "$T/claims" | grep -c ', 0 answered$')" = 2 ] ||
        fail "claims of a rank without the key were answered: $(cat "$T/claims")"
    grep -q "dropped a PMI connection: not authenticated" "$T/err" || fail "plain initack not refused: $(cat "$T/err")"
    grep -q "dropped a PMI connection: authentication failed for pmiid $((0))\\|authentication failed" "$T/err" ||
        fail "wrong MAC not refused: $(cat "$T/err")"

    # 4. the other user floods the PMI port (idle, garbage, lines that never
    #    end, and connect/close as fast as it can): the job still completes, the log stays short
    for mode in idle garbage partial spin; do
        FAKE_AGENT_AS="$AS" FAKE_AGENT_FLOOD=300 FAKE_AGENT_FLOOD_MODE=$mode run 90 "$W" -n 3 \
            --hosts 127.0.0.2 --rsh "$A" "$P" kvs
        expect_rc 0
        expect_out_lines 3 '^rank [0-2] of 3: kvs ok$'
        [ "$(grep -c 'dropped' "$T/err")" -le 6 ] || fail "$mode flood: $(grep -c dropped "$T/err") warning lines"
    done
    ;;
listen)
    # local ranks only: wharfrun listens nowhere; remote ranks: only on the
    # address they use, never on the wildcard address
    listening() { # PID: the LISTEN sockets of PID as ADDR:PORT lines
        python3 - "$1" <<'PYEOF'
import os, socket, sys
pid = sys.argv[1]
ino = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        l = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if l.startswith("socket:["):
        ino.add(l[8:-1])
for name in ("tcp", "tcp6"):
    with open(f"/proc/{pid}/net/{name}") as f:
        next(f)
        for line in f:
            w = line.split()
            if w[3] == "0A" and w[9] in ino:
                print(w[1])
PYEOF
    }
    start_bg "$W" -n 2 --timeout 30 "$P" sleep $MARK
    wait_ready 2
    [ -z "$(listening "$BG")" ] || fail "a local-only job listens: $(listening "$BG")"
    kill -TERM "$BG"
    wait_bg 10
    start_bg "$W" -n 2 --hosts 127.0.0.2 --iface 127.0.0.1 --rsh "$A" --timeout 30 "$P" sleep $MARK
    wait_ready 2
    l=$(listening "$BG")
    [ -n "$l" ] || fail "no listening socket with remote ranks"
    echo "$l" | grep -qv '^0100007F:' && fail "listens beyond 127.0.0.1 (--iface): $l"
    kill -TERM "$BG"
    wait_bg 10
    no_survivors "pmi_test sleep $MARK"
    ;;
region)
    # a co-resident process truncates the node region under a running job:
    # every rank ends with a message naming the region instead of dying by a
    # bare SIGBUS; nothing is left behind
    mkdir "$T/node"
    WHARF_NODE_DIR="$T/node" WHARF_CHANNEL=auto run 60 "$W" -n 3 "$M" truncate 1
    expect_rc 1
    grep -q '^rank 1 truncates$' "$T/out" || fail "the region was not truncated"
    grep -q 'communicated through a truncated region' "$T/out" && fail "ranks went on after the truncation"
    grep -Eq '^wharfrun: rank [0-2] \(host [^,]+, pid [0-9]+\) called MPI_Abort with code 1: rank [0-2]: the node region .*/node/wharf\..* was truncated by another process' "$T/err" ||
        fail "no abort naming the truncated region"
    grep -q 'killed by signal' "$T/err" && fail "a rank died by its signal"
    expect_fast 10000
    no_survivors "$M truncate 1"
    ls -A "$T/node" | grep -q . && fail "files left: $(ls -A "$T/node")"
    ;;
spawnfail)
    # a process started by MPI_Comm_spawn fails: the job ends like for a
    # failing rank, naming the spawned group, with nothing left behind
    mkdir "$T/node"
    WHARF_NODE_DIR="$T/node" run 90 "$W" -n 2 "$M" spawnfail 3
    expect_rc 3
    expect_out_lines 2 '^parent [01] spawned$'
    grep -q 'dead' "$T/out" && fail "a wait on the dead process completed"
    expect_msg '^wharfrun: rank 1 of spawned group 1 \([^;]*mpi_hold; host [^,]+, pid [0-9]+\) exited with status 3$'
    expect_fast 30000
    no_survivors "$M spawnfail"
    ls -A "$T/node" | grep -q . && fail "files left: $(ls -A "$T/node")"
    ;;
peerdie)
    # a rank waits for a co-resident peer that was killed, in a job whose
    # launcher does not notice (the peer's parent shell lives on and holds
    # the PMI connection): the waiting rank ends the job naming the peer
    mkdir "$T/node"
    WHARF_NODE_DIR="$T/node" WHARF_CHANNEL=auto run 90 "$W" -n 2 sh -c "\"$M\" peerdie 1; sleep $MARK"
    expect_rc 1
    grep -q '^rank 1 dies$' "$T/out" || fail "the victim did not die"
    grep -q 'from a dead peer' "$T/out" && fail "a receive from the dead peer completed"
    expect_msg '^wharfrun: rank 0 \(host [^,]+, pid [0-9]+\) called MPI_Abort with code 1: rank 0: co-resident rank 1 \(pid [0-9]+\) died without MPI_Finalize while rank 0 was waiting'
    expect_fast 30000
    no_survivors "sleep $MARK"
    no_survivors "$M peerdie"
    ls -A "$T/node" | grep -q . && fail "files left: $(ls -A "$T/node")"
    # ranks that finalize and exit normally are no deaths
    WHARF_NODE_DIR="$T/node" WHARF_CHANNEL=auto run 90 "$W" -n 2 "$M" ring 200
    expect_rc 0
    grep -q '^ring ok$' "$T/out" || fail "ring"
    ;;
stdin)
    # wharfrun's stdin goes to rank 0 (the others read /dev/null), all of it, then EOF
    printf 'hello\nworld\n' | timeout -s KILL 60 "$W" -n 3 "$P" stdin >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out_lines 1 '^rank 0 stdin 12 2 hello$'
    expect_out_lines 2 '^rank [12] stdin 0 0 -$'
    seq 1 200000 >"$T/big"
    timeout -s KILL 60 "$W" -n 2 "$P" stdin <"$T/big" >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out_lines 1 "^rank 0 stdin $(wc -c <"$T/big") 200000 1\$"
    # to another rank, to none
    seq 1 10 | timeout -s KILL 60 "$W" -n 2 --stdin 1 "$P" stdin >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out_lines 1 '^rank 1 stdin 21 10 1$'
    expect_out_lines 1 '^rank 0 stdin 0 0 -$'
    seq 1 10 | timeout -s KILL 60 "$W" -n 2 --stdin none "$P" stdin >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out_lines 2 '^rank [01] stdin 0 0 -$'
    # a remote rank 0: its stdin follows its environment through the agent
    timeout -s KILL 60 "$W" -n 3 --hosts 127.0.0.2,127.0.0.3 --rsh "$A" "$P" stdin <"$T/big" >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 0
    expect_out_lines 1 "^rank 0 stdin $(wc -c <"$T/big") 200000 1\$"
    expect_out_lines 2 '^rank [12] stdin 0 0 -$'
    # a job whose ranks never read an endless stdin still ends at once
    s=$(now_ms)
    yes | timeout -s KILL 60 "$W" -n 2 "$P" kvs >"$T/out" 2>"$T/err"
    RC=$?
    ELAPSED=$(($(now_ms) - s))
    expect_rc 0
    expect_out_lines 2 '^rank [01] of 2: kvs ok$'
    expect_fast 20000
    run 20 "$W" -n 2 --stdin 2 "$P" stdin
    expect_rc 2
    expect_msg 'error: --stdin 2: the job has ranks 0..1'
    run 20 "$W" -n 2 --stdin x "$P" stdin
    expect_rc 2
    expect_msg "error: bad --stdin 'x'"
    ;;
singleton_spawn)
    # a singleton (no launcher) that spawns gets wharfrun as its process manager
    # (found beside libmpi, or named by WHARF_LAUNCHER): spawn_multiple twice, appnum,
    # a missing program refused with MPI_ERR_SPAWN; nothing left behind
    before=$(ls /dev/shm | grep -c '^wharf\.' || true)
    run 120 "$M" sspawn 3
    expect_rc 0
    expect_out_lines 1 '^singleton spawn ok$'
    [ "$(grep -c 'want' "$T/out")" = 0 ] || fail "children's MPI_APPNUM"
    WHARF_LAUNCHER="$W" run 120 "$M" sspawn 2
    expect_rc 0
    expect_out_lines 1 '^singleton spawn ok$'
    no_survivors "wharfrun --adopt"
    # a spawned process fails: the singleton is ended, the failure named
    run 120 "$M" sspawnfail 7
    expect_rc 143
    expect_out_lines 1 '^singleton spawned$'
    grep -q 'wharfrun: rank 1 of spawned group 1 .* exited with status 7' "$T/err" || fail "the failed child is not named"
    grep -q 'from a dead child' "$T/out" && fail "received from a dead child"
    no_survivors "mpi_hold sspawnfail"
    no_survivors "wharfrun --adopt"
    # a launcher that cannot start: a clear MPI_ERR_SPAWN (fatal here: the default handler)
    WHARF_LAUNCHER="$T/no-such-wharfrun" run 60 "$M" sspawn 2
    expect_rc 42
    grep -q 'could not start a process manager' "$T/err" || fail "no message for a missing launcher"
    after=$(ls /dev/shm | grep -c '^wharf\.' || true)
    [ "$after" -le "$before" ] || fail "files left in /dev/shm: $(ls /dev/shm | grep '^wharf\.')"
    ;;
mpmd)
    # installed as mpiexec and mpirun too
    MX="$(dirname "$W")/mpiexec"
    [ -x "$MX" ] && [ -x "$(dirname "$W")/mpirun" ] || fail "no mpiexec/mpirun beside $W"
    mkdir "$T/wd"
    # three applications: ranks in order, appnum = index, -env and -wdir per application,
    # -genv for all, other launchers' options accepted
    MPMD_VAR=inherited run 60 "$MX" -n 2 "$P" app A : -np 1 -env MPMD_VAR mine -wdir "$T/wd" "$P" app B \
        : --oversubscribe --bind-to none --mca btl self -n2 -genv XTEST_A g "$P" app C
    expect_rc 0
    expect_out_lines 5 ' of 5 app '
    for spec in 0:0:A 1:0:A 2:1:B 3:2:C 4:2:C; do
        IFS=: read -r r a tag <<EOF
$spec
EOF
        grep -q "^rank $r of 5 app $a tag $tag " "$T/out" || fail "rank $r: want app $a tag $tag"
    done
    grep -q "^rank 2 of 5 .* cwd $T/wd var mine$" "$T/out" || fail "-env/-wdir of application 2"
    expect_out_lines 4 "cwd $(pwd) var inherited$"
    # MPI programs: MPI_APPNUM, one MPI_COMM_WORLD over both applications
    run 60 "$MX" -n 1 "$M" appnum P : -n 2 "$M" appnum Q
    expect_rc 0
    expect_out_lines 1 '^rank 0 of 3 appnum 0 tag P sum 3$'
    expect_out_lines 2 '^rank [12] of 3 appnum 1 tag Q sum 3$'
    # a configfile: one application per line, comments, continued lines
    printf '# two applications\n-n 1 %s app X\n\n-n 2 -env MPMD_VAR y \\\n  %s app Y  # end\n' "$P" "$P" >"$T/cfg"
    run 60 "$(dirname "$W")/mpirun" -configfile "$T/cfg"
    expect_rc 0
    expect_out_lines 1 '^rank 0 of 3 app 0 tag X .* var \(unset\)$'
    expect_out_lines 2 '^rank [12] of 3 app 1 tag Y .* var y$'
    # -ppn over two local host names (1 each, then around again: blocks of ranks
    # per host, as always); -l tags the output
    run 60 "$MX" -ppn 1 -hosts localhost,127.0.0.1 -n 3 -l "$P" env
    expect_rc 0
    expect_out_lines 2 '^\[[01]\] rank [01] WHARF_HOST_INDEX=0$'
    expect_out_lines 1 '^\[2\] rank 2 WHARF_HOST_INDEX=1$'
    # hydra's and MVAPICH's per-rank variables (programs pick a GPU by them)
    expect_out_lines 1 '^\[1\] rank 1 MPI_LOCALRANKID=1$'
    expect_out_lines 2 '^\[[01]\] rank [01] MV2_COMM_WORLD_LOCAL_SIZE=2$'
    expect_out_lines 1 '^\[2\] rank 2 MV2_COMM_WORLD_LOCAL_SIZE=1$'
    # -genvall: a remote rank gets the whole environment (what a shell can pass: an
    # exported bash function is left out, not an error); without it, not
    run 60 env 'BASH_FUNC_f%%=() { echo; }' XTEST_A=all "$MX" -n 1 -hosts 127.0.0.2 -launcher-exec "$A" \
        -genvall "$P" env
    expect_rc 0
    expect_out_lines 1 '^rank 0 XTEST_A=all$'
    XTEST_A=all run 60 "$MX" -n 1 -hosts 127.0.0.2 -launcher-exec "$A" "$P" env
    expect_rc 0
    expect_out_lines 1 '^rank 0 XTEST_A=\(unset\)$'
    # the single-application -wdir, relative program resolved in it
    cp "$P" "$T/wd/pt"
    run 60 "$MX" -n 1 -wdir "$T/wd" ./pt app R
    expect_rc 0
    expect_out_lines 1 "^rank 0 of 1 app 0 tag R cwd $T/wd "
    # bad input: clear errors, nothing started
    check_bad() { # STATUS REGEX ARGS...
        want=$1
        re=$2
        shift 2
        run 20 "$MX" "$@"
        expect_rc "$want"
        expect_msg "$re"
        [ -s "$T/out" ] && fail "stdout for: $*"
    }
    check_bad 2 "missing application after ':'" -n 1 "$P" app A :
    check_bad 2 "missing -n N for application 2" -n 1 "$P" app A : "$P" app B
    check_bad 2 "missing program of application 2" -n 1 "$P" app A : -n 1 :
    check_bad 2 'hosts are per job' -n 1 -hosts a "$P" app A : -n 1 -hosts b "$P" app B
    check_bad 2 'needs two values' -n 1 -env ONLY
    check_bad 2 "-env 'A=B': not a variable name" -n 1 -env A=B c "$P" app A
    check_bad 2 "working directory '$T/none' does not exist" -n 1 -wdir "$T/none" "$P" app A
    check_bad 127 "program './pt' not found" -n 1 ./pt app A : -n 1 -wdir "$T/wd" ./pt app B
    printf '# nothing\n\n' >"$T/empty"
    check_bad 2 'no application in it' -configfile "$T/empty"
    check_bad 2 'not a regular file' -configfile /dev/zero
    check_bad 2 "configfile '$T/none'" -configfile "$T/none"
    check_bad 2 'only application' -n 1 "$P" app A : -configfile "$T/cfg"
    check_bad 2 'nothing may follow it' -configfile "$T/cfg" "$P" app A
    check_bad 2 'bad -ppn' -ppn 0 -n 1 "$P" app A
    ;;
hydra)
    command -v mpiexec.hydra >/dev/null 2>&1 || {
        echo "SKIP: mpiexec.hydra not installed"
        exit 77
    }
    run 60 mpiexec.hydra -n 3 "$P" kvs
    expect_rc 0
    expect_out_lines 3 '^rank [0-2] of 3: kvs ok$'
    # hydra's PMI_PORT + PMI_ID (initack) mode
    run 60 mpiexec.hydra -pmi-port -n 3 "$P" kvs
    expect_rc 0
    expect_out_lines 3 '^rank [0-2] of 3: kvs ok$'
    run 60 mpiexec.hydra -n 2 "$P" abort 6 1
    expect_rc 6
    run 60 mpiexec.hydra -n 2 "$P" abort 0 1
    expect_rc 0 # what wharfrun follows for code 0
    ;;
*)
    echo "unknown case '$CASE'" >&2
    exit 1
    ;;
esac
exit 0
