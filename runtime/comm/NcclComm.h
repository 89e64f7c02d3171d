//===- NcclComm.h - NCCL communicators of ranks on GPUs ---------*- C++ -*-===//
//
// A DeviceCommGroup over NCCL: collectives on device buffers, enqueued on
// each rank's stream. Two ways to build one:
//
//  * createLocal: this process drives every rank, one GPU each
//    (ncclCommInitAll); the runtime brackets each collective's calls for
//    all ranks with beginRound()/endRound() (ncclGroupStart/End);
//  * createRank: this process is one rank of a multi-process job whose
//    ncclUniqueId rank 0 made (newUniqueId) and sent to every process (over
//    MPI: NcclMpi.h). The communicator is created non-blocking, so that a
//    peer that never arrives makes initialisation fail after the timeout
//    instead of hanging.
//
// Errors never abort the process: every NCCL result becomes a Status, an
// operation still in progress is polled with ncclCommGetAsyncError until the
// timeout, and then the communicators are aborted (ncclCommAbort) so that
// peers fail as well. poll() reports asynchronous errors between calls.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_COMM_NCCLCOMM_H
#define TPC_RUNTIME_COMM_NCCLCOMM_H

#include "runtime/comm/DeviceComm.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace tpc {

struct NcclOptions {
  /// How long initialisation or an operation NCCL reports as in progress
  /// may take before the group is aborted.
  std::chrono::milliseconds timeout{60000};
};

class NcclCommunicator;

class NcclGroup final : public DeviceCommGroup {
public:
  /// One rank per device in `devices` (rank i on devices[i], its work on
  /// streams[i]); streams are not owned.
  static Status createLocal(const std::vector<int> &devices,
                            const std::vector<cudaStream_t> &streams,
                            const NcclOptions &options,
                            std::unique_ptr<NcclGroup> &out);

  /// A fresh ncclUniqueId, as bytes to send to the other processes.
  static Status newUniqueId(std::vector<uint8_t> &bytes);

  /// Rank `rank` of `nranks`, on `device` and `stream`, joining the job of
  /// the id in `idBytes`.
  static Status createRank(const std::vector<uint8_t> &idBytes, int nranks,
                           int rank, int device, cudaStream_t stream,
                           const NcclOptions &options,
                           std::unique_ptr<NcclGroup> &out);

  ~NcclGroup() override;

  int localRanks() const override { return int(comms_.size()); }
  Communicator &comm(int index) override;
  Status beginRound() override;
  Status endRound() override;
  Status poll() override;
  void abort(const std::string &reason) override;
  std::string describe() const override;

  /// Whether the group was aborted, and why.
  bool aborted() const { return aborted_; }
  const std::string &abortReason() const { return abortReason_; }
  const NcclOptions &options() const { return options_; }

  /// Turns `r` into a Status, first waiting up to the timeout while
  /// `comm`'s operation is in progress (non-blocking communicators).
  Status settle(ncclResult_t r, ncclComm_t comm, const std::string &what);

private:
  NcclGroup() = default;
  /// Waits until no communicator of the group reports ncclInProgress.
  Status waitInProgress(const std::string &what);
  /// ncclCommAbort on every communicator not yet released.
  void releaseComms();

  NcclOptions options_;
  std::vector<std::unique_ptr<NcclCommunicator>> comms_;
  int roundDepth_ = 0;
  bool aborted_ = false;
  std::string abortReason_;
};

} // namespace tpc

#endif // TPC_RUNTIME_COMM_NCCLCOMM_H
