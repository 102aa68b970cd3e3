#!/usr/bin/env python3
"""Locality tests (issue 3): co-residence detection, the channel matrix and
its reasons, the traffic really taking the chosen channel, and the faults.

    check_locality.py [--build DIR] [-v] [--no-p2p] scenario NAME  # ctest locality.NAME
    check_locality.py [--build DIR] [-v] faults                    # ctest locality.faults
    check_locality.py [--build DIR] [-v] all                       # everything, by hand

`scenario NAME` (native; shared, pidpriv, volume, isolated, twohost from
tests/scenarios/wharfns.py; vms, defined here: two hosts with their own
kernels = boot_ids, one container each, sharing only a volume like an ivshmem
BAR) runs tests/locality/loc_probe (one rank per container) with
WHARF_REPORT=locality,channels in one or more configurations and checks, for
each:
  * the job succeeds and every rank's 8 B / 1 MiB messages to and from every
    other rank arrive intact;
  * rank 0's `wharf: locality:` report: rank and group counts, the groups
    (ranks, boot_id, hostnames as the ranks themselves see them), the matrix
    (C/S/N/.) against the expectation, one `pair i->j:` line per ordered pair
    consistent with the matrix (C = `shm cma`, nothing rejected; S = `shm` +
    rejected cma; N = `net` + rejected shm), the expected rejection reasons,
    and that every reason is one of the documented ones;
  * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives each rank exactly its group;
  * each rank's `WHARF_REPORT=channels` line shows the large messages on the
    matrix's channel and protocol (C: shm/single-copy, S: shm/rndv, N:
    net/rndv), the 8 B ones as eager, and no traffic at all on a channel that
    none of the rank's pairs uses;
  * no `wharf.*` file is left in /dev/shm (the machine's, for this job; every
    lab host's and container's), the volume, or a node directory.
Configurations: native: default (C), WHARF_CMA=0 (S), WHARF_CHANNEL=net (N),
WHARF_LOCALITY=launcher (C), CMA refused with EPERM (S, "probe failed") and CMA
reads failing after a good probe (C, data intact) injected by loc_die.so, 33
ranks (matrix only, no pair lines), 4 ranks in two node directories (C within, N across); shared: default (C),
WHARF_CHANNEL=net (N), WHARF_LOCALITY=launcher (N: containers are launcher
hosts); pidpriv: S; volume: S with the volume as WHARF_NODE_DIR, N without;
isolated: N; twohost: C within a host, N across, different boot_ids; vms: S
("different kernels") with the region as a file in the volume and as a fixed
64 MiB mapping (WHARF_NODE_REGION).  In the lab scenarios a rank is also
SIGKILLed in MPI_Init and in a rendezvous (the job must end non-zero within
seconds, nothing left behind).  Then the point-to-point test programs
(tests/mpi/p2p_*.c, built by tests/p2p) run in the scenario with its rank count.

`faults` (native; the mount cases need usable namespaces): WHARF_NODE_DIR
missing, a regular file, a read-only tmpfs, a tiny (64k) or a full tmpfs, each
with WHARF_NODE_FALLBACK=net (job works over the network, a warning names the
directory, matrix N, "node region unavailable") and =error (job fails, the
message names the directory, no hang, no crash); WHARF_NODE_REGION with a 64
MiB file (C, three times: fresh, stale contents, garbage; the file stays with
its size, nothing appears in the node directory), a 4 KiB file and a missing
path (error or fallback naming it, file untouched / not created); two
concurrent jobs on one host (wharfrun; and two jobs with the *same* job id
through fakepmi.py): both correct, each sees only its own ranks; a rank
SIGKILLed before each PMI barrier of MPI_Init (loc_die.so; rank 1 and rank 0,
region in /dev/shm and in WHARF_NODE_DIR) and in the middle of a 1 MiB
rendezvous (CMA on and off): the job ends non-zero within 10 s, wharfrun names
the dead rank, no file left in /dev/shm or the node directory.

Exit 0: all passed; 1: failures; 2: not built; 77: skipped (namespaces
unavailable for a lab scenario).
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "scenarios"))
import wharfns  # noqa: E402

PFX = "wharf: locality: "
BIG = 1 << 20
# Every tunable a test sets is removed from the inherited environment first.
OWN_VARS = ("WHARF_REPORT", "WHARF_CHANNEL", "WHARF_CMA", "WHARF_LOCALITY", "WHARF_NODE_DIR", "WHARF_NODE_REGION",
            "WHARF_NODE_FALLBACK", "WHARF_HOST_ID", "WHARF_JOB_ID", "WHARF_CMA_MIN", "WHARF_SHM_EAGER_MAX",
            "WHARF_NET_EAGER_MAX", "LD_PRELOAD")
CMA_REASONS = ("disabled by WHARF_CMA=0", "different kernels", "different PID namespaces", "probe failed")
SHM_REASONS = ("not in the same node region", "WHARF_CHANNEL=net", "node region unavailable")
# p2p test programs (tests/p2p/CMakeLists.part.cmake) and the fewest ranks each
# needs (they all take any count from there).
P2P = (("pingpong", 2), ("modes", 2), ("order", 2), ("probe", 2), ("persist", 2), ("waitsome", 2),
       ("alltoall", 2), ("misc", 2))
SCENARIO_RANKS = {"native": 2, "shared": 2, "pidpriv": 2, "volume": 2, "isolated": 2, "twohost": 4, "vms": 2}


def _build_vms(lab):
    """Two VMs on one machine sharing an ivshmem-like memory: two hosts (own
    kernels: own boot_id, PID namespace, /dev/shm...), one container each,
    both attached to the volume "ivshmem" (WHARF_NODE_DIR)."""
    v = lab.add_volume("ivshmem")
    targets = []
    for hi in (1, 2):
        h = lab.add_host(f"h{hi}")
        targets.append(lab.add_container(h, f"c{hi}", ipc="own", mnt="own", shm="own", pid="own",
                                         volumes=["ivshmem"]))
    lab.targets = targets
    lab.env = {"WHARF_NODE_DIR": v}


# scenarios of this test only (not wharfns.SCENARIOS, which its selftest covers)
LOCAL_BUILDERS = {"vms": _build_vms}
ALL_SCENARIOS = tuple(wharfns.SCENARIOS) + tuple(LOCAL_BUILDERS)

VERBOSE = False


def log(msg):
    print(msg, flush=True)


def clip(text, n=6000):
    text = text or ""
    return text if len(text) <= n else text[:n // 2] + "\n[... clipped ...]\n" + text[-n // 2:]


class Checker:
    """Collects failures; one per check, with the evidence."""

    def __init__(self):
        self.failures = []
        self.passed = 0

    def ok(self, cond, what, evidence=None):
        if cond:
            self.passed += 1
            if VERBOSE:
                log(f"  ok: {what}")
        else:
            self.failures.append(what)
            log(f"  FAIL: {what}")
            if evidence:
                log("    " + clip(evidence).replace("\n", "\n    "))
        return cond


# ---------------------------------------------------------------------------
# running jobs

class Result:
    def __init__(self, cmd, rc, out, err, elapsed, pid, before=None):
        self.cmd, self.rc, self.out, self.err, self.elapsed, self.pid = cmd, rc, out, err, elapsed, pid
        self.before = before    # wharf.* files in the machine's /dev/shm before the job

    @property
    def both(self):
        return self.out + "\n" + self.err

    def show(self):
        return (f"$ {' '.join(self.cmd)}\nexit {self.rc} after {self.elapsed:.1f}s\n--- stdout\n{self.out}"
                f"--- stderr\n{self.err}")


def base_env(extra=None, drop=()):
    env = {k: v for k, v in os.environ.items() if k not in OWN_VARS}
    env.update(extra or {})
    for k in drop:
        env.pop(k, None)
    return env


def run_cmd(cmd, env, timeout):
    """Run cmd in its own session; kill the whole group on timeout."""
    r = finish(start(cmd, env), timeout)
    if VERBOSE:
        log(f"  $ {' '.join(cmd)}  -> {r.rc} ({r.elapsed:.1f}s)")
    return r


def start(cmd, env):
    """Start cmd in its own session (so a timeout can kill everything it started)."""
    before = shm_snapshot()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace", start_new_session=True)
    return p, t0, cmd, before


def finish(started, timeout):
    p, t0, cmd, before = started
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with_kill(p)
        out, err = p.communicate()
        err += f"\n[check_locality: killed after {timeout}s]\n"
    finally:
        if p.poll() is None:
            with_kill(p)
    return Result(cmd, p.returncode, out, err, time.monotonic() - t0, p.pid, before)


def with_kill(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except OSError:
            pass
        try:
            p.wait(timeout=3)
            return
        except subprocess.TimeoutExpired:
            pass


class Build:
    def __init__(self, d):
        self.dir = os.path.abspath(d)
        self.wharfrun = os.path.join(self.dir, "bin", "wharfrun")
        self.probe = os.path.join(self.dir, "tests", "locality", "loc_probe")
        self.die = os.path.join(self.dir, "tests", "locality", "libloc_die.so")
        self.fakepmi = os.path.join(HERE, "fakepmi.py")

    def p2p(self, name):
        return os.path.join(self.dir, "tests", "mpi", f"mpit_p2p_{name}")

    def missing(self):
        return [p for p in (self.wharfrun, self.probe) if not os.access(p, os.X_OK)]


class Place:
    """Where jobs run: natively (lab None) or in a wharfns lab."""

    def __init__(self, build, lab=None):
        self.b, self.lab = build, lab

    def job(self, n, argv, extra=None, drop=(), timeout=60, options=()):
        opts = ["--timeout", str(timeout)] + list(options)
        env = base_env()
        if self.lab is None:
            cmd = [self.b.wharfrun, "-n", str(n)] + opts + list(argv)
        else:
            cmd, _ = self.lab.wharfrun_cmd(self.b.wharfrun, n, argv, opts)
            env.update(self.lab.env)
        env.update(extra or {})
        for k in drop:
            env.pop(k, None)
        return run_cmd(cmd, env, timeout + 30)

    # -- leftovers --

    def shm_dirs(self):
        """(label, listing function) of every /dev/shm and volume the job could use."""
        out = []
        if self.lab is None:
            return out
        seen = set()
        for node in self.lab.nodes.values():
            if node.kind not in ("host", "container"):
                continue
            f = node.ns.get("mnt")
            if f and f not in seen:
                seen.add(f)
                out.append((f"/dev/shm of {node.name}", lambda f=f: ns_listdir(f, "/dev/shm")))
        for v, path in self.lab.volumes.items():
            out.append((f"volume {v} ({path})", lambda path=path: listdir(path)))
        return out


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def ns_listdir(mntfile, path):
    r = subprocess.run(["nsenter", f"--mount={mntfile}", "--", "ls", "-A", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True, timeout=20)
    return sorted(r.stdout.split())


def shm_snapshot():
    return {f for f in listdir("/dev/shm") if f.startswith("wharf.")}


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except OSError:
        return True


def job_files(res):
    """wharf.* files of this job left in the machine's /dev/shm: those named
    after its wharfrun (job id wharf-<pid>-...), and those that appeared while
    it ran and belong to a wharfrun that is gone (the job's own when wharfrun
    ran under a wrapper; other people's live jobs are left alone)."""
    left = set(glob.glob(f"/dev/shm/wharf.wharf-{res.pid}-*"))
    if res.before is not None:
        for f in shm_snapshot() - res.before:
            m = re.match(r"wharf\.wharf-(\d+)-", f)
            if not m or not _pid_alive(int(m.group(1))):
                left.add("/dev/shm/" + f)
    return sorted(x for x in left if os.path.exists(x))


def check_leftovers(ck, what, res, place=None, dirs=()):
    left = job_files(res)
    ck.ok(not left, f"{what}: no file of the job left in /dev/shm", "left: " + " ".join(left))
    extra = list(place.shm_dirs()) if place else []
    extra += [(f"node dir {d}", lambda d=d: listdir(d)) for d in dirs]
    for label, lister in extra:
        bad = [f for f in lister() if f.startswith("wharf.")]
        ck.ok(not bad, f"{what}: no wharf.* file left in {label}", "left: " + " ".join(bad))


# ---------------------------------------------------------------------------
# parsing

def parse_ranks(text):
    out = []
    for part in re.split(r"[,\s]+", text.strip()):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)-(\d+)", part)
        if m:
            out += range(int(m.group(1)), int(m.group(2)) + 1)
        elif part.isdigit():
            out.append(int(part))
        else:
            raise ValueError(f"bad rank list {text!r}")
    return out


