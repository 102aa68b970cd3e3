#!/usr/bin/env python3
"""Run MPICH 4.0.2's own test suite (test/mpi) against wharf, natively or in a container scenario.

    tests/external/mpich_suite.py [--build build] [--dirs coll,topo,...] [--scenario shared]
                                  [--xfail tests/external/mpich-xfail.txt] [--timeout 60]

The suite comes from Debian's source tarball (mpich_4.0.2.orig.tar.xz, checked against the
SHA-256 of Debian's .dsc), downloaded once into $WHARF_CACHE_DIR (default ~/.cache/wharf) and
unpacked (test/mpi only) into the work directory.  It is configured with wharf's mpicc and run
with MPICH's own `runtests` driver, wharfrun as mpiexec.  The tests are MPICH's, not ours: read,
built and run unchanged.  Expected failures are listed with a reason in the xfail file; the run
fails on any other failure and reports expected failures that now pass.  Exit 77 (skip) when the
tarball cannot be fetched or the scenario cannot be built.  docs/TESTING.md, "External suites".
"""
import argparse, hashlib, os, re, shlex, shutil, subprocess, sys, tarfile, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URL = "http://deb.debian.org/debian/pool/main/m/mpich/mpich_4.0.2.orig.tar.xz"
SHA256 = "b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860"
TOP = "mpich-4.0.2/test/mpi"
C_DIRS = ["attr", "coll", "comm", "datatype", "errhan", "errors", "group", "info", "init",
          "io", "mpi_t", "part", "pt2pt", "rma", "spawn", "threads", "topo"]
SKIP = 77


def log(msg):
    print(msg, flush=True)


def fetch(cache, url=URL, sha256=SHA256, who="mpich_suite"):
    """Path of the verified tarball, downloading it when missing; None if unavailable."""
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, os.path.basename(url))
    for attempt in range(2):
        if os.path.exists(path):
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() == sha256:
                return path
            log(f"{who}: {path} has the wrong SHA-256, fetching again")
            os.unlink(path)
        if attempt:
            break
        try:
            log(f"{who}: downloading {url}")
            with urllib.request.urlopen(url, timeout=120) as r, open(path + ".part", "wb") as f:
                shutil.copyfileobj(r, f)
            os.replace(path + ".part", path)
        except OSError as e:
            log(f"{who}: cannot download {url}: {e}")
            return None
    return None


def unpack(tarball, work):
    """work/mpi: a pristine configured-once copy of test/mpi (kept across runs)."""
    dst = os.path.join(work, "mpi")
    if os.path.exists(os.path.join(dst, ".unpacked")):
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    tmp = tempfile.mkdtemp(dir=work)
    with tarfile.open(tarball) as t:
        members = [m for m in t.getmembers() if m.name.startswith(TOP + "/") or m.name == TOP]
        t.extractall(tmp, members=members)   # keeps the timestamps: make must not rerun automake
    os.rename(os.path.join(tmp, TOP), dst)
    shutil.rmtree(tmp)
    open(os.path.join(dst, ".unpacked"), "w").close()
    return dst


