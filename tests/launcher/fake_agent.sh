#!/bin/sh
# A stand-in for ssh: "fake_agent.sh HOST COMMAND..." runs COMMAND here with
# sh -c, joined by spaces as sshd would, in a fresh environment (only PATH and
# HOME, like a login) so that only what wharfrun puts on the command line
# reaches the rank.  With FAKE_AGENT_LOG set, it appends
# "HOST COMMAND" to that file first.  With FAKE_AGENT_FAIL set, it behaves like
# an ssh that cannot connect (message on stderr, status 255).  With
# FAKE_AGENT_HANG=MARKER set, it never runs COMMAND and hangs (a process whose
# command line contains MARKER).  With FAKE_AGENT_DETACH set, COMMAND runs in
# a session of its own, so killing the agent does not kill it (an ssh without
# a tty behaves like that): the rank must notice the closed PMI connection.
# With FAKE_AGENT_FLOOD=N, it first opens N idle connections to the job's PMI
# port (a neighbour trying to lock the ranks out).
host=$1
shift
if [ -n "$FAKE_AGENT_LOG" ]; then
    printf '%s %s\n' "$host" "$*" >>"$FAKE_AGENT_LOG"
fi
if [ -n "$FAKE_AGENT_FAIL" ]; then
    echo "fake_agent: connect to host $host: Connection refused" >&2
    exit 255
fi
if [ -n "$FAKE_AGENT_HANG" ]; then
    exec sh -c "sleep 600; : $FAKE_AGENT_HANG"
fi
if [ -n "$FAKE_AGENT_FLOOD" ]; then
    # a hostile neighbour: FAKE_AGENT_FLOOD idle connections to the PMI port
    # named on the command line, held open for 20 s, before the rank starts
    port=$(printf '%s' "$*" | sed -n "s/.*PMI_PORT=\([0-9.]*:[0-9]*\).*/\1/p")
    python3 -c 'import socket,sys,time
h,p=sys.argv[1].rsplit(":",1); s=[]
for i in range(int(sys.argv[2])):
    c=socket.socket(); c.connect((h,int(p))); s.append(c)
time.sleep(20)' "$port" "$FAKE_AGENT_FLOOD" >/dev/null 2>&1 &
    sleep 1
fi
if [ -n "$FAKE_AGENT_DETACH" ]; then
    env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" setsid sh -c "$*" &
    wait $!
    exit $?
fi
exec env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" sh -c "$*"
