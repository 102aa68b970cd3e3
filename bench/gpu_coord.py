#!/usr/bin/env python3
"""The traced coordinator against every forced device scheme, at every size, for both the latency
(blocking ping-pong: the latency class) and the bandwidth (windows of nonblocking sends: the
bandwidth class) benchmark, on the emulated driver (issue 11's "at least as fast as the best single
scheme at every size for both benchmarks").

Per scenario: one calibration (`wharf-info --calibrate`, written to a tuning file), then REPS
interleaved repetitions of `wh_latency -d cuda` and `wh_bw -d cuda` over 8 B..MAX for
  auto+cal  the coordinator with the calibrated tuning file (WHARF_CUDA_TUNING),
  auto      the coordinator with the built-in defaults,
  and each scheme forced by WHARF_CUDA_SCHEME (gdrcopy, eager, staged, pipeline, ipc).
Medians per size; the table gives each column's median and the coordinator's ratio to the best
forced scheme (latency: best/auto, so both ratios read "1.0 or more = coordinator as fast or faster").

    python3 bench/gpu_coord.py --bench /tmp/bsw --scenario native --scenario pidpriv --reps 3
Scenarios: native (GPUs 0 and 1 of tests/cudaemu/topo4.txt, NVLink peers: CUDA IPC possible) and
shared/pidpriv (two containers, one GPU each by tests/cudaemu/containers.txt: no IPC).
"""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMES = ["gdrcopy", "eager", "staged", "pipeline", "ipc"]
ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--bench", required=True, help="directory of the suite built with this tree's mpicc")
ap.add_argument("--build", default=os.path.join(ROOT, "build"))
ap.add_argument("--scenario", action="append", default=[])
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--max", default="4M")
ap.add_argument("--json")
a = ap.parse_args()
scen = a.scenario or ["native"]
B = a.build
base = {"LD_LIBRARY_PATH": os.path.join(B, "cudaemu"), "WHARF_CUDA": "1",
        "CUDAEMU_TOPOLOGY": os.path.join(ROOT, "tests/cudaemu/topo4.txt")}


def env_for(sc):
    e = dict(base)
    if sc == "native":
        e["CUDAEMU_VISIBLE"] = "0,1"
    else:
        e["CUDAEMU_VISIBLE_FILE"] = os.path.join(ROOT, "tests/cudaemu/containers.txt")
    return e


def launch(sc, argv, extra):
    e = dict(os.environ, **env_for(sc), **extra)
    wr = os.path.join(B, "bin/wharfrun")
    if sc == "native":
        cmd = [wr, "-n", "2", "--timeout", "300"] + argv
    else:
        cmd = ["python3", os.path.join(ROOT, "tests/scenarios/wharfns.py"), "run", sc, "-n", "2", "--wharfrun", wr,
               "--timeout", "300", "--"] + argv
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=900)
    if p.returncode:
        print(f"# {sc} {' '.join(argv)} {extra}: rc {p.returncode}: {p.stderr.strip()[-300:]}", file=sys.stderr)
    return p.stdout


def parse(out):
    r = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            r[int(f[0])] = float(f[1])
    return r


res = {}
for sc in scen:
    tun = f"/tmp/wharf-gpucoord-{sc}.tuning"
    launch(sc, [os.path.join(B, "bin/wharf-info"), "--calibrate", tun], {})
    print(f"# {sc}: calibrated switch points:", " ".join(l.strip() for l in open(tun) if l.strip() and
                                                         not l.startswith("#")), flush=True)
    cfgs = [("auto+cal", {"WHARF_CUDA_TUNING": tun}), ("auto", {})] + [(s, {"WHARF_CUDA_SCHEME": s}) for s in SCHEMES]
    for rep in range(a.reps):
        for name, extra in cfgs:
            for bench, args in (("lat", ["wh_latency", "-i", "500"]), ("bw", ["wh_bw", "-i", "100"])):
                argv = [os.path.join(a.bench, args[0]), "-d", "cuda", "-m", f"8:{a.max}"] + args[1:]
                for n, v in parse(launch(sc, argv, extra)).items():
                    res.setdefault(f"{sc}|{bench}|{name}|{n}", []).append(v)
        print(f"# {sc}: rep {rep} done", flush=True)
if a.json:
    json.dump(res, open(a.json, "w"))

names = ["auto+cal", "auto"] + SCHEMES
for sc in scen:
    for bench, unit in (("lat", "us"), ("bw", "MB/s")):
        print(f"\n## {sc}, {'wh_latency (latency class)' if bench == 'lat' else 'wh_bw (bandwidth class)'}, "
              f"{unit}, median of {a.reps}")
        print("| bytes | " + " | ".join(names) + " | best forced | auto+cal vs best | auto vs best |")
        print("|---" * (len(names) + 4) + "|")
        sizes = sorted({int(k.split("|")[3]) for k in res if k.startswith(f"{sc}|{bench}|")})
        for n in sizes:
            m = {nm: statistics.median(res[k]) for nm in names if (k := f"{sc}|{bench}|{nm}|{n}") in res}
            forced = {s: m[s] for s in SCHEMES if s in m}
            if not forced:
                continue
            best = (min if bench == "lat" else max)(forced, key=forced.get)

            def ratio(nm):
                if nm not in m:
                    return "-"
                r = forced[best] / m[nm] if bench == "lat" else m[nm] / forced[best]
                return f"**{r:.2f}**" if r < 0.95 else f"{r:.2f}"
            print(f"| {n} | " + " | ".join(f"{m[nm]:.1f}" if bench == "lat" and nm in m else
                                          (f"{m[nm]:.0f}" if nm in m else "-") for nm in names) +
                  f" | {best} | {ratio('auto+cal')} | {ratio('auto')} |")
