import subprocess, os, sys, re, statistics, json
trees = {"before": "/work/wt", "after": "/work/wt"}
spin = {"before": "0", "after": "50"}
res = {}
def run(tree, args, env):
    e = dict(os.environ, **env, CUDAEMU_WAIT_SPIN_US=spin[tree])
    out = subprocess.run(["python3", "tests/rgpu/rgpu_harness.py", "--build", "build", "--server", "0", "--server", "1",
                          "run", "--", "build/bench/rgpu/rgpu_bench"] + args, cwd=trees[tree], env=e,
                         capture_output=True, text=True, timeout=600).stdout
    return out
for rep in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    for g in ("2", "25"):
        for t in ("before", "after"):
            out = run(t, ["copy"], {"CUDAEMU_D2H_GBPS": g, "CUDAEMU_H2D_GBPS": g})
            for line in out.splitlines():
                f = line.split()
                if len(f) == 6 and f[0].isdigit():
                    res.setdefault((g, t, int(f[0])), []).append([float(x) for x in f[1:]])
    for t in ("before", "after"):
        out = run(t, ["lat"], {})
        for line in out.splitlines():
            m = re.match(r"(.*?):\s+([\d.]+)", line)
            if m and not line.startswith("#"):
                res.setdefault(("lat", t, m.group(1).strip()), []).append([float(m.group(2))])
    print("rep", rep, "done", flush=True)
json.dump({"|".join(map(str, k)): v for k, v in res.items()}, open("/tmp/rgab/res-spin.json", "w"))
med = lambda v, i: statistics.median(x[i] for x in v)
for g in ("2", "25"):
    print(f"\n## device copies modeled at {g} GB/s (median of {len(res[(g,'after',65536)])} runs)")
    print("| bytes | direct before MB/s | direct after MB/s | after/before | staged MB/s | after/staged | slowest stage MB/s | after/slowest |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sorted({k[2] for k in res if k[0] == g}):
        b, a = res[(g, "before", n)], res[(g, "after", n)]
        print(f"| {n} | {med(b,0):.0f} | {med(a,0):.0f} | {med(a,0)/med(b,0):.2f} | {med(a,1):.0f} | {med(a,0)/med(a,1):.2f} | {med(a,3):.0f} | {med(a,0)/med(a,3):.2f} |")
print("\n## small calls (us, median)")
for k in sorted({k[2] for k in res if k[0] == "lat"}):
    print(f"| {k} | {statistics.median(x[0] for x in res[('lat','before',k)]):.1f} | {statistics.median(x[0] for x in res[('lat','after',k)]):.1f} |")
