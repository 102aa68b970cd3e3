import subprocess, os, statistics
trees = {"before": "/tmp/wt-base", "after": "/work/main"}
res={}
for rep in range(8):
    for t in trees:
        e=dict(os.environ)
        out=subprocess.run(["python3","tests/rgpu/rgpu_harness.py","--build","build","--server","0","--server","1","run","--","build/bench/rgpu/rgpu_bench","copy",str(16<<20)],cwd=trees[t],env=e,capture_output=True,text=True).stdout
        for l in out.splitlines():
            f=l.split()
            if len(f)==6 and f[0].isdigit(): res.setdefault((t,int(f[0])),[]).append(float(f[1]))
for n in sorted({k[1] for k in res}):
    b=res[("before",n)]; a=res[("after",n)]
    print(n, f"before {statistics.median(b):.0f} after {statistics.median(a):.0f} ratio {statistics.median(a)/statistics.median(b):.2f}  (before p25-p75 {sorted(b)[2]:.0f}-{sorted(b)[5]:.0f}, after {sorted(a)[2]:.0f}-{sorted(a)[5]:.0f})")
