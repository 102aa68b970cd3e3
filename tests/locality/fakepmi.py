#!/usr/bin/env python3
"""A minimal local PMI-1 launcher for tests/locality (not a wharfrun
replacement): starts N local ranks with PMI_FD/PMI_RANK/PMI_SIZE and serves
the PMI-1 commands wharf's client uses, with a job id (kvsname and
WHARF_JOB_ID) chosen by the caller.  wharfrun always makes a fresh job id
(`wharf-<pid>-<random>`), so this is how two jobs with the *same* job id run
at the same time on one host: the node region's nonce must keep them apart.

    fakepmi.py --jobid ID -n N [--timeout S] -- PROGRAM ARGS...

Ranks inherit stdout/stderr.  The first rank that fails (non-zero exit,
signal, abort, PMI connection lost before finalize) takes the job down
(SIGKILL to every rank's process group); exit status: 0 if every rank
finalized and exited 0, else the first failure's status (128+signal for a
signal, the abort code, 1 otherwise), 124 on timeout.
"""
import argparse
import os
import selectors
import signal
import socket
import subprocess
import sys
import time


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobid", required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("program", nargs="+")
    a = ap.parse_args(argv)
    n, jobid = a.n, a.jobid
    sel = selectors.DefaultSelector()
    procs, socks, bufs = [], [], []
    for r in range(n):
        mine, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PMI_")}
        env.update(PMI_FD=str(theirs.fileno()), PMI_RANK=str(r), PMI_SIZE=str(n), WHARF_JOB_ID=jobid)
        p = subprocess.Popen(a.program, env=env, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                             start_new_session=True)
        theirs.close()
        procs.append(p)
        socks.append(mine)
        bufs.append(b"")
        sel.register(mine, selectors.EVENT_READ, r)
    kvs, in_barrier, finalized, closed = {}, set(), set(), set()
    status = None  # first failure

    def reply(r, text):
        try:
            socks[r].sendall(text.encode() + b"\n")
        except OSError:
            pass

    def fail(code, why):
        nonlocal status
        if status is None:
            status = code
            print(f"fakepmi: {why}", file=sys.stderr, flush=True)

    deadline = time.monotonic() + a.timeout
    while status is None:
        if time.monotonic() > deadline:
            fail(124, f"timeout after {a.timeout} s")
            break
        for key, _ in sel.select(timeout=0.2):
            r = key.data
            data = b""
            try:
                data = socks[r].recv(65536)
            except OSError:
                pass
            if not data:
                sel.unregister(socks[r])
                closed.add(r)
                if r not in finalized:
                    fail(1, f"rank {r} closed its PMI connection before finalize")
                continue
            bufs[r] += data
            while b"\n" in bufs[r]:
                line, bufs[r] = bufs[r].split(b"\n", 1)
                words = dict(w.split("=", 1) for w in line.decode(errors="replace").split() if "=" in w)
                cmd = words.get("cmd", "")
                if cmd == "init":
                    reply(r, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
                elif cmd == "get_maxes":
                    reply(r, "cmd=maxes rc=0 kvsname_max=256 keylen_max=256 vallen_max=2048")
                elif cmd == "get_appnum":
                    reply(r, "cmd=appnum rc=0 appnum=0")
                elif cmd == "get_my_kvsname":
                    reply(r, f"cmd=my_kvsname rc=0 kvsname={jobid}")
                elif cmd == "get_universe_size":
                    reply(r, f"cmd=universe_size rc=0 size={n}")
                elif cmd == "put":
                    kvs[words.get("key", "")] = words.get("value", "")
                    reply(r, "cmd=put_result rc=0 msg=success")
                elif cmd == "get":
                    k = words.get("key", "")
                    if k in kvs:
                        reply(r, f"cmd=get_result rc=0 msg=success value={kvs[k]}")
                    else:
                        reply(r, "cmd=get_result rc=-1 msg=key_not_found")
                elif cmd == "barrier_in":
                    in_barrier.add(r)
                    if len(in_barrier) == n:
                        in_barrier.clear()
                        for q in range(n):
                            reply(q, "cmd=barrier_out rc=0")
                elif cmd == "finalize":
                    finalized.add(r)
                    reply(r, "cmd=finalize_ack rc=0")
                elif cmd == "abort":
                    code = int(words.get("exitcode", "1") or 1) % 256 or 1
                    fail(code, f"rank {r} aborted: {words.get('message', '')}")
                else:
                    fail(1, f"rank {r}: unsupported PMI line {line[:100]!r}")
        for r, p in enumerate(procs):
            rc = p.poll()
            if rc is None:
                continue
            if rc < 0:
                fail(128 - rc, f"rank {r} killed by signal {-rc}")
            elif rc:
                fail(rc, f"rank {r} exited with status {rc}")
            elif r not in finalized:
                fail(1, f"rank {r} exited 0 without PMI finalize")
        if all(p.poll() is not None for p in procs):
            break
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
    for p in procs:
        p.wait()
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
