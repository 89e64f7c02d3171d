//===- DeviceComm.h - Communicators of ranks on GPUs ------------*- C++ -*-===//
//
// The ranks that one host thread drives on GPUs (every local rank of an
// engine, or the one rank of this process under MPI) share a group whose
// communicators follow Communicator's contract with two differences:
//
//  * buffers are device memory, and a call enqueues the collective on the
//    rank's stream and returns; completion is observed on that stream;
//  * the calls that the group's ranks make for one collective are
//    bracketed by beginRound() and endRound(), so that one thread can issue
//    them for every rank (NCCL's group calls; the on-device group launches
//    the whole collective at endRound()).
//
// Failures that happen after a call returned (a peer's abort, a network
// error, a collective that never completes) are reported by poll(); abort()
// makes every pending and future collective of the group fail.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_COMM_DEVICECOMM_H
#define TPC_RUNTIME_COMM_DEVICECOMM_H

#include "runtime/comm/Communicator.h"

#include <string>

namespace tpc {

class DeviceCommGroup {
public:
  virtual ~DeviceCommGroup() = default;

  /// Ranks of the group that this process drives.
  virtual int localRanks() const = 0;
  /// The communicator of local rank `index` (its rank() is the global one).
  virtual Communicator &comm(int index) = 0;

  virtual Status beginRound() = 0;
  virtual Status endRound() = 0;

  /// An asynchronous failure of any communicator of the group, if any.
  virtual Status poll() = 0;
  virtual void abort(const std::string &reason) = 0;

  /// "nccl", "on-device (emulated ranks)", for reports.
  virtual std::string describe() const = 0;
};

} // namespace tpc

#endif // TPC_RUNTIME_COMM_DEVICECOMM_H
