#!/usr/bin/env python3
"""labrun.py SCENARIO MPI -- PROG ARGS: run 2 ranks of PROG in the scenario with mpi's launcher
(one rank per container / host as bench/run does)."""
import importlib.machinery, importlib.util, os, subprocess, sys, tempfile
ROOT = "/work/wt-netrma"
loader = importlib.machinery.SourceFileLoader("benchrun", os.path.join(ROOT, "bench", "run"))
spec = importlib.util.spec_from_loader("benchrun", loader)
br = importlib.util.module_from_spec(spec); loader.exec_module(br)
scen, mpi = sys.argv[1], sys.argv[2]
prog = sys.argv[sys.argv.index("--") + 1:]
lab, err = br.open_lab(scen)
if err: sys.exit(err)
tmp = tempfile.mkdtemp(prefix="netrma-lab-")
try:
    ctx = {"build": os.path.join(ROOT, "build"), "head_ip": lab.head_ip, "agent": br.write_agent_front(lab, tmp)}
    hosts = br.hosts_for(lab.targets, 2)
    argv = lab.head_cmd(br.launcher(mpi, 2, hosts, ctx, 120) + prog)
    env = dict(os.environ, **lab.env)
    if mpi == "openmpi": env.update(br.OMPI_ENV)
    sys.exit(subprocess.call(argv, env=env, cwd=ROOT, timeout=200))
finally:
    lab.close()
