# The network channel (src/chan/net, docs/NET.md) is driven through its ops
# table by the channel conformance test (tests/chan), under several provider
# settings; MPI-level tests over the channel run as the "net" variant of every
# wh_mpi_test (WHARF_CHANNEL=net) and in tests/scenarios.