class Report:
    """Rank 0's WHARF_REPORT=locality lines."""

    def __init__(self, out):
        self.lines = [ln[len(PFX):] for ln in out.splitlines() if ln.startswith(PFX)]
        self.nranks = self.ngroups = None
        self.groups = []        # (ranks list, boot_id, hostnames list)
        self.matrix = {}        # (i, j) -> char
        self.pairs = {}         # (i, j) -> (set of usable channels, {chan: reason})
        self.errors = []
        for ln in self.lines:
            try:
                self._line(ln)
            except ValueError as e:
                self.errors.append(f"{ln!r}: {e}")

    def _line(self, ln):
        m = re.match(r"(\d+) ranks?, (\d+) node groups?", ln)
        if m:
            self.nranks, self.ngroups = int(m.group(1)), int(m.group(2))
            return
        m = re.match(r"group (\d+): ranks ([^(]*)\((.*)\)\s*$", ln)
        if m:
            inner = m.group(3)
            b = re.search(r"boot_ids? (.*?)(?:, hostnames?|$)", inner)
            h = re.search(r"hostnames? ([^)]*)", inner)
            hosts = [x for x in re.split(r"[,\s]+", h.group(1)) if x] if h else None
            boots = [x for x in re.split(r"[,/\s]+", b.group(1)) if x] if b else None
            self.groups.append((parse_ranks(m.group(2)), boots, hosts))
            return
        m = re.match(r"pair (\d+)->(\d+):\s*(.*)$", ln)
        if m:
            rest = m.group(3)
            parts = re.split(r";\s*rejected\s+", rest)
            usable = set(parts[0].split())
            rejected = {}
            for p in parts[1:]:
                mm = re.match(r"(\w+):\s*(.*)$", p)
                if not mm:
                    raise ValueError("cannot parse a 'rejected' clause")
                rejected[mm.group(1)] = mm.group(2).strip()
            self.pairs[(int(m.group(1)), int(m.group(2)))] = (usable, rejected)
            return
        m = re.fullmatch(r"\s*(\d+)\s+((?:[.CSN]\s*)+)", ln)
        if m:
            i = int(m.group(1))
            for j, c in enumerate(m.group(2).split()):
                self.matrix[(i, j)] = c
            return
        # the matrix legend and header, or lines this test does not know: ignored


