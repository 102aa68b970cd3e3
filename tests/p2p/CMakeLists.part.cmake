# Point-to-point and request API: MPI-level tests (tests/mpi/p2p_*.c), each
# run over every channel variant by wh_mpi_test.
set(P2P_T ${CMAKE_SOURCE_DIR}/tests/mpi)
wh_mpi_test(p2p.pingpong  ${P2P_T}/p2p_pingpong.c 2)
wh_mpi_test(p2p.pingpong4 ${P2P_T}/p2p_pingpong.c 4)
wh_mpi_test(p2p.modes     ${P2P_T}/p2p_modes.c 2)
wh_mpi_test(p2p.order     ${P2P_T}/p2p_order.c 4)
wh_mpi_test(p2p.errors    ${P2P_T}/p2p_errors.c 2)
wh_mpi_test(p2p.probe     ${P2P_T}/p2p_probe.c 2)
wh_mpi_test(p2p.persist   ${P2P_T}/p2p_persist.c 2)
wh_mpi_test(p2p.waitsome  ${P2P_T}/p2p_waitsome.c 2)
wh_mpi_test(p2p.misc      ${P2P_T}/p2p_misc.c 3)
wh_mpi_test(p2p.alltoall4 ${P2P_T}/p2p_alltoall.c 4)
wh_mpi_test(p2p.alltoall8 ${P2P_T}/p2p_alltoall.c 8)
