"""What the external application tests share (tests/external/{coarrays,nwchem,bagel,hdf5}.py): the work
directory of one scenario, wharfrun's options for MPICH-built binaries on wharf's libraries, one
program run in (or outside) the scenario's lab, and the count of wharf's channel reports."""
import argparse, os, re, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mpich_suite  # noqa: E402  (scenario_lab, launch_cmd)

SKIP = 77


def log(msg):
    print(msg, flush=True)


def rundir(build, work, name, scenario):
    """A fresh BUILD/NAME/run-SCENARIO (or WORK/run-SCENARIO)."""
    d = os.path.join(os.path.abspath(work or os.path.join(build, name)), "run-" + scenario)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def wharf_opts(build, timeout, *env):
    """wharfrun options: a timeout, the channel report, wharf's libraries first (libmpich.so.12 too)."""
    lib = os.path.join(build, "lib")
    ldp = lib + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    opts = ["--timeout", str(timeout), "-x", "WHARF_REPORT=channels", "-x", "LD_LIBRARY_PATH=" + ldp]
    for e in env:
        opts += ["-x", e]
    return opts


def run(lab, build, n, argv, opts, cwd, timeout):
    """(exit status, output) of wharfrun -n N ARGV in the lab (None: natively); -1 on timeout."""
    cmd, env = mpich_suite.launch_cmd(lab, os.path.join(build, "bin", "wharfrun"), n, argv, opts)
    try:
        r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout + 60)
        return r.returncode, r.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return -1, (e.stdout or b"").decode(errors="replace") + "\n[killed: timeout]"


def run_mpich(n, argv, cwd, timeout, env=None):
    """(exit status, output) of the same job on Debian's MPICH natively (mpirun.mpich -n N, each
    VAR=value of env passed with -genv), for a reference made on this machine; None without it."""
    mpirun = shutil.which("mpirun.mpich")
    if not mpirun:
        return None
    cmd = ["timeout", str(timeout), mpirun, "-n", str(n)]
    for k, v in (env or {}).items():
        cmd += ["-genv", k, v]
    try:
        r = subprocess.run(cmd + argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, LD_LIBRARY_PATH=""))
    except OSError:
        return None
    return r.returncode, r.stdout


def reports(out):
    """How many ranks printed wharf's channel report (0: not running on wharf)."""
    return len(re.findall(r"^wharf: rank \d+ channels:", out, re.M))


def reports_bad(out, n):
    """[the problem] when not every one of the n ranks printed wharf's channel report, else []."""
    got = reports(out)
    return [] if got == n else [f"{got} wharf channel reports for {n} ranks (not running on wharf?)"]


def app_args(doc, name, ranks_help, ranks=0):
    """The options every application test takes: --build, --work, --scenario, -n, --timeout."""
    root = os.path.dirname(os.path.dirname(HERE))
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--work", help=f"work directory (default BUILD/{name})")
    ap.add_argument("--scenario", default="native")
    ap.add_argument("-n", type=int, default=ranks, help=ranks_help)
    ap.add_argument("--timeout", type=int, default=600, help="seconds")
    return ap.parse_args()


def lab_for(binary, package, scenario):
    """The scenario's Lab, or None (logged: the test skips) when BINARY is missing or the
    scenario cannot be built."""
    if not os.access(binary, os.X_OK):
        log(f"SKIP: {binary} missing (apt-get install {package})")
        return None
    lab = Lab(scenario)
    if lab.why:
        log(f"SKIP: {lab.why}")
        return None
    return lab


def verdict(what, bad, out, t0, extra=""):
    """Log WHAT ok/FAILED with the time, EXTRA and the problems in BAD (with the output's end when
    any); the exit status (0 or 1)."""
    log(f"{what}: {'ok' if not bad else 'FAILED'} in {time.time() - t0:.1f} s{extra}"
        + "".join(f"\n    {b}" for b in bad))
    if bad:
        log(out[-4000:])
    return 1 if bad else 0


class Lab:
    """`with Lab(scenario) as lab:` the scenario's lab (None natively); .why: it cannot run."""

    def __init__(self, scenario):
        self.cm, self.why = mpich_suite.scenario_lab(scenario)

    def __enter__(self):
        return self.cm.__enter__() if self.cm else None

    def __exit__(self, *exc):
        if self.cm:
            self.cm.__exit__(*exc)
        return False