def parse_probe(out):
    """rank -> dict(host, boot_id, pid, shared list) from loc_probe lines."""
    info = {}
    for m in re.finditer(r"^loc_probe: rank (\d+) size (\d+) host (\S+) boot_id (\S+) pid (\d+) shared (\S*)$", out,
                         re.M):
        info[int(m.group(1))] = dict(size=int(m.group(2)), host=m.group(3), boot_id=m.group(4),
                                     pid=int(m.group(5)), shared=parse_ranks(m.group(6)))
    return info


def parse_channels(out):
    """rank -> {(chan, proto): (msgs, bytes)} from WHARF_REPORT=channels lines."""
    res = {}
    for m in re.finditer(r"^wharf: rank (\d+) channels:(.*)$", out, re.M):
        d = {}
        for mm in re.finditer(r"(\w+)/([\w-]+) (\d+) msgs (\d+) bytes", m.group(2)):
            d[(mm.group(1), mm.group(2))] = (int(mm.group(3)), int(mm.group(4)))
        res[int(m.group(1))] = d
    return res


# ---------------------------------------------------------------------------
# expectations

class Expect:
    """What a probe run must show.  groups: list of rank lists (None: any,
    but MPI_Comm_split_type must agree with the report); kind(i, j):
    'C', 'S' or 'N' for i != j; reasons: {(kind, chan): substring} required
    in the rejection reason of every pair of that kind."""

    def __init__(self, n, groups, kind, reasons=None, report_groups=True, distinct_boot=False, traffic=True,
                 big=BIG):
        self.n, self.kind = n, kind
        self.groups = None if groups is None else [sorted(g) for g in groups]
        self.reasons = reasons or {}
        self.report_groups = report_groups   # the report's groups must be these too
        self.distinct_boot = distinct_boot   # groups must show different boot_ids
        self.strict_boot = False             # a group spanning kernels must list every boot_id
        self.traffic = traffic               # check the channels report against the matrix
        self.big = big                       # loc_probe --big


