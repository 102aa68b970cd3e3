! mpif.h details that older Fortran programs rely on:
!  - MPI-1's datatype procedures take default INTEGER addresses (MPI_TYPE_HINDEXED,
!    MPI_TYPE_HVECTOR, MPI_TYPE_STRUCT, MPI_TYPE_EXTENT, MPI_TYPE_LB, MPI_TYPE_UB);
!  - MPI_DISPLACEMENT_CURRENT has the kind of MPI_FILE_SET_VIEW's DISP;
!  - MPI_INFO_* drop leading and trailing blanks of keys and values, MPI_INFO_GET leaves
!    VALUE alone for an absent key, MPI_INFO_GET_STRING's BUFLEN counts no NUL and a BUFLEN
!    of 0 only asks for the length;
!  - MPI_GREQUEST_START's callbacks get the program's own EXTRA_STATE variable.
       subroutine qfn(extra, status, ierr)
       implicit none
       include 'mpif.h'
       integer*8 extra
       integer status(MPI_STATUS_SIZE), ierr
       call mpi_status_set_elements(status, MPI_BYTE, 0, ierr)
       call mpi_status_set_cancelled(status, .false., ierr)
       ierr = MPI_SUCCESS
       end
       subroutine ffn(extra, ierr)
       implicit none
       integer*8 extra
       integer ierr
       extra = extra + 100
       ierr = 0
       end
       subroutine cfn(extra, complete, ierr)
       implicit none
       integer*8 extra
       logical complete
       integer ierr
       ierr = 0
       end

       program f77compat
       implicit none
       include 'mpif.h'
       integer ierr, errs, i, isz, dtype, ext, lb, ub, psize, pos
       integer displs(4), counts(4), types(4)
       integer inbuf(4), outbuf(4), packbuf(64)
       integer info, vlen
       logical flag
       character*(MPI_MAX_INFO_VAL) val
       integer*8 extra
       integer req
       integer status(MPI_STATUS_SIZE)
       external qfn, ffn, cfn

       errs = 0
       call mpi_init(ierr)
       call mpi_type_size(MPI_INTEGER, isz, ierr)

! MPI_TYPE_HINDEXED with INTEGER byte displacements: elements in reverse order
       do i = 1, 4
          displs(i) = (4 - i) * isz
          counts(i) = 1
          inbuf(i) = 10 * i
          outbuf(i) = -1
       enddo
       call mpi_type_hindexed(4, counts, displs, MPI_INTEGER, dtype,
     &      ierr)
       call mpi_type_commit(dtype, ierr)
       call mpi_type_extent(dtype, ext, ierr)
       if (ext .ne. 4 * isz) then
          errs = errs + 1
          print *, 'hindexed extent ', ext, ' expected ', 4 * isz
       endif
       pos = 0
       call mpi_pack(inbuf, 1, dtype, packbuf, 64 * isz, pos,
     &      MPI_COMM_WORLD, ierr)
       psize = pos
       pos = 0
       call mpi_unpack(packbuf, psize, pos, outbuf, 4, MPI_INTEGER,
     &      MPI_COMM_WORLD, ierr)
       do i = 1, 4
          if (outbuf(i) .ne. 10 * (5 - i)) then
             errs = errs + 1
             print *, 'hindexed: outbuf(', i, ') = ', outbuf(i)
          endif
       enddo
       call mpi_type_free(dtype, ierr)

! MPI_TYPE_HVECTOR (INTEGER stride), MPI_TYPE_LB / MPI_TYPE_UB
       call mpi_type_hvector(2, 1, 3 * isz, MPI_INTEGER, dtype, ierr)
       call mpi_type_commit(dtype, ierr)
       lb = -7
       ub = -7
       call mpi_type_lb(dtype, lb, ierr)
       call mpi_type_ub(dtype, ub, ierr)
       if (lb .ne. 0 .or. ub .ne. 4 * isz) then
          errs = errs + 1
          print *, 'hvector lb/ub ', lb, ub, ' expected 0 ', 4 * isz
       endif
       call mpi_type_free(dtype, ierr)

