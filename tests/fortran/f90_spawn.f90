! MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE from Fortran (`use mpi`): CHARACTER arrays of
! arguments ended by a blank element, ARRAY_OF_ARGV(COUNT, *) in column-major order, blanks
! after arguments dropped (leading ones kept, as MPICH does), MPI_ARGV_NULL.  The program spawns copies of itself; each child
! checks the command-line arguments it got and sends a code to the parents' rank 0.
program f90_spawn
  use mpi
  implicit none
  integer :: ierr, rank, parent, inter, errs, code, i, n
  integer :: errcodes(3), maxprocs(2), infos(2), status(MPI_STATUS_SIZE)
  character(len=256) :: me, arg
  character(len=16) :: argv(3), argvs(2, 3)
  character(len=256) :: cmds(2)

  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  if (parent /= MPI_COMM_NULL) then
    ! child: argument 1 says which launch this is and what the others must be
    code = 0
    n = command_argument_count()
    call get_command_argument(1, arg)
    select case (trim(arg))
    case ('single')   ! MPI_COMM_SPAWN: 'single', '  two words'
      if (n == 2) then
        call get_command_argument(2, arg)
        if (arg == '  two words') code = 1
      end if
    case ('multi-a')  ! MPI_COMM_SPAWN_MULTIPLE command 1: 'multi-a', 'x'
      if (n == 2) then
        call get_command_argument(2, arg)
        if (arg == 'x') code = 2
      end if
    case ('multi-b')  ! command 2: 'multi-b' only
      if (n == 1) code = 3
    case default
      if (n == 0) code = 4   ! MPI_ARGV_NULL
    end select
    call MPI_Send(code, 1, MPI_INTEGER, 0, 0, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    stop
  end if

  errs = 0
  call get_command_argument(0, me)
  ! MPI_COMM_SPAWN: 2 children with the arguments 'single' and '  two words'
  argv(1) = 'single'
  argv(2) = '  two words'
  argv(3) = ' '
  call MPI_Comm_spawn(me, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, errcodes, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  if (rank == 0) then
    do i = 1, 2
      call MPI_Recv(code, 1, MPI_INTEGER, MPI_ANY_SOURCE, 0, inter, status, ierr)
      if (code /= 1) then
        errs = errs + 1
        print *, 'MPI_COMM_SPAWN child got the wrong arguments: ', code
      end if
    end do
  end if
  call MPI_Comm_disconnect(inter, ierr)

  ! MPI_COMM_SPAWN with MPI_ARGV_NULL
  call MPI_Comm_spawn(me, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, &
                      MPI_ERRCODES_IGNORE, ierr)
  if (rank == 0) then
    call MPI_Recv(code, 1, MPI_INTEGER, 0, 0, inter, status, ierr)
    if (code /= 4) then
      errs = errs + 1
      print *, 'MPI_ARGV_NULL child got arguments: ', code
    end if
  end if
  call MPI_Comm_disconnect(inter, ierr)

  ! MPI_COMM_SPAWN_MULTIPLE: command 1 ('multi-a', 'x') once, command 2 ('multi-b') twice
  cmds(1) = me
  cmds(2) = me
  argvs = ' '
  argvs(1, 1) = 'multi-a'
  argvs(1, 2) = 'x'
  argvs(2, 1) = 'multi-b'
  maxprocs = (/ 1, 2 /)
  infos = MPI_INFO_NULL
  call MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, inter, &
                               errcodes, ierr)
  if (ierr /= MPI_SUCCESS) errs = errs + 1
  if (rank == 0) then
    n = 0
    do i = 1, 3
      call MPI_Recv(code, 1, MPI_INTEGER, MPI_ANY_SOURCE, 0, inter, status, ierr)
      ! children are numbered in command order: rank 0 ran command 1
      if ((status(MPI_SOURCE) == 0 .and. code /= 2) .or. (status(MPI_SOURCE) > 0 .and. code /= 3)) then
        errs = errs + 1
        print *, 'MPI_COMM_SPAWN_MULTIPLE child ', status(MPI_SOURCE), ' code ', code
      end if
    end do
  end if
  call MPI_Comm_disconnect(inter, ierr)

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print *, 'f90_spawn: OK'
    else
      print *, 'f90_spawn: ', errs, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)
  if (errs /= 0) stop 1
end program
