"""Emulated hosts and containers with Linux namespaces (no Docker engine).

A Lab owns a private bridge (inside a network namespace of its own, so no test
address lands in the machine's namespace), a 'head' namespace for the launcher,
and any number of hosts, each a network namespace with one veth on the bridge.
The ssh-like agent `agent` runs a command inside the namespace of a host,
called as `AGENT HOST COMMAND...` like ssh.  Everything is removed on exit,
also when the test fails; stale labs of dead processes are swept first.
"""
import os
import subprocess
import sys
import tempfile

PREFIX = "whns"


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def can_run():
    """(ok, reason): namespaces need root and iproute2/nsenter."""
    if os.geteuid() != 0:
        return False, "needs root"
    for tool in ("ip", "nsenter"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], stdout=subprocess.DEVNULL).returncode:
            return False, f"{tool} not installed"
    r = subprocess.run(["ip", "netns", "add", f"{PREFIX}probe{os.getpid()}"], stderr=subprocess.PIPE, text=True)
    if r.returncode:
        return False, "cannot create network namespaces: " + r.stderr.strip()
    subprocess.run(["ip", "netns", "del", f"{PREFIX}probe{os.getpid()}"])
    return True, ""


def sweep_stale():
    r = sh("ip", "netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        if not name.startswith(PREFIX) or "x" not in name:
            continue
        pid = name[len(PREFIX):].split("x")[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            sh("ip", "netns", "del", name, check=False)


class Lab:
    def __init__(self, subnet="10.231"):
        self.tag = f"{PREFIX}{os.getpid()}x"
        self.subnet = subnet
        self.netns = []
        self.hosts = {}  # host address -> netns name
        self.tmp = tempfile.mkdtemp(prefix="wharfns.")
        self.agent = os.path.join(self.tmp, "agent")
        self.head_ip = None
        self.nhost = 0

    def __enter__(self):
        sweep_stale()
        try:
            self.bridge_ns = self._ns("br")
            sh("ip", "-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
            sh("ip", "-n", self.bridge_ns, "link", "set", "br0", "up")
            sh("ip", "-n", self.bridge_ns, "link", "set", "lo", "up")
            self.head_ns = self._ns("head")
            self.head_ip = self._attach(self.head_ns, 1)
            self._write_agent()
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def _ns(self, what):
        name = f"{self.tag}{what}"
        sh("ip", "netns", "add", name)
        self.netns.append(name)
        sh("ip", "-n", name, "link", "set", "lo", "up")
        return name

    def _attach(self, ns, idx):
        ip = f"{self.subnet}.0.{idx}"
        a, b = f"wv{os.getpid() % 10000}a{idx}", f"wv{os.getpid() % 10000}b{idx}"
        sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", a, "netns", ns)
        sh("ip", "link", "set", b, "netns", self.bridge_ns)
        sh("ip", "-n", ns, "link", "set", a, "name", "eth0")
        sh("ip", "-n", ns, "addr", "add", f"{ip}/16", "dev", "eth0")
        sh("ip", "-n", ns, "link", "set", "eth0", "up")
        sh("ip", "-n", self.bridge_ns, "link", "set", b, "master", "br0")
        sh("ip", "-n", self.bridge_ns, "link", "set", b, "up")
        return ip

    def add_host(self):
        """A new emulated host (own network namespace); returns its address."""
        self.nhost += 1
        ns = self._ns(f"h{self.nhost}")
        ip = self._attach(ns, 10 + self.nhost)
        self.hosts[ip] = ns
        self._write_agent()
        return ip

    def _write_agent(self):
        lines = ["#!/bin/sh", "# ssh-like agent into the lab's namespaces: AGENT HOST COMMAND...",
                 'h="$1"; shift', 'case "$h" in']
        for ip, ns in self.hosts.items():
            lines.append(f'  {ip}) ns={ns} ;;')
        lines += ['  *) echo "agent: unknown host $h" >&2; exit 255 ;;', "esac",
                  'exec nsenter --net=/run/netns/$ns -- sh -c "$*"']
        with open(self.agent, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(self.agent, 0o755)

    def head_cmd(self, argv):
        """argv wrapped to run in the launcher's (head) namespace."""
        return ["nsenter", f"--net=/run/netns/{self.head_ns}", "--"] + list(argv)

    def __exit__(self, *exc):
        for ns in reversed(self.netns):
            sh("ip", "netns", "del", ns, check=False)
        self.netns = []
        subprocess.run(["rm", "-rf", self.tmp])
        return False


if __name__ == "__main__":
    ok, why = can_run()
    print("namespaces usable" if ok else f"namespaces unusable: {why}")
    sys.exit(0 if ok else 1)
