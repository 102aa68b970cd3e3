#!/usr/bin/env python3
"""Test harness of the remote GPUs (docs/RGPU.md).

Starts wharf-gpud servers on the emulated driver (each with its own GPUs of
the emulator's topology) and runs a client program with the rgpu client
driver pointed at them; tears everything down, whatever happens.

  rgpu_harness.py --build B [--ns] [--server 0,1 --server 2,3] run -- PROG ARGS
      the client program against the servers; its exit code
  rgpu_harness.py --build B [--ns] same -- PROG ARGS
      the program on the emulator directly (all GPUs of the servers) and
      through the servers: both must succeed and print the same "result" lines
  rgpu_harness.py --build B [--ns] hostile
      unauthenticated and malformed clients, a client naming another's
      memory and handles, a killed client (its session and memory freed)
  rgpu_harness.py --build B [--ns] killserver -- PROG ARGS
      kills the second server while PROG copies: PROG must end with a clean
      CUDA error, never hang

--ns: every server in its own network namespace and the client in a third,
joined by a bridge in a fourth (needs root and iproute2; exit 77 otherwise).
Every wait is bounded; the whole run has a deadline (--deadline, s)."""
import argparse
import hashlib
import hmac
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

SECRET = b"rgpu-test-secret-" + os.urandom(8).hex().encode()
RG_MAGIC, RG_VERSION = 0x55504752, 2
OP = {"hello": 1, "ping": 2, "primary_retain": 3, "mem_alloc": 8, "mem_free": 9, "htod": 11, "dtoh": 12,
      "stream_sync": 17, "event_query": 23, "mod_func": 28, "launch": 29, "peer_recv": 30, "fabric": 32}
CUDA_SUCCESS, INVALID_VALUE, INVALID_CONTEXT, INVALID_HANDLE, NOT_SUPPORTED = 0, 1, 201, 400, 801


def log(*a):
    print("rgpu_harness:", *a, flush=True)


