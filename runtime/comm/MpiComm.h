//===- MpiComm.h - Ranks as MPI processes -----------------------*- C++ -*-===//
//
// The communicator for multi-process (and multi-node) tensor parallelism.
// Collectives map onto MPI's; f16 and bf16 sums use user-defined reduction
// operations because MPI has no 16-bit float types. MPI errors come back as
// Status (the communicator uses MPI_ERRORS_RETURN), abort() is MPI_Abort,
// and a rank process that dies makes mpirun terminate the others.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_COMM_MPICOMM_H
#define TPC_RUNTIME_COMM_MPICOMM_H

#include "runtime/comm/Communicator.h"

#include <mpi.h>

#include <chrono>
#include <memory>

namespace tpc {

struct MpiOptions {
  /// Before every collective, agree with the other ranks (one small extra
  /// MPI_Allreduce) that all called the same collective with the same
  /// dtype and counts, and that no rank's arguments are invalid. Mismatches
  /// are then reported as errors on every rank instead of hanging or
  /// corrupting memory. Costs one latency per collective; meant for tests
  /// and debugging.
  bool validateCalls = false;
  /// How long a collective waits for the other ranks before it fails (the
  /// job should then be aborted); zero waits forever.
  std::chrono::milliseconds timeout{60000};
};

/// Initialises MPI for use by one thread at a time (MPI_THREAD_SERIALIZED)
/// unless it is already initialised.
Status initMpi(int *argc, char ***argv);
/// Finalises MPI if it is initialised and not yet finalised. Every
/// MpiCommunicator must be destroyed first.
Status finalizeMpi();

class MpiCommunicator final : public Communicator {
public:
  /// Wraps a duplicate of `comm`, so that this communicator's error handler
  /// and traffic never interfere with other users of `comm`. Collective over
  /// `comm`. MPI must be initialised.
  static Status create(MPI_Comm comm, std::unique_ptr<MpiCommunicator> &out,
                       const MpiOptions &options = {});
  /// create() over MPI_COMM_WORLD.
  static Status createWorld(std::unique_ptr<MpiCommunicator> &out,
                            const MpiOptions &options = {});

  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduce(const void *send, void *recv, size_t count,
                   DType dtype) override;
  Status allGather(const void *send, void *recv, size_t count,
                   DType dtype) override;
  Status allGatherV(const void *send, void *recv,
                    const std::vector<size_t> &counts, DType dtype) override;
  Status reduceScatter(const void *send, void *recv, size_t count,
                       DType dtype) override;
  Status barrier() override;
  /// MPI_Abort on this communicator: the whole job terminates, this process
  /// included; `reason` is printed to stderr first.
  void abort(const std::string &reason) override;

  /// The duplicated communicator.
  MPI_Comm handle() const { return comm_; }

private:
  MpiCommunicator() = default;

  Status mpiError(const std::string &what, int code) const;
  /// Waits for the nonblocking collective `req` (started with status
  /// `startCode`) up to the timeout.
  Status complete(const std::string &what, int startCode, MPI_Request &req);
  Status validate(const std::string &what, int op, DType dtype,
                  uint64_t countKey, const std::string &localError);
  Status fail(const std::string &what, const std::string &msg,
              StatusCode code = StatusCode::InvalidArgument) const;
  /// The MPI type and operation that sum `dtype`, or why there are none.
  std::string reduction(DType dtype, MPI_Datatype &type, MPI_Op &op) const;

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Op sumF16_ = MPI_OP_NULL;
  MPI_Op sumBf16_ = MPI_OP_NULL;
  int rank_ = 0;
  int size_ = 1;
  MpiOptions options_;
};

} // namespace tpc

#endif // TPC_RUNTIME_COMM_MPICOMM_H
