#!/usr/bin/env python3
"""Run NWChem (Debian package nwchem-mpich: the computational chemistry application, built by Debian
against MPICH, with Global Arrays over ARMCI-MPI, i.e. MPI-3 one-sided communication) unchanged on
wharf's libmpich.so.12, natively or in a container scenario, and check the energies it computes.

    tests/external/nwchem.py [--build build] [--scenario native] [-n 4] [--timeout 600]

The input is a water molecule (6-31G basis): a restricted Hartree-Fock SCF energy, then a B3LYP
DFT energy.  Global Arrays keeps the Fock and density matrices distributed over the ranks in
one-sided windows (MPI_Win_allocate, lock_all/flush, MPI_Get/MPI_Put/MPI_Accumulate with strided
datatypes, MPI_Fetch_and_op for its shared counters) and the rest is collectives and
point-to-point.  The run passes when NWChem exits 0, prints both energies within 1e-6 hartree of
the reference (a serial run of the same binary on MPICH: SCF -75.984077653761, DFT
-76.384871404747) and wharf's channel report from every rank.  Exit 77 (skip) when the package is
not installed or the scenario cannot be built.  docs/TESTING.md, "External suites".
"""
import argparse, os, re, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from extrun import SKIP, Lab, log, reports, run, rundir, verdict, wharf_opts  # noqa: E402

NWCHEM = "/usr/bin/nwchem.mpich"
REFERENCE = {"SCF": -75.984077653761, "DFT": -76.384871404747}
TOLERANCE = 1e-6
INPUT = """start water
title "wharf external test: water, RHF then B3LYP"
permanent_dir {dir}
scratch_dir {dir}
geometry units angstroms noautosym
  O  0.000  0.000  0.117
  H  0.000  0.757 -0.467
  H  0.000 -0.757 -0.467
end
basis
  * library 6-31g
end
scf
  singlet
  rhf
end
task scf energy
dft
  xc b3lyp
end
task dft energy
"""


def check(n, rc, out):
    """[problems] in NWChem's output (empty: it passed)."""
    bad = [] if rc == 0 else [f"exit status {rc}"]
    for what, ref in REFERENCE.items():
        m = re.findall(rf"Total {what} energy =\s+(-?\d+\.\d+)", out)
        if not m:
            bad.append(f"no {what} energy")
        elif abs(float(m[-1]) - ref) > TOLERANCE:
            bad.append(f"{what} energy {m[-1]}, expected {ref} (+-{TOLERANCE})")
    if reports(out) != n:
        bad.append(f"{reports(out)} wharf channel reports for {n} ranks (not running on wharf?)")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="work directory (default BUILD/nwchem)")
    ap.add_argument("--scenario", default="native")
    ap.add_argument("-n", type=int, default=4, help="ranks")
    ap.add_argument("--timeout", type=int, default=600, help="seconds")
    a = ap.parse_args()
    if not os.access(NWCHEM, os.X_OK):
        log(f"SKIP: {NWCHEM} missing (apt-get install nwchem-mpich)")
        return SKIP
    build = os.path.abspath(a.build)
    lab_cm = Lab(a.scenario)
    if lab_cm.why:
        log(f"SKIP: {lab_cm.why}")
        return SKIP
    work = rundir(build, a.work, "nwchem", a.scenario)
    with open(os.path.join(work, "water.nw"), "w") as f:
        f.write(INPUT.format(dir=work))
    opts = wharf_opts(build, a.timeout, "OPENBLAS_NUM_THREADS=1")
    t0 = time.time()
    with lab_cm as lab:
        rc, out = run(lab, build, a.n, [NWCHEM, os.path.join(work, "water.nw")], opts, work, a.timeout)
    with open(os.path.join(work, "water.out"), "w") as f:
        f.write(out)
    bad = check(a.n, rc, out)
    energies = ", ".join(f"{w} {e}" for w, e in re.findall(r"Total (SCF|DFT) energy =\s+(-?\d+\.\d+)", out))
    return verdict(f"nwchem {a.scenario} (-n {a.n})", bad, out, t0, f"; {energies}")


if __name__ == "__main__":
    sys.exit(main())
