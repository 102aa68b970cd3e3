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
    env = dict(os.environ, WHARF_REPORT="channels", **env_extra)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return r.returncode, r.stdout


def summarize(title, rc, out):
    lat = {}
    for line in out.splitlines():
        m = re.match(r"^(?:\[\d+\]\s*)?(\d+)\s+([\d.]+)$", line.strip())
        if m:
            lat[int(m.group(1))] = float(m.group(2))
    chans = [l.split("channels:", 1)[1].strip() for l in out.splitlines() if "channels:" in l]
    print(f"== {title}")
    if rc:
        print(f"   FAILED (exit {rc}):\n" + "\n".join("   " + l for l in out.splitlines()[-15:]))
        return
    for i, c in enumerate(chans):
        print(f"   rank {i} used: {c}")
    print("   latency: " + ", ".join(f"{s} B {v:.2f} us" for s, v in sorted(lat.items())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    wharfrun = os.path.join(build, "bin", "wharfrun")
    bench = build_bench(build)
    lat = [bench, "lat", "-m", "8:65536", "-i", "2000", "-w", "100"]
    print(subprocess.run([os.path.join(build, "bin", "wharf-info"), "--version"], stdout=subprocess.PIPE,
                         text=True).stdout.strip())
    for title, env in [("native, 2 ranks, one host (self + shm + CMA)", {}),
                       ("native, shm without CMA (pipelined copy through shared cells)", {"WHARF_CMA": "0"}),
                       ("native, network channel forced (libfabric over loopback)", {"WHARF_CHANNEL": "net"})]:
        rc, out = run([wharfrun, "-n", "2", "--timeout", "120"] + lat, env)
        summarize(title, rc, out)
    ok, why = wharfns.can_run()
    if not ok:
        print(f"== emulated hosts skipped: {why}")
        return 0
    with wharfns.Lab() as lab:
        h1, h2 = lab.add_host(), lab.add_host()
        cmd = lab.head_cmd([wharfrun, "-n", "4", "--hosts", f"{h1}:2,{h2}:2", "--rsh", lab.agent, "--timeout", "120"]
                           + lat[:1] + ["lat", "-m", "8:8", "-i", "2000", "-w", "100"])
        rc, out = run(cmd, {})
        summarize(f"two emulated hosts (network namespaces {h1}, {h2}), 2 ranks each; "
                  "ranks 0 and 1 share a host", rc, out)
        cmd = lab.head_cmd([wharfrun, "-n", "2", "--hosts", f"{h1},{h2}", "--rsh", lab.agent, "--timeout", "120"]
                           + lat[:1] + ["lat", "-m", "8:8", "-i", "2000", "-w", "100"])
        rc, out = run(cmd, {})
        summarize("two emulated hosts, 1 rank each: net channel across veth + bridge", rc, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
