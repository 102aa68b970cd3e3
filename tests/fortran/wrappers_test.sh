#!/bin/sh
# The Fortran wrappers (mpifort, mpif90, mpif77): -show, -compile-info, -link-info, WHARF_FC;
# mpif.h compiles as fixed form and as free form (strictly: -Werror, implicit none) and the
# result runs as a singleton.   usage: wrappers_test.sh BUILD_DIR
set -u
B=$1
T=$(mktemp -d /tmp/wharf-fwrap.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

for w in mpifort mpif90 mpif77; do
  s=$("$B/bin/$w" -show -o x x.f90) || fail "$w -show"
  case "$s" in *" -I$B/include "*"x.f90"*"-lmpifort -lmpi"*) ;; *) fail "$w -show: $s" ;; esac
  c=$("$B/bin/$w" -compile-info -c x.f90) || fail "$w -compile-info"
  case "$c" in *"-lmpi"*) fail "$w -compile-info links: $c" ;; *"-I$B/include"*) ;; *) fail "$w -compile-info: $c" ;; esac
  l=$("$B/bin/$w" -link-info) || fail "$w -link-info"
  case "$l" in *"-L$B/lib"*"-lmpifort -lmpi"*) ;; *) fail "$w -link-info: $l" ;; esac
  e=$(WHARF_FC=myfc "$B/bin/$w" -show x.f90)
  case "$e" in "myfc "*) ;; *) fail "$w WHARF_FC: $e" ;; esac
done

cat > "$T/fixed.f" <<'F'
      PROGRAM FIXED
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      IF (RANK .NE. 0 .OR. NP .NE. 1) STOP 2
      PRINT '(A,I0,A,I0,A,I0)', 'fixed ', MPI_STATUS_SIZE, ' ',
     &      MPI_TAG, ' ', MPI_ADDRESS_KIND
      CALL MPI_FINALIZE(IERR)
      END
F
cat > "$T/free.f90" <<'F'
program free
  implicit none
  include 'mpif.h'
  integer :: ierr, rank
  double precision :: t
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  t = MPI_Wtime()
  if (t <= 0d0 .or. MPI_Wtick() <= 0d0) stop 3
  print '(A,I0,A,I0,A,I0)', 'free ', MPI_STATUS_SIZE, ' ', MPI_SOURCE, ' ', MPI_COUNT_KIND
  call MPI_Finalize(ierr)
end program
F
cd "$T" || exit 1
"$B/bin/mpif77" -Werror -Wall -ffixed-form -o fixed fixed.f || fail "mpif.h as fixed form"
"$B/bin/mpif90" -Werror -Wall -ffree-form -o free free.f90 || fail "mpif.h as free form"
o=$(./fixed) || fail "fixed-form singleton"
[ "$o" = "fixed 5 4 8" ] || fail "fixed-form output: $o"
o=$(./free) || fail "free-form singleton"
[ "$o" = "free 5 3 8" ] || fail "free-form output: $o"
echo "wrappers and mpif.h: ok"
