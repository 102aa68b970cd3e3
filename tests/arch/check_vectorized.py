#!/usr/bin/env python3
"""The reduction kernels of src/op/kernels.c are vectorized in the built library.

    check_vectorized.py LIBMPI BUILD_TYPE

A scalar MPI_SUM over bytes runs at one byte per cycle: a 2 MiB MPI_Accumulate
or MPI_Reduce then costs milliseconds instead of tens of microseconds (MPICH's
rma/large_acc_flush_local took minutes).  gcc's -O2 cost model leaves these loops
scalar, so CMakeLists.txt compiles kernels.c with the dynamic cost model; this
test disassembles the library and checks that each listed kernel contains the
packed instruction of its operation.  Skips (77) off x86-64, without objdump,
and in unoptimized (Debug) builds."""
import platform, re, shutil, subprocess, sys

# kernel -> regex of the packed instruction its loop must use (SSE2 or AVX names)
WANT = {
    "k_sum_i8": r"v?paddb", "k_sum_u8": r"v?paddb", "k_sum_i16": r"v?paddw",
    "k_sum_i32": r"v?paddd", "k_sum_u32": r"v?paddd", "k_sum_i64": r"v?paddq",
    "k_sum_f32": r"v?addps", "k_sum_f64": r"v?addpd", "k_prod_f64": r"v?mulpd",
    "k_band_u8": r"v?pand", "k_bor_i32": r"v?por", "k_bxor_u64": r"v?pxor",
}


def main():
    lib, build_type = sys.argv[1], sys.argv[2]
    if platform.machine() != "x86_64" or not shutil.which("objdump") or build_type == "Debug":
        print(f"SKIP: needs an optimized x86-64 build and objdump (build type {build_type})")
        return 77
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True, text=True,
                         check=True).stdout
    body, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(k_\w+)>:", line)
        if m:
            cur = m.group(1)
            body[cur] = []
        elif not line.strip():
            cur = None
        elif cur:
            parts = line.split("\t")
            if len(parts) >= 2 and parts[1].split():
                body[cur].append(parts[1].split()[0])
    bad = 0
    for k, rx in WANT.items():
        if k not in body:
            print(f"FAIL {k}: not found in {lib}")
            bad += 1
        elif not any(re.fullmatch(rx, i) for i in body[k]):
            print(f"FAIL {k}: no {rx} among its {len(body[k])} instructions (scalar loop)")
            bad += 1
        else:
            print(f"ok   {k}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
