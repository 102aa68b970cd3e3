#!/usr/bin/env python3
"""Run Message Passing Yorick (Debian package yorick-mpy-mpich2: the yorick interpreter built by
Debian against MPICH, linked with libmpich.so.12) unchanged on wharf's libmpich.so.12, natively or
in a container scenario, and check its parallel test suite.

    tests/external/yorick_mpy.py [--build build] [--scenario native] [-n 4] [--timeout 300]

mpy runs one interpreter per rank; rank 0 starts parallel tasks with mp_exec, which fans the
command text out along a tree of mp_send messages.  Its MPI use is point-to-point only
(MPI_Isend/Irecv, MPI_Probe/Iprobe, MPI_Testsome/Waitsome, MPI_Get_count, a duplicated
MPI_COMM_WORLD with MPI_ERRORS_RETURN, MPI_Abort for an error in batch mode).  The run takes
upstream's testmp.i (shipped in yorick-mpy-common: ring exchanges of every message type at every
distance, mp_handout/mp_handin, the mpool master/worker pool) and our own checks (mp_probe in
arrival order, mp_send to a list of ranks, a 720 KB mp_handout, mp_handin sum/min/max
reductions, an 8 MB ring exchange, vsave'd pointer messages), all in one -batch file.  Passes when
mpy exits 0, every check reports success, the script's end is reached and every rank prints
wharf's channel report.  Exit 77 (skip) without the package or the scenario.  First run
(2026-11-30): MPICH 2 ranks 1.8 s, 4 ranks 7.3 s; wharf native 1.5 / 3.2 s, pidpriv 2.8 / 2.6 s,
twohost 3.1 / 5.2 s.  docs/TESTING.md, "External suites".
"""
import gzip, os, re, shutil, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from extrun import SKIP, app_args, lab_for, reports_bad, run, rundir, verdict, wharf_opts  # noqa: E402

MPY = "/usr/lib/yorick/bin/mpy.mpich2"
TESTMP = "/usr/share/doc/yorick-mpy-common/examples/testmp.i.gz"

MINE = r"""/* wharf: extra mpy checks */
func mytest
{
  if (mp_exec()) { mp_exec, "mytest"; return; }
  oops = 0;
  if (mp_rank) {
    mp_send, 0, mp_rank*10 + indgen(5);
  } else {
    got = array(0, mp_size);
    for (k=1 ; k<mp_size ; ++k) {
      src = mp_probe(1)(1);
      m = mp_recv(src);
      if (anyof(m != src*10 + indgen(5))) oops |= 1;
      got(src+1) += 1;
    }
    if (anyof(got(2:) != 1)) oops |= 2;
  }
  if (!mp_rank) {
    if (mp_size > 1) {
      lst = indgen(mp_size-1);
      ptrs = array(pointer, mp_size-1);
      for (k=1 ; k<mp_size ; ++k) { tmp = double(k)*span(0,1,1000); ptrs(k) = &tmp; }
      mp_send, lst, ptrs;
      mp_send, lst, "same for all";
    }
  } else {
    x = mp_recv(0);
    s = mp_recv(0);
    if (numberof(x)!=1000 || anyof(x != double(mp_rank)*span(0,1,1000))) oops |= 4;
    if (s != "same for all") oops |= 8;
  }
  if (!mp_rank) { big = random(300,300); name = ["alpha","beta"]; }
  mp_handout, big, name;
  chk = mp_handin(sum(big));
  if (!mp_rank && abs(chk - mp_size*sum(big)) > 1e-6*abs(chk)) oops |= 16;
  if (numberof(name)!=2 || name(2)!="beta" || numberof(big)!=90000) oops |= 32;
  mn = mp_handin(mp_rank+3, min);
  mx = mp_handin([mp_rank, -mp_rank], max);
  sm = mp_handin(long(mp_rank));
  if (!mp_rank) {
    if (mn != 3) oops |= 64;
    if (anyof(mx != [mp_size-1, 0])) oops |= 128;
    if (sm != mp_size*(mp_size-1)/2) oops |= 256;
  }
  t = (mp_rank+1)%mp_size; f = (mp_rank-1+mp_size)%mp_size;
  z = double(mp_rank) + span(0,1,1000000);
  if (mp_rank & 1) { y = mp_recv(f); mp_send, t, z; }
  else { mp_send, t, z; y = mp_recv(f); }
  if (numberof(y)!=1000000 || anyof(y != double(f)+span(0,1,1000000))) oops |= 512;
  if (!mp_rank) {
    a1 = [1,2,3]; a2 = "ptr"; q = [&a1, &a2]; p = vsave(q);
    for (k=1;k<mp_size;++k) mp_send, k, p;
  } else {
    local q; restore, openb(mp_recv(0)), q;
    if (anyof(*q(1) != [1,2,3]) || *q(2) != "ptr") oops |= 1024;
  }
  nbad = mp_handin(long(oops!=0));
  if (oops) write, format="mytest rank %ld oops=%ld\n", mp_rank, oops;
  if (!mp_rank) write, format="mytest %s on %ld ranks (%ld bad)\n", (nbad?"FAILED":"passed"), mp_size, nbad;
}
"""

RUN = """mp_include, "{dir}/testmp.i";
mp_include, "{dir}/mine.i";
testmp;
for (r=1 ; r<mp_size ; ++r) testmp1, r;
for (r=1 ; r<mp_size ; ++r) testmp2, r;
testmp2, -1;
mytest;
mytest;
write, "ALL-DONE";
quit;
"""


def check(n, rc, out):
    """[problems] in mpy's output (empty: it passed)."""
    bad = [] if rc == 0 else [f"exit status {rc}"]
    want = {rf"testmp2 passed on all {n} ranks": n + 1, rf"testmp3 passed on all {n} ranks": 1,
            r"mpool.* finished \(v(pack|save)\) nerrors=0": 3, r"rank \d+ send/recv worked": 2 * (n - 1),
            rf"mytest passed on {n} ranks \(0 bad\)": 2, r"ALL-DONE": 1}
    for pat, count in want.items():
        got = len(re.findall(pat, out))
        if got != count:
            bad.append(f"{got} lines /{pat}/, expected {count}")
    if re.search(r"failed|FAILED|oops|ERROR", out):
        bad.append("a check reported failure")
    return bad + reports_bad(out, n)


def main():
    a = app_args(__doc__, "yorick_mpy", "ranks", 4)
    if not os.path.exists(TESTMP):
        print(f"SKIP: {TESTMP} missing (apt-get install yorick-mpy-common)")
        return SKIP
    lab_cm = lab_for(MPY, "yorick-mpy-mpich2", a.scenario)
    if not lab_cm:
        return SKIP
    build = os.path.abspath(a.build)
    work = rundir(build, a.work, "yorick_mpy", a.scenario)
    with gzip.open(TESTMP) as src, open(os.path.join(work, "testmp.i"), "wb") as dst:
        shutil.copyfileobj(src, dst)
    with open(os.path.join(work, "mine.i"), "w") as f:
        f.write(MINE)
    with open(os.path.join(work, "run.i"), "w") as f:
        f.write(RUN.format(dir=work))
    t0 = time.time()
    with lab_cm as lab:
        rc, out = run(lab, build, a.n, [MPY, "-batch", os.path.join(work, "run.i")],
                      wharf_opts(build, a.timeout), work, a.timeout)
    with open(os.path.join(work, "mpy.out"), "w") as f:
        f.write(out)
    return verdict(f"yorick_mpy {a.scenario} (-n {a.n})", check(a.n, rc, out), out, t0)


if __name__ == "__main__":
    sys.exit(main())