def by_groups(groups, inside="C", across="N"):
    g = {r: k for k, grp in enumerate(groups) for r in grp}
    return lambda i, j: inside if g[i] == g[j] else across


def boot_match(reported, actual):
    a = reported.replace("-", "").lower()
    b = actual.replace("-", "").lower()
    return len(a) >= 4 and b.startswith(a)


def check_probe(ck, what, res, exp, iters=1):
    """All checks of one loc_probe run with WHARF_REPORT=locality,channels."""
    n, big = exp.n, exp.big
    if not ck.ok(res.rc == 0, f"{what}: job exits 0 (got {res.rc})", res.show()):
        return
    ck.ok("loc_probe: done" in res.out and all(f"loc_probe: rank {r} exchange ok" in res.out for r in range(n)),
          f"{what}: every rank's messages arrived intact", res.show())
    probe = parse_probe(res.out)
    ck.ok(sorted(probe) == list(range(n)), f"{what}: every rank printed its probe line", res.out)
    rep = Report(res.out)
    if exp.groups is None:  # no expectation: the report's groups (a rank in none is alone)
        group_of = {r: [r] for r in range(n)}
        group_of.update({r: sorted(g[0]) for g in rep.groups for r in g[0]})
        src = "its report group"
    else:
        group_of = {r: sorted(g) for g in exp.groups for r in g}
        src = "expected"
    # MPI_Comm_split_type(SHARED)
    for r, info in sorted(probe.items()):
        ck.ok(info["shared"] == group_of.get(r),
              f"{what}: MPI_Comm_split_type(SHARED) of rank {r} is {info['shared']}, {src} {group_of.get(r)}")
    # the report
    if not ck.ok(rep.lines, f"{what}: WHARF_REPORT=locality printed 'wharf: locality:' lines", res.show()):
        return
    ck.ok(not rep.errors, f"{what}: every report line parses", "\n".join(rep.errors))
    ck.ok(rep.nranks == n, f"{what}: report header says {rep.nranks} ranks, expected {n}", "\n".join(rep.lines))
    got_groups = sorted(sorted(g[0]) for g in rep.groups)
    if exp.report_groups and exp.groups is not None:
        ck.ok(rep.ngroups == len(exp.groups), f"{what}: report header says {rep.ngroups} node groups, "
              f"expected {len(exp.groups)}", "\n".join(rep.lines))
        ck.ok(got_groups == sorted(exp.groups), f"{what}: report groups {got_groups}, expected {sorted(exp.groups)}",
              "\n".join(rep.lines))
    else:
        ck.ok(rep.ngroups == len(rep.groups), f"{what}: header group count matches the group lines",
              "\n".join(rep.lines))
    for ranks, boot, hosts in rep.groups:
        ranks = [r for r in ranks if r in probe]
        if not ranks:
            continue
        if exp.report_groups and exp.groups is not None:
            want_hosts = {probe[r]["host"] for r in ranks}
            ck.ok(hosts is not None and set(hosts) == want_hosts,
                  f"{what}: group {ranks} hostnames {hosts}, the ranks report {sorted(want_hosts)}")
            actual = sorted({probe[r]["boot_id"] for r in ranks})
            listed = [a for a in actual if any(boot_match(x, a) for x in boot or [])]
            if len(actual) == 1 or exp.strict_boot:
                ck.ok(boot is not None and len(listed) == len(actual),
                      f"{what}: group {ranks} boot_id {boot} shows the ranks' boot_id(s) {', '.join(actual)}")
            elif len(listed) != len(actual):
                log(f"  NOTE: {what}: group {ranks} spans kernels {', '.join(actual)} but the report shows "
                    f"boot_id {' '.join(boot or [])} only")
    if exp.distinct_boot:
        boots = [" ".join(g[1] or []) for g in rep.groups]
        ck.ok(len(set(boots)) == len(boots), f"{what}: the node groups show different boot_ids {boots}")
    # matrix and pairs
    want = {(i, j): "." if i == j else exp.kind(i, j) for i in range(n) for j in range(n)}
    got = {k: rep.matrix.get(k, "?") for k in want}
    ck.ok(got == want, f"{what}: matrix\n" + fmt_matrix(got, n) + "\n  expected\n" + fmt_matrix(want, n),
          "\n".join(rep.lines))
    if n <= 32:
        for i in range(n):
            for j in range(n):
                if i != j:
                    check_pair(ck, what, rep, i, j, got[(i, j)], exp)
    else:
        ck.ok(not rep.pairs, f"{what}: no 'pair' lines beyond 32 ranks")
    # the traffic
    if exp.traffic:
        check_channels(ck, what, res, parse_channels(res.out), got, n, iters, big)


