#!/usr/bin/env python3
"""make demo: launch small wharf jobs natively and in emulated hosts/containers
(Linux namespaces), and print the channels the ranks chose and the latency
they got."""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "scenarios"))
import wharfns  # noqa: E402


def build_bench(build):
    out = os.path.join(build, "bench", "p2p")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = os.path.join(ROOT, "bench", "p2p.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run([os.path.join(build, "bin", "mpicc"), "-O2", "-o", out, src], check=True)
    return out


def run(cmd, env_extra):
    env = dict(os.environ, WHARF_REPORT="locality,channels", **env_extra)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return r.returncode, r.stdout


def summarize(title, rc, out):
    lat = {}
    for line in out.splitlines():
        m = re.match(r"^(?:\[\d+\]\s*)?(\d+)\s+([\d.]+)$", line.strip())
        if m:
            lat[int(m.group(1))] = float(m.group(2))
    chans = {}
    for line in out.splitlines():
        m = re.search(r"wharf: rank (\d+) channels:(.*)$", line)
        if m:
            chans[int(m.group(1))] = m.group(2).strip()
    print(f"== {title}")
    if rc:
        print(f"   FAILED (exit {rc}):\n" + "\n".join("   " + l for l in out.splitlines()[-15:]))
        return
    for line in out.splitlines():
        m = re.search(r"wharf: locality: (.*)$", line)
        if m and not m.group(1).startswith("pair "):
            print("   " + m.group(1))
    for line in out.splitlines():
        m = re.search(r"wharf: locality: pair (.*)$", line)
        if m and ("rejected" in m.group(1) or len(chans) <= 2):
            print("   pair " + m.group(1))
    for i, c in sorted(chans.items()):
        print(f"   rank {i} used: {c}")
    print("   latency: " + ", ".join(f"{s} B {v:.2f} us" for s, v in sorted(lat.items())))


SCENARIOS = [
    ("native", 2, "2 ranks, machine's own namespaces"),
    ("shared", 2, "2 containers on one host sharing IPC + PID namespaces"),
    ("pidpriv", 2, "2 containers sharing IPC (/dev/shm) but each with its own PID namespace"),
    ("volume", 2, "2 containers sharing only a tmpfs volume (WHARF_NODE_DIR)"),
    ("isolated", 2, "2 containers on one host sharing nothing but the kernel"),
    ("twohost", 4, "2 hosts x 2 containers (ranks 0,1 on h1; 2,3 on h2)"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--scenario", action="append", help="only these scenarios (repeatable)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    wharfrun = os.path.join(build, "bin", "wharfrun")
    bench = build_bench(build)
    lat = [bench, "lat", "-m", "8:65536", "-i", "2000", "-w", "100"]
    print(subprocess.run([os.path.join(build, "bin", "wharf-info"), "--version"], stdout=subprocess.PIPE,
                         text=True).stdout.strip())
    ok, why = wharfns.can_run()
    runner = os.path.join(ROOT, "tests", "scenarios", "wharfns.py")
    for name, n, what in SCENARIOS:
        if a.scenario and name not in a.scenario:
            continue
        if name != "native" and not ok:
            print(f"== {name}: skipped ({why})")
            continue
        cmd = [sys.executable, runner, "run", name, "-n", str(n), "--wharfrun", wharfrun, "--timeout", "120",
               "--"] + lat
        rc, out = run(cmd, {})
        summarize(f"{name}: {what}", rc, out)
    if not a.scenario:
        for title, env in [("native, shm without CMA (pipelined copy through shared cells)", {"WHARF_CMA": "0"}),
                           ("native, network channel forced (libfabric over loopback)", {"WHARF_CHANNEL": "net"})]:
            rc, out = run([wharfrun, "-n", "2", "--timeout", "120"] + lat, env)
            summarize(title, rc, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
