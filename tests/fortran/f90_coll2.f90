! Free-form `use mpi`: the collectives f90_coll and f90_misc do not cover -- Scatter(v),
! Allgatherv, Alltoallv, Alltoallw (datatype arrays), Reduce_scatter(_block), Exscan, the
! nonblocking Ibcast/Iallreduce/Ialltoall with MPI_Wait(all), a persistent MPI_Allreduce_init,
! and a neighbourhood allgather on a periodic ring -- each checked value by value.
program f90_coll2
  use mpi
  implicit none
  integer :: ierr, rank, np, i, j, root, req, reqs(3), cart
  integer, asynchronous :: s(64), r(64)   ! buffers of nonblocking and persistent calls
  integer :: counts(16), displs(16), rcounts(16), rdispls(16)
  integer :: types(16), wdispls(16), wrdispls(16), nb(2), expect
  logical :: periods(1)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  root = np - 1

  ! Scatter: root sends i*10 to rank i
  s = [(i * 10, i = 0, 63)]
  r = -1
  call MPI_Scatter(s, 1, MPI_INTEGER, r, 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call check(r(1) == rank * 10 .and. r(2) == -1, 'scatter')
  ! Scatterv: rank i gets i+1 values starting at displs(i)
  do i = 1, np
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  s = [(i, i = 0, 63)]
  r = -1
  call MPI_Scatterv(s, counts, displs, MPI_INTEGER, r, rank + 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  do j = 1, rank + 1
    call check(r(j) == displs(rank + 1) + j - 1, 'scatterv')
  end do
  call check(r(rank + 2) == -1, 'scatterv overrun')
  ! Allgatherv: rank i contributes i+1 copies of i
  s(1:rank + 1) = rank
  r = -1
  call MPI_Allgatherv(s, rank + 1, MPI_INTEGER, r, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, np
    do j = 1, i
      call check(r(displs(i) + j) == i - 1, 'allgatherv')
    end do
  end do
  ! Alltoallv: to rank j, send j+1 values rank*100+j
  do j = 1, np
    counts(j) = j
    displs(j) = (j - 1) * j / 2
    s(displs(j) + 1:displs(j) + j) = rank * 100 + j - 1
    rcounts(j) = rank + 1
    rdispls(j) = (j - 1) * (rank + 1)
  end do
  r = -1
  call MPI_Alltoallv(s, counts, displs, MPI_INTEGER, r, rcounts, rdispls, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do j = 1, np
    do i = 1, rank + 1
      call check(r(rdispls(j) + i) == (j - 1) * 100 + rank, 'alltoallv')
    end do
  end do
  ! Alltoallw: byte displacements and a datatype array
  do j = 1, np
    s(j) = rank * 1000 + j - 1
    counts(j) = 1
    wdispls(j) = (j - 1) * 4
    wrdispls(j) = (j - 1) * 4
    types(j) = MPI_INTEGER
  end do
  r = -1
  call MPI_Alltoallw(s, counts, wdispls, types, r, counts, wrdispls, types, MPI_COMM_WORLD, ierr)
  do j = 1, np
    call check(r(j) == (j - 1) * 1000 + rank, 'alltoallw')
  end do
  ! Reduce_scatter_block and Reduce_scatter: element i of everyone's vector is i
  s(1:2 * np) = [(i, i = 0, 2 * np - 1)]
  call MPI_Reduce_scatter_block(s, r, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(r(1) == 2 * rank * np .and. r(2) == (2 * rank + 1) * np, 'reduce_scatter_block')
  do j = 1, np
    rcounts(j) = 1
  end do
  rcounts(1) = 2
  s(1:np + 1) = [(i, i = 0, np)]
  call MPI_Reduce_scatter(s, r, rcounts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call check(r(1) == 0 .and. r(2) == np, 'reduce_scatter rank 0')
  else
    call check(r(1) == (rank + 1) * np, 'reduce_scatter')
  end if
  ! Exscan
  r(1) = -7
  call MPI_Exscan(rank + 1, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call check(r(1) == rank * (rank + 1) / 2, 'exscan')

  ! nonblocking collectives
  r(1) = merge(4242, 0, rank == root)
  call MPI_Ibcast(r, 1, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
  s(10) = rank
  call MPI_Iallreduce(s(10), r(2), 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(2), ierr)
  s(20:19 + np) = [(rank * 10 + j, j = 0, np - 1)]
  call MPI_Ialltoall(s(20), 1, MPI_INTEGER, r(20), 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(r(1) == 4242 .and. r(2) == np - 1, 'ibcast, iallreduce')
  do j = 1, np
    call check(r(19 + j) == (j - 1) * 10 + rank, 'ialltoall')
  end do
  ! persistent allreduce, started twice
  call MPI_Allreduce_init(s(30), r(30), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
  do i = 1, 2
    s(30) = rank * i
    call MPI_Start(req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(r(30) == i * np * (np - 1) / 2, 'persistent allreduce')
  end do
  call MPI_Request_free(req, ierr)

  ! neighbourhood allgather on a periodic 1-D Cartesian ring
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [np], periods, .false., cart, ierr)
  nb = -1
  call MPI_Neighbor_allgather(rank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, cart, ierr)
  expect = mod(rank + np - 1, np)
  call check(nb(1) == expect .and. nb(2) == mod(rank + 1, np), 'neighbor_allgather')
  call MPI_Comm_free(cart, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'f90_coll2: ok'
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print *, 'FAILED on rank', rank, ': ', what
      error stop 1
    end if
  end subroutine
end program
