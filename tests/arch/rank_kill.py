#!/usr/bin/env python3
"""A rank SIGKILLs itself while the others wait for it (inside node shared-memory
collectives, some sleeping on futexes; inside a one-sided epoch; ...): the job must
end with a non-zero exit well before its timeout, name the dead rank, and leave
nothing in the node directory.

  rank_kill.py [--np N] [--victim R] [--env VAR=VAL]... WHARFRUN PROG [ARGS...]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--victim", type=int, help="the rank that dies (default: the last)")
    ap.add_argument("--env", action="append", default=[], help="VAR=VAL for the job")
    ap.add_argument("wharfrun")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    victim = a.np - 1 if a.victim is None else a.victim
    nodedir = tempfile.mkdtemp(prefix="wharf-rankkill-")
    env = dict(os.environ, WHARF_NODE_DIR=nodedir)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    t0 = time.time()
    p = subprocess.run([a.wharfrun, "-n", str(a.np), "--timeout", "100"] + a.prog, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=150)
    took = time.time() - t0
    left = os.listdir(nodedir)
    os.rmdir(nodedir) if not left else None
    print(p.stdout)
    print(p.stderr)
    bad = []
    if p.returncode == 0 or "finished" in p.stdout or "never released" in p.stdout:
        bad.append(f"the job did not fail (exit {p.returncode})")
    if took > 60:
        bad.append(f"the job took {took:.1f} s to end")
    if f"rank {victim}" not in p.stderr:
        bad.append(f"stderr does not name rank {victim}")
    if left:
        bad.append(f"left in the node directory {nodedir}: {left}")
    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"ok: exit {p.returncode} after {took:.1f} s, node directory empty")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
