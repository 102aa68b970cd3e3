! Fixed-form point-to-point through mpif.h: status fields, MPI_Get_count, MPI_STATUS_IGNORE,
! LOGICAL flags (MPI_Iprobe, MPI_Test), 1-based MPI_Waitany indices, MPI_Sendrecv and a
! string routine.  Any wrong value stops the program with a nonzero exit status.
      PROGRAM F77P2P
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, N, IDX, PEER
      INTEGER STATUS(MPI_STATUS_SIZE), REQS(2)
      INTEGER IBUF(100)
      DOUBLE PRECISION DBUF(10), DIN(10)
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_PROCESSOR_NAME) PNAME
      INTEGER PLEN

      CALL MPI_INIT(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'init')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      CALL CHECK(NP .GE. 2, 'needs 2 ranks')
      CALL CHECK(MPI_STATUS_SIZE .EQ. 5, 'MPI_STATUS_SIZE')

!     rank 0 sends 37 integers with tag 11 to rank 1
      IF (RANK .EQ. 0) THEN
         DO I = 1, 37
            IBUF(I) = 1000 + I
         END DO
         CALL MPI_SEND(IBUF, 37, MPI_INTEGER, 1, 11, MPI_COMM_WORLD,
     &                 IERR)
         CALL CHECK(IERR .EQ. MPI_SUCCESS, 'send')
      ELSE IF (RANK .EQ. 1) THEN
!        wait until it is there: Iprobe's LOGICAL flag
         FLAG = .FALSE.
         DO WHILE (.NOT. FLAG)
            CALL MPI_IPROBE(0, 11, MPI_COMM_WORLD, FLAG, STATUS, IERR)
         END DO
         CALL CHECK(FLAG, 'iprobe flag')
         CALL CHECK(STATUS(MPI_SOURCE) .EQ. 0, 'iprobe source')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 11, 'iprobe tag')
         DO I = 1, 100
            IBUF(I) = -1
         END DO
         CALL MPI_RECV(IBUF, 100, MPI_INTEGER, MPI_ANY_SOURCE,
     &                 MPI_ANY_TAG, MPI_COMM_WORLD, STATUS, IERR)
         CALL CHECK(IERR .EQ. MPI_SUCCESS, 'recv')
         CALL CHECK(STATUS(MPI_SOURCE) .EQ. 0, 'status source')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 11, 'status tag')
         CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, N, IERR)
         CALL CHECK(N .EQ. 37, 'get_count')
         DO I = 1, 37
            CALL CHECK(IBUF(I) .EQ. 1000 + I, 'recv data')
         END DO
         CALL CHECK(IBUF(38) .EQ. -1, 'recv overrun')
!        nothing more is pending: Iprobe says .FALSE.
         CALL MPI_IPROBE(0, 11, MPI_COMM_WORLD, FLAG, STATUS, IERR)
         CALL CHECK(.NOT. FLAG, 'iprobe false')
      END IF

!     ring exchange of doubles with Irecv/Isend, Waitany (1-based index), Test flag
      PEER = MOD(RANK + 1, NP)
      DO I = 1, 10
         DBUF(I) = RANK * 100.0D0 + I
         DIN(I) = 0.0D0
      END DO
      CALL MPI_IRECV(DIN, 10, MPI_DOUBLE_PRECISION,
     &     MOD(RANK + NP - 1, NP), 5, MPI_COMM_WORLD, REQS(1), IERR)
      CALL MPI_ISEND(DBUF, 10, MPI_DOUBLE_PRECISION, PEER, 5,
     &     MPI_COMM_WORLD, REQS(2), IERR)
      CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
      CALL CHECK(IDX .EQ. 1 .OR. IDX .EQ. 2, 'waitany index')
      CALL CHECK(REQS(IDX) .EQ. MPI_REQUEST_NULL, 'waitany freed')
      FLAG = .FALSE.
      DO WHILE (.NOT. FLAG)
         CALL MPI_TEST(REQS(3 - IDX), FLAG, MPI_STATUS_IGNORE, IERR)
      END DO
      CALL CHECK(REQS(3 - IDX) .EQ. MPI_REQUEST_NULL, 'test freed')
      DO I = 1, 10
         CALL CHECK(DIN(I) .EQ. MOD(RANK + NP - 1, NP) * 100.0D0 + I,
     &              'ring data')
      END DO

!     Sendrecv with MPI_STATUS_IGNORE
      CALL MPI_SENDRECV(RANK, 1, MPI_INTEGER, PEER, 7, N, 1,
     &     MPI_INTEGER, MOD(RANK + NP - 1, NP), 7, MPI_COMM_WORLD,
     &     MPI_STATUS_IGNORE, IERR)
      CALL CHECK(N .EQ. MOD(RANK + NP - 1, NP), 'sendrecv')

!     a string output: blank padded
      PNAME = 'xxxxxxxx'
      CALL MPI_GET_PROCESSOR_NAME(PNAME, PLEN, IERR)
      CALL CHECK(PLEN .GT. 0 .AND. PLEN .LT. MPI_MAX_PROCESSOR_NAME,
     &           'processor name length')
      CALL CHECK(LEN_TRIM(PNAME) .EQ. PLEN, 'processor name padding')

      CALL MPI_FINALIZE(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'finalize')
      IF (RANK .EQ. 0) PRINT *, 'f77_p2p: ok'
      END

      SUBROUTINE CHECK(COND, WHAT)
      LOGICAL COND
      CHARACTER*(*) WHAT
      IF (.NOT. COND) THEN
         PRINT *, 'FAILED: ', WHAT
         STOP 1
      END IF
      END
