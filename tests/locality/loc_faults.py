"""The fault cases of the locality tests (check_locality.py faults): node
directory problems, the fixed region, concurrent jobs, killed ranks.  See
check_locality.py for what each asserts."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from check_locality import *  # noqa: F401,F403  (helpers, parsers, checks)
from check_locality import ROOT, REPORT, BIG  # noqa: F401
# ---------------------------------------------------------------------------
# faults (native)

def fault_expect_fallback(ck, what, res, path, n=2):
    """fallback=net: the job works, everyone on the network, a warning names path."""
    # co-residents may or may not be known (the registry may fit where the
    # queues do not): only the matrix and the reason are fixed
    check_probe(ck, what, res, Expect(n, None, lambda i, j: "N", {("N", "shm"): "node region unavailable"},
                                      report_groups=False))
    ck.ok(path in res.err, f"{what}: a warning on stderr names {path}", res.err)


def fault_expect_error(ck, what, res, path):
    """fallback=error (or a fatal setup error): fails cleanly and quickly."""
    ck.ok(res.rc not in (0, 124) and res.rc is not None and res.rc > 0,
          f"{what}: job fails with a non-zero exit, not a timeout (got {res.rc})", res.show())
    ck.ok(res.elapsed < 30, f"{what}: ends within 30 s (took {res.elapsed:.1f}s)")
    ck.ok(path in res.both, f"{what}: the error message names {path}", res.show())
    ck.ok("loc_probe: done" not in res.out, f"{what}: the program did not run past MPI_Init", res.out)
    check_no_crash(ck, what, res)


def check_no_crash(ck, what, res):
    crashed = re.search(r"killed by signal (\d+)", res.err)
    ck.ok(not crashed and res.rc not in (128 + signal.SIGBUS, 128 + signal.SIGSEGV, 128 + signal.SIGABRT),
          f"{what}: no rank crashed", res.err)


def in_mount_ns(setup, cmd, listing=None):
    """cmd (a wharfrun command) inside a private mount namespace after setup
    (shell); listing: a file to receive `ls -A` of a directory of that
    namespace afterwards, as (dir, file)."""
    q = " ".join(sh_quote(c) for c in cmd)
    tail = f"{q}; rc=$?; ls -A {sh_quote(listing[0])} > {sh_quote(listing[1])}; exit $rc" if listing else f"exec {q}"
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", f"{setup} && {tail}"]


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def faults(ck, b):
    tmp = tempfile.mkdtemp(prefix="loctest-")
    try:
        faults_nodedir(ck, b, tmp)
        faults_region(ck, b, tmp)
        faults_concurrent(ck, b, tmp)
        faults_kill(ck, b, tmp)
    finally:
        subprocess.run(["umount", "-l", os.path.join(tmp, "mnt")], stderr=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def native_cmd(b, n, argv, timeout=40, options=()):
    return [b.wharfrun, "-n", str(n), "--timeout", str(timeout)] + list(options) + list(argv)


def faults_nodedir(ck, b, tmp):
    root, why = wharfns.can_run()
    missing = os.path.join(tmp, "no-such-dir")
    afile = os.path.join(tmp, "a-file")
    with open(afile, "w") as f:
        f.write("not a directory\n")
    mnt = os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    listing = os.path.join(tmp, "listing")
    cases = [("missing", missing, None), ("a regular file", afile, None)]
    if root:
        cases += [("read-only tmpfs", mnt, f"mount -t tmpfs -o ro,size=1m loctest-ro {sh_quote(mnt)}"),
                  ("tiny tmpfs (64k)", mnt, f"mount -t tmpfs -o size=64k loctest-tiny {sh_quote(mnt)}"),
                  ("full tmpfs", mnt, f"mount -t tmpfs -o size=64k loctest-full {sh_quote(mnt)} && "
                                      f"{{ dd if=/dev/zero of={sh_quote(mnt)}/filler bs=4k 2>/dev/null; true; }}")]
    else:
        log(f"== read-only / tiny / full node directory: skipped (private mount namespace: {why})")
    for label, path, setup in cases:
        for fb in ("default", "net", "error"):
            if fb == "default" and label != "missing":
                continue
            what = f"WHARF_NODE_DIR {label}, WHARF_NODE_FALLBACK={fb}"
            log(f"== {what}")
            env = base_env(dict(REPORT, WHARF_NODE_DIR=path))
            if fb != "default":
                env["WHARF_NODE_FALLBACK"] = fb
            cmd = native_cmd(b, 2, [b.probe])
            if setup:
                if os.path.exists(listing):
                    os.unlink(listing)
                cmd = in_mount_ns(setup, cmd, (path, listing))
            res = run_cmd(cmd, env, 70)
            if fb == "error":
                fault_expect_error(ck, what, res, path)
            else:
                fault_expect_fallback(ck, what, res, path)
                check_no_crash(ck, what, res)
            if setup:
                left = open(listing).read().split() if os.path.exists(listing) else ["(no listing)"]
                ck.ok(not [f for f in left if f.startswith("wharf.")], f"{what}: nothing left in the node dir",
                      " ".join(left))
                ck.ok(not os.listdir(mnt), f"{what}: the test mount stayed private", " ".join(os.listdir(mnt)))
            else:
                ck.ok(not os.path.exists(missing), f"{what}: {missing} not created")
                ck.ok(os.path.isfile(afile), f"{what}: {afile} untouched")
            # the machine's /dev/shm: only files this job could have made (by pid) -- in a
            # mount namespace the job's pid is the unshare/sh, so look by job id pattern too
            check_leftovers(ck, what, res)


def faults_region(ck, b, tmp):
    region = os.path.join(tmp, "region")
    nodedir = fresh_dir()
    one = [[0, 1]]
    size = 64 << 20
    try:
        subprocess.run(["truncate", "-s", "64M", region], check=True)
        for k, label in enumerate(("pre-sized 64 MiB file", "the same file again (stale contents)",
                                   "the same file full of garbage")):
            if k == 2:
                with open(region, "r+b") as f:
                    f.write(os.urandom(4 << 20))
            what = f"WHARF_NODE_REGION {label}"
            log(f"== {what}")
            env = base_env(dict(REPORT, WHARF_NODE_REGION=region, WHARF_NODE_DIR=nodedir))
            res = run_cmd(native_cmd(b, 2, [b.probe]), env, 70)
            check_probe(ck, what, res, Expect(2, one, by_groups(one)))
            ck.ok(os.path.isfile(region) and os.path.getsize(region) == size,
                  f"{what}: {region} still there with its {size} bytes")
            ck.ok(not os.listdir(nodedir), f"{what}: nothing created in the node directory {nodedir}",
                  " ".join(os.listdir(nodedir)))
            check_leftovers(ck, what, res)
        small = os.path.join(tmp, "small-region")
        subprocess.run(["truncate", "-s", "4096", small], check=True)
        nonexist = os.path.join(tmp, "no-such-region")
        for label, path in (("a 4 KiB file", small), ("a missing path", nonexist)):
            for fb in ("net", "error"):
                what = f"WHARF_NODE_REGION {label}, WHARF_NODE_FALLBACK={fb}"
                log(f"== {what}")
                env = base_env(dict(REPORT, WHARF_NODE_REGION=path, WHARF_NODE_DIR=nodedir, WHARF_NODE_FALLBACK=fb))
                res = run_cmd(native_cmd(b, 2, [b.probe]), env, 70)
                check_no_crash(ck, what, res)
                if res.rc == 0 and fb == "net":
                    fault_expect_fallback(ck, what + " (fell back)", res, path)
                else:
                    fault_expect_error(ck, what, res, path)
                if path == small:
                    ck.ok(os.path.getsize(small) == 4096, f"{what}: the file keeps its 4096 bytes "
                          f"(has {os.path.getsize(small)})")
                else:
                    ck.ok(not os.path.exists(nonexist), f"{what}: {nonexist} not created")
                ck.ok(not os.listdir(nodedir), f"{what}: nothing created in the node directory",
                      " ".join(os.listdir(nodedir)))
                check_leftovers(ck, what, res)
    finally:
        shutil.rmtree(nodedir, ignore_errors=True)


def faults_concurrent(ck, b, tmp):
    one = [[0, 1]]
    iters = 300
    # (1) two wharfrun jobs at once on one host: same hostname, different job ids
    what = "two concurrent wharfrun jobs"
    log(f"== {what}")
    env = base_env(REPORT)
    jobs = [start(native_cmd(b, 2, [b.probe, "--iters", str(iters), "--seed", str(s)], timeout=90), env)
            for s in (11, 22)]
    res = [finish(j, 120) for j in jobs]
    for k, r in enumerate(res):
        check_probe(ck, f"{what} (job {k})", r, Expect(2, one, by_groups(one)), iters=iters)
        check_leftovers(ck, f"{what} (job {k})", r)
    overlap = res[0].elapsed > 0.5 and res[1].elapsed > 0.5
    if VERBOSE:
        log(f"  jobs took {res[0].elapsed:.1f}s and {res[1].elapsed:.1f}s (overlap {overlap})")
    # (2) two jobs with the SAME job id at once (fakepmi.py): the nonce must separate them
    jobid = f"loctest-{os.getpid()}-same"
    what = f"two concurrent jobs with the same job id {jobid}"
    log(f"== {what}")
    jobs = [start([sys.executable, b.fakepmi, "--jobid", jobid, "-n", "2", "--timeout", "90", "--", b.probe,
                   "--iters", str(iters), "--seed", str(s)], env) for s in (33, 44)]
    res = [finish(j, 120) for j in jobs]
    for k, r in enumerate(res):
        check_probe(ck, f"{what} (job {k})", r, Expect(2, one, by_groups(one)), iters=iters)
    left = glob.glob(f"/dev/shm/wharf.{jobid}*")
    ck.ok(not left, f"{what}: no file left in /dev/shm", " ".join(left))


def fresh_dir():
    return tempfile.mkdtemp(prefix="loctest-nd", dir="/dev/shm")


def faults_kill(ck, b, tmp):
    """A rank dies during MPI_Init (at each PMI barrier in turn, through
    loc_die.so) or in the middle of a rendezvous: the job must end non-zero
    within seconds, and leave nothing in /dev/shm or in its node directory
    (a fresh one per case)."""
    have_shim = os.path.exists(b.die)
    if not have_shim:
        log(f"== kill during MPI_Init: skipped ({b.die} not built)")
    for where in ("/dev/shm", "WHARF_NODE_DIR"):
        for victim in ((1, 0) if have_shim else ()):
            for k in range(1, 11):
                what = f"rank {victim} SIGKILLed before PMI barrier {k} of MPI_Init ({where})"
                log(f"== {what}")
                nd = fresh_dir() if where != "/dev/shm" else None
                try:
                    extra = dict(REPORT, LOC_DIE_BARRIER=str(k), LOC_DIE_RANK=str(victim))
                    if nd:
                        extra["WHARF_NODE_DIR"] = nd
                    res = run_cmd(native_cmd(b, 2, [b.probe], timeout=40, options=["-x", f"LD_PRELOAD={b.die}"]),
                                  base_env(extra), 70)
                    died = f"loc_die: rank {victim} dies now" in res.err
                    if not died:
                        ck.ok(res.rc == 0, f"{what}: no such barrier, the job ran normally", res.show())
                    else:
                        check_killed(ck, what, res, victim)
                    check_leftovers(ck, what, res, dirs=[nd] if nd else [])
                finally:
                    if nd:
                        shutil.rmtree(nd, ignore_errors=True)
                if not died:
                    break
    for victim in (1, 0):
        for cma in ("1", "0"):
            what = f"rank {victim} SIGKILLed in a 1 MiB rendezvous (WHARF_CMA={cma})"
            log(f"== {what}")
            nd = fresh_dir()
            try:
                env = base_env(dict(WHARF_CMA=cma, WHARF_NODE_DIR=nd))
                res = run_cmd(native_cmd(b, 2, [b.probe, "--iters", "1000", "--die", f"{victim}:20"], timeout=40),
                              env, 70)
                ck.ok(f"loc_probe: rank {victim} dies now" in res.out, f"{what}: the rank died as planned", res.show())
                check_killed(ck, what, res, victim)
                check_leftovers(ck, what, res, dirs=[nd])
            finally:
                shutil.rmtree(nd, ignore_errors=True)


def check_killed(ck, what, res, victim):
    ck.ok(res.rc not in (0, 124), f"{what}: job ends non-zero, not by timeout (got {res.rc})", res.show())
    ck.ok(res.elapsed < 10, f"{what}: ends within 10 s (took {res.elapsed:.1f}s)", res.show())
    ck.ok("loc_probe: done" not in res.out, f"{what}: the job did not complete", res.out)
    ck.ok(re.search(rf"rank {victim} .*killed by signal 9", res.err) is not None,
          f"{what}: wharfrun names the dead rank", res.err)


