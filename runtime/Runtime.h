//===- Runtime.h - The tpc runtime's public C++ API -------------*- C++ -*-===//
//
// Loading and running engines that `tpc compile` wrote. No protobuf, MLIR or
// LLVM types appear here.
//
// One rank per process (under MPI, or tp 1):
//
//   std::unique_ptr<tpc::runtime::RankEngine> engine;
//   TPC_RETURN_IF_ERROR(tpc::runtime::RankEngine::load(dir, rank, engine));
//   std::unique_ptr<tpc::runtime::Session> session;
//   TPC_RETURN_IF_ERROR(
//       tpc::runtime::Session::create(*engine, comm, {}, session));
//   TPC_RETURN_IF_ERROR(session->setInput("input_ids", desc, data));
//   TPC_RETURN_IF_ERROR(session->run());
//   session->output("logits", outDesc, outData);
//
// Every rank in this process, ranks as threads:
//
//   std::unique_ptr<tpc::runtime::LocalEngine> engine;
//   TPC_RETURN_IF_ERROR(tpc::runtime::LocalEngine::load(dir, {}, engine));
//   TPC_RETURN_IF_ERROR(engine->setInput("input_ids", desc, data));
//   TPC_RETURN_IF_ERROR(engine->run());
//   engine->session(0).output("logits", outDesc, outData);
//
// Every function reports failure as a tpc::Status whose message names the
// file, rank, step and kernel concerned.
//
//===----------------------------------------------------------------------===//
#ifndef TPC_RUNTIME_RUNTIME_H
#define TPC_RUNTIME_RUNTIME_H

#include "kernels/Types.h"
#include "runtime/comm/Communicator.h"
#include "runtime/engine/CpuRunner.h"
#include "runtime/engine/EngineManifest.h"
#include "runtime/engine/Inspect.h"
#include "runtime/engine/LocalEngine.h"
#include "runtime/engine/RankEngine.h"
#include "runtime/engine/Session.h"

#endif // TPC_RUNTIME_RUNTIME_H
