#!/bin/sh
# The C and C++ compiler wrappers (mpicc, mpicxx, mpic++): every -show spelling of MPICH and
# Open MPI, the compiler chosen by the environment and by -cc=/-cxx=, arguments with blanks
# passed through intact, -v.   usage: wrappers_test.sh BUILD_DIR
set -u
B=$1
T=$(mktemp -d /tmp/wharf-wrap.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
want() { # WHAT GOT PATTERN
  case "$2" in $3) ;; *) fail "$1: got '$2'" ;; esac
}

for w in mpicc mpicxx mpic++; do
  W=$B/bin/$w
  [ -x "$W" ] || fail "no $W"
  want "$w -show" "$("$W" -show -o x x.c)" "* -I$B/include -o x x.c -L$B/lib -Wl,-rpath,$B/lib -lmpi"
  want "$w -showme" "$("$W" -showme x.c)" "* -I$B/include x.c -L$B/lib *-lmpi"
  want "$w -show -c" "$("$W" -show -c x.c)" "* -I$B/include -c x.c"
  want "$w -compile-info" "$("$W" -compile-info)" "* -I$B/include"
  want "$w -link-info" "$("$W" -link-info)" "* -I$B/include -L$B/lib -Wl,-rpath,$B/lib -lmpi"
  want "$w -showme:compile" "$("$W" -showme:compile)" "-I$B/include"
  want "$w --showme:link" "$("$W" --showme:link)" "-L$B/lib -Wl,-rpath,$B/lib -lmpi"
  want "$w -showme:incdirs" "$("$W" -showme:incdirs)" "$B/include"
  want "$w -showme:libdirs" "$("$W" -showme:libdirs)" "$B/lib"
  want "$w -showme:libs" "$("$W" -showme:libs)" "mpi"
  want "$w -showme:version" "$("$W" -showme:version)" "$w: wharf * (MPI 4.1)"
  "$W" -showme:bogus >/dev/null 2>"$T/err" && fail "$w -showme:bogus accepted"
  grep -q "unknown -showme:bogus" "$T/err" || fail "$w -showme:bogus: $(cat "$T/err")"
done
want "WHARF_CC" "$(WHARF_CC=mycc "$B/bin/mpicc" -show x.c)" "mycc *"
want "MPICH_CC" "$(MPICH_CC=mycc2 "$B/bin/mpicc" -show x.c)" "mycc2 *"
want "OMPI_CXX" "$(OMPI_CXX=mycxx "$B/bin/mpicxx" -show x.cc)" "mycxx *"
want "-cc=" "$("$B/bin/mpicc" -cc=othercc -show x.c)" "othercc -I$B/include x.c *"
want "-cxx=" "$("$B/bin/mpicxx" -cxx=othercxx -show x.cc)" "othercxx -I$B/include x.cc *"

# a real build: an argument with blanks reaches the compiler as one word
cat > "$T/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int v, sv;
    MPI_Get_version(&v, &sv);
    printf("%s %d.%d\n", MSG, v, sv);
    MPI_Finalize();
    return 0;
}
C
cp "$T/hello.c" "$T/hello.cc"
cd "$T" || exit 1
"$B/bin/mpicc" -Wall -Werror '-DMSG="a  b"' -o hello hello.c || fail "mpicc build"
want "mpicc program" "$(./hello)" "a  b 4.1"
"$B/bin/mpicxx" -Wall -Werror '-DMSG="c d"' -o hellocc hello.cc || fail "mpicxx build"
want "mpicxx program" "$(./hellocc)" "c d 4.1"
"$B/bin/mpicc" -c '-DMSG="e"' hello.c && "$B/bin/mpicc" -o hello2 hello.o || fail "mpicc -c, then link"
want "mpicc -c + link" "$(./hello2)" "e 4.1"
# a tree whose path has a blank: the wrapper's own paths stay one word each
mkdir "$T/with blank" && cp -a "$B/bin" "$B/include" "$B/lib" "$T/with blank/" || fail "copy of the tree"
"$T/with blank/bin/mpicc" '-DMSG="f"' -o hello3 hello.c || fail "mpicc in a path with a blank"
want "mpicc in a path with a blank" "$(./hello3)" "f 4.1"
ldd ./hello3 | grep -q "$T/with blank/lib/libmpi.so.12" || fail "not linked to the copy: $(ldd ./hello3 | grep mpi)"
v=$("$B/bin/mpicc" -v 2>&1) || fail "mpicc -v"
want "mpicc -v" "$(echo "$v" | head -1)" "mpicc for wharf * (MPI 4.1)"
echo "C and C++ wrappers: ok"
