! Attributes across languages (MPI-4.1 19.3.7; C half in attrlang_c.c): a value set from
! Fortran (MPI_COMM_SET_ATTR, or MPI-1 MPI_ATTR_PUT) is read by C as a pointer to the stored
! integer and by Fortran as the value; a pointer set from C is read by Fortran as the address;
! dups through Fortran and C copy callbacks keep the setter's language; on communicators,
! datatypes and windows.
program f90_attrlang
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function cset(kind, h, key, addr) bind(C, name='wharf_attr_cset')
      import :: c_int, MPI_ADDRESS_KIND
      integer(c_int), value :: kind, h, key
      integer(kind=MPI_ADDRESS_KIND) :: addr
    end function
    integer(c_int) function cget_f(kind, h, key, expect, fint) bind(C, name='wharf_attr_cget_fortran')
      import :: c_int, MPI_ADDRESS_KIND
      integer(c_int), value :: kind, h, key, fint
      integer(kind=MPI_ADDRESS_KIND), value :: expect
    end function
    integer(c_int) function cget_c(kind, h, key) bind(C, name='wharf_attr_cget_c')
      import :: c_int
      integer(c_int), value :: kind, h, key
    end function
    integer(c_int) function ckeyval() bind(C, name='wharf_attr_ckeyval')
      import :: c_int
    end function
  end interface
  integer :: ierr, errs, rank, fkey, key1, ckey, dup, dup2, tkey, wkey, dtype, win, ival, iout, extra1
  integer(kind=MPI_ADDRESS_KIND) :: aval, aout, extra, addr
  logical :: flag

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  extra = 0
  extra1 = 0

  ! Fortran (address kind) sets; Fortran and C read; a dup through MPI_COMM_DUP_FN keeps it
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, fkey, extra, ierr)
  aval = 123456789012_MPI_ADDRESS_KIND
  call MPI_Comm_set_attr(MPI_COMM_WORLD, fkey, aval, ierr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, fkey, aout, flag, ierr)
  call expect(flag .and. aout == aval, 'F2 set, F2 get')
  errs = errs + cget_f(0, MPI_COMM_WORLD, fkey, aval, 0)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_get_attr(dup, fkey, aout, flag, ierr)
  call expect(flag .and. aout == aval, 'F2 set, dup, F2 get')
  errs = errs + cget_f(0, dup, fkey, aval, 0)

  ! MPI-1: MPI_ATTR_PUT's INTEGER, read by MPI_ATTR_GET, MPI_COMM_GET_ATTR and C
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, key1, extra1, ierr)
  ival = -42
  call MPI_Attr_put(MPI_COMM_WORLD, key1, ival, ierr)
  call MPI_Attr_get(MPI_COMM_WORLD, key1, iout, flag, ierr)
  call expect(flag .and. iout == -42, 'F1 set, F1 get')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, key1, aout, flag, ierr)
  call expect(flag .and. aout == -42, 'F1 set, F2 get')
  errs = errs + cget_f(0, MPI_COMM_WORLD, key1, -42_MPI_ADDRESS_KIND, 1)

  ! C sets a pointer: Fortran reads the address, C the pointer; Fortran overwrites it with a
  ! value, which C then reads through a pointer; C's MPI_COMM_DUP_FN copies the value
  ckey = ckeyval()
  errs = errs + cset(0, MPI_COMM_WORLD, ckey, addr)
  call MPI_Comm_get_attr(MPI_COMM_WORLD, ckey, aout, flag, ierr)
  call expect(flag .and. aout == addr, 'C set, F2 get: the address')
  errs = errs + cget_c(0, MPI_COMM_WORLD, ckey)
  aval = 77
  call MPI_Comm_set_attr(MPI_COMM_WORLD, ckey, aval, ierr)
  errs = errs + cget_f(0, MPI_COMM_WORLD, ckey, aval, 0)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup2, ierr)
  call MPI_Comm_get_attr(dup2, ckey, aout, flag, ierr)
  call expect(flag .and. aout == aval, 'F2 set, C dup fn, F2 get')
  errs = errs + cget_f(0, dup2, ckey, aval, 0)

  ! datatypes and windows
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, tkey, extra, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, dtype, ierr)
  aval = 99
  call MPI_Type_set_attr(dtype, tkey, aval, ierr)
  call MPI_Type_get_attr(dtype, tkey, aout, flag, ierr)
  call expect(flag .and. aout == aval, 'type: F2 set, F2 get')
  errs = errs + cget_f(1, dtype, tkey, aval, 0)
  errs = errs + cset(1, dtype, tkey, addr)
  call MPI_Type_get_attr(dtype, tkey, aout, flag, ierr)
  call expect(flag .and. aout == addr, 'type: C set, F2 get')
  call MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, wkey, extra, ierr)
  call MPI_Win_create(MPI_BOTTOM, 0_MPI_ADDRESS_KIND, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  aval = -7
  call MPI_Win_set_attr(win, wkey, aval, ierr)
  call MPI_Win_get_attr(win, wkey, aout, flag, ierr)
  call expect(flag .and. aout == aval, 'win: F2 set, F2 get')
  errs = errs + cget_f(2, win, wkey, aval, 0)
  errs = errs + cset(2, win, wkey, addr)
  call MPI_Win_get_attr(win, wkey, aout, flag, ierr)
  call expect(flag .and. aout == addr, 'win: C set, F2 get')
  errs = errs + cget_c(2, win, wkey)

  call MPI_Win_free(win, ierr)
  call MPI_Type_free(dtype, ierr)
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free(dup2, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, fkey, ierr)
  call MPI_Comm_free_keyval(fkey, ierr)
  call MPI_Finalize(ierr)
  if (errs /= 0) then
    print *, 'f90_attrlang: FAILED checks:', errs, 'on rank', rank
    error stop 1
  end if
  if (rank == 0) print *, 'f90_attrlang: ok'
contains
  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAILED: ', what
      errs = errs + 1
    end if
  end subroutine
end program
