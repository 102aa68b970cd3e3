! Free-form `use mpi`, more of the binding: MPI_Type_create_f90_*, generalized requests with
! Fortran callbacks, MPI_Waitsome's 1-based indices, MPI_Testall, MPI_Comm_split + MPI_Scan,
! MPI_Alltoall, MPI_Gatherv, a vector type over a 2-D array, MPI_Pack/Unpack, MPI_Info strings,
! MPI_Error_string, a distributed graph with MPI_UNWEIGHTED.
module f90_misc_cb
  implicit none
  integer :: query_calls = 0, free_calls = 0, cancel_calls = 0
contains
  subroutine q_fn(extra, status, ierr)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    query_calls = query_calls + 1
    call MPI_Status_set_elements(status, MPI_INTEGER, int(extra), ierr)
    call MPI_Status_set_cancelled(status, .false., ierr)
    status(MPI_SOURCE) = MPI_UNDEFINED
    status(MPI_TAG) = MPI_UNDEFINED
    ierr = MPI_SUCCESS
  end subroutine
  subroutine f_fn(extra, ierr)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    free_calls = free_calls + 1
    ierr = MPI_SUCCESS
  end subroutine
  subroutine c_fn(extra, complete, ierr)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    cancel_calls = cancel_calls + 1
    ierr = MPI_SUCCESS
  end subroutine
end module

