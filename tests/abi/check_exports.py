#!/usr/bin/env python3
"""The ABI check: libmpi.so.12 exports exactly the MPI*/PMPI* symbols listed in
tests/abi/exported_symbols.txt (nm -D, defined symbols), so generating the
entry points (tools/gen/genapi.py) or changing the stubs never drops or adds
one by accident.  A deliberate change updates the list:

    nm -D --defined-only build/lib/libmpi.so.12 | awk '{print $3}' | grep -E '^P?MPI' | sort \\
        > tests/abi/exported_symbols.txt
"""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--expect", required=True)
    args = ap.parse_args()
    out = subprocess.run(["nm", "-D", "--defined-only", args.lib], check=True, capture_output=True,
                         text=True).stdout
    have = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].split("@")[0].startswith(("MPI", "PMPI")):
            have.add(parts[2].split("@")[0])
    want = {l.strip() for l in open(args.expect, encoding="utf-8") if l.strip() and not l.startswith("#")}
    missing, extra = sorted(want - have), sorted(have - want)
    for s in missing:
        print("not exported any more: %s" % s)
    for s in extra:
        print("exported but not in %s: %s" % (args.expect, s))
    unpaired = sorted(s for s in have if s.startswith("PMPI_") and s[1:] not in have)
    for s in unpaired:
        print("%s has no MPI_ alias" % s)
    print("%d symbols expected, %d exported, %d missing, %d extra, %d unpaired"
          % (len(want), len(have), len(missing), len(extra), len(unpaired)))
    return 1 if (missing or extra or unpaired) else 0


if __name__ == "__main__":
    sys.exit(main())
