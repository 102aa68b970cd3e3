"""`wharfns.py selftest`: check every scenario with plain shell commands
through the agent (no MPI): hostnames, namespace sharing (IPC, mount, PID),
/dev/shm and SysV IPC sharing, the volume, boot_id, network connectivity
between containers and from the head namespace, exit status and cwd of agent
commands, that killing the agent kills the command, and that labs leave
nothing behind (also when their process is killed: the sweep).
Exit 0: all passed, 1: failures, 77: cannot run here (not root, no tools)."""
import os
import random
import re
import select
import signal
import subprocess
import sys
import time

import wharfns

# What two containers of a scenario share (BRIEF.md, "Deployment scenarios");
# twohost: pairs on one host like `shared`, pairs across hosts nothing.
SHARED_ALL = {"ipc": True, "mnt": True, "pid": True, "shm": True, "vol": False, "boot_id": True}
EXPECT = {
    "shared": SHARED_ALL,
    "pidpriv": {"ipc": True, "mnt": False, "pid": False, "shm": True, "vol": False, "boot_id": True},
    "volume": {"ipc": False, "mnt": False, "pid": False, "shm": False, "vol": True, "boot_id": True},
    "isolated": {"ipc": False, "mnt": False, "pid": False, "shm": False, "vol": False, "boot_id": True},
    "twohost": SHARED_ALL,
}
CROSS_HOST = {"ipc": False, "mnt": False, "pid": False, "shm": False, "vol": False, "boot_id": False}

INFO = ('for t in ipc mnt net pid uts; do echo "ns.$t=$(readlink /proc/self/ns/$t)"; done; '
        'echo "hostname=$(hostname)"; read p r < /proc/self/stat; echo "pid=$$"; echo "procpid=$p"; '
        'echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"; echo "pwd=$(pwd)"')

SERVER = r'''
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(16)
s.settimeout(20)
print("listening", flush=True)
for _ in range(int(sys.argv[3])):
    c, _ = s.accept()
    c.sendall(socket.gethostname().encode())
    c.close()
'''
CLIENT = ("import socket, sys; s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 5); "
          "s.settimeout(5); print(s.recv(100).decode())")
PORT = 7411


class Checker:
    def __init__(self, verbose):
        self.verbose = verbose
        self.failures = []
        self.count = 0
        self.section = ""

    def check(self, ok, what, detail=""):
        self.count += 1
        if not ok:
            self.failures.append(f"{self.section}: {what}" + (f" ({detail})" if detail else ""))
            print(f"  FAIL {what}" + (f": {detail}" if detail else ""), flush=True)
        elif self.verbose:
            print(f"  ok   {what}", flush=True)
        return ok