! MPI_TYPE_STRUCT with INTEGER displacements
       displs(1) = 0
       displs(2) = 2 * isz
       counts(1) = 1
       counts(2) = 2
       types(1) = MPI_INTEGER
       types(2) = MPI_INTEGER
       call mpi_type_struct(2, counts, displs, types, dtype, ierr)
       call mpi_type_commit(dtype, ierr)
       call mpi_type_extent(dtype, ext, ierr)
       call mpi_type_size(dtype, psize, ierr)
       if (ext .ne. 4 * isz .or. psize .ne. 3 * isz) then
          errs = errs + 1
          print *, 'struct extent/size ', ext, psize
       endif
       call mpi_type_free(dtype, ierr)

! MPI_DISPLACEMENT_CURRENT is an INTEGER(KIND=MPI_OFFSET_KIND)
       if (kind(MPI_DISPLACEMENT_CURRENT) .ne. MPI_OFFSET_KIND) then
          errs = errs + 1
          print *, 'kind(MPI_DISPLACEMENT_CURRENT) ',
     &         kind(MPI_DISPLACEMENT_CURRENT)
       endif

! MPI_INFO: blanks around keys and values, absent keys, GET_STRING
       call mpi_info_create(info, ierr)
       call mpi_info_set(info, '  lead key ', '  some value  ', ierr)
       call mpi_info_get_valuelen(info, 'lead key', vlen, flag, ierr)
       if (.not. flag .or. vlen .ne. 10) then
          errs = errs + 1
          print *, 'valuelen of "lead key": ', flag, vlen
       endif
       val = 'untouched'
       call mpi_info_get(info, 'absent', MPI_MAX_INFO_VAL, val, flag,
     &      ierr)
       if (flag .or. val .ne. 'untouched') then
          errs = errs + 1
          print *, 'MPI_INFO_GET of an absent key: ', flag, val
       endif
       call mpi_info_get(info, ' lead key', MPI_MAX_INFO_VAL, val,
     &      flag, ierr)
       if (.not. flag .or. val .ne. 'some value') then
          errs = errs + 1
          print *, 'MPI_INFO_GET: ', flag, val
       endif
       vlen = 0
       val = 'untouched'
       call mpi_info_get_string(info, 'lead key', vlen, val, flag,
     &      ierr)
       if (.not. flag .or. vlen .ne. 10 .or. val .ne. 'untouched') then
          errs = errs + 1
          print *, 'GET_STRING with BUFLEN 0: ', flag, vlen, val
       endif
       vlen = 4
       call mpi_info_get_string(info, 'lead key', vlen, val, flag,
     &      ierr)
       if (.not. flag .or. vlen .ne. 10 .or. val .ne. 'some') then
          errs = errs + 1
          print *, 'GET_STRING with BUFLEN 4: ', flag, vlen, val
       endif
       vlen = MPI_MAX_INFO_VAL
       val = 'untouched'
       call mpi_info_get_string(info, 'nokey', vlen, val, flag, ierr)
       if (flag .or. val .ne. 'untouched') then
          errs = errs + 1
          print *, 'GET_STRING of an absent key: ', flag, val
       endif
       call mpi_info_free(info, ierr)

! MPI_GREQUEST_START: FREE_FN updates the program's EXTRA_STATE
       extra = 5
       call mpi_grequest_start(qfn, ffn, cfn, extra, req, ierr)
       call mpi_grequest_complete(req, ierr)
       call mpi_wait(req, status, ierr)
       if (extra .ne. 105) then
          errs = errs + 1
          print *, 'EXTRA_STATE after FREE_FN: ', extra
       endif

       call mpi_allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM,
     &      MPI_COMM_WORLD, ierr)
       call mpi_comm_rank(MPI_COMM_WORLD, i, ierr)
       if (i .eq. 0) then
          if (errs .eq. 0) then
             print *, 'f77_compat: OK'
          else
             print *, 'f77_compat: ', errs, ' errors'
          endif
       endif
       call mpi_finalize(ierr)
       if (errs .ne. 0) stop 1
       end