program f90_misc
  use mpi
  use f90_misc_cb
  implicit none
  integer :: ierr, rank, np, i, j, n, t, vec, half, hrank, info, rlen, outcount, pos, graph
  integer :: reqs(4), idx(4), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
  integer :: sbuf(64), rbuf(64), counts(16), displs(16), packed(64), a(4, 3), b(4, 3)
  integer :: srcs(2), dsts(2), indeg, outdeg, sw(2), dw(2)
  real(kind=selected_real_kind(15, 300)) :: x(3), y(3)
  logical :: flag, weighted
  integer :: tsize
  character(len=MPI_MAX_INFO_VAL) :: val
  character(len=MPI_MAX_ERROR_STRING) :: msg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! MPI_Type_create_f90_real / _integer: the sized types
  call MPI_Type_create_f90_real(15, 300, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(ierr == MPI_SUCCESS .and. tsize == 8, 'type_create_f90_real')
  call MPI_Type_create_f90_integer(9, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(tsize == 4, 'type_create_f90_integer')
  call MPI_Type_create_f90_real(15, 300, t, ierr)
  x = [1.5d0, rank * 1d0, -2d0]
  call MPI_Allreduce(x, y, 3, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(y(1) == 1.5d0 * np .and. y(2) == np * (np - 1) / 2d0 .and. y(3) == -2d0 * np, &
             'allreduce on the f90 real type')
  call MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, t, ierr)
  call check(t == MPI_REAL8, 'type_match_size')

  ! a generalized request completed at once; Fortran query/free callbacks
  call MPI_Grequest_start(q_fn, f_fn, c_fn, 7_MPI_ADDRESS_KIND, reqs(1), ierr)
  call MPI_Grequest_complete(reqs(1), ierr)
  call MPI_Wait(reqs(1), st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, n, ierr)
  call check(n == 7 .and. query_calls >= 1 .and. free_calls == 1, 'generalized request')
  call MPI_Test_cancelled(st, flag, ierr)
  call check(.not. flag, 'test_cancelled')

  ! Waitsome: 1-based indices; Testall flag
  do i = 1, 2
    call MPI_Irecv(rbuf(i), 1, MPI_INTEGER, mod(rank + np - 1, np), i, MPI_COMM_WORLD, reqs(i), ierr)
  end do
  do i = 1, 2
    sbuf(i) = rank * 10 + i
    call MPI_Isend(sbuf(i), 1, MPI_INTEGER, mod(rank + 1, np), i, MPI_COMM_WORLD, reqs(2 + i), ierr)
  end do
  n = 0
  do while (n < 4)
    call MPI_Waitsome(4, reqs, outcount, idx, sts, ierr)
    call check(outcount >= 1 .and. outcount <= 4 - n, 'waitsome outcount')
    do i = 1, outcount
      call check(idx(i) >= 1 .and. idx(i) <= 4, 'waitsome index range')
      call check(reqs(idx(i)) == MPI_REQUEST_NULL, 'waitsome index names a completed request')
      if (idx(i) <= 2) call check(sts(MPI_TAG, i) == idx(i), 'waitsome status tag')
    end do
    n = n + outcount
  end do
  do i = 1, 2
    call check(rbuf(i) == mod(rank + np - 1, np) * 10 + i, 'waitsome data')
  end do
  call MPI_Testall(4, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  call check(flag, 'testall on null requests')

  ! split into halves; scan within each
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Scan(rank, n, 1, MPI_INTEGER, MPI_SUM, half, ierr)
  j = 0   ! ranks of my parity at least as large as mine (key -rank: reverse order)
  do i = rank, np - 1, 2
    j = j + i
  end do
  call check(n == j, 'scan in a split communicator')
  call MPI_Comm_free(half, ierr)

  ! alltoall and gatherv
  do i = 1, np
    sbuf(i) = rank * 100 + i - 1
  end do
  call MPI_Alltoall(sbuf, 1, MPI_INTEGER, rbuf, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, np
    call check(rbuf(i) == (i - 1) * 100 + rank, 'alltoall')
  end do
  do i = 1, np
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  sbuf(1:rank + 1) = rank
  rbuf = -1
  call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, rbuf, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    do i = 1, np
      do j = 1, i
        call check(rbuf(displs(i) + j) == i - 1, 'gatherv')
      end do
    end do
  end if

  ! a row of a 4x3 array (stride 4) as a vector type, sent to myself
  a = reshape([(i, i = 1, 12)], [4, 3])
  b = 0
  call MPI_Type_vector(3, 1, 4, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Sendrecv(a(2, 1), 1, vec, rank, 9, b(3, 1), 1, vec, rank, 9, MPI_COMM_WORLD, st, ierr)
  call check(all(b(3, :) == a(2, :)) .and. count(b /= 0) == 3, 'vector type on a 2-D array')
  ! pack / unpack the same row
  pos = 0
  call MPI_Pack(a(2, 1), 1, vec, packed, 64 * 4, pos, MPI_COMM_WORLD, ierr)
  call check(pos == 12, 'pack position')
  b = 0
  pos = 0
  call MPI_Unpack(packed, 64 * 4, pos, b(1, 1), 1, vec, MPI_COMM_WORLD, ierr)
  call check(all(b(1, :) == a(2, :)), 'unpack')
  call MPI_Type_free(vec, ierr)

  ! info strings and flags
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'wharf_key', 'some value  ', ierr)
  call MPI_Info_get(info, 'wharf_key', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(flag .and. val == 'some value', 'info_get')
  call MPI_Info_get(info, 'absent', MPI_MAX_INFO_VAL, val, flag, ierr)
  call check(.not. flag, 'info_get absent')
  call MPI_Info_get_nkeys(info, n, ierr)
  call check(n == 1, 'info_get_nkeys')
  call MPI_Info_free(info, ierr)

  ! error strings
  call MPI_Error_string(MPI_ERR_TAG, msg, rlen, ierr)
  call check(rlen > 0 .and. len_trim(msg) == rlen, 'error_string')

  ! a ring as a distributed graph without weights
  srcs(1) = mod(rank + np - 1, np)
  dsts(1) = mod(rank + 1, np)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., graph, ierr)
  call check(ierr == MPI_SUCCESS, 'dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors_count(graph, indeg, outdeg, weighted, ierr)
  call check(indeg == 1 .and. outdeg == 1 .and. .not. weighted, 'dist_graph_neighbors_count')
  srcs = -1
  dsts = -1
  call MPI_Dist_graph_neighbors(graph, 1, srcs, sw, 1, dsts, dw, ierr)
  call check(srcs(1) == mod(rank + np - 1, np) .and. dsts(1) == mod(rank + 1, np), &
             'dist_graph_neighbors')
  call MPI_Comm_free(graph, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'f90_misc: ok'
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
