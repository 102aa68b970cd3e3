#!/usr/bin/env python3
"""Job start-up time: the wall time of launching an MPI hello world (MPI_Init, MPI_Finalize)
with 1, 2 and 4 ranks, wharf against MPICH and Open MPI (Debian's), interleaved per
repetition; medians.  wharf also with WHARF_CHANNEL=net (the network channel opened,
libfabric loaded) and, with --baseline DIR, a second wharf build (same launcher options).

  python3 bench/startup.py --build build [--baseline /tmp/old-build] [--reps 15]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HELLO = "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another wharf build directory to compare with")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--ranks", default="1,2,4")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="wh-startup-")
    src = os.path.join(tmp, "hello.c")
    with open(src, "w") as f:
        f.write(HELLO)
    build = os.path.abspath(a.build)
    exe = {"wharf": os.path.join(tmp, "hello_wharf")}
    subprocess.run([os.path.join(build, "bin", "mpicc"), "-o", exe["wharf"], src], check=True)
    kinds = []
    if a.baseline:
        kinds.append(("wharf-baseline", os.path.abspath(a.baseline)))
    kinds += [("wharf", build), ("wharf-net", build)]
    for peer, cc in (("mpich", "mpicc.mpich"), ("openmpi", "mpicc.openmpi")):
        if shutil.which(cc):
            exe[peer] = os.path.join(tmp, "hello_" + peer)
            subprocess.run([cc, "-o", exe[peer], src], check=True)
            kinds.append((peer, None))

    def command(kind, bdir, n):
        env = dict(os.environ)
        if kind.startswith("wharf"):
            if kind == "wharf-baseline":
                env["LD_LIBRARY_PATH"] = os.path.join(bdir, "lib")  # before the hello's RUNPATH
            if kind == "wharf-net":
                env["WHARF_CHANNEL"] = "net"
            return [os.path.join(bdir, "bin", "wharfrun"), "-n", str(n), exe["wharf"]], env
        if kind == "mpich":
            return ["mpiexec.mpich", "-n", str(n), exe[kind]], env
        return ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", str(n), exe[kind]], env

    ranks = [int(x) for x in a.ranks.split(",")]
    res = {}
    for n in ranks:
        for _ in range(a.reps):
            for kind, bdir in kinds:
                cmd, env = command(kind, bdir, n)
                t = time.monotonic()
                p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if p.returncode == 0:
                    res.setdefault((kind, n), []).append(time.monotonic() - t)
    shutil.rmtree(tmp, ignore_errors=True)
    names = [k for k, _ in kinds]
    print("median wall time of the job, ms (%d repetitions, interleaved)" % a.reps)
    print("ranks " + " ".join("%15s" % k for k in names))
    for n in ranks:
        print("%5d " % n + " ".join("%15s" % ("%.1f" % (statistics.median(res[(k, n)]) * 1e3) if (k, n) in res
                                              else "failed") for k in names))


if __name__ == "__main__":
    main()
