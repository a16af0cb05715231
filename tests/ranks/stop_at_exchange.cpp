// Preloaded into one rank by run_rank_tests.sh: the rank stops itself (SIGSTOP) at its first
// MPI_Allgather, past MPI's start and its share of the scan, so that the test can kill it at a
// known point while the other ranks wait for it in the same exchange.
#include <mpi.h>

#include <csignal>

extern "C" int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* receive,
                             int receive_count, MPI_Datatype receive_type, MPI_Comm comm) {
  std::raise(SIGSTOP);
  return PMPI_Allgather(send, send_count, send_type, receive, receive_count, receive_type, comm);
}