def fmt_matrix(m, n):
    return "\n".join("    " + " ".join(m[(i, j)] for j in range(n)) for i in range(n))


def check_pair(ck, what, rep, i, j, kind, exp):
    if not ck.ok((i, j) in rep.pairs, f"{what}: a 'pair {i}->{j}:' line", "\n".join(rep.lines)):
        return
    usable, rejected = rep.pairs[(i, j)]
    line = f"pair {i}->{j}: usable {sorted(usable)}, rejected {rejected}"
    if kind == "C":
        ck.ok(usable == {"shm", "cma"} and not rejected, f"{what}: {line}: C means 'shm cma', nothing rejected")
    elif kind == "S":
        ck.ok(usable == {"shm"} and "cma" in rejected and "shm" not in rejected,
              f"{what}: {line}: S means 'shm', cma rejected")
    elif kind == "N":
        ck.ok(usable == {"net"} and "shm" in rejected, f"{what}: {line}: N means 'net', shm rejected")
    for ch, reason in rejected.items():
        known = CMA_REASONS if ch == "cma" else SHM_REASONS if ch == "shm" else None
        ck.ok(known is not None and any(k in reason for k in known),
              f"{what}: pair {i}->{j}: rejected {ch} reason {reason!r} is a documented one")
    for (k, ch), sub in exp.reasons.items():
        if k == kind:
            ck.ok(sub in rejected.get(ch, ""), f"{what}: pair {i}->{j}: {ch} rejected with a reason containing "
                  f"{sub!r} (got {rejected.get(ch)!r})")


