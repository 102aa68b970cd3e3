! The mpi_f08 profiling interface (MPI-4.1 15.2, 19.1.5): a tool defines the specific
! procedures MPI_Send_f08ts, MPI_Allreduce_f08ts and MPI_Barrier_f08 and forwards to the PMPI_
! names; the program's calls through mpi_f08's generic names reach the tool; PMPI_ names of the
! hand-written procedures (PMPI_Comm_set_attr) and a large-count PMPI_ form compile and work.
module f08_profile_counts
  integer :: sends = 0, reduces = 0, barriers = 0
end module

subroutine MPI_Send_f08ts(buf, count, datatype, dest, tag, comm, ierror)
  use :: mpi_f08, self_ => MPI_Send_f08ts
  use f08_profile_counts
  implicit none
  type(*), dimension(..), intent(in) :: buf
  integer, intent(in) :: count, dest, tag
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  sends = sends + 1
  call PMPI_Send(buf, count, datatype, dest, tag, comm, ierror)
end subroutine

subroutine MPI_Allreduce_f08ts(sendbuf, recvbuf, count, datatype, op, comm, ierror)
  use :: mpi_f08, self_ => MPI_Allreduce_f08ts
  use f08_profile_counts
  implicit none
  type(*), dimension(..), intent(in) :: sendbuf
  type(*), dimension(..) :: recvbuf
  integer, intent(in) :: count
  type(MPI_Datatype), intent(in) :: datatype
  type(MPI_Op), intent(in) :: op
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  reduces = reduces + 1
  call PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm, ierror)
end subroutine

subroutine MPI_Barrier_f08(comm, ierror)
  use :: mpi_f08, self_ => MPI_Barrier_f08
  use f08_profile_counts
  implicit none
  type(MPI_Comm), intent(in) :: comm
  integer, optional, intent(out) :: ierror
  barriers = barriers + 1
  if (present(ierror)) then
    call PMPI_Barrier(comm, ierror)
  else
    call PMPI_Barrier(comm)
  end if
end subroutine

program f08_profile
  use mpi_f08
  use f08_profile_counts
  implicit none
  integer :: rank, np, ierr, errs, key, v(4), s(1), r(1)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, got
  logical :: flag
  type(MPI_Status) :: st

  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  v = rank
  if (rank == 0) then
    call MPI_Send(v, 4, MPI_INTEGER, 1, 5, MPI_COMM_WORLD)
    call MPI_Send(v, 4_MPI_COUNT_KIND, MPI_INTEGER, 1, 6, MPI_COMM_WORLD, ierr)  ! the large-count form
  else if (rank == 1) then
    call MPI_Recv(v, 4, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, st)
    if (any(v /= 0)) errs = errs + 1
    call PMPI_Recv(v, 4_MPI_COUNT_KIND, MPI_INTEGER, 0, 6, MPI_COMM_WORLD, st, ierr)
    if (any(v /= 0) .or. ierr /= MPI_SUCCESS) errs = errs + 1
  end if
  s(1) = rank + 1
  call MPI_Allreduce(s, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (r(1) /= np * (np + 1) / 2) errs = errs + 1
  call PMPI_Allreduce(s, r, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)   ! not counted
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  extra = 0
  call PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key, extra)
  val = 31
  call PMPI_Comm_set_attr(MPI_COMM_WORLD, key, val)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key, got, flag)
  if (.not. flag .or. got /= 31) errs = errs + 1
  call PMPI_Comm_delete_attr(MPI_COMM_WORLD, key)

  ! rank 0 sent once through the int form and once through the large-count one, which the
  ! tool does not define (MPI_Send_f08ts_large): one send counted
  if (rank == 0 .and. sends /= 1) then
    print *, 'sends seen by the tool:', sends, ' expected 1'
    errs = errs + 1
  end if
  if (rank /= 0 .and. sends /= 0) errs = errs + 1
  if (reduces /= 1 .or. barriers /= 2) then
    print *, 'allreduces seen by the tool:', reduces, ' barriers:', barriers
    errs = errs + 1
  end if
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (errs /= 0) then
    print *, 'f08_profile: FAILED checks:', errs
    error stop 1
  end if
  if (rank == 0) print *, 'f08_profile: ok'
end program
