#!/usr/bin/env python3
"""A rank SIGKILLed while the others wait in node shared-memory collectives
(some sleeping on futexes): the job must end with a non-zero exit well before
its timeout, name the dead rank, and leave nothing in the node directory.

  coll_kill.py WHARFRUN PROG"""
import os
import subprocess
import sys
import tempfile
import time


def main():
    wharfrun, prog = sys.argv[1], sys.argv[2]
    nodedir = tempfile.mkdtemp(prefix="wharf-collkill-")
    env = dict(os.environ, WHARF_NODE_DIR=nodedir, WHARF_COLL_SLEEP="on", WHARF_COLL_SPIN="10",
               WHARF_COLL_SLEEP_AFTER="0")
    t0 = time.time()
    p = subprocess.run([wharfrun, "-n", "4", "--timeout", "100", prog], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=150)
    took = time.time() - t0
    left = os.listdir(nodedir)
    os.rmdir(nodedir) if not left else None
    print(p.stdout)
    print(p.stderr)
    bad = []
    if p.returncode == 0 or "finished" in p.stdout:
        bad.append(f"the job did not fail (exit {p.returncode})")
    if took > 60:
        bad.append(f"the job took {took:.1f} s to end")
    if "rank 3" not in p.stderr:
        bad.append("stderr does not name rank 3")
    if left:
        bad.append(f"left in the node directory {nodedir}: {left}")
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"ok: exit {p.returncode} after {took:.1f} s, node directory empty")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