def check_channels(ck, what, res, chans, mat, n, iters, big):
    if not ck.ok(sorted(chans) == list(range(n)), f"{what}: every rank printed its WHARF_REPORT=channels line",
                 res.out):
        return
    for r in range(n):
        c = chans[r]
        desc = f"{what}: rank {r} channels {sorted((f'{a}/{b}', v) for (a, b), v in c.items())}"
        out_k = [mat[(r, j)] for j in range(n) if j != r]   # eager: counted by the sender
        in_k = [mat[(j, r)] for j in range(n) if j != r]    # rndv/single-copy: as received
        uses = set(out_k) | set(in_k)

        def get(ch, pr):
            return c.get((ch, pr), (0, 0))

        nc, ns_, nn = in_k.count("C"), in_k.count("S"), in_k.count("N")
        if nc:
            m, b = get("shm", "single-copy")
            ck.ok(m >= nc * iters and b >= nc * iters * big,
                  f"{desc}: {nc * iters} x {big} B received by CMA single-copy (shm/single-copy)")
        else:
            ck.ok(get("shm", "single-copy") == (0, 0), f"{desc}: no shm/single-copy (no C pair)")
        if ns_:
            m, b = get("shm", "rndv")
            ck.ok(m >= ns_ * iters and b >= ns_ * iters * big,
                  f"{desc}: {ns_ * iters} x {big} B received by pipelined copy (shm/rndv)")
        if nn:
            m, b = get("net", "rndv")
            ck.ok(m >= nn * iters and b >= nn * iters * big, f"{desc}: {nn * iters} x {big} B received over net/rndv")
        so = sum(1 for k in out_k if k in "CS")
        if so:
            ck.ok(get("shm", "eager")[0] >= so * iters, f"{desc}: 8 B messages sent as shm/eager")
        no = out_k.count("N")
        if no:
            ck.ok(get("net", "eager")[0] >= no * iters, f"{desc}: 8 B messages sent as net/eager")
        if not uses & {"C", "S"}:
            ck.ok(not any(ch == "shm" for ch, _ in c), f"{desc}: no shm traffic at all (no shm pair)")
        if "N" not in uses:
            ck.ok(not any(ch == "net" for ch, _ in c), f"{desc}: no net traffic at all (no net pair)")


# ---------------------------------------------------------------------------
# scenarios

REPORT = {"WHARF_REPORT": "locality,channels"}
NOT_SAME = "not in the same node region"
PIDNS = "different PID namespaces"


