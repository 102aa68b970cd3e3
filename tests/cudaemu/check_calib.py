#!/usr/bin/env python3
"""mpi.gpu.calibrate: `wharfrun -n 2 wharf-info --calibrate FILE` writes a
tuning file that parses (header, both classes, every switch point a size or
'never', the measured table as comments), and a following job with
WHARF_CUDA_TUNING=FILE loads it: its WHARF_REPORT=gpu line shows exactly
the file's switch points.  No timing is judged.

  check_calib.py WHARFRUN WHARF_INFO PROGRAM"""
import os
import re
import subprocess
import sys
import tempfile

KEYS = ["gdr_d2h_max", "gdr_h2d_max", "eager_max", "pipeline_min", "ipc_min"]


def fail(msg, out=""):
    print(out)
    print("calibrate: FAILED:", msg)
    sys.exit(1)


def main():
    wharfrun, info, prog = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "gpu-tuning.txt")
        r = subprocess.run([wharfrun, "-n", "2", "--timeout", "250", info, "--calibrate", path],
                           capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        if r.returncode != 0 or not os.path.exists(path):
            fail(f"wharf-info --calibrate exited {r.returncode}", out)
        text = open(path).read()
        lines = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
        if not lines or lines[0].split() != ["wharf-gpu-tuning", "1"]:
            fail("no 'wharf-gpu-tuning 1' header", text)
        if not re.search(r"^# latency +bytes +gdrcopy +eager +staged +pipeline +ipc$", text, re.M):
            fail("no measured table in the comments", text)
        sw = {}
        for l in lines[1:]:
            w = l.split()
            if w[0] in ("latency", "bandwidth"):
                kv = dict(x.split("=", 1) for x in w[1:])
                if sorted(kv) != sorted(KEYS):
                    fail(f"class {w[0]}: keys {sorted(kv)}", text)
                for k, v in kv.items():
                    if not (v == "never" or v.isdigit()):
                        fail(f"{w[0]} {k}={v}: not a size", text)
                sw[w[0]] = kv
        if set(sw) != {"latency", "bandwidth"}:
            fail("both classes needed", text)
        env = dict(os.environ, WHARF_CUDA_TUNING=path, WHARF_REPORT="gpu")
        r = subprocess.run([wharfrun, "-n", "2", "--timeout", "150", prog], capture_output=True, text=True,
                           env=env, timeout=200)
        out = r.stdout + r.stderr
        if r.returncode != 0 or "gpu p2p: ok" not in out:
            fail(f"the job with the tuning file failed ({r.returncode})", out)

        def shown(c):
            s = sw[c]
            return (f"{c}: gdrcopy d2h<={s['gdr_d2h_max']} h2d<={s['gdr_h2d_max']}, eager<={s['eager_max']}, "
                    f"pipeline>={s['pipeline_min']}, cuda-ipc>={s['ipc_min']}")
        want = f"switch points from {path}: {shown('latency')}; {shown('bandwidth')};"
        if want not in out:
            fail(f"the report does not show the loaded switch points: want '{want}'", out)
        print(text)
        print("calibrate: ok (loaded:", want + ")")


if __name__ == "__main__":
    main()
