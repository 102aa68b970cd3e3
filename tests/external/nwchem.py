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
import os, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extrun import SKIP, app_args, lab_for, reports_bad, run, rundir, verdict, wharf_opts  # noqa: E402

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
    return bad + reports_bad(out, n)


def main():
    a = app_args(__doc__, "nwchem", "ranks", 4)
    lab_cm = lab_for(NWCHEM, "nwchem-mpich", a.scenario)
    if not lab_cm:
        return SKIP
    build = os.path.abspath(a.build)
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