def scenario_variants(name, n):
    """(variant name, env extra, env drop, Expect, wrapper-or-None)."""
    one = [list(range(n))]
    alone = [[r] for r in range(n)]
    v = []
    if name == "native":
        v.append(("default", {}, (), Expect(n, one, by_groups(one)), None))
        v.append(("WHARF_CMA=0", {"WHARF_CMA": "0"}, (),
                  Expect(n, one, by_groups(one, "S"), {("S", "cma"): "disabled by WHARF_CMA=0"}), None))
        v.append(("WHARF_CHANNEL=net", {"WHARF_CHANNEL": "net"}, (),
                  Expect(n, one, by_groups(one, "N"), {("N", "shm"): "WHARF_CHANNEL=net"}), None))
        v.append(("WHARF_LOCALITY=launcher", {"WHARF_LOCALITY": "launcher"}, (), Expect(n, one, by_groups(one)),
                  None))
        # CMA refused by the kernel (EPERM, as under Yama ptrace_scope=2/3 or seccomp), injected by loc_die.so
        v.append(("CMA probe gets EPERM", {}, (), Expect(n, one, by_groups(one, "S"), {("S", "cma"): "probe failed"}),
                  ("preload", {"LOC_CMA_FAIL": "1"})))
        # the probe passes, the data reads then fail: the transfer must fall back, data intact
        v.append(("CMA reads fail after a good probe", {}, (), Expect(n, one, by_groups(one), traffic=False),
                  ("preload", {"LOC_CMA_FAIL": "14", "LOC_CMA_FAIL_AFTER": "1"})))
        # many ranks: the whole matrix, no pair lines (64 KiB messages, still above WHARF_CMA_MIN)
        v.append(("33 ranks", {}, (), Expect(33, [list(range(33))], lambda i, j: "C", big=65536), None))
        # two node directories on one machine: ranks 0,1 in one, 2,3 in the other
        g = [[0, 1], [2, 3]]
        v.append(("two node dirs, 4 ranks", {}, (), Expect(4, g, by_groups(g), {("N", "shm"): NOT_SAME}),
                  "splitdir"))
    elif name == "shared":
        v.append(("default", {}, (), Expect(n, one, by_groups(one)), None))
        v.append(("WHARF_CHANNEL=net", {"WHARF_CHANNEL": "net"}, (),
                  Expect(n, one, by_groups(one, "N"), {("N", "shm"): "WHARF_CHANNEL=net"}), None))
        # the old behaviour: containers are different launcher hosts
        v.append(("WHARF_LOCALITY=launcher", {"WHARF_LOCALITY": "launcher"}, (), Expect(n, alone, by_groups(alone)),
                  None))
    elif name == "pidpriv":
        v.append(("default", {}, (), Expect(n, one, by_groups(one, "S"), {("S", "cma"): PIDNS}), None))
    elif name == "volume":
        v.append(("default (WHARF_NODE_DIR=volume)", {}, (), Expect(n, one, by_groups(one, "S"),
                                                                    {("S", "cma"): PIDNS}), None))
        # without the volume each container has only its own /dev/shm
        v.append(("WHARF_NODE_DIR unset", {}, ("WHARF_NODE_DIR",),
                  Expect(n, alone, by_groups(alone), {("N", "shm"): NOT_SAME}), None))
    elif name == "isolated":
        v.append(("default", {}, (), Expect(n, alone, by_groups(alone), {("N", "shm"): NOT_SAME}), None))
    elif name == "vms":
        # one region, two kernels: shm yes, CMA no
        v.append(("node region: a file in the shared volume", {}, (),
                  Expect(n, one, by_groups(one, "S"), {("S", "cma"): "different kernels"}), None))
        v.append(("node region: a fixed 64 MiB mapping in the shared volume (WHARF_NODE_REGION)", {}, (),
                  Expect(n, one, by_groups(one, "S"), {("S", "cma"): "different kernels"}), "ivshmem"))
    elif name == "twohost":
        g = [[0, 1], [2, 3]]
        v.append(("default", {}, (), Expect(n, g, by_groups(g), {("N", "shm"): NOT_SAME}, distinct_boot=True), None))
    return v


def run_scenario(ck, b, name, p2p=True):
    n = SCENARIO_RANKS[name]
    if name == "native":
        return scenario_body(ck, b, name, n, Place(b), p2p)
    ok, why = wharfns.can_run()
    if not ok:
        log(f"SKIP: {why}")
        return 77
    if name in LOCAL_BUILDERS:
        lab = wharfns.Lab(build=LOCAL_BUILDERS[name], scenario=name)
    else:
        lab = wharfns.scenario(name)
    with lab:
        if VERBOSE:
            log(lab.describe())
        return scenario_body(ck, b, name, n, Place(b, lab), p2p)


def scenario_body(ck, b, name, n, place, p2p):
    for vname, extra, drop, exp, wrap in scenario_variants(name, n):
        what = f"{name}/{vname}"
        log(f"== {what}")
        dirs = []
        argv = [b.probe] + (["--big", str(exp.big)] if exp.big != BIG else [])
        opts = []
        if isinstance(wrap, tuple) and wrap[0] == "preload":
            if not os.path.exists(b.die):
                log(f"  skipped: {b.die} not built")
                continue
            opts = ["-x", f"LD_PRELOAD={b.die}"] + [x for k, val in wrap[1].items() for x in ("-x", f"{k}={val}")]
        if wrap == "ivshmem":  # a pre-sized file in the shared volume stands for the ivshmem BAR
            region = os.path.join(place.lab.env["WHARF_NODE_DIR"], "ivshmem-bar")
            with open(region, "wb") as f:
                f.truncate(64 << 20)
            extra = dict(extra, WHARF_NODE_REGION=region)
        if wrap == "splitdir":
            dirs = [tempfile.mkdtemp(prefix="loctest-nd", dir="/dev/shm") for _ in range(2)]
            argv = ["sh", "-c", f'if [ "$PMI_RANK" -lt 2 ]; then d={dirs[0]}; else d={dirs[1]}; fi; '
                                f'WHARF_NODE_DIR=$d exec "$@"', "loc_probe"] + argv
        try:
            res = place.job(exp.n, argv, dict(REPORT, **extra), drop, options=opts)
            check_probe(ck, what, res, exp)
            check_leftovers(ck, what, res, place, dirs)
            if wrap == "ivshmem":
                ck.ok(os.path.isfile(region) and os.path.getsize(region) == 64 << 20,
                      f"{what}: the region file is still there with its 64 MiB")
                os.unlink(region)
        finally:
            for d in dirs:
                shutil.rmtree(d, ignore_errors=True)
    if place.lab is not None:
        scenario_kills(ck, b, name, n, place)
    if p2p:
        for t, need in P2P:
            what = f"{name}/p2p_{t} -n {n}"
            prog = b.p2p(t)
            if n < need or not os.access(prog, os.X_OK):
                log(f"== {what}: skipped ({'needs ' + str(need) + ' ranks' if n < need else prog + ' not built'})")
                continue
            log(f"== {what}")
            res = place.job(n, [prog], timeout=150)
            ck.ok(res.rc == 0, f"{what}: exits 0 (got {res.rc})", res.show())
            check_leftovers(ck, what, res, place)
    return 0


