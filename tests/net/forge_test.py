#!/usr/bin/env python3
"""Test net.forge: a process outside the job sends forged wharf traffic at a
rank's network endpoint; nothing may be delivered and the job must complete.

    forge_test.py WHARFRUN VICTIM FORGE

Runs `WHARFRUN -n 2 VICTIM FLAG` over the network channel with
WHARF_LOG=debug, learns rank 0's endpoint address from its debug line (the
address only: the endpoint token is never logged), runs FORGE against it,
then creates FLAG.  Passes when the job exits 0 and prints "net_victim: ok",
rank 0 reported the dropped messages at most a few times (rate-limited), and
no endpoint token appears anywhere in the output."""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

wharfrun, victim, forge = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix="wharf-forge-")
flag = os.path.join(tmp, "attack-done")
env = dict(os.environ, WHARF_CHANNEL="net", WHARF_LOG="debug")
job = subprocess.Popen([wharfrun, "-n", "2", "--timeout", "150", victim, flag], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
err_lines, out_lines = [], []
addr = {}
got_addr = threading.Event()
ready = threading.Event()


def read_err():
    pat = re.compile(r"wharf\[0\] debug net: provider .* address \S+ \(([0-9a-f]+)\)")
    rxm = re.compile(r"wharf\[0\] debug net: FI_OFI_RXM_EAGER_LIMIT=(\d+)")
    for line in job.stderr:
        err_lines.append(line)
        m = rxm.search(line)
        if m:
            addr["rxm"] = m.group(1)
        m = pat.search(line)
        if m and "a" not in addr:
            addr["a"] = m.group(1)
            got_addr.set()


def read_out():
    for line in job.stdout:
        out_lines.append(line)
        if "net_victim: ready" in line:
            ready.set()


threads = [threading.Thread(target=read_err), threading.Thread(target=read_out)]
for t in threads:
    t.start()


def finish(code, why):
    if code:
        sys.stderr.write("".join(l for l in err_lines if " debug " not in l and " trace " not in l)[-8000:])
        sys.stderr.write("".join(out_lines))
        print("net.forge: FAIL: " + why)
    else:
        print("net.forge: ok: " + why)
    open(flag, "w").close()
    try:
        job.wait(timeout=30)
    except subprocess.TimeoutExpired:
        job.kill()
    sys.exit(code)


if not got_addr.wait(60) or not ready.wait(60):
    finish(1, "the job never published rank 0's endpoint address or never got ready")
a = addr["a"]
# ofi_rxm endpoints with different eager limits exchange nothing: the attacker uses the one the
# victim set for itself (docs/NET.md, "Send path"), so that its messages do reach the victim
fenv = dict(os.environ)
if "rxm" in addr:
    fenv["FI_OFI_RXM_EAGER_LIMIT"] = addr["rxm"]
try:
    f = subprocess.run([forge, a], capture_output=True, text=True, timeout=90, env=fenv)
except subprocess.TimeoutExpired:
    finish(1, "net_forge did not finish in 90 s")
print(f.stdout.strip())
if f.returncode != 0:
    finish(1, "net_forge could not attack (exit %d): %s" % (f.returncode, f.stderr.strip()))
open(flag, "w").close()
try:
    rc = job.wait(timeout=120)
except subprocess.TimeoutExpired:
    job.kill()
    finish(1, "the job did not end after the attack")
for t in threads:
    t.join(10)
text = "".join(err_lines)
if rc != 0 or not any("net_victim: ok" in l for l in out_lines):
    finish(1, "the job failed after the attack (exit %d)" % rc)
drops = [l for l in err_lines if "wharf[0] warn net: dropped" in l]
if not drops:
    finish(1, "rank 0 reported no dropped message: did the attack reach it?")
if len(drops) > 8:
    finish(1, "%d drop warnings: not rate-limited" % len(drops))
# no token in the output: the published names are ADDR/TOKEN, the log shows ADDR only
if re.search(re.escape(a) + "/", text):
    finish(1, "an endpoint token appears in the log")
total = re.findall(r"dropped (\d+) messages without this job's endpoint token in all", text)
print("net.forge: %d warning lines from rank 0, final count %s" % (len(drops), total[-1] if total else "-"))
finish(0, "job completed, forged traffic not delivered")
