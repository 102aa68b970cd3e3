! A small application: conjugate gradients on the 1-D Poisson matrix tridiag(-1, 2, -1) of
! order N, the rows distributed in blocks over the ranks, halo exchange with MPI_Sendrecv
! (MPI_PROC_NULL at the ends), dot products with MPI_Allreduce.  With b = 2 the exact solution
! is x(i) = i * (N + 1 - i); the program checks its answer against it, the true residual
! ||b - A x|| it computes afterwards, and that CG needed at most N iterations (its bound in
! exact arithmetic; b is symmetric about the middle, so it takes about N/2).
!   usage: f90_cg [N]       (default 2000)
program f90_cg
  use mpi
  implicit none
  integer, parameter :: dp = kind(1d0)
  integer :: ierr, rank, np, n, nloc, first, i, it, left, right
  real(dp), allocatable :: x(:), r(:), p(:), q(:)
  real(dp) :: rr, rr_new, pq, alpha, beta, err, errmax, xmax, res, t0
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  n = 2000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  ! block distribution: the first mod(n, np) ranks get one row more
  nloc = n / np
  first = rank * nloc + min(rank, mod(n, np)) + 1
  if (rank < mod(n, np)) nloc = nloc + 1
  left = rank - 1
  right = rank + 1
  if (left < 0) left = MPI_PROC_NULL
  if (right >= np) right = MPI_PROC_NULL
  allocate (x(nloc), r(nloc), p(0:nloc + 1), q(nloc))

  t0 = MPI_Wtime()
  x = 0
  r = 2      ! r = b - A*0
  p(1:nloc) = r
  rr = global_dot(r, r)
  it = 0
  do while (sqrt(rr) > 1d-10 * sqrt(2d0 * n) .and. it < 2 * n)
    call apply(p, q)
    pq = global_dot(p(1:nloc), q)
    alpha = rr / pq
    x = x + alpha * p(1:nloc)
    r = r - alpha * q
    rr_new = global_dot(r, r)
    beta = rr_new / rr
    rr = rr_new
    p(1:nloc) = r + beta * p(1:nloc)
    it = it + 1
  end do

  ! the answer against the exact solution, and the true residual ||b - A x||
  err = 0
  xmax = 0
  do i = 1, nloc
    err = max(err, abs(x(i) - real(first + i - 1, dp) * real(n - first - i + 2, dp)))
    xmax = max(xmax, abs(x(i)))
  end do
  call MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, xmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  p(1:nloc) = x
  call apply(p, q)
  res = sqrt(global_dot(2 - q, 2 - q))
  errmax = err / xmax
  if (rank == 0) print '(A,I0,A,I0,A,I0,A,ES10.3,A,ES10.3,A,F8.4,A)', 'f90_cg: N=', n, ' ranks=', np, &
      ' iterations=', it, ' rel.error=', errmax, ' residual=', res, ' time=', MPI_Wtime() - t0, ' s'
  if (errmax > 1d-8 .or. res > 1d-6 * sqrt(2d0 * n) .or. it > n) then
    if (rank == 0) print *, 'FAILED: wrong answer'
    error stop 1
  end if
  if (abs(xmax - real((n + 1) / 2, dp) * real(n + 1 - (n + 1) / 2, dp)) > 1d-6 * xmax) then
    if (rank == 0) print *, 'FAILED: maximum of the solution'
    error stop 1
  end if
  call MPI_Finalize(ierr)
contains
  ! q = A p, with the halo p(0) and p(nloc+1) from the neighbours
  subroutine apply(p, q)
    real(dp), intent(inout) :: p(0:)
    real(dp), intent(out) :: q(:)
    integer :: j
    p(0) = 0
    p(nloc + 1) = 0
    call MPI_Sendrecv(p(1), 1, MPI_DOUBLE_PRECISION, left, 1, p(nloc + 1), 1, &
                      MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Sendrecv(p(nloc), 1, MPI_DOUBLE_PRECISION, right, 2, p(0), 1, &
                      MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    do j = 1, nloc
      q(j) = 2 * p(j) - p(j - 1) - p(j + 1)
    end do
  end subroutine
  real(dp) function global_dot(a, b)
    real(dp), intent(in) :: a(:), b(:)
    real(dp) :: s
    s = dot_product(a, b)
    call MPI_Allreduce(s, global_dot, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end function
end program
