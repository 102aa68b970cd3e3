#!/usr/bin/env python3
"""Emulated hosts and containers with Linux namespaces (no Docker engine).

A Lab owns
  * a bridge br0 inside a network namespace of its own (no test address ever
    lands in the machine's namespace; addresses are 10.231.x.y),
  * a 'head' network namespace for the launcher (head_cmd),
  * hosts: own network, UTS, IPC, mount (private tmpfs on /dev/shm, own
    boot_id) and PID namespace,
  * containers on a host: own network (an address on the bridge) and UTS
    (hostname c1, c2, ...); the host's IPC, mount and PID namespaces joined or
    own ones (an own mount namespace is a copy of the host's, with the host's
    /dev/shm or a fresh one),
  * volumes: directories on a tmpfs mounted before any namespace, shared by
    the containers that attach them (hidden from the other containers),
  * an /etc/hosts inside the hosts and containers that also names them all.
Namespaces persist as bind mounts of /proc/PID/ns/* under /run/wharfns/<lab>/,
made by holder processes (`unshare ... sleep infinity`, killed with SIGKILL,
and dying with this process through PR_SET_PDEATHSIG).  The ssh-like agent
`AGENT TARGET COMMAND...` (TARGET: address or name of a host or container)
enters exactly the target's namespaces with nsenter and runs `sh -c COMMAND`
under nsguard.py, so killing the agent kills the command and its descendants.
The launcher and the agent stay in the machine's own mount namespace.

Everything is removed on exit, also when a test fails or is interrupted
(try/finally, atexit, SIGTERM/SIGHUP); labs of dead processes are swept first.

Command line: see `wharfns.py --help` and docs/SCENARIOS.md.
"""
import argparse
import atexit
import contextlib
import ctypes
import fcntl
import itertools
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GUARD = os.path.join(HERE, "nsguard.py")
RUN_ROOT = "/run/wharfns"          # one tmpfs, mounted once, private propagation
LOCK_FILE = "/run/lock/wharfns.lock"
PREFIX = "whns"                    # lab ids: whns<pid>x<k>
NS_TYPES = ("net", "uts", "ipc", "mnt", "pid")
NSENTER_OPT = {"net": "--net", "uts": "--uts", "ipc": "--ipc", "mnt": "--mount", "pid": "--pid"}
SCENARIOS = ("native", "shared", "pidpriv", "volume", "isolated", "twohost")
TOOLS = ("ip", "nsenter", "unshare", "setpriv", "mount", "umount")
CMD_TIMEOUT = 20                   # any single setup command
READY_TIMEOUT = 15                 # a holder getting its namespaces ready

MS_BIND = 4096
MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


class LabError(RuntimeError):
    pass


def sh(*args, check=True, timeout=CMD_TIMEOUT, **kw):
    """Run a command, capture its output, raise LabError if it fails."""
    try:
        r = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        raise LabError(f"timed out after {timeout}s: {' '.join(args)}") from e
    if check and r.returncode:
        raise LabError(f"failed ({r.returncode}): {' '.join(args)}: {r.stderr.strip()}")
    return r


def _mount_bind(src, dst):
    if _libc.mount(src.encode(), dst.encode(), None, MS_BIND, None) != 0:
        e = ctypes.get_errno()
        raise LabError(f"bind mount {src} on {dst}: {os.strerror(e)}")


def _umount(path):
    return _libc.umount2(path.encode(), MNT_DETACH) == 0


def _mounts_under(prefix):
    """Mount points at or below prefix in our mount namespace, deepest first."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
            if mp == prefix or mp.startswith(prefix.rstrip("/") + "/"):
                out.append(mp)
    return sorted(out, key=len, reverse=True)


def _starttime(pid):
    """Start time of a process (clock ticks since boot), None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _is_alive(pid, start):
    return start is not None and _starttime(pid) == start


def _kill_process(pid, start):
    if _is_alive(pid, start):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@contextlib.contextmanager
