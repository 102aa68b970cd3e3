! `use mpi_f08`: TYPE(MPI_Comm) & co., TYPE(MPI_Status) components, optional IERROR,
! TYPE(*), DIMENSION(..) buffers (scalars, arrays of any rank, contiguous and strided sections),
! MPI_IN_PLACE, MPI_STATUS_IGNORE, handle comparison, strings, LOGICAL flags, a user op and an
! error handler with the f08 interfaces, attributes.
module f08_basic_cb
  use mpi_f08
  implicit none
  integer :: handler_calls = 0
contains
  subroutine add2(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = a + b + 1
  end subroutine
  subroutine on_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handler_calls = handler_calls + 1
  end subroutine
end module

program f08_basic
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
  use mpi_f08
  use f08_basic_cb
  implicit none
  integer, target, asynchronous :: bbuf(2048)
  type(c_ptr) :: bptr
  integer, pointer :: bp(:)
  type(MPI_Comm) :: dup
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  type(MPI_Op) :: op
  type(MPI_Errhandler) :: eh
  type(MPI_Datatype) :: dt
  integer :: rank, np, ierr, i, n, m(3, 4), keyval
  double precision :: d(10), e(10)
  logical :: flag
  character(len=MPI_MAX_OBJECT_NAME) :: name
  integer(kind=MPI_ADDRESS_KIND) :: val
  integer(kind=MPI_COUNT_KIND) :: c8, lb8, ext8

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call check(ierr == MPI_SUCCESS, 'optional ierror')

  ! point to point with statuses
  if (rank == 0) then
    m = reshape([(i, i = 1, 12)], [3, 4])
    call MPI_Send(m, 12, MPI_INTEGER, 1, 42, MPI_COMM_WORLD)
    call MPI_Send(m(:, 2), 3, MPI_INTEGER, 1, 43, MPI_COMM_WORLD)   ! contiguous section
  else if (rank == 1) then
    m = 0
    call MPI_Recv(m, 12, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st)
    call check(st%MPI_SOURCE == 0 .and. st%MPI_TAG == 42, 'status components')
    call MPI_Get_count(st, MPI_INTEGER, n)
    call check(n == 12 .and. m(3, 4) == 12 .and. m(1, 1) == 1, 'recv 2-D array')
    m = 0
    call MPI_Recv(m(:, 3), 3, MPI_INTEGER, 0, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(all(m(:, 3) == [4, 5, 6]) .and. count(m /= 0) == 3, 'recv into a section')
  end if

  ! nonblocking ring on doubles, Waitall on TYPE(MPI_Request) arrays, Test flag
  d = rank
  call MPI_Irecv(e, 10, MPI_DOUBLE_PRECISION, mod(rank + np - 1, np), 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(d, 10, MPI_DOUBLE_PRECISION, mod(rank + 1, np), 1, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call check(all(e == mod(rank + np - 1, np)), 'ring data')
  call check(reqs(1) == MPI_REQUEST_NULL .and. .not. (reqs(2) /= MPI_REQUEST_NULL), 'handle ==, /=')
  call MPI_Test(reqs(1), flag, st)
  call check(flag, 'test on a null request')

  ! buffered send; MPI_Buffer_detach returns the buffer's address as TYPE(C_PTR)
  call MPI_Buffer_attach(bbuf, 8192)
  call MPI_Bsend(rank, 1, MPI_INTEGER, mod(rank + 1, np), 3, MPI_COMM_WORLD)
  call MPI_Recv(n, 1, MPI_INTEGER, mod(rank + np - 1, np), 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call check(n == mod(rank + np - 1, np), 'bsend')
  call MPI_Buffer_detach(bptr, n)
  call check(n == 8192, 'buffer_detach size')
  ! the address is bbuf's: write through it, read bbuf (comparing the pointers with
  ! c_associated may be folded to .false. at -O2: bbuf's address "never escaped")
  call c_f_pointer(bptr, bp, [2048])
  bp(5) = 12345
  call check(bbuf(5) == 12345, 'buffer_detach address')

  ! the large-count forms through the same generic names (and _c where kinds collide)
  d = rank + 0.25d0
  e = 0
  call MPI_Sendrecv(d, 10_MPI_COUNT_KIND, MPI_DOUBLE_PRECISION, rank, 5, e, 10_MPI_COUNT_KIND, &
                    MPI_DOUBLE_PRECISION, rank, 5, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_DOUBLE_PRECISION, c8)
  call check(c8 == 10 .and. all(e == d), 'large-count sendrecv and get_count')
  call MPI_Type_get_extent_c(MPI_DOUBLE_PRECISION, lb8, ext8)
  call check(lb8 == 0 .and. ext8 == 8, 'MPI_Type_get_extent_c')

  ! collectives, MPI_IN_PLACE
  n = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(n == np * (np + 1) / 2, 'allreduce in place')
  flag = rank /= 0
  call MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD)
  call check(flag .eqv. (np > 1), 'MPI_LOR on LOGICAL')

  ! a user op (f08 interface: TYPE(C_PTR) vectors)
  call MPI_Op_create(add2, .true., op)
  n = 1
  call MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(n == 2 * np - 1, 'user op')
  call MPI_Op_free(op)
  call check(op == MPI_OP_NULL, 'op freed')

  ! names, attributes, error handler
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call check(dup /= MPI_COMM_WORLD, 'dup is another handle')
  call MPI_Comm_set_name(dup, 'f08 comm')
  call MPI_Comm_get_name(dup, name, n)
  call check(name == 'f08 comm' .and. n == 8, 'comm name')
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(dup, keyval, 1234_MPI_ADDRESS_KIND)
  call MPI_Comm_get_attr(dup, keyval, val, flag)
  call check(flag .and. val == 1234, 'attribute')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  call check(flag .and. val >= 32767, 'MPI_TAG_UB')
  call MPI_Comm_create_errhandler(on_error, eh)
  call MPI_Comm_set_errhandler(dup, eh)
  call MPI_Send(n, 1, MPI_INTEGER, np + 3, 0, dup, ierr)
  call check(ierr /= MPI_SUCCESS .and. handler_calls == 1, 'f08 error handler')
  ! non-contiguous sections: one element of a datatype built from the array descriptor
  if (rank == 0) then
    m = reshape([(i, i = 1, 12)], [3, 4])
  else
    m = 0
  end if
  call MPI_Bcast(m(2, :), 4, MPI_INTEGER, 0, dup)            ! a row: stride 3
  call check(all(m(2, :) == [2, 5, 8, 11]), 'bcast of a row section')
  if (rank /= 0) call check(count(m /= 0) == 4, 'bcast of a row section wrote only the row')
  if (rank == 0) then
    call MPI_Send([101, 102, 103, 104], 4, MPI_INTEGER, np - 1, 7, MPI_COMM_WORLD)
  else if (rank == np - 1) then
    call MPI_Irecv(m(3, 4:1:-1), 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, reqs(1))   ! negative stride
    call MPI_Wait(reqs(1), st)
    call check(all(m(3, :) == [104, 103, 102, 101]), 'irecv into a reversed section')
  end if
  ! a count/datatype that does not cover the section exactly is refused, through the handler
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
  call MPI_Bcast(m(1, :), 3, MPI_INTEGER, 0, dup, ierr)
  call check(ierr == MPI_ERR_BUFFER, 'partial section refused')
  call MPI_Errhandler_free(eh)
  call MPI_Comm_free(dup)
  call check(dup == MPI_COMM_NULL, 'comm freed')

  ! derived type through TYPE(MPI_Datatype)
  call MPI_Type_vector(4, 1, 3, MPI_INTEGER, dt)
  call MPI_Type_commit(dt)
  m = reshape([(i, i = 1, 12)], [3, 4])
  call MPI_Type_size(dt, n)
  call check(n == 16, 'type_size')
  call MPI_Type_free(dt)

  call MPI_Finalize()
  if (rank == 0) print *, 'f08_basic: ok'
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
