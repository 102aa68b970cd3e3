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
# port (a neighbour trying to lock the ranks out).  The rank's environment
# comes on stdin (see docs/LAUNCHER.md), which COMMAND inherits; with
# FAKE_AGENT_ENVLOG=FILE it is also appended to FILE.  With
# FAKE_AGENT_CLAIM=FILE, a hostile claim of the rank's PMI_ID without the key
# (tests/launcher/flood.py claim) runs first; its report goes to FILE.  With
# FAKE_AGENT_BADKEY set, the rank gets a key that differs in its first digit.
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
    # (found in /proc like any local user can: wharfrun's listening socket),
    # held open for 20 s, before the rank starts
    # (FAKE_AGENT_FLOOD_MODE: idle, garbage or spin; FAKE_AGENT_AS: a command
    # prefix running the flood as another user, who gets the port found here)
    port=$(python3 "$(dirname "$0")/flood.py" "$PPID" ports 0 0)
    $FAKE_AGENT_AS python3 "$(dirname "$0")/flood.py" "$port" "${FAKE_AGENT_FLOOD_MODE:-idle}" \
        "$FAKE_AGENT_FLOOD" 20 >/dev/null 2>&1 &
    sleep 1
fi
if [ -n "$FAKE_AGENT_ENVLOG" ] || [ -n "$FAKE_AGENT_CLAIM" ] || [ -n "$FAKE_AGENT_BADKEY" ]; then
    # read the environment wharfrun sends on stdin (up to the empty line),
    # log it and/or act on it, then hand it on to COMMAND
    envtext=$(sed '/^$/q')
    [ -n "$FAKE_AGENT_ENVLOG" ] && printf '%s\n' "$envtext" >>"$FAKE_AGENT_ENVLOG"
    if [ -n "$FAKE_AGENT_CLAIM" ]; then
        # a neighbour that somehow learnt the rank's PMI port and id, but not
        # the key, tries to claim the rank first
        id=$(printf '%s\n' "$envtext" | sed -n 's/^PMI_ID=//p')
        port=$(printf '%s\n' "$envtext" | sed -n 's/^PMI_PORT=//p')
        $FAKE_AGENT_AS python3 "$(dirname "$0")/flood.py" "$port" claim 3 0 "$id" \
            >>"$FAKE_AGENT_CLAIM" 2>&1
    fi
    if [ -n "$FAKE_AGENT_BADKEY" ]; then # the rank gets a wrong key
        # (first hex digit f -> 0, any other -> f: the key always changes)
        envtext=$(printf '%s\n' "$envtext" | sed 's/^WHARF_PMI_SECRET=f/WHARF_PMI_SECRET=g/;
            s/^WHARF_PMI_SECRET=[0-9a-e]/WHARF_PMI_SECRET=f/; s/^WHARF_PMI_SECRET=g/WHARF_PMI_SECRET=0/')
    fi
    printf '%s\n\n' "$envtext" | env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" sh -c "$*"
    exit $?
fi
if [ -n "$FAKE_AGENT_DETACH" ]; then
    # (explicit stdin: an asynchronous command would get /dev/null)
    exec 3<&0
    env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" setsid sh -c "$*" <&3 3<&- &
    wait $!
    exit $?
fi
exec env -i PATH="${PATH:-/usr/bin:/bin}" HOME="${HOME:-/}" sh -c "$*"