def _lock():
    os.makedirs(os.path.dirname(LOCK_FILE), exist_ok=True)
    with open(LOCK_FILE, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _ensure_run_root():
    """/run/wharfns: a private tmpfs, so ns files can be bind-mounted in it and
    files under it stay visible in every namespace created afterwards.  Call
    with the lock held."""
    if RUN_ROOT in _mounts_under(RUN_ROOT):
        return
    os.makedirs(RUN_ROOT, exist_ok=True)
    sh("mount", "-t", "tmpfs", "-o", "mode=755", "wharfns", RUN_ROOT)
    sh("mount", "--make-private", RUN_ROOT)


def _release_run_root():
    """Unmount /run/wharfns when no lab is left.  Call with the lock held."""
    try:
        if os.listdir(RUN_ROOT):
            return
    except OSError:
        return
    if _umount(RUN_ROOT):
        with contextlib.suppress(OSError):
            os.rmdir(RUN_ROOT)


def _destroy_dir(path):
    """Kill a lab's holders, unmount its namespace files, remove its directory."""
    try:
        with open(os.path.join(path, "holders")) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
                    _kill_process(int(parts[0]), int(parts[1]))
    except OSError:
        pass
    for mp in _mounts_under(path):
        _umount(mp)
    shutil.rmtree(path, ignore_errors=True)


def _python():
    """An interpreter for nsguard.py: the system one starts fastest."""
    for p in ("/usr/bin/python3", os.path.realpath(sys.executable)):
        if os.access(p, os.X_OK):
            return p
    return "python3"


def can_run():
    """(ok, reason): namespaces need root, util-linux and iproute2."""
    if os.geteuid() != 0:
        return False, "needs root"
    for tool in TOOLS:
        if not shutil.which(tool):
            return False, f"{tool} not installed (packages iproute2, util-linux)"
    if not os.path.exists(GUARD):
        return False, f"{GUARD} missing"
    try:
        r = subprocess.run(["unshare", "--net", "--uts", "--ipc", "--mount", "--pid", "--fork", "--mount-proc",
                            "true"], stderr=subprocess.PIPE, text=True, timeout=CMD_TIMEOUT)
    except subprocess.TimeoutExpired:
        return False, "unshare timed out"
    if r.returncode:
        return False, "cannot create namespaces: " + r.stderr.strip()
    return True, ""


def sweep_stale(verbose=False):
    """Remove what labs of dead processes left behind; returns their names."""
    removed = []
    if os.path.isdir(RUN_ROOT):
        with _lock():
            try:  # another lab may have released the root before we got the lock
                names = sorted(os.listdir(RUN_ROOT))
            except FileNotFoundError:
                names = []
            for name in names:
                path = os.path.join(RUN_ROOT, name)
                try:
                    with open(os.path.join(path, "owner")) as f:
                        pid, start = (int(x) for x in f.read().split()[:2])
                    if _is_alive(pid, start):
                        continue
                except (OSError, ValueError):
                    try:  # no owner yet: a lab being created right now?
                        if time.time() - os.stat(path).st_mtime < 60:
                            continue
                    except OSError:
                        continue
                _destroy_dir(path)
                removed.append(name)
            if RUN_ROOT in _mounts_under(RUN_ROOT):
                _release_run_root()
    # network namespaces named by the first version of this file (ip netns)
    r = sh("ip", "netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(rf"{PREFIX}(\d+)x", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            sh("ip", "netns", "del", name, check=False)
            removed.append(name)
    if verbose:
        for n in removed:
            print(f"swept stale lab {n}")
    return removed


# ---- cleanup on exit and on signals ----

_active = []
_hooks_installed = False


def _close_all():
    for lab in list(_active):
        lab.close()


def _on_signal(sig, _frame):
    raise SystemExit(128 + sig)


def _install_hooks():
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    atexit.register(_close_all)
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(s) in (signal.SIG_DFL, None):
                signal.signal(s, _on_signal)


class Node:
    """A host, a container, or the head/bridge network namespaces."""

    def __init__(self, name, kind, addr=None, host=None, **cfg):
        self.name, self.kind, self.addr, self.host = name, kind, addr, host
        self.cfg = cfg
        self.ns = {}          # namespace type -> file the agent enters
        self.nsdir = None
        self.containers = []  # for hosts

    def __repr__(self):
        return f"<{self.kind} {self.name} {self.addr or ''}>"


class Lab:
    """Bridge + head namespace + emulated hosts and containers.

    with Lab() as lab:
        h = lab.add_host()                # -> '10.231.1.1' (a host, usable as agent target)
        c = lab.add_container(h)          # -> '10.231.1.11' (container c1 on that host)
        subprocess.run(lab.head_cmd([wharfrun, '--hosts', c, '--rsh', lab.agent, ...]))
    """

    _ids = itertools.count(1)

    def __init__(self, subnet="10.231", shm_size=None, boot_ids=True, build=None, scenario=None):
        if not re.fullmatch(r"\d{1,3}\.\d{1,3}", subnet):
            raise ValueError("subnet: two octets, like 10.231")
        self.subnet = subnet
        self.shm_size = shm_size      # size= of every private /dev/shm (default: tmpfs default)
        self.boot_ids = boot_ids      # each host shows its own /proc/sys/kernel/random/boot_id
        self._build = build
        self.scenario = scenario
        self.id = f"{PREFIX}{os.getpid()}x{next(Lab._ids)}"
        self.dir = os.path.join(RUN_ROOT, self.id)
        self.agent = os.path.join(self.dir, "agent")
        self.nodes = {}               # name -> Node
        self.hosts = {}               # host address -> Node
        self.containers = []          # container Nodes, in creation order
        self.volumes = {}             # name -> path
        self.targets = None           # scenario: the --hosts list (None: ranks local)
        self.env = {}                 # scenario: extra environment for wharfrun
        self.head_ip = None
        self._holders = []            # (Popen, starttime)
        self._veths = itertools.count(1)
        self._open = False
        self._own_mnt_containers = False

    # ---- lifetime ----

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def open(self):
        if self._open:
            return self
        ok, why = can_run()
        if not ok:
            raise LabError(f"namespaces unusable: {why}")
        sweep_stale()
        _install_hooks()
        with _lock():
            _ensure_run_root()
            os.mkdir(self.dir, 0o755)
            with open(os.path.join(self.dir, "owner"), "w") as f:
                f.write(f"{os.getpid()} {_starttime(os.getpid())}\n")
            for d in ("ns", "vol"):
                os.mkdir(os.path.join(self.dir, d))
        self._open = True
        _active.append(self)
        try:
            br = self._new_node("br", "bridge")
            self._spawn(br, [], ["--net"], ["ip link set lo up",
                                            "ip link add br0 type bridge",
                                            "ip link set br0 up"], ("net",))
            self.bridge_ns = br.ns["net"]
            head = self._new_node("head", "head", addr=f"{self.subnet}.0.1")
            self._spawn(head, [], ["--net"], ["ip link set lo up"], ("net",))
            self._attach(head)
            self.head_ns = head.ns["net"]
            self.head_ip = head.addr
            self._write_agent()
            if self._build:
                self._build(self)
        except BaseException:
            self.close()
            raise
        return self

    def close(self):
        """Tear everything down; safe to call twice."""
        if not self._open:
            return
        blocked = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
        try:
            for p, start in reversed(self._holders):
                _kill_process(p.pid, start)
            for p, _ in self._holders:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(timeout=10)
            self._holders = []
            with _lock():
                _destroy_dir(self.dir)
                _release_run_root()
            self._open = False
            if self in _active:
                _active.remove(self)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    # ---- building blocks ----

    def _new_node(self, name, kind, **kw):
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,30}", name) or name in self.nodes or name in ("ns", "vol"):
            raise ValueError(f"bad or duplicate name {name!r}")
        node = Node(name, kind, **kw)
        node.nsdir = os.path.join(self.dir, "ns", name)
        os.mkdir(node.nsdir)
        self.nodes[name] = node
        return node

    def _spawn(self, node, prefix, unshare_flags, script, own):
        """Start node's holder: [prefix...] unshare FLAGS sh -c SCRIPT; once it
        prints 'ready', bind its namespaces listed in own under node.nsdir."""
        text = " && ".join(script + ["echo ready", "exec sleep infinity </dev/null >/dev/null 2>&1"])
        argv = ["setpriv", "--pdeathsig", "KILL", "--"] + prefix + ["unshare"] + unshare_flags + \
               ["--", "sh", "-c", text]
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        start = _starttime(p.pid)
        self._holders.append((p, start))
        with open(os.path.join(self.dir, "holders"), "a") as f:
            f.write(f"{p.pid} {start} {node.name}\n")
        line = b""
        deadline = time.monotonic() + READY_TIMEOUT
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            r, _, _ = select.select([p.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                break
            chunk = os.read(p.stdout.fileno(), 64)
            if not chunk:
                break
            line += chunk
        if line.strip() != b"ready":
            _kill_process(p.pid, start)
            err = ""
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=5)
                err = p.stderr.read().decode(errors="replace").strip()
            raise LabError(f"{node.kind} {node.name}: namespaces not ready: {err or line.decode()}")
        p.stdout.close()
        p.stderr.close()
        for t in own:
            dst = os.path.join(node.nsdir, t)
            open(dst, "w").close()
            _mount_bind(f"/proc/{p.pid}/ns/{'pid_for_children' if t == 'pid' else t}", dst)
            node.ns[t] = dst

    def _ip(self, netfile, *args):
        sh("nsenter", f"--net={netfile}", "--", "ip", *args)

    def _attach(self, node):
        """A veth from the bridge to node's eth0 with node.addr/16."""
        veth = f"v{next(self._veths)}"
        self._ip(self.bridge_ns, "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                 "netns", node.ns["net"])
        self._ip(self.bridge_ns, "link", "set", veth, "master", "br0", "up")
        self._ip(node.ns["net"], "addr", "add", f"{node.addr}/16", "dev", "eth0")
        self._ip(node.ns["net"], "link", "set", "eth0", "up")

    def _hosts_file(self):
        """The /etc/hosts every host's mount namespace sees (bind-mounted, so
        copies of it too): the machine's plus the lab's names.  Rewritten in
        place (same inode) when nodes are added."""
        path = os.path.join(self.dir, "hosts")
        try:
            with open("/etc/hosts") as f:
                base = f.read()
        except OSError:
            base = ""
        lines = [f"{n.addr}\t{n.name}" for n in self.nodes.values() if n.kind in ("host", "container")]
        with open(path, "w") as f:
            f.write(base.rstrip("\n") + f"\n# wharfns lab {self.id}\n" + "\n".join(lines) + "\n")
        return path

    def _hostname_cmd(self, name):
        return f"echo {name} > /proc/sys/kernel/hostname"

    # ---- public API ----

    def add_volume(self, name="vol"):
        """A shared directory on tmpfs; attach it with add_container(volumes=[name]).
        Returns its path (the same inside every container that attaches it)."""
        if self._own_mnt_containers:
            raise LabError("add volumes before containers with their own mount namespace")
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,30}", name) or name in self.volumes:
            raise ValueError(f"bad or duplicate volume name {name!r}")
        path = os.path.join(self.dir, "vol", name)
        os.mkdir(path)
        os.chmod(path, 0o1777)
        self.volumes[name] = path
        return path

    def add_host(self, name=None):
        """A new emulated host: own network (an address on the bridge), UTS,
        IPC, mount (private /dev/shm) and PID namespace.  Returns its address,
        which the agent accepts as a target too."""
        n = len(self.hosts) + 1
        if n > 250:
            raise LabError("too many hosts")
        name = name or f"h{n}"
        host = self._new_node(name, "host", addr=f"{self.subnet}.{n}.1", index=n)
        script = [self._hostname_cmd(name)]
        size = f",size={self.shm_size}" if self.shm_size else ""
        script.append(f"mount -t tmpfs -o mode=1777{size} wharfns-shm /dev/shm")
        if self.boot_ids:
            bid = os.path.join(host.nsdir, "boot_id")
            with open(bid, "w") as f:
                f.write(str(uuid.uuid4()) + "\n")
            host.cfg["boot_id_file"] = bid
            script.append(f"mount --bind {bid} /proc/sys/kernel/random/boot_id")
        if os.path.isfile("/etc/hosts"):
            script.append(f"mount --bind {self._hosts_file()} /etc/hosts")
        script.append("ip link set lo up")
        self._spawn(host, [], ["--net", "--uts", "--ipc", "--mount", "--propagation", "private",
                               "--pid", "--fork", "--kill-child", "--mount-proc"], script, NS_TYPES)
        self._attach(host)
        self.hosts[host.addr] = host
        self._write_agent()
        self._hosts_file()
        return host.addr

    def add_container(self, host, name=None, ipc="host", mnt="host", shm="host", pid="host", volumes=()):
        """A container on host (address or name of a host): own network and
        hostname; ipc/pid: 'host' (join the host's namespace) or 'own'; mnt:
        'host' (join the host's mount namespace) or 'own' (a copy of it, with
        its own /proc when pid='own'); shm: 'host' (the host's /dev/shm) or
        'own' (a fresh tmpfs, needs mnt='own'); volumes: names to attach (the
        others are hidden when mnt='own').  Returns its address."""
        h = self.hosts.get(host) or self.nodes.get(host)
        if h is None or h.kind != "host":
            raise ValueError(f"unknown host {host!r}")
        for what, v in (("ipc", ipc), ("mnt", mnt), ("shm", shm), ("pid", pid)):
            if v not in ("host", "own"):
                raise ValueError(f"{what}: 'host' or 'own', not {v!r}")
        if mnt == "host" and (pid == "own" or shm == "own"):
            raise ValueError("pid='own' and shm='own' need mnt='own' (own /proc, own /dev/shm)")
        for v in volumes:
            if v not in self.volumes:
                raise ValueError(f"unknown volume {v!r}")
        k = len(h.containers) + 1
        if k > 240:
            raise LabError("too many containers on one host")
        name = name or f"c{len(self.containers) + 1}"
        c = self._new_node(name, "container", addr=f"{self.subnet}.{h.cfg['index']}.{10 + k}", host=h,
                           ipc=ipc, mnt=mnt, shm=shm, pid=pid, volumes=tuple(volumes))
        flags, own, prefix = ["--net", "--uts"], ["net", "uts"], []
        script = [self._hostname_cmd(name), "ip link set lo up"]
        if ipc == "own":
            flags.append("--ipc")
            own.append("ipc")
        if mnt == "own":
            self._own_mnt_containers = True
            prefix = ["nsenter", f"--mount={h.ns['mnt']}", "--"]
            flags += ["--mount", "--propagation", "private"]
            own.append("mnt")
            if pid == "own":
                flags += ["--pid", "--fork", "--kill-child", "--mount-proc"]
                own.append("pid")
                if "boot_id_file" in h.cfg:  # the fresh /proc lost the host's boot_id
                    script.append(f"mount --bind {h.cfg['boot_id_file']} /proc/sys/kernel/random/boot_id")
            if shm == "own":
                size = f",size={self.shm_size}" if self.shm_size else ""
                script.append(f"mount -t tmpfs -o mode=1777{size} wharfns-shm /dev/shm")
            for v, path in self.volumes.items():
                if v not in volumes:
                    script.append(f"mount -t tmpfs -o ro,size=4k,mode=555 wharfns-hidden {path}")
        self._spawn(c, prefix, flags, script, own)
        for t in NS_TYPES:
            c.ns.setdefault(t, h.ns[t])
        self._attach(c)
        h.containers.append(c)
        self.containers.append(c)
        self._write_agent()
        self._hosts_file()
        return c.addr

    def node(self, target):
        """The Node of a target (address or name)."""
        for n in self.nodes.values():
            if target in (n.addr, n.name) and n.kind in ("host", "container"):
                return n
        raise KeyError(target)

    def _write_agent(self):
        py = _python()
        lines = ["#!/bin/sh",
                 f"# wharfns agent of lab {self.id}, ssh-like: AGENT TARGET COMMAND...",
                 "# TARGET: address or name of a host or container of the lab.",
                 'if [ $# -lt 1 ]; then echo "usage: $0 TARGET COMMAND..." >&2; exit 255; fi',
                 't="$1"; shift; cmd="$*"',
                 'case "$t" in']
        for n in self.nodes.values():
            if n.kind not in ("host", "container"):
                continue
            opts = " ".join(f"{NSENTER_OPT[t]}={n.ns[t]}" for t in NS_TYPES)
            lines.append(f'  {n.addr}|{n.name}) ns="{opts}" ;;')
        lines += ['  *) echo "agent: unknown target \'$t\' (lab ' + self.id + ')" >&2; exit 255 ;;',
                  "esac",
                  f'exec nsenter $ns -- {py} -I -S {GUARD} "$PWD" "$cmd"']
        tmp = self.agent + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(tmp, 0o755)
        os.rename(tmp, self.agent)

    def head_cmd(self, argv):
        """argv wrapped to run in the launcher's (head) network namespace."""
        return ["nsenter", f"--net={self.head_ns}", "--"] + list(argv)

    def agent_cmd(self, target, command):
        return [self.agent, target, command]

    def run(self, target, command, timeout=30, **kw):
        """Run a shell command in a target through the agent; CompletedProcess (text)."""
        return subprocess.run(self.agent_cmd(target, command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=timeout, **kw)

    def wharfrun_cmd(self, wharfrun, n, argv, options=()):
        """(cmd, env) to launch argv with n ranks in this lab's scenario."""
        env = dict(os.environ, **self.env)
        if self.targets is None:
            return [wharfrun, "-n", str(n)] + list(options) + list(argv), env
        cmd = [wharfrun, "-n", str(n), "--hosts", ",".join(self.targets), "--rsh", self.agent] + \
            list(options) + list(argv)
        return self.head_cmd(cmd), env

    def describe(self):
        out = [f"lab {self.id} ({self.dir}), scenario {self.scenario or '-'}",
               f"  head (launcher) netns {self.head_ip}: {' '.join(self.head_cmd(['CMD...']))}",
               f"  agent: {self.agent} TARGET COMMAND..."]
        for h in self.hosts.values():
            out.append(f"  host {h.name} {h.addr}: own net uts ipc mnt(/dev/shm) pid")
            for c in h.containers:
                cf = c.cfg
                vol = f" volumes={','.join(cf['volumes'])}" if cf["volumes"] else ""
                out.append(f"    container {c.name} {c.addr}: ipc={cf['ipc']} mnt={cf['mnt']} shm={cf['shm']} "
                           f"pid={cf['pid']}{vol}")
        for v, p in self.volumes.items():
            out.append(f"  volume {v}: {p}")
        if self.targets is not None:
            out.append(f"  wharfrun --hosts {','.join(self.targets)} --rsh {self.agent}")
        if self.env:
            out.append("  env " + " ".join(f"{k}={v}" for k, v in self.env.items()))
        return "\n".join(out)


# ---- scenarios (docs/SCENARIOS.md; BRIEF.md "Deployment scenarios") ----

def _build_native(lab):
    lab.targets = None


def _build_shared(lab):
    h = lab.add_host("h1")
    lab.targets = [lab.add_container(h, f"c{i}") for i in (1, 2)]


def _build_pidpriv(lab):
    h = lab.add_host("h1")
    lab.targets = [lab.add_container(h, f"c{i}", mnt="own", pid="own") for i in (1, 2)]


def _build_volume(lab):
    v = lab.add_volume("vol")
    h = lab.add_host("h1")
    lab.targets = [lab.add_container(h, f"c{i}", ipc="own", mnt="own", shm="own", pid="own", volumes=["vol"])
                   for i in (1, 2)]
    lab.env = {"WHARF_NODE_DIR": v}


def _build_isolated(lab):
    h = lab.add_host("h1")
    lab.targets = [lab.add_container(h, f"c{i}", ipc="own", mnt="own", shm="own", pid="own") for i in (1, 2)]


def _build_twohost(lab):
    targets = []
    for hi in (1, 2):
        h = lab.add_host(f"h{hi}")
        targets += [lab.add_container(h, f"c{2 * hi - 2 + i}") for i in (1, 2)]
    lab.targets = targets


BUILDERS = {"native": _build_native, "shared": _build_shared, "pidpriv": _build_pidpriv,
            "volume": _build_volume, "isolated": _build_isolated, "twohost": _build_twohost}


def scenario(name, **lab_kw):
    """A Lab that builds scenario `name` when entered:
        with wharfns.scenario("shared") as lab:
            cmd, env = lab.wharfrun_cmd(wharfrun, 2, [prog])
    lab.targets is the --hosts list (None for native: ranks local), lab.env
    the extra environment (WHARF_NODE_DIR for volume)."""
    if name not in BUILDERS:
        raise ValueError(f"unknown scenario {name!r}; one of {', '.join(SCENARIOS)}")
    return Lab(build=BUILDERS[name], scenario=name, **lab_kw)


def open_scenario(name, **lab_kw):
    """Like scenario() but already built; call lab.close() (atexit does too)."""
    return scenario(name, **lab_kw).open()


# ---- command line ----

def _kill_group(p, grace=3):
    with contextlib.suppress(OSError):
        os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def cmd_run(a):
    wharfrun = os.path.abspath(a.wharfrun)
    prog = a.program
    if not prog:
        print("run: no PROGRAM given", file=sys.stderr)
        return 2
    if not os.access(wharfrun, os.X_OK):
        print(f"run: {wharfrun} not found (build first, or --wharfrun)", file=sys.stderr)
        return 2
    opts = ["--timeout", str(a.timeout)] + (["--tag-output"] if a.tag_output else [])
    if a.scenario == "native":  # the machine's own namespaces: no lab, no root needed
        return _run_wharfrun(a, [wharfrun, "-n", str(a.n)] + opts + prog, dict(os.environ), None)
    ok, why = can_run()
    if not ok:
        print(f"SKIP: {why}")
        return 77
    with scenario(a.scenario) as lab:
        cmd, env = lab.wharfrun_cmd(wharfrun, a.n, prog, opts)
        return _run_wharfrun(a, cmd, env, lab)


def _run_wharfrun(a, cmd, env, lab):
    if a.verbose:
        if lab:
            print(lab.describe(), file=sys.stderr)
        print("+ " + " ".join(cmd), file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    # own process group: a timeout can kill wharfrun and everything it started
    p = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        return p.wait(timeout=a.timeout + 30)
    except subprocess.TimeoutExpired:
        print(f"run: wharfrun still running after {a.timeout + 30}s, killed", file=sys.stderr)
        _kill_group(p)
        return 124
    finally:
        if p.poll() is None:
            _kill_group(p)


def cmd_up(a):
    ok, why = can_run()
    if not ok:
        print(f"SKIP: {why}")
        return 77
    with scenario(a.scenario) as lab:
        print(lab.describe())
        print(f"up for {a.seconds}s; Ctrl-C or SIGTERM to tear down", flush=True)
        try:
            time.sleep(a.seconds)
        except KeyboardInterrupt:
            pass
    print("torn down")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Emulated hosts/containers for wharf tests (Linux namespaces).")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="set up a scenario, run wharfrun in it, tear down; exit: wharfrun's")
    r.add_argument("scenario", choices=SCENARIOS)
    r.add_argument("-n", type=int, default=2, help="number of ranks (default 2)")
    r.add_argument("--wharfrun", default=os.path.join(ROOT, "build", "bin", "wharfrun"))
    r.add_argument("--timeout", type=int, default=120, help="wharfrun --timeout (seconds)")
    r.add_argument("--tag-output", action="store_true", help="pass --tag-output to wharfrun")
    r.add_argument("-v", "--verbose", action="store_true", help="describe the lab and the command")
    r.add_argument("program", nargs="*", help="-- PROGRAM ARGS...")
    s = sub.add_parser("selftest", help="check every scenario with shell commands (exit 77: cannot run)")
    s.add_argument("scenarios", nargs="*", help="default: all")
    s.add_argument("-v", "--verbose", action="store_true")
    u = sub.add_parser("up", help="set up a scenario and keep it until Ctrl-C (for poking by hand)")
    u.add_argument("scenario", choices=SCENARIOS)
    u.add_argument("--seconds", type=int, default=3600)
    sub.add_parser("sweep", help="remove leftovers of labs whose process died")
    sub.add_parser("check", help="can namespaces be used here?")
    argv = list(sys.argv[1:] if argv is None else argv)
    tail = []
    if argv and argv[0] == "run" and "--" in argv:  # run SCENARIO [OPTIONS] -- PROGRAM ARGS...
        i = argv.index("--")
        argv, tail = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)
    if a.cmd == "run":
        a.program = list(a.program) + tail
        return cmd_run(a)
    if a.cmd == "up":
        return cmd_up(a)
    if a.cmd == "sweep":
        if os.geteuid() != 0:
            print("sweep: needs root", file=sys.stderr)
            return 1
        n = sweep_stale(verbose=True)
        print(f"{len(n)} stale lab(s) removed")
        return 0
    if a.cmd == "check":
        ok, why = can_run()
        print("namespaces usable" if ok else f"namespaces unusable: {why}")
        return 0 if ok else 1
    if a.cmd == "selftest":
        for sc in a.scenarios:
            if sc not in SCENARIOS:
                ap.error(f"unknown scenario {sc}")
        sys.path.insert(0, HERE)
        import wharfns_selftest  # noqa: E402
        return wharfns_selftest.main(a.scenarios or list(SCENARIOS), a.verbose)
    return 2


if __name__ == "__main__":
    sys.modules.setdefault("wharfns", sys.modules["__main__"])  # one module for the selftest's import
    sys.exit(main())
