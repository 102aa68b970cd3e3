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
if [ -n "$FAKE_AGENT_DETACH" ]; then
    env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" setsid sh -c "$*" &
    wait $!
    exit $?
fi
exec env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" sh -c "$*"
