! Free-form `use mpi`: collectives with MPI_IN_PLACE, MPI_LAND on LOGICAL, MPI_BOTTOM with an
! absolute-address datatype, a user reduction written in Fortran, communicator names, a
! Cartesian topology (LOGICAL arrays), attributes with Fortran callbacks and MPI_COMM_DUP_FN,
! the predefined MPI_TAG_UB attribute, and an error handler written in Fortran.
module f90_coll_ops
  implicit none
  integer :: handler_calls = 0, handler_code = 0
  ! reached through MPI_BOTTOM: module variables, so the compiler knows any call may change them
  integer :: bot_i
  double precision :: bot_d
contains
  ! user reduction on (digits, 10**ndigits) pairs: decimal concatenation, associative but
  ! not commutative, so the rank order of the operands is checked too
  subroutine concat(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i
    do i = 1, len
      inoutvec(1, i) = invec(1, i) * inoutvec(2, i) + inoutvec(1, i)
      inoutvec(2, i) = invec(2, i) * inoutvec(2, i)
    end do
  end subroutine
  subroutine my_copy(oldcomm, keyval, extra, val_in, val_out, flag, ierr)
    use mpi
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    val_out = val_in + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine
  subroutine my_delete(comm, keyval, val, extra, ierr)
    use mpi
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    ierr = MPI_SUCCESS
  end subroutine
  subroutine my_handler(comm, code)
    integer :: comm, code
    handler_calls = handler_calls + 1
    handler_code = code
  end subroutine
end module

program f90_coll
  use mpi
  use f90_coll_ops
  implicit none
  integer :: ierr, rank, np, i, op, dtype, newcomm, cart, keyval, dup, eh, rlen, ierr2
  integer :: v(4), w(4), gath(64), blens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), val, tagub
  double precision :: d, dsum
  logical :: l, lall, lany, flag, periods(2)
  integer :: dims(2), coords(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! Allreduce in place
  v = [(rank + i, i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(v(i) == np * i + np * (np - 1) / 2, 'allreduce in place')
  end do
  ! Reduce in place at the root
  d = rank + 0.5d0
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
    dsum = np * (np - 1) / 2 + 0.5d0 * np
    call check(abs(d - dsum) < 1d-12, 'reduce in place')
  else
    call MPI_Reduce(d, d, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  ! Allgather in place
  gath = -1
  gath(rank + 1) = rank * 7
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gath, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  do i = 1, np
    call check(gath(i) == (i - 1) * 7, 'allgather in place')
  end do
  ! LOGICAL reductions
  l = (rank == 0)
  call MPI_Allreduce(l, lall, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(l, lany, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lany .and. (lall .eqv. (np == 1)), 'MPI_LAND/MPI_LOR on MPI_LOGICAL')
  l = .true.
  call MPI_Allreduce(MPI_IN_PLACE, l, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(l, 'MPI_LAND all true')

  ! MPI_BOTTOM with absolute addresses: broadcast bot_i and bot_d from rank 0
  call MPI_Get_address(bot_i, disps(1), ierr)
  call MPI_Get_address(bot_d, disps(2), ierr)
  blens = 1
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blens, disps, types, dtype, ierr)
  call MPI_Type_commit(dtype, ierr)
  if (rank == 0) then
    bot_i = 4242
    bot_d = 2.25d0
  else
    bot_i = 0
    bot_d = 0
  end if
  call MPI_Bcast(MPI_BOTTOM, 1, dtype, 0, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS, 'bcast MPI_BOTTOM')
  call check(bot_i == 4242 .and. bot_d == 2.25d0, 'MPI_BOTTOM datatype data')
  call MPI_Type_free(dtype, ierr)

  ! a user reduction (non-commutative, so the order is checked too)
  call MPI_Op_create(concat, .false., op, ierr)
  call MPI_Op_commutative(op, flag, ierr)
  call check(.not. flag, 'op_commutative')
  call MPI_Type_contiguous(2, MPI_INTEGER, dtype, ierr)
  call MPI_Type_commit(dtype, ierr)
  w(1:4) = [mod(rank + 1, 10), 10, mod(rank + 1, 10), 10]
  call MPI_Allreduce(MPI_IN_PLACE, w, 2, dtype, op, MPI_COMM_WORLD, ierr)
  v(1) = 0   ! the ranks' numbers 1..np as decimal digits, in rank order
  do i = 1, np
    v(1) = v(1) * 10 + mod(i, 10)
  end do
  call check(w(1) == v(1) .and. w(3) == v(1) .and. w(2) == 10**np, 'user op result')
  call MPI_Type_free(dtype, ierr)
  call MPI_Op_free(op, ierr)

  ! communicator names (string in and out)
  call MPI_Comm_dup(MPI_COMM_WORLD, newcomm, ierr)
  call MPI_Comm_set_name(newcomm, 'fortran comm   ', ierr)
  name = '?'
  call MPI_Comm_get_name(newcomm, name, rlen, ierr)
  call check(rlen == 12 .and. name == 'fortran comm', 'comm name')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, rlen, ierr)
  call check(name(1:rlen) == 'MPI_COMM_WORLD' .and. len_trim(name) == rlen, 'world name')

  ! Cartesian topology: LOGICAL periods in and out
  dims = 0
  call MPI_Dims_create(np, 2, dims, ierr)
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  periods = [.false., .true.]
  call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
  call check(periods(1) .and. .not. periods(2), 'cart_get periods')
  call MPI_Topo_test(cart, i, ierr)
  call check(i == MPI_CART, 'topo_test')
  call MPI_Comm_free(cart, ierr)

  ! attributes: Fortran copy callback, MPI_COMM_DUP_FN, predefined MPI_TAG_UB
  call MPI_Comm_create_keyval(my_copy, my_delete, keyval, 5_MPI_ADDRESS_KIND, ierr)
  val = 100
  call MPI_Comm_set_attr(newcomm, keyval, val, ierr)
  call MPI_Comm_dup(newcomm, dup, ierr)
  call MPI_Comm_get_attr(dup, keyval, val, flag, ierr)
  call check(flag .and. val == 105, 'copy callback')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free_keyval(keyval, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, keyval, 0_MPI_ADDRESS_KIND, ierr)
  val = 77
  call MPI_Comm_set_attr(newcomm, keyval, val, ierr)
  call MPI_Comm_dup(newcomm, dup, ierr)
  val = 0
  call MPI_Comm_get_attr(dup, keyval, val, flag, ierr)
  call check(flag .and. val == 77, 'MPI_COMM_DUP_FN')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, i, 0_MPI_ADDRESS_KIND, ierr)
  call MPI_Comm_set_attr(newcomm, i, val, ierr)
  call MPI_Comm_dup(newcomm, dup, ierr)
  call MPI_Comm_get_attr(dup, i, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag, ierr)
  call check(flag .and. tagub >= 32767, 'MPI_TAG_UB attribute')

  ! an error handler written in Fortran
  call MPI_Comm_create_errhandler(my_handler, eh, ierr)
  call MPI_Comm_set_errhandler(newcomm, eh, ierr)
  call MPI_Send(v, 1, MPI_INTEGER, np + 5, 0, newcomm, ierr2)
  call check(ierr2 /= MPI_SUCCESS .and. handler_calls == 1 .and. handler_code == ierr2, &
             'Fortran error handler')
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Comm_free(newcomm, ierr)

  ! MPI_SIZEOF: the generic of the module
  call MPI_Sizeof(d, i, ierr)
  call check(i == 8 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof double')
  call MPI_Sizeof(gath, i, ierr)
  call check(i == 4, 'MPI_Sizeof integer array')
  call MPI_Sizeof(l, i, ierr)
  call check(i == 4, 'MPI_Sizeof logical')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print *, 'f90_coll: ok'
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
