#!/bin/sh
# A CMake project that finds MPI as most do (find_package(MPI) with wharf's wrappers first
# in PATH): C, C++ and Fortran found at MPI 4.1 with wharf's include directory and libraries,
# MPIEXEC_EXECUTABLE is wharf's mpiexec, and the programs built run through it on 2 ranks.
#   usage: findmpi_test.sh BUILD_DIR
set -u
B=$(cd "$1" && pwd)
command -v cmake >/dev/null && command -v ninja >/dev/null || { echo "SKIP: no cmake/ninja"; exit 77; }
T=$(mktemp -d /tmp/wharf-findmpi.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAILED: $*"; [ -s "$T/log" ] && tail -30 "$T/log"; exit 1; }
langs="C CXX"
[ -x "$B/bin/mpifort" ] && command -v gfortran >/dev/null && langs="$langs Fortran"
mkdir "$T/src"
cat > "$T/src/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.10)
project(findmpi $langs)
find_package(MPI REQUIRED)
foreach(l $langs)
  message(STATUS "wharf-test \${l} found=\${MPI_\${l}_FOUND} version=\${MPI_\${l}_VERSION} inc=\${MPI_\${l}_INCLUDE_DIRS} libs=\${MPI_\${l}_LIBRARIES}")
endforeach()
message(STATUS "wharf-test mpiexec=\${MPIEXEC_EXECUTABLE} flag=\${MPIEXEC_NUMPROC_FLAG}")
add_executable(hc hello.c)
target_link_libraries(hc MPI::MPI_C)
add_executable(hcxx hello.cc)
target_link_libraries(hcxx MPI::MPI_CXX)
if(CMAKE_Fortran_COMPILER)
  add_executable(hf hello.f90)
  target_link_libraries(hf MPI::MPI_Fortran)
endif()
C
cat > "$T/src/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int r, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("c sum %d of %d\n", r, n);
    MPI_Finalize();
    return 0;
}
C
sed 's/"c sum/"cxx sum/' "$T/src/hello.c" > "$T/src/hello.cc"
cat > "$T/src/hello.f90" <<'F'
program hello
  use mpi_f08
  implicit none
  integer :: r, n
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, r)
  call MPI_Comm_size(MPI_COMM_WORLD, n)
  call MPI_Allreduce(MPI_IN_PLACE, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  print '(A,I0,A,I0)', 'f sum ', r, ' of ', n
  call MPI_Finalize()
end program
F
PATH=$B/bin:$PATH cmake -S "$T/src" -B "$T/b" -G Ninja >"$T/log" 2>&1 || fail "cmake configure"
for l in $langs; do
  grep -q "wharf-test $l found=TRUE version=4.1 inc=[^ ]*$B/include" "$T/log" || fail "MPI_$l not found as wharf's"
  grep -q "wharf-test $l .*libs=[^ ]*$B/lib/libmpi" "$T/log" || fail "MPI_$l libraries not wharf's"
done
grep -q "wharf-test mpiexec=$B/bin/mpiexec " "$T/log" || fail "MPIEXEC_EXECUTABLE is not wharf's mpiexec"
ninja -C "$T/b" >>"$T/log" 2>&1 || fail "build"
flag=$(sed -n 's/.*wharf-test mpiexec=[^ ]* flag=\([^ ]*\).*/\1/p' "$T/log")
for p in hc hcxx hf; do
  [ -x "$T/b/$p" ] || continue
  o=$(timeout 60 "$B/bin/mpiexec" "$flag" 2 "$T/b/$p" 2>&1) || fail "$p: $o"
  [ "$(echo "$o" | grep -c ' sum 1 of 2$')" = 2 ] || fail "$p output: $o"
done
echo "find_package(MPI) finds wharf ($langs): ok"
