//===- MpiKillTest.cpp - A rank dies; the job must not hang ---------------===//
//
// Run under mpirun by mpi_kill_check.sh. Rank 1 kills itself with SIGKILL
// (no chance to clean up, as with the OOM killer) while the other ranks are
// about to enter a collective that can never complete. mpirun must notice
// the death and terminate the job with a non-zero status within seconds.
//
// With the argument "stop", rank 1 stops itself (SIGSTOP, as a debugger or
// a frozen node would) instead: mpirun sees nothing, so the peers' own
// collective timeout (3 s here) must fail them, and their abort must end
// the job.
//
//===----------------------------------------------------------------------===//
#include "runtime/comm/MpiComm.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <vector>

using namespace tpc;

int main(int argc, char **argv) {
  const bool stop = argc > 1 && std::strcmp(argv[1], "stop") == 0;
  Status st = initMpi(&argc, &argv);
  std::unique_ptr<MpiCommunicator> comm;
  MpiOptions options;
  options.timeout = std::chrono::seconds(3);
  if (st)
    st = MpiCommunicator::createWorld(comm, options);
  if (st)
    st = comm->barrier();
  if (!st) {
    std::fprintf(stderr, "setup failed: %s\n", st.message().c_str());
    return 2;
  }
  if (comm->size() < 2) {
    std::fprintf(stderr, "needs at least 2 ranks\n");
    return 2;
  }
  if (comm->rank() == 1)
    std::raise(stop ? SIGSTOP : SIGKILL);
  std::vector<float> buf(1 << 16, 1.0f);
  for (;;) {
    st = comm->allReduce(buf.data(), buf.data(), buf.size(), DType::F32);
    if (!st) {
      // An error instead of termination is also acceptable: it must not hang.
      std::fprintf(stderr, "rank %d: %s\n", comm->rank(), st.message().c_str());
      // As a Session does: the job cannot go on, end every rank of it.
      comm->abort(st.message());
      return 3;
    }
  }
}