def parse(out):
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def run_local(command, cwd=None):
    return subprocess.run(["sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=30, cwd=cwd)


def sleeps_alive(marks):
    """Which `sleep MARK` processes exist (seen from the machine's PID namespace)."""
    found = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if len(argv) >= 2 and argv[0].endswith(b"sleep") and argv[1].decode(errors="replace") in marks:
            found.add(argv[1].decode())
    return found


def read_line(p, timeout):
    deadline = time.monotonic() + timeout
    buf = b""
    while not buf.endswith(b"\n") and time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        chunk = os.read(p.stdout.fileno(), 256)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace").strip()


def read_until(p, marker, timeout):
    """Read p.stdout until marker appears (or EOF, or timeout); all text read."""
    deadline = time.monotonic() + timeout
    buf = b""
    while marker.encode() not in buf and time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        chunk = os.read(p.stdout.fileno(), 4096)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace")


def kill_test(t, lab, target, mode):
    """Start a command with background, nested and detached (setsid)
    descendants; kill the agent (mode); nothing of it may survive."""
    base = random.randint(10 ** 6, 10 ** 7)
    marks = [str(base + i) for i in range(3)]
    cmd = (f"sleep {marks[0]} & sh -c 'sleep {marks[1]}' & setsid sleep {marks[2]} & "
           "echo started; wait")
    p = subprocess.Popen(lab.agent_cmd(target, cmd), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        line = read_line(p, 15)
        deadline = time.monotonic() + 10
        while sleeps_alive(marks) != set(marks) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not t.check(line == "started" and sleeps_alive(marks) == set(marks),
                       f"kill[{mode}] {target}: command started", f"got {line!r}, alive {sleeps_alive(marks)}"):
            return
        if mode == "SIGKILL agent":
            os.kill(p.pid, signal.SIGKILL)
        elif mode == "SIGTERM agent":
            os.kill(p.pid, signal.SIGTERM)
        else:
            os.killpg(p.pid, signal.SIGKILL)
        deadline = time.monotonic() + 3 * 2 + 4  # nsguard GRACE + margin
        while sleeps_alive(marks) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = sleeps_alive(marks)
        t.check(not left, f"kill[{mode}] {target}: no descendant survives", f"alive: sleep {' '.join(left)}")
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
        p.stdout.close()


def check_scenario(t, name):
    t.section = name
    print(f"== {name}", flush=True)
    if name == "native":
        with wharfns.scenario("native") as lab:
            cmd, _ = lab.wharfrun_cmd("wharfrun", 2, ["prog"])
            t.check(lab.targets is None and "--hosts" not in cmd and cmd[0] == "wharfrun",
                    "native: ranks local (no --hosts, machine's namespaces)", " ".join(cmd))
            d = lab.dir
        t.check(not os.path.exists(d), "lab directory removed")
        return

    mine = parse(run_local(INFO, cwd=wharfns.ROOT).stdout)
    probe_machine = f"/dev/shm/wharfns-probe.machine.{os.getpid()}"
    with wharfns.scenario(name) as lab:
        holders = [(p.pid, s) for p, s in lab._holders]
        labdir = lab.dir
        if t.verbose:
            print(lab.describe())
        cs = [lab.node(a) for a in lab.targets]
        t.check(len(cs) == (4 if name == "twohost" else 2), "containers built", str(cs))
        # --- identity and namespaces
        info = {}
        for c in cs:
            r = lab.run(c.addr, INFO, cwd=wharfns.ROOT)
            t.check(r.returncode == 0, f"{c.name}: agent runs a command", r.stderr.strip())
            info[c.name] = i = parse(r.stdout)
            t.check(i.get("hostname") == c.name, f"{c.name}: hostname is {c.name}", i.get("hostname"))
            t.check(i.get("pid") and i.get("pid") == i.get("procpid"), f"{c.name}: /proc shows its PID namespace",
                    f"$$={i.get('pid')} /proc/self={i.get('procpid')}")
            t.check(i.get("pwd") == wharfns.ROOT, f"{c.name}: agent keeps the cwd", i.get("pwd"))
            for ns in ("ipc", "mnt", "net", "pid", "uts"):
                t.check(i.get(f"ns.{ns}") and i[f"ns.{ns}"] != mine[f"ns.{ns}"],
                        f"{c.name}: {ns} namespace is not the machine's")
            with open(c.host.cfg["boot_id_file"]) as f:
                host_boot_id = f.read().strip()
            t.check(i.get("boot_id") == host_boot_id != mine["boot_id"], f"{c.name}: boot_id is its host's",
                    f"{i.get('boot_id')} vs {host_boot_id}")
        t.check(len({info[c.name]["hostname"] for c in cs}) == len(cs), "hostnames differ")
        # --- /dev/shm, SysV IPC, volume
        with open(probe_machine, "w"):
            pass
        vol = lab.volumes.get("vol")
        sysv = {}
        try:
            for c in cs:
                # SysV ids restart in every IPC namespace: compare the (random) keys
                cmd = (f"touch /dev/shm/wharfns-probe.{c.name} && id=$(ipcmk -M 4096 | awk '{{print $NF}}') && "
                       "echo id=$id && ipcs -m | awk -v id=$id '$2 == id {print \"key=\" $1}'")
                if vol:
                    cmd += f" && touch {vol}/probe.{c.name}"
                r = lab.run(c.addr, cmd)
                t.check(r.returncode == 0, f"{c.name}: write probes", r.stderr.strip())
                kv = parse(r.stdout)
                sysv[c.name] = (kv.get("id"), kv.get("key"))
                t.check(kv.get("key", "").startswith("0x"), f"{c.name}: SysV segment made", r.stdout)
            seen = {}
            for c in cs:
                r = lab.run(c.addr, "ls -a /dev/shm; echo ==; ipcs -m | awk '{print $1}'; echo ==; "
                                    + (f"ls -a {vol}" if vol else "true"))
                parts = r.stdout.split("==\n")
                seen[c.name] = [set(p.split()) for p in parts] + [set()] * (3 - len(parts))
                t.check("wharfns-probe.machine." + str(os.getpid()) not in seen[c.name][0],
                        f"{c.name}: does not see the machine's /dev/shm")
            for a in cs:
                for b in cs:
                    if a is b:
                        continue
                    exp = EXPECT[name] if a.host is b.host else CROSS_HOST
                    ia, ib = info[a.name], info[b.name]
                    for ns in ("ipc", "mnt", "pid"):
                        t.check((ia[f"ns.{ns}"] == ib[f"ns.{ns}"]) == exp[ns],
                                f"{a.name}/{b.name}: {ns} namespace {'shared' if exp[ns] else 'private'}")
                    for ns in ("net", "uts"):
                        t.check(ia[f"ns.{ns}"] != ib[f"ns.{ns}"], f"{a.name}/{b.name}: {ns} namespace private")
                    t.check((ia["boot_id"] == ib["boot_id"]) == exp["boot_id"],
                            f"{a.name}/{b.name}: boot_id {'same' if exp['boot_id'] else 'differs'}")
                    t.check((f"wharfns-probe.{a.name}" in seen[b.name][0]) == exp["shm"],
                            f"{b.name} {'sees' if exp['shm'] else 'does not see'} {a.name}'s /dev/shm file")
                    t.check((sysv[a.name][1] in seen[b.name][1]) == exp["ipc"],
                            f"{b.name} {'sees' if exp['ipc'] else 'does not see'} {a.name}'s SysV segment")
                    if vol:
                        t.check((f"probe.{a.name}" in seen[b.name][2]) == exp["vol"],
                                f"{b.name} {'sees' if exp['vol'] else 'does not see'} {a.name}'s volume file")
            if vol:
                t.check(lab.env.get("WHARF_NODE_DIR") == vol, "volume exported as WHARF_NODE_DIR", str(lab.env))
        finally:
            os.unlink(probe_machine)
            for c in cs:
                cmd = f"rm -f /dev/shm/wharfns-probe.{c.name}"
                if sysv.get(c.name, (None,))[0]:
                    cmd += f"; ipcrm -m {sysv[c.name][0]}"
                lab.run(c.addr, cmd)
        # --- network: every container serves its hostname; all others and the head connect
        servers = []
        try:
            for c in cs:
                p = subprocess.Popen(lab.agent_cmd(c.addr, f"exec python3 -c '{SERVER}' {c.addr} {PORT} {len(cs)}"),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
                servers.append(p)
                t.check(read_line(p, 15) == "listening", f"{c.name}: TCP server listening on {c.addr}:{PORT}")
            for c in cs:
                for other in cs:
                    if other is c:
                        continue
                    r = lab.run(other.addr, f"python3 -c '{CLIENT}' {c.addr} {PORT}")
                    t.check(r.stdout.strip() == c.name, f"{other.name} -> {c.name} TCP",
                            (r.stdout + r.stderr).strip()[-200:])
                r = subprocess.run(lab.head_cmd([sys.executable, "-c", CLIENT, c.addr, str(PORT)]),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
                t.check(r.stdout.strip() == c.name, f"head -> {c.name} TCP", (r.stdout + r.stderr).strip()[-200:])
            for p in servers:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
                t.check(p.returncode == 0, "TCP server served everyone", p.stderr.read().decode()[-200:])
        finally:
            for p in servers:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
                p.stdout.close()
                p.stderr.close()
        r = subprocess.run(lab.head_cmd(["sh", "-c", "ip -o -4 addr show | awk '{print $4}'"]),
                           stdout=subprocess.PIPE, text=True, timeout=30)
        t.check(f"{lab.head_ip}/16" in r.stdout.split(), "head namespace has the head address", r.stdout)
        r = run_local("ip -o -4 addr show")
        t.check(f"{lab.subnet}." not in r.stdout, "no lab address in the machine's network namespace")
        # --- agent behaves like ssh
        c = cs[0]
        r = lab.run(c.addr, "exit 7")
        t.check(r.returncode == 7, "agent returns the command's exit status", str(r.returncode))
        r = subprocess.run([lab.agent, c.name, "echo", "a", "'b  c'"], stdout=subprocess.PIPE, text=True,
                           timeout=30)
        t.check(r.stdout == "a b  c\n", "agent joins its arguments and runs them with sh -c", repr(r.stdout))
        r = lab.run("10.231.250.250", "true")
        t.check(r.returncode == 255 and "unknown target" in r.stderr, "agent refuses an unknown target")
        other = cs[1]
        r = lab.run(c.addr, f"getent hosts {other.name}")
        t.check(r.stdout.split()[:1] == [other.addr], "container names resolve inside the lab",
                (r.stdout + r.stderr).strip())
        r = lab.run(c.host.addr, "hostname")
        t.check(r.returncode == 0 and r.stdout.strip() == c.host.name, "a host is an agent target too",
                r.stdout.strip())
        # --- killing the agent kills the command (per distinct container configuration)
        kinds = {}
        for c in cs:
            kinds.setdefault(tuple(sorted(c.cfg.items())), c)
        for c in kinds.values():
            for mode in ("SIGKILL agent", "SIGTERM agent", "SIGKILL group"):
                kill_test(t, lab, c.addr, mode)
    # --- nothing left behind
    t.check(not os.path.exists(labdir), "lab directory removed")
    t.check(not wharfns._mounts_under(labdir), "no mount left", str(wharfns._mounts_under(labdir)))
    t.check(not [p for p, s in holders if wharfns._is_alive(p, s)], "no holder process left")


def check_volumes_and_options(t):
    """Volume visibility by attachment, mixed options, API misuse."""
    t.section = "options"
    print("== volumes and container options", flush=True)
    with wharfns.Lab() as lab:
        v = lab.add_volume("data")
        h = lab.add_host()
        a = lab.add_container(h, "va", mnt="own", shm="own", volumes=["data"])
        b = lab.add_container(h, "vb", mnt="own", pid="own")          # volume hidden, host's /dev/shm
        c = lab.add_container(h, "vc")                                 # joins the host's mount namespace
        try:
            lab.add_volume("late")
            t.check(False, "add_volume after a container with its own mount namespace is refused")
        except wharfns.LabError:
            t.check(True, "add_volume after a container with its own mount namespace is refused")
        for bad in ({"pid": "own"}, {"shm": "own"}, {"ipc": "maybe"}, {"volumes": ["nope"]}):
            try:
                lab.add_container(h, **bad)
                t.check(False, f"add_container({bad}) is refused")
            except ValueError:
                t.check(True, f"add_container({bad}) is refused")
        r = lab.run(a, f"touch {v}/from-va /dev/shm/from-va && ls {v}")
        t.check(r.returncode == 0 and "from-va" in r.stdout, "attached volume is writable", r.stderr.strip())
        r = lab.run(b, f"ls -A {v}; touch {v}/x 2>/dev/null && echo writable")
        t.check(r.stdout.strip() == "", "unattached volume is hidden (empty, read-only)", r.stdout.strip())
        r = lab.run(c, f"ls {v}")
        t.check("from-va" in r.stdout, "a container in the host's mount namespace sees the host's volumes")
        t.check(os.path.exists(os.path.join(v, "from-va")), "the volume is a directory of the machine")
        r = lab.run(b, "touch /dev/shm/from-vb; ls /dev/shm")
        t.check("from-va" not in r.stdout, "shm='own' is not the host's /dev/shm")
        r = lab.run(c, "ls /dev/shm")
        t.check("from-vb" in r.stdout and "from-va" not in r.stdout, "shm='host' is the host's /dev/shm",
                r.stdout.strip())
        r = lab.run(h, "ls /dev/shm")
        t.check("from-vb" in r.stdout, "the host sees its /dev/shm")


def check_cleanup_on_death(t):
    """A lab whose process gets SIGTERM or SIGINT cleans up; one whose process
    gets SIGKILL loses its holders at once (PDEATHSIG) and is swept later."""
    t.section = "cleanup"
    print("== cleanup of interrupted and killed labs", flush=True)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGKILL):
        p = subprocess.Popen([sys.executable, os.path.join(wharfns.HERE, "wharfns.py"), "up", "shared",
                              "--seconds", "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        try:
            labdir, holders = None, []
            text = read_until(p, "\nup for ", 30)
            m = re.search(r"^lab (\S+) \((\S+)\)", text, re.M)
            if m and "\nup for " in text:
                labdir = m.group(2)
            if not t.check(labdir and os.path.isdir(labdir), f"{sig.name}: lab came up", labdir or ""):
                continue
            with open(os.path.join(labdir, "holders")) as f:
                holders = [tuple(int(x) for x in ln.split()[:2]) for ln in f]
            os.kill(p.pid, sig)
            p.wait(timeout=30)
            deadline = time.monotonic() + 10
            while [h for h in holders if wharfns._is_alive(*h)] and time.monotonic() < deadline:
                time.sleep(0.05)
            t.check(not [h for h in holders if wharfns._is_alive(*h)], f"{sig.name}: holder processes gone")
            if sig != signal.SIGKILL:
                t.check(not os.path.exists(labdir), f"{sig.name}: the lab cleaned up after itself")
            else:
                removed = wharfns.sweep_stale()
                t.check(not os.path.exists(labdir), "SIGKILL: the sweep removes the dead lab", str(removed))
            t.check(not wharfns._mounts_under(labdir), f"{sig.name}: no mount left")
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
            p.stdout.close()
            p.stderr.close()


def main(scenarios, verbose=False):
    ok, why = wharfns.can_run()
    if not ok:
        print(f"SKIP: {why}")
        return 77
    wharfns.sweep_stale(verbose=True)
    t = Checker(verbose)
    start = time.monotonic()
    for name in scenarios:
        try:
            t0 = time.monotonic()
            check_scenario(t, name)
            print(f"   ({time.monotonic() - t0:.1f}s)", flush=True)
        except Exception as e:  # a broken scenario must not hide the others
            t.section = name
            t.check(False, "scenario ran to the end", f"{type(e).__name__}: {e}")
    for extra in (check_volumes_and_options, check_cleanup_on_death):
        try:
            t0 = time.monotonic()
            extra(t)
            print(f"   ({time.monotonic() - t0:.1f}s)", flush=True)
        except Exception as e:
            t.check(False, f"{extra.__name__} ran to the end", f"{type(e).__name__}: {e}")
    print(f"{t.count - len(t.failures)}/{t.count} checks passed in {time.monotonic() - start:.1f}s")
    for f in t.failures:
        print(f"FAILED: {f}")
    return 1 if t.failures else 0
