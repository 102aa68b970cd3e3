#!/usr/bin/env python3
"""Run an MPI program with ranks on two emulated hosts (two network
namespaces joined by a bridge), so net-channel traffic really crosses
interfaces.  Usage: run_twohost_net.py WHARFRUN NPROCS PROGRAM [ARGS...]
Exit 77 (skip) when namespaces cannot be created."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wharfns  # noqa: E402


def main():
    wharfrun, n, prog, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    ok, why = wharfns.can_run()
    if not ok:
        print(f"SKIP: {why}")
        return 77
    with wharfns.Lab() as lab:
        a, b = lab.add_host(), lab.add_host()
        cmd = lab.head_cmd([wharfrun, "-n", n, "--hosts", f"{a},{b}", "--rsh", lab.agent, "--timeout", "120",
                            "--tag-output", prog] + args)
        env = dict(os.environ, WHARF_REPORT="channels")
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=170)
        sys.stdout.write(r.stdout)
        if r.returncode:
            print(f"FAIL: exit status {r.returncode}")
            return 1
        if "net/" not in r.stdout:
            print("FAIL: no traffic went over the net channel")
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