class Lab:
    """servers (optionally in namespaces) and a place to run clients"""

    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.tmp = tempfile.mkdtemp(prefix="rgpu-test-")
        self.secret = os.path.join(self.tmp, "secret")
        fd = os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, SECRET + b"\n")
        os.close(fd)
        self.procs, self.ns, self.addrs = [], [], []
        self.tag = f"rgpu{os.getpid()}"
        self.emu_env = {"LD_LIBRARY_PATH": os.path.join(self.build, "cudaemu"),
                        "CUDAEMU_TOPOLOGY": os.path.join(self.src, "tests/cudaemu/topo4.txt")}

    # ---- namespaces ----
    def ip(self, *a, ns=None, check=True):
        cmd = (["ip", "netns", "exec", ns] if ns else []) + ["ip"] + list(a)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        if check and r.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")

    def make_ns(self, n):
        sw = f"{self.tag}sw"
        self.ip("netns", "add", sw)
        self.ns.append(sw)
        self.ip("link", "add", "br0", "type", "bridge", ns=sw)
        self.ip("link", "set", "br0", "up", ns=sw)
        names = ["c"] + [f"s{i}" for i in range(1, n + 1)]
        for k, nm in enumerate(names):
            ns = f"{self.tag}{nm}"
            self.ip("netns", "add", ns)
            self.ns.append(ns)
            hv, pv = f"{self.tag[-6:]}{nm}h", f"{self.tag[-6:]}{nm}p"
            self.ip("link", "add", hv, "type", "veth", "peer", "name", pv)
            self.ip("link", "set", hv, "netns", sw)
            self.ip("link", "set", pv, "netns", ns)
            self.ip("link", "set", hv, "master", "br0", ns=sw)
            self.ip("link", "set", hv, "up", ns=sw)
            self.ip("link", "set", pv, "name", "eth0", ns=ns)
            self.ip("addr", "add", f"10.77.0.{10 + k}/24", "dev", "eth0", ns=ns)
            self.ip("link", "set", "eth0", "up", ns=ns)
            self.ip("link", "set", "lo", "up", ns=ns)

    def wrap(self, cmd, who):
        """the command run in namespace `who` ("c", "s1", ...) when --ns"""
        if not self.args.ns:
            return cmd
        return ["ip", "netns", "exec", f"{self.tag}{who}"] + cmd

    def addr(self, who):
        if not self.args.ns:
            return "127.0.0.1"
        names = ["c"] + [f"s{i}" for i in range(1, 10)]
        return f"10.77.0.{10 + names.index(who)}"

    # ---- servers ----
    def start_servers(self, gpu_sets, extra=()):
        if self.args.ns:
            self.make_ns(len(gpu_sets))
        for i, gpus in enumerate(gpu_sets, 1):
            pf = os.path.join(self.tmp, f"s{i}.port")
            logf = open(os.path.join(self.tmp, f"s{i}.log"), "w")
            env = dict(os.environ, **self.emu_env, CUDAEMU_VISIBLE=gpus)
            env.pop("WHARF_RGPU_SECRET", None)
            cmd = self.wrap([os.path.join(self.build, "bin/wharf-gpud"), "--listen", f"{self.addr(f's{i}')}:0",
                             "--secret-file", self.secret, "--port-file", pf, "--timeout", "5", "-v"] + list(extra),
                            f"s{i}")
            p = subprocess.Popen(cmd, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
            self.procs.append(p)
            for _ in range(200):
                if os.path.exists(pf) or p.poll() is not None:
                    break
                time.sleep(0.05)
            if not os.path.exists(pf):
                raise RuntimeError(f"server {i} did not start: {self.server_log(i)}")
            self.addrs.append(f"{self.addr(f's{i}')}:{int(open(pf).read())}")

    def server_log(self, i):
        try:
            return open(os.path.join(self.tmp, f"s{i}.log")).read()
        except OSError:
            return ""

    def client_env(self, servers=None):
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(self.build, "lib/rgpu"),
                   WHARF_RGPU_SERVERS=",".join(servers if servers is not None else self.addrs),
                   WHARF_RGPU_SECRET_FILE=self.secret, WHARF_RGPU_TIMEOUT="20",
                   WHARF_RGPU_TRANSPORT=self.args.transport)
        if self.args.provider:
            env["WHARF_RGPU_PROVIDER"] = self.args.provider
        for k in ("CUDAEMU_TOPOLOGY", "CUDAEMU_VISIBLE", "WHARF_RGPU_SECRET"):
            env.pop(k, None)
        if self.args.config:
            cf = os.path.join(self.tmp, "servers.conf")
            with open(cf, "w") as f:
                f.write("# rgpu servers\n" + "".join(f"{a}   # server\n" for a in env.pop("WHARF_RGPU_SERVERS").split(",")))
            env["WHARF_RGPU_CONFIG"] = cf
        return env

    def run_client(self, cmd, timeout, env=None):
        return subprocess.run(self.wrap(cmd, "c"), env=env or self.client_env(), capture_output=True, text=True,
                              timeout=timeout)

    def close_servers(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=5)
        for ns in reversed(self.ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        shutil.rmtree(self.tmp, ignore_errors=True)


# ---- a protocol client in Python, for the hostile tests ----
class Raw:
    def __init__(self, lab, addr, auth=True, key=SECRET):
        host, port = addr.rsplit(":", 1)
        self.lab = lab
        self.seq = 0
        if lab.args.ns:  # a helper process in the client namespace relays the TCP stream
            self.relay = subprocess.Popen(lab.wrap([sys.executable, "-c", RELAY, host, port], "c"),
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
            self.rf, self.wf = self.relay.stdout, self.relay.stdin
        else:
            self.relay = None
            self.s = socket.create_connection((host, int(port)), timeout=10)
        if auth:
            self.auth(key)

    def send(self, b):
        if self.relay:
            self.wf.write(b)
            self.wf.flush()
        else:
            self.s.sendall(b)

    def recv(self, n, timeout=10):
        out = b""
        end = time.time() + timeout
        while len(out) < n and time.time() < end:
            if self.relay:
                import select
                r, _, _ = select.select([self.rf], [], [], max(0.0, end - time.time()))
                if not r:
                    break
                c = os.read(self.rf.fileno(), n - len(out))
            else:
                self.s.settimeout(max(0.01, end - time.time()))
                try:
                    c = self.s.recv(n - len(out))
                except socket.timeout:
                    break
            if not c:
                break
            out += c
        return out

    def auth(self, key):
        hello = self.recv(44)
        assert hello[:8] == b"RGPUAUTH", hello
        ns = hello[12:44]
        nc = os.urandom(32)
        self.send(nc + hmac.new(key, b"c" + ns + nc, hashlib.sha256).digest())
        sm = self.recv(32)
        if sm != hmac.new(key, b"s" + nc + ns, hashlib.sha256).digest():
            raise ConnectionError("server did not prove the secret")

    def msg(self, op, payload=b"", flags=0, magic=RG_MAGIC, version=RG_VERSION, length=None):
        self.seq += 1
        n = len(payload) if length is None else length
        self.send(struct.pack("<IHHIIQ", magic, version, op, flags, n, self.seq) + payload)

    def reply(self, timeout=10):
        h = self.recv(24, timeout)
        if len(h) < 24:
            return None, b""
        magic, ver, op, flags, n, seq = struct.unpack("<IHHIIQ", h)
        body = self.recv(n, timeout)
        return struct.unpack("<I", body[:4])[0], body[4:]

    def call(self, op, *q, blob=None, timeout=15):
        p = b"".join(struct.pack("<Q", x) for x in q)
        if blob is not None:
            p += struct.pack("<I", len(blob)) + blob
        self.msg(OP[op], p)
        return self.reply(timeout)

    def closed(self, timeout=10):
        """True if the server closed the connection"""
        end = time.time() + timeout
        while time.time() < end:
            b = self.recv(1, timeout=end - time.time())
            if b == b"":
                return True
        return False

    def close(self):
        if self.relay:
            self.relay.kill()
            self.relay.wait(timeout=5)
        else:
            self.s.close()


RELAY = r"""
import os, socket, sys, threading
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
s.settimeout(None)
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            break
        s.sendall(b)
threading.Thread(target=up, daemon=True).start()
while True:
    b = s.recv(65536)
    if not b:
        break
    os.write(1, b)
"""


def connect(lab, addr, tries=50):
    """an authenticated connection, retried while the server's sessions of
    departed clients are still ending (--max-clients)"""
    for i in range(tries):
        try:
            return Raw(lab, addr)
        except (AssertionError, ConnectionError, OSError):
            if i == tries - 1:
                raise
            time.sleep(0.1)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)
    log("ok:", what)


def hostile(lab):
    lab.start_servers(["0,1"], extra=["--max-clients", "4", "--max-mem", str(64 << 20)])
    addr = lab.addrs[0]
    # 1. unauthenticated: a wrong secret, garbage instead of the answer, silence
    r = Raw(lab, addr, auth=False)
    hello = r.recv(44)
    r.send(os.urandom(64))
    expect(hello[:8] == b"RGPUAUTH" and r.closed(), "garbage instead of the authentication answer: connection closed")
    r.close()
    try:
        Raw(lab, addr, key=b"not-the-secret-0123456789").close()
        expect(False, "a wrong secret is refused")
    except (ConnectionError, AssertionError, OSError):
        expect(True, "a wrong secret is refused")
    r = Raw(lab, addr, auth=False)
    r.send(struct.pack("<IHHIIQ", RG_MAGIC, RG_VERSION, OP["hello"], 0, 0, 1))  # a request before auth
    expect(r.closed(), "a request before authentication: connection closed")
    r.close()

    # 2. two authenticated clients; B names A's memory and handles
    a, b = connect(lab, addr), connect(lab, addr)
    rc, body = a.call("hello")
    expect(rc == CUDA_SUCCESS, "client A: hello")
    rc, body = a.call("primary_retain", 0)
    ctx_a = struct.unpack("<Q", body[:8])[0]
    rc, body = a.call("mem_alloc", ctx_a, 4096)
    expect(rc == CUDA_SUCCESS, "client A: allocation")
    ptr = struct.unpack("<Q", body[:8])[0]
    rc, _ = a.call("htod", ctx_a, 0, ptr, blob=b"A" * 4096)
    expect(rc == CUDA_SUCCESS, "client A: writes its memory")
    rc, body = b.call("primary_retain", 0)
    ctx_b = struct.unpack("<Q", body[:8])[0]
    rc, body = b.call("dtoh", ctx_b, 0, ptr, 16)
    expect(rc == INVALID_VALUE and body == b"", "client B cannot read A's device memory")
    rc, _ = b.call("htod", ctx_b, 0, ptr, blob=b"B" * 16)
    expect(rc == INVALID_VALUE, "client B cannot write A's device memory")
    rc, _ = b.call("mem_free", ptr)
    expect(rc == INVALID_VALUE, "client B cannot free A's device memory")
    rc, _ = b.call("peer_recv", ctx_b, 0, ptr, 16, 1, 0)
    expect(rc == INVALID_VALUE, "client B cannot make A's memory a peer-copy target")
    rc, _ = b.call("event_query", 1)
    expect(rc == INVALID_HANDLE, "client B names an event handle it never created")
    rc, _ = b.call("stream_sync", (ctx_b + 5) << 32)
    expect(rc == INVALID_CONTEXT, "client B names a context handle it never created")
    rc, _ = b.call("mem_alloc", ctx_b, 65 << 20)
    expect(rc == 2, "a client over --max-mem: out of memory")  # CUDA_ERROR_OUT_OF_MEMORY
    rc, body = a.call("dtoh", ctx_a, 0, ptr + 100, 8)
    expect(rc == CUDA_SUCCESS and body[4:] == b"A" * 8, "client A's memory is intact")
    rc, body = a.call("dtoh", ctx_a, 0, ptr + 4090, 8)
    expect(rc == INVALID_VALUE, "a read past the end of an allocation is refused")

    # 3. malformed messages (after authentication): answered with an error or the connection closed; the
    #    server keeps serving
    import random
    rnd = random.Random(7)
    bad = [struct.pack("<Q", 1)[:5], b"", struct.pack("<QQQ", 1, 2, 3) + b"x", struct.pack("<QQQI", 1, 0, ptr, 999)]
    for op in range(0, 40):
        pl = bad[op % len(bad)] if op % 3 else bytes(rnd.randrange(256) for _ in range(rnd.randrange(64)))
        b.msg(op, pl)
        rc, _ = b.reply()
        if rc is None:
            break
        expect(rc != CUDA_SUCCESS or op in (1, 2), f"malformed op {op} ({len(pl)} bytes) answered with error {rc}")
    b.close()
    for magic, ver, length in ((0xdeadbeef, RG_VERSION, 0), (RG_MAGIC, 9, 0), (RG_MAGIC, 1, 0),
                                (RG_MAGIC, RG_VERSION, 1 << 30)):
        c = connect(lab, addr)
        c.msg(1, b"", magic=magic, version=ver, length=length)
        expect(c.closed(), f"bad header (magic {magic:#x}, version {ver}, length {length}): connection closed")
        c.close()
    c = connect(lab, addr)
    c.msg(OP["htod"], b"\0" * 10, length=1000)  # a message that never completes
    expect(c.closed(timeout=15), "a message that stops half-way: closed after the server's timeout")
    c.close()
    # fuzzed messages with valid headers (a deterministic campaign)
    c = connect(lab, addr)
    for i in range(300):
        op = rnd.randrange(0, 36)
        q = [rnd.choice([0, 1, 2, ctx_a, ptr, ptr + 64, 2**64 - 1, 1 << 32, rnd.getrandbits(64)])
             for _ in range(rnd.randrange(0, 11))]
        pl = b"".join(struct.pack("<Q", x) for x in q)
        if rnd.random() < 0.4:
            blob = os.urandom(rnd.randrange(0, 200))
            pl += struct.pack("<I", len(blob) + rnd.choice([0, 0, 1, -1 if blob else 0, 1 << 20])) + blob
        c.msg(op, pl, flags=rnd.choice([0, 0, 2, 1]))
    c.close()
    log("ok: 300 fuzzed messages sent")
    rc, body = a.call("dtoh", ctx_a, 0, ptr, 8)
    expect(rc == CUDA_SUCCESS and body[4:] == b"A" * 8, "client A still served after the hostile clients")

    # 3b. the libfabric upgrade (RG_OP_FABRIC): an unknown provider is refused; an intruder connecting to the
    #     session's passive endpoint without the token is refused and the client stays on its socket, served
    c = connect(lab, addr)
    name = b"no-such-provider"
    c.msg(OP["fabric"], struct.pack("<I", len(name)) + name)
    rc, _ = c.reply()
    expect(rc == NOT_SUPPORTED, f"an unknown libfabric provider: not supported ({rc})")
    c.msg(OP["fabric"], struct.pack("<I", 3) + b"tcp")
    rc, body = c.reply()
    expect(rc == CUDA_SUCCESS and len(body) == 8 + 4 + 32 + 8, "the upgrade to libfabric tcp: a port and a token")
    fport = struct.unpack("<Q", body[:8])[0]
    intruder = subprocess.run(lab.wrap([sys.executable, "-c", INTRUDE, addr.rsplit(":", 1)[0], str(fport)], "c"),
                              capture_output=True, text=True, timeout=30)
    log("intruder:", intruder.stdout.strip(), intruder.stderr.strip()[-200:])
    rc, _ = c.call("ping")  # answered once the session gave up waiting for the token (its --timeout)
    expect(rc == CUDA_SUCCESS, "without the token the session stays on the socket and serves the client")
    c.msg(OP["fabric"], struct.pack("<I", 3) + b"tcp")
    rc, _ = c.reply()
    expect(rc == INVALID_VALUE, "a second upgrade is refused")
    c.close()
    expect("did not come over libfabric" in lab.server_log(1), "the server log says the client stayed on the socket")

    # 4. a killed client: its session ends and frees its memory; its slot is free again
    a.close()  # (A leaves without freeing: the server frees)
    time.sleep(0.5)
    p = subprocess.Popen(lab.wrap([sys.executable, "-c", KILLME, addr, lab.secret], "c"), stdout=subprocess.PIPE)
    line = p.stdout.readline()
    expect(line.startswith(b"allocated"), "a client allocated 8 MiB and waits")
    p.kill()
    p.wait(timeout=10)
    end = time.time() + 10
    while time.time() < end and lab.server_log(1).count("freed 1 allocations") < 2:
        time.sleep(0.1)
    expect(lab.server_log(1).count("freed 1 allocations") >= 2,
           "killed and departed clients' allocations freed by the server")
    # max-clients is 4: four new clients must be accepted now
    cs = [connect(lab, addr) for _ in range(4)]
    expect(all(x.call("ping")[0] == CUDA_SUCCESS for x in cs), "every session slot was released")
    for x in cs:
        x.close()
    log("hostile: ok")


# connects to a libfabric tcp passive endpoint with a plain TCP socket and sends garbage (no token)
INTRUDE = r"""
import os, socket, sys, time
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
    s.sendall(os.urandom(300))
    time.sleep(1)
    s.close()
    print("sent garbage to the passive endpoint")
except OSError as e:
    print("could not connect:", e)
"""


KILLME = r"""
import sys
sys.path.insert(0, %r)
""" % os.path.dirname(os.path.abspath(__file__)) + r"""
import rgpu_harness as h, struct, time
class A: ns = False
lab = type("L", (), {"args": A()})()
h.SECRET = open(sys.argv[2], "rb").read().strip()
r = h.Raw(lab, sys.argv[1], key=h.SECRET)
rc, body = r.call("primary_retain", 0)
ctx = struct.unpack("<Q", body[:8])[0]
rc, body = r.call("mem_alloc", ctx, 8 << 20)
assert rc == 0
print("allocated", flush=True)
time.sleep(60)
"""


def check_logs(lab):
    """--expect-log: each regex in some server's log (what the servers did, e.g. the transport)"""
    logs = [lab.server_log(i) for i in range(1, len(lab.addrs) + 1)]
    for rx in lab.args.expect_log:
        if not any(re.search(rx, lg) for lg in logs):
            log(f"FAILED: no server log matches {rx!r}")
            for i, lg in enumerate(logs, 1):
                sys.stderr.write(f"--- server {i}:\n{lg}")
            return 1
        log(f"server log: {rx!r} found")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--ns", action="store_true")
    ap.add_argument("--server", action="append", dest="servers", metavar="GPUS",
                    help="one server with these emulated GPUs (repeat for more; default 0,1 and 2,3)")
    ap.add_argument("--deadline", type=int, default=200)
    ap.add_argument("--config", action="store_true", help="servers from a WHARF_RGPU_CONFIG file, not the environment")
    ap.add_argument("--transport", choices=["fabric", "socket"], default="fabric",
                    help="the client's WHARF_RGPU_TRANSPORT (default fabric)")
    ap.add_argument("--provider", help="the client's WHARF_RGPU_PROVIDER")
    ap.add_argument("--expect-log", action="append", default=[], metavar="REGEX",
                    help="after a successful run, some server's log must match REGEX (repeat for more)")
    ap.add_argument("mode", choices=["run", "same", "hostile", "killserver"])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    args.servers = args.servers or ["0,1", "2,3"]
    if args.cmd and args.cmd[0] == "--":
        args.cmd = args.cmd[1:]
    if args.ns and (os.geteuid() != 0 or not shutil.which("ip")):
        log("network namespaces need root and iproute2: skipped")
        return 77
    signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(TimeoutError("deadline")))
    signal.alarm(args.deadline)
    lab = Lab(args)
    try:
        if args.ns:
            try:
                subprocess.run(["ip", "netns", "add", lab.tag + "probe"], check=True, capture_output=True, timeout=20)
                subprocess.run(["ip", "netns", "del", lab.tag + "probe"], capture_output=True, timeout=20)
            except (subprocess.CalledProcessError, OSError):
                log("cannot create network namespaces here: skipped")
                return 77
        if args.mode == "hostile":
            hostile(lab)
            return 0
        if args.mode == "same":
            allgpus = ",".join(args.servers)
            env = dict(os.environ, **lab.emu_env, CUDAEMU_VISIBLE=allgpus)
            loc = subprocess.run(args.cmd, env=env, capture_output=True, text=True, timeout=120)
            sys.stdout.write(loc.stdout)
            sys.stderr.write(loc.stderr)
            lab.start_servers(args.servers)
            rem = lab.run_client(args.cmd, timeout=150)
            sys.stdout.write(rem.stdout)
            sys.stderr.write(rem.stderr)
            lr = [l for l in loc.stdout.splitlines() if l.startswith("result")]
            rr = [l for l in rem.stdout.splitlines() if l.startswith("result")]
            if loc.returncode or rem.returncode or not lr or lr != rr:
                log(f"FAILED: local rc {loc.returncode} {lr}, remote rc {rem.returncode} {rr}")
                return 1
            log(f"same answer locally and through {len(args.servers)} servers: {lr[-1]}")
            return check_logs(lab)
        lab.start_servers(args.servers)
        if args.mode == "run":
            r = lab.run_client(args.cmd, timeout=150)
            sys.stdout.write(r.stdout)
            sys.stderr.write(r.stderr)
            if r.returncode:
                for i in range(1, len(args.servers) + 1):
                    sys.stderr.write(f"--- server {i}:\n" + lab.server_log(i))
                return r.returncode
            return check_logs(lab)
        # killserver: the client copies between the servers until one dies
        p = subprocess.Popen(lab.wrap(args.cmd, "c"), env=lab.client_env(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        line = p.stdout.readline()
        expect(line.startswith("copying"), f"the client copies between the servers ({line.strip()})")
        time.sleep(0.5)
        os.killpg(lab.procs[-1].pid, signal.SIGKILL)
        t0 = time.time()
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            log("FAILED: the client hangs after its server died")
            return 1
        sys.stdout.write(line + out)
        expect(p.returncode == 0 and "clean error" in out, f"a clean CUDA error after {time.time() - t0:.1f} s")
        return check_logs(lab)
    except (AssertionError, RuntimeError, TimeoutError, subprocess.TimeoutExpired) as e:
        log("FAILED:", e)
        for i in range(1, len(lab.addrs) + 1):
            sys.stderr.write(f"--- server {i}:\n" + lab.server_log(i))
        return 1
    finally:
        signal.alarm(0)
        lab.close_servers()
        # a session that crashed (sanitizer report, signal) fails the test even if the client coped
        for i in range(1, len(lab.addrs) + 1):
            lg = lab.server_log(i)
            if "runtime error" in lg or "Sanitizer" in lg or "ended (signal" in lg and args.mode != "killserver":
                sys.stderr.write(f"rgpu_harness: FAILED: server {i} had a crashed session:\n{lg}")
                lab.close()
                return 1
        lab.close()


if __name__ == "__main__":
    sys.exit(main())
