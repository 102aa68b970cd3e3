! Mixed Fortran and C (mixed_c.c): MPI_F_STATUS_IGNORE is Fortran's MPI_STATUS_IGNORE,
! MPI_Comm_f2c, MPI_Status_f2c / f2f08 / f082f on a status filled by MPI_Recv in Fortran.
program f90_mixed
  use mpi
  implicit none
  interface
    integer(c_int) function wharf_mixed_check(ignore, status, comm) bind(C)
      use, intrinsic :: iso_c_binding, only: c_int
      integer :: ignore(*), status(*), comm
    end function
  end interface
  integer :: ierr, rank, np, st(MPI_STATUS_SIZE), buf(3), comm
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  buf = rank
  call MPI_Sendrecv(buf, 3, MPI_INTEGER, mod(rank + 1, np), 77, buf, 3, MPI_INTEGER, &
                    mod(rank + np - 1, np), 77, MPI_COMM_WORLD, st, ierr)
  comm = MPI_COMM_WORLD
  if (wharf_mixed_check(MPI_STATUS_IGNORE, st, comm) /= 0) then
    print *, 'FAILED on rank', rank
    error stop 1
  end if
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'f90_mixed: ok'
end program
