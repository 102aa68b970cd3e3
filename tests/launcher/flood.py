#!/usr/bin/env python3
"""A hostile neighbour of a wharfrun job (launcher tests).

    flood.py PID MODE COUNT SECONDS [PMIID]

finds the TCP ports PID (wharfrun) listens on, the way any local user can
(/proc/net/tcp lists every socket; the inode links it to PID's descriptors
for its owner, and for another user the port is printed by the test), or
takes PID as "host:port", then per MODE:
  idle     COUNT connections held open for SECONDS without a byte
  garbage  COUNT connections, each sending a junk line
  partial  COUNT connections, each sending the start of a line, held open
  claim    COUNT connections, each claiming pmiid i (0..COUNT-1, or PMIID
           every time) with a made-up key (cmd=auth_hello / auth_response),
           and plainly (cmd=initack) on a second connection
  spin     connect/close as fast as possible for SECONDS
  ports    print PID's first listening ADDR:PORT (for FAKE_AGENT_AS floods)
Prints one line: "flood MODE: N connections, M answered".  Exit 0."""
import os
import socket
import sys
import time


def listen_ports(pid):
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return []
    out = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            w = line.split()
            if w[3] == "0A" and w[9] in inodes:
                ip, port = w[1].split(":")
                addr = socket.inet_ntoa(bytes.fromhex(ip)[::-1])
                out.append((addr, int(port, 16)))
    return out


def say(line):
    """One write per line: two floods may append to one file at once (O_APPEND keeps a single
    write whole; print's text and newline can arrive as two, interleaved with the other's)."""
    os.write(1, (line + "\n").encode())


def main():
    target, mode, count, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    fixed = int(sys.argv[5]) if len(sys.argv) > 5 else None
    if mode == "ports":
        for _ in range(50):
            ps = listen_ports(int(target))
            if ps:
                print("%s:%d" % ps[0])
                return
            time.sleep(0.1)
        return
    if ":" in target:
        h, p = target.rsplit(":", 1)
        targets = [(h, int(p))]
    else:
        targets = []
        for _ in range(50):
            targets = listen_ports(int(target))
            if targets:
                break
            time.sleep(0.1)
    if not targets:
        say(f"flood {mode}: no listening port")
        return
    addr = targets[0]
    socks, answered, n = [], 0, 0
    end = time.time() + secs
    if mode == "spin":
        while time.time() < end:
            try:
                c = socket.create_connection(addr, timeout=1)
                c.close()
                n += 1
            except OSError:
                time.sleep(0.01)
        say(f"flood {mode}: {n} connections, 0 answered")
        return
    for i in range(count):
        try:
            c = socket.create_connection(addr, timeout=2)
        except OSError:
            continue
        n += 1
        socks.append(c)
        try:
            if mode == "garbage":
                c.sendall(b"\x00\xff garbage =\n" * 3)
            elif mode == "partial":  # a line that never ends
                c.sendall(b"cmd=auth_hello pmiid=")
            elif mode == "claim":
                if fixed is not None:
                    i = fixed
                c.sendall(b"cmd=initack pmiid=%d\n" % i)
                c.settimeout(0.5)
                if c.recv(4096):
                    answered += 1
                c2 = socket.create_connection(addr, timeout=2)
                socks.append(c2)
                c2.sendall(b"cmd=auth_hello pmiid=%d cnonce=%s\n" % (i, b"0" * 32))
                c2.settimeout(0.5)
                r = c2.recv(4096)
                if r.startswith(b"cmd=auth_challenge"):
                    c2.sendall(b"cmd=auth_response mac=%s\n" % (b"1" * 64))
                    if c2.recv(4096):
                        answered += 1
        except OSError:
            pass
    say(f"flood {mode}: {n} connections, {answered} answered")
    sys.stdout.flush()
    if mode in ("idle", "partial"):
        time.sleep(max(0.0, end - time.time()))
    for c in socks:
        c.close()


main()
