#!/bin/sh
# `cmake --install` into a fresh prefix gives a working MPI: the programs (and no test
# binaries) in bin/, the libraries under their MPICH names in lib/, the headers and modules in
# include/; a program built with the installed mpicc runs under the installed mpiexec and as a
# singleton that spawns (wharfrun found beside the installed library).
#   usage: install_test.sh BUILD_DIR
set -u
B=$(cd "$1" && pwd)
T=$(mktemp -d /tmp/wharf-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
P=$T/prefix
cmake --install "$B" --prefix "$P" >"$T/log" 2>&1 || { cat "$T/log"; fail "cmake --install"; }
for f in bin/mpicc bin/mpicxx bin/mpic++ bin/mpiexec bin/mpirun bin/wharfrun bin/wharf-info \
         lib/libmpi.so.12 lib/libmpich.so.12 include/mpi.h include/mpio.h; do
  [ -e "$P/$f" ] || fail "$f not installed"
done
if [ -x "$B/bin/mpifort" ]; then
  for f in bin/mpifort lib/libmpifort.so.12 lib/libmpichfort.so.12 include/mpif.h include/mpi.mod include/mpi_f08.mod; do
    [ -e "$P/$f" ] || fail "$f not installed"
  done
fi
for f in "$P"/bin/*; do
  case "$(basename "$f")" in mpi*|wharf*) ;; *) fail "not a program to install: $f" ;; esac
done
case "$("$P/bin/mpicc" -show)" in *"-I$P/include"*"-L$P/lib"*) ;; *) fail "installed mpicc points elsewhere: $("$P/bin/mpicc" -show)" ;; esac
cat > "$T/sp.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, ic;
    int r, n, x = 0;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 1 && parent == MPI_COMM_NULL) { /* a singleton that spawns one child */
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
        printf("singleton got %d\n", x);
        MPI_Comm_disconnect(&ic);
    } else if (parent != MPI_COMM_NULL) {
        x = 42;
        MPI_Send(&x, 1, MPI_INT, 0, 0, parent);
        MPI_Comm_disconnect(&parent);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        printf("sum %d of %d\n", r, n);
    }
    MPI_Finalize();
    return 0;
}
C
"$P/bin/mpicc" -o "$T/sp" "$T/sp.c" || fail "build with the installed mpicc"
ldd "$T/sp" | grep -q "$P/lib/libmpi.so.12" || fail "not linked to the installed libmpi: $(ldd "$T/sp" | grep mpi)"
o=$(cd "$T" && timeout 60 "$P/bin/mpiexec" -n 2 ./sp 2>&1) || fail "installed mpiexec: $o"
[ "$(echo "$o" | grep -c '^sum 1 of 2$')" = 2 ] || fail "installed mpiexec output: $o"
o=$(cd "$T" && PATH=/usr/bin:/bin timeout 60 ./sp spawn 2>&1) || fail "singleton spawn: $o"
[ "$o" = "singleton got 42" ] || fail "singleton spawn output: $o"
echo "install into a fresh prefix: ok"