def scenario_kills(ck, b, name, n, place):
    """A rank in a container dies during MPI_Init (loc_die.so at its 2nd PMI
    barrier: the node region exists, not everyone has attached yet) and in
    the middle of a 1 MiB rendezvous: the job ends non-zero within seconds
    and no wharf.* file stays in any /dev/shm of the lab or the volume."""
    victim = n - 1
    cases = [(f"rank {victim} SIGKILLed before PMI barrier 2 of MPI_Init", [b.probe],
              ["-x", f"LD_PRELOAD={b.die}", "-x", "LOC_DIE_BARRIER=2", "-x", f"LOC_DIE_RANK={victim}"],
              f"loc_die: rank {victim} dies now")]
    if not os.path.exists(b.die):
        cases = []
    cases.append((f"rank {victim} SIGKILLed in a 1 MiB rendezvous", [b.probe, "--iters", "1000", "--die",
                                                                      f"{victim}:5"], [],
                  f"loc_probe: rank {victim} dies now"))
    for label, argv, opts, mark in cases:
        what = f"{name}/{label}"
        log(f"== {what}")
        res = place.job(n, argv, timeout=40, options=opts)
        if not ck.ok(mark in res.both, f"{what}: the rank died as planned", res.show()):
            continue
        ck.ok(res.rc not in (0, 124), f"{what}: job ends non-zero, not by timeout (got {res.rc})", res.show())
        ck.ok(res.elapsed < 15, f"{what}: ends within 15 s (took {res.elapsed:.1f}s)", res.show())
        ck.ok("loc_probe: done" not in res.out, f"{what}: the job did not complete", res.out)
        check_leftovers(ck, what, res, place)


# ---------------------------------------------------------------------------

def faults(ck, b):
    """The fault cases live in loc_faults.py, which imports this module's
    helpers (as module check_locality: tell that copy about -v too)."""
    import check_locality as me  # noqa: E402
    import loc_faults  # noqa: E402
    me.VERBOSE = loc_faults.VERBOSE = VERBOSE
    return loc_faults.faults(ck, b)


def main(argv=None):
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build directory (default build/)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--no-p2p", action="store_true", help="scenario: skip the p2p test programs")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scenario")
    s.add_argument("name", choices=ALL_SCENARIOS)
    sub.add_parser("faults")
    sub.add_parser("all")
    a = ap.parse_args(argv)
    VERBOSE = a.verbose
    b = Build(a.build)
    miss = b.missing()
    if miss:
        print(f"check_locality: not built: {', '.join(miss)} (ninja -C {b.dir})", file=sys.stderr)
        return 2
    ck = Checker()
    t0 = time.monotonic()
    rc = 0
    if a.cmd == "scenario":
        rc = run_scenario(ck, b, a.name, not a.no_p2p)
    elif a.cmd == "faults":
        rc = faults(ck, b)
    else:
        for sc in ALL_SCENARIOS:
            r = run_scenario(ck, b, sc, not a.no_p2p)
            if r == 77:
                log(f"({sc} skipped)")
        faults(ck, b)
    if rc == 77:
        return 77
    log(f"{ck.passed} checks passed, {len(ck.failures)} failed ({time.monotonic() - t0:.0f}s)")
    if ck.failures:
        log("failed:\n  " + "\n  ".join(f.split("\n")[0] for f in ck.failures))
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
