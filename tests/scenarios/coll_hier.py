#!/usr/bin/env python3
"""Hierarchical collectives across emulated hosts (docs/SCENARIOS.md, twohost:
2 hosts x 2 containers, one rank per container).

  coll_hier.py WHARFRUN PROG

1. PROG (tests/mpi/coll_hier.c) checks every hierarchical collective with real
   values on MPI_COMM_WORLD and on split communicators (interleaved nodes).
2. PROG loop N (8-byte allreduce + bcast + barrier, values checked) runs with
   WHARF_COLL_HIER=1 and =0 under WHARF_REPORT=channels,coll; the messages the
   ranks sent over the network channel (the only one between the hosts) are
   summed: the hierarchy must send well under the flat algorithms' count
   (5 vs 11 per round here), and WHARF_REPORT=coll must name it.
Exit 77 when namespaces are unusable."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wharfns  # noqa: E402

ROUNDS = 500


def run(lab, wharfrun, argv, extra):
    cmd, env = lab.wharfrun_cmd(wharfrun, 4, argv, ["--timeout", "120"])
    env = dict(env, **extra)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=200)
    return p.returncode, p.stdout


def net_msgs(out):
    return sum(int(m) for m in re.findall(r"net/\S+ (\d+) msgs", out))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    wharfrun, prog = sys.argv[1], sys.argv[2]
    ok, why = wharfns.can_run()
    if not ok:
        print(f"SKIP: {why}")
        return 77
    with wharfns.scenario("twohost") as lab:
        rc, out = run(lab, wharfrun, [prog], {"WHARF_REPORT": "coll"})
        print(out)
        if rc != 0 or "ok: 0 errors (2 node groups, 4 ranks)" not in out:
            print(f"FAIL: the collectives test failed (exit {rc})")
            return 1
        if not re.search(r'"MPI_COMM_WORLD" \(4 ranks.*2 node groups \(contiguous\).*bcast hier', out):
            print("FAIL: WHARF_REPORT=coll does not show hierarchical collectives on MPI_COMM_WORLD")
            return 1
        counts = {}
        for hier in ("1", "0"):
            rc, out = run(lab, wharfrun, [prog, "loop", str(ROUNDS)],
                          {"WHARF_REPORT": "channels,coll", "WHARF_COLL_HIER": hier})
            print(out)
            if rc != 0:
                print(f"FAIL: loop with WHARF_COLL_HIER={hier} failed (exit {rc})")
                return 1
            counts[hier] = net_msgs(out)
        print(f"messages between hosts for {ROUNDS} rounds: hierarchical {counts['1']}, flat {counts['0']}")
        if not counts["1"] or counts["1"] > 0.6 * counts["0"] or counts["1"] > 6 * ROUNDS + 400:
            print("FAIL: the hierarchical collectives do not save messages between the hosts")
            return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
