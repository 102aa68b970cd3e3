! MPI-IO from Fortran (use mpi): collective open, a view with an INTEGER etype and a
! strided filetype, collective writes through it, explicit-offset reads checked value by
! value, the shared file pointer, sizes, a file error handler, delete.  Files in /tmp.
program f90_io
  use mpi
  implicit none
  integer :: rank, nprocs, ierr, fh, ftype, i, errs, tot, cls, eh, amode
  integer :: buf(10), rbuf(10), st(MPI_STATUS_SIZE), cnt
  integer(kind=MPI_OFFSET_KIND) :: disp, fsize, pos
  character(len=256) :: fname
  external :: on_error
  integer :: calls, lastcls
  common /errh/ calls, lastcls

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  errs = 0
  calls = 0
  if (rank == 0) write(fname, '(A,I0)') '/tmp/wharf-f90-io.', getpid_()
  call MPI_Bcast(fname, 256, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)

  call MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS .or. fh == MPI_FILE_NULL) errs = errs + 1
  ! every rank owns every nprocs-th integer
  call MPI_Type_vector(10, 1, nprocs, MPI_INTEGER, ftype, ierr)
  call MPI_Type_commit(ftype, ierr)
  disp = rank * 4
  call MPI_File_set_view(fh, disp, MPI_INTEGER, ftype, 'native', MPI_INFO_NULL, ierr)
  do i = 1, 10
    buf(i) = rank * 100 + i
  end do
  call MPI_File_write_all(fh, buf, 10, MPI_INTEGER, st, ierr)
  call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
  if (cnt /= 10) errs = errs + 1
  call MPI_File_get_position(fh, pos, ierr)
  if (pos /= 10) errs = errs + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  disp = 0
  call MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, 'native', MPI_INFO_NULL, ierr)
  ! integer k of the file belongs to rank mod(k, nprocs), its element k / nprocs + 1
  disp = 4 * mod(rank + 1, nprocs)
  call MPI_File_read_at(fh, disp, rbuf, 1, MPI_INTEGER, st, ierr)
  if (rbuf(1) /= mod(rank + 1, nprocs) * 100 + 1) errs = errs + 1
  call MPI_File_get_size(fh, fsize, ierr)
  if (fsize /= 40 * nprocs) errs = errs + 1
  call MPI_File_get_amode(fh, amode, ierr)
  if (amode /= MPI_MODE_CREATE + MPI_MODE_RDWR) errs = errs + 1
  ! a file error handler written in Fortran
  call MPI_File_create_errhandler(on_error, eh, ierr)
  call MPI_File_set_errhandler(fh, eh, ierr)
  disp = -1
  call MPI_File_read_at(fh, disp, rbuf, 1, MPI_INTEGER, st, ierr)
  if (calls /= 1 .or. lastcls /= MPI_ERR_ARG) errs = errs + 1
  call MPI_Errhandler_free(eh, ierr)
  call MPI_File_close(fh, ierr)
  if (fh /= MPI_FILE_NULL) errs = errs + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_File_delete(fname, MPI_INFO_NULL, ierr)
    call MPI_Error_class(ierr, cls, ierr)
    if (cls /= MPI_ERR_NO_SUCH_FILE) errs = errs + 1
  end if
  call MPI_Type_free(ftype, ierr)
  call MPI_Allreduce(errs, tot, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (tot == 0) then
      print '(A,I0,A)', 'f90_io: ', nprocs, ' ranks ok'
    else
      print '(A,I0,A)', 'f90_io: ', tot, ' errors'
    end if
  end if
  call MPI_Finalize(ierr)
  if (tot /= 0) stop 1
contains
  integer function getpid_()
    integer :: getpid
    getpid_ = getpid()
  end function
end program

subroutine on_error(fh, code)
  use mpi
  integer :: fh, code, cls, ierr
  integer :: calls, lastcls
  common /errh/ calls, lastcls
  call MPI_Error_class(code, cls, ierr)
  calls = calls + 1
  lastcls = cls
end subroutine