def configure(src, build, mpiexec):
    stamp = os.path.join(src, ".configured")
    want = f"{build}\n{mpiexec}\n"
    if os.path.exists(stamp) and open(stamp).read() == want:
        return True
    args = ["./configure", f"--with-mpi={build}", "--enable-strictmpi", "--disable-cxx",
            "--disable-fortran", "--disable-dtpools", "--enable-threads=multiple", f"MPIEXEC={mpiexec}"]
    log("mpich_suite: " + " ".join(args))
    with open(os.path.join(src, "configure.log"), "w") as f:
        rc = subprocess.run(args, cwd=src, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        log(f"mpich_suite: configure failed (see {src}/configure.log)")
        return False
    with open(os.path.join(src, "util.log"), "w") as f:
        if subprocess.run(["make", "-C", "util", "-j2"], cwd=src, stdout=f, stderr=subprocess.STDOUT).returncode:
            log(f"mpich_suite: building util failed (see {src}/util.log)")
            return False
    open(stamp, "w").write(want)
    return True


def read_xfail(path):
    """{'dir/test': reason} from lines 'dir/test  reason...' (# comments)."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    for line in open(path):
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            name, _, reason = line.partition(" ")
            out[name] = reason.strip()
    return out


def run_dir(src, d, mpiexec, timeout, env):
    """[(name, ok)] for one directory (its subdirectories included)."""
    ddir = os.path.join(src, d)
    with open(os.path.join(ddir, "make.log"), "w") as f:   # -k: a test that fails to build fails alone
        subprocess.run(["make", "-k", "-j2"], cwd=ddir, stdout=f, stderr=subprocess.STDOUT)
    tap = os.path.join(ddir, "summary.tap")
    if os.path.exists(tap):
        os.unlink(tap)
    e = dict(env, MPIEXEC_TIMEOUT=str(timeout), MPITEST_TIMEOUT=str(timeout))
    # errors/spawn/connect_timeout_* set MPICH's MPIR_CVAR_CH*_COMM_CONNECT_TIMEOUT=20
    # (the default 180 s exceeds the per-test time); wharf's equivalent:
    e.setdefault("WHARF_CONNECT_TIMEOUT", "20")
    # spawn/*: MTestSpawnPossible spawns only while MPI_UNIVERSE_SIZE exceeds the world, in the
    # parent and again in the children; wharfrun's default (the cpus, 2 here) lets a parent of
    # 1 spawn 2 children that then skip the test, and the parent waits for them forever.
    # hydra leaves the attribute unset (the tests then spawn); docs/DYNAMIC.md.
    e.setdefault("WHARF_UNIVERSE_SIZE", "16")
    with open(os.path.join(ddir, "run.log"), "w") as f:
        subprocess.run(["../runtests", "-srcdir=.", "-tests=testlist", f"-mpiexec={mpiexec}",
                        "-xmlfile=summary.xml", "-tapfile=summary.tap"], cwd=ddir, env=e,
                       stdout=f, stderr=subprocess.STDOUT)
    results = []
    if os.path.exists(tap):
        for line in open(tap):
            m = re.match(r"(not ok|ok)\s+-\s+(\S+)\s*(\d+)?", line)
            if m:
                name = m.group(2)
                name = name[2:] if name.startswith("./") else name
                np_ = m.group(3)
                results.append((f"{d}/{name}" + (f"@{np_}" if np_ else ""), m.group(1) == "ok"))
    return results


def lab_mpiexec(lab, build, work):
    """A wrapper script running `wharfrun ARGS` in the lab's scenario (None: native)."""
    wharfrun = os.path.join(build, "bin", "wharfrun")
    if lab is None or lab.targets is None:
        return wharfrun
    cmd, _ = lab.wharfrun_cmd(wharfrun, 1, [])
    head = cmd[:cmd.index(wharfrun)]
    path = os.path.join(work, "mpiexec-" + lab.scenario)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# generated by tests/external/mpich_suite.py\n")
        for k, v in lab.env.items():
            f.write(f"export {k}={shlex.quote(v)}\n")
        f.write("exec " + " ".join(shlex.quote(c) for c in head + [wharfrun, "--hosts", ",".join(lab.targets),
                                                                  "--rsh", lab.agent]) + ' "$@"\n')
    os.chmod(path, 0o755)
    return path


def launch_cmd(lab, wharfrun, n, argv, opts):
    """(command, environment) running `wharfrun -n N OPTS ARGV` in the lab's scenario (None: native)."""
    if lab:
        return lab.wharfrun_cmd(wharfrun, n, argv, opts)
    return [wharfrun, "-n", str(n)] + opts + argv, dict(os.environ)


def scenario_lab(name):
    """(context manager building the scenario or None for native, reason it cannot run or None)."""
    if name == "native":
        return None, None
    sys.path.insert(0, os.path.join(ROOT, "tests", "scenarios"))
    import wharfns
    ok, why = wharfns.can_run()
    return (wharfns.scenario(name), None) if ok else (None, why)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="work directory (default BUILD/mpich-suite)")
    ap.add_argument("--dirs", default=",".join(C_DIRS))
    ap.add_argument("--scenario", default="native")
    ap.add_argument("--xfail", default=os.path.join(ROOT, "tests", "external", "mpich-xfail.txt"))
    ap.add_argument("--timeout", type=int, default=60, help="seconds per test (MPIEXEC_TIMEOUT)")
    ap.add_argument("--setup-only", action="store_true", help="fetch, unpack, configure; run nothing")
    ap.add_argument("--cache", default=os.environ.get("WHARF_CACHE_DIR", os.path.expanduser("~/.cache/wharf")))
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work or os.path.join(build, "mpich-suite"))
    os.makedirs(work, exist_ok=True)
    tarball = fetch(a.cache)
    if not tarball:
        log("SKIP: MPICH's test suite is not available")
        return SKIP
    src = unpack(tarball, work)
    dirs = [d for d in a.dirs.split(",") if d]
    for d in dirs:
        if d not in C_DIRS:
            ap.error(f"unknown directory {d} (one of {','.join(C_DIRS)})")
    if a.setup_only:
        return 0 if configure(src, build, os.path.join(build, "bin", "wharfrun")) else 1
    lab_cm, why = scenario_lab(a.scenario)
    if why:
        log(f"SKIP: {why}")
        return SKIP
    lab = lab_cm.__enter__() if lab_cm else None
    try:
        mpiexec = lab_mpiexec(lab, build, work)
        # configured with the plain wharfrun; the scenario's wrapper is given to runtests
        if not configure(src, build, os.path.join(build, "bin", "wharfrun")):
            return 1
        env = dict(os.environ, **(lab.env if lab else {}))
        xfail = read_xfail(a.xfail)
        results, t0 = [], time.time()
        for d in dirs:
            t = time.time()
            r = run_dir(src, d, mpiexec, a.timeout, env)
            results += r
            log(f"{a.scenario} {d}: {sum(ok for _, ok in r)}/{len(r)} passed ({time.time() - t:.0f} s)")
    finally:
        if lab_cm:
            lab_cm.__exit__(None, None, None)
    base = lambda n: n.split("@")[0]
    unexpected = [n for n, ok in results if not ok and base(n) not in xfail and n not in xfail]
    fixed = [n for n, ok in results if ok and (base(n) in xfail or n in xfail)]
    log(f"{a.scenario}: {sum(ok for _, ok in results)}/{len(results)} passed in {time.time() - t0:.0f} s; "
        f"{len(unexpected)} unexpected failures, {len(fixed)} expected failures passed")
    for n in unexpected:
        log(f"  FAIL {n}   (logs: {work}/mpi/{n.split('/')[0]}/run.log)")
    for n in fixed:
        log(f"  now passes (remove from xfail): {n}")
    if not results:
        log("mpich_suite: no results (runtests failed?)")
        return 1
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
